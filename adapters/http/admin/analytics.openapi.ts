// OpenAPI description of the super admin's analytics and usage series (admin/analytics.ts).

import { DEFAULT_RANGE_DAYS, MAX_RANGE_DAYS } from '../../../application/analytics/day-range';
import { TENANT_STATUSES } from '../../../application/analytics/overview';
import { TENANT_ANALYTICS_SORTS } from '../../../application/analytics/tenant-analytics';
import { PAGE_PARAMETERS, type ApiArea, type QueryParameter, type Schema, arrayOf, dateTime, enumOf, integer, object, page, ref, string } from '../openapi/describe';

const day = (description: string): Schema => ({ type: 'string', format: 'date', description });
const amounts = (description: string): Schema => ({ type: 'object', additionalProperties: { type: 'integer' }, description });

const RANGE: readonly QueryParameter[] = [
  {
    name: 'from',
    description: `first day, YYYY-MM-DD (UTC), included; default ${DEFAULT_RANGE_DAYS - 1} days before \`to\`. Not a calendar day, after \`to\`, or more than ${MAX_RANGE_DAYS} days before it: 400 \`invalid_request\` naming the field`,
    schema: { type: 'string', format: 'date' },
  },
  { name: 'to', description: 'last day, YYYY-MM-DD (UTC), included; default today. Not a calendar day: 400 `invalid_request` naming `to`', schema: { type: 'string', format: 'date' } },
];

const COUNT_SERIES = ref('UsageCountSeries');

export const adminAnalyticsApi: ApiArea = {
  tag: 'super admin',
  schemas: {
    PlatformOverview: object({
      generated_at: dateTime(),
      month: string('the calendar month (UTC) of the `*_this_month` figures, YYYY-MM'),
      tenants: object({
        total: integer(),
        by_status: object(Object.fromEntries(TENANT_STATUSES.map((status) => [status, integer()]))),
        created_this_month: integer(),
      }),
      members: object({ total: integer('memberships in all organizations (a person in two counts twice)'), joined_this_month: integer() }),
      subscriptions: object({
        active: integer('subscriptions whose plan applies: active, past due, or canceling at period end'),
        by_plan: arrayOf(object({ plan_id: string(), plan_code: string(), plan_name: string(), active: integer() }), 'every plan, cheapest first'),
      }),
      payments_this_month: object({ succeeded: integer(), failed: integer(), revenue: amounts('minor units per lowercase currency, of the succeeded payments') }),
      messages_this_month: integer(),
      documents_this_month: integer('documents added'),
    }),
    TenantFigures: object({
      id: string(),
      name: string(),
      slug: string(),
      status: enumOf(TENANT_STATUSES),
      created_at: dateTime(),
      plan: object({ id: string(), code: string(), name: string() }, 'the plan that applies now (the default plan without a subscription)'),
      members: integer(),
      documents: integer(),
      messages_this_month: integer('calendar month, UTC'),
      payments_succeeded: integer('to date'),
      payments_failed: integer('to date'),
      revenue: amounts('to date: minor units per lowercase currency'),
    }),
    UsageCountSeries: object({
      from: day('first day, included'),
      to: day('last day, included'),
      total: integer('the sum of the buckets'),
      buckets: arrayOf(object({ date: day('the day (UTC)'), count: integer() }), 'one per day of the range, oldest first, 0 on a day without'),
    }),
    RevenueSeries: object({
      from: day('first day, included'),
      to: day('last day, included'),
      currencies: arrayOf(string(), 'every currency paid in during the range, sorted'),
      totals: object({ payments_succeeded: integer(), payments_failed: integer(), revenue: amounts('minor units per currency of `currencies`') }),
      buckets: arrayOf(
        object({ date: day('the day (UTC)'), payments_succeeded: integer(), payments_failed: integer(), revenue: amounts('minor units for every currency of `currencies`, 0 on a day without') }),
        'one per day of the range, oldest first',
      ),
    }),
  },
  routes: {
    '/api/v1/admin/analytics/overview': {
      get: {
        summary: "The platform's overview",
        description: 'Tenants by status, members, active subscriptions by plan, and this calendar month\'s (UTC) sign-ups, payments, revenue, messages and documents.',
        access: 'admin_token',
        success: { status: 200, description: 'the overview', json: ref('PlatformOverview') },
      },
    },
    '/api/v1/admin/analytics/tenants': {
      get: {
        summary: 'Tenants with their plan, usage and revenue',
        access: 'admin_token',
        query: [
          { name: 'status', description: 'only tenants of this status', schema: enumOf(TENANT_STATUSES) },
          { name: 'sort', description: 'newest (default) or oldest first by creation, or by name', schema: enumOf(TENANT_ANALYTICS_SORTS) },
          ...PAGE_PARAMETERS,
        ],
        success: { status: 200, description: 'a page of tenants with their figures', json: page(ref('TenantFigures')) },
      },
    },
    '/api/v1/admin/usage/messages': {
      get: {
        summary: 'Chat messages per day',
        access: 'admin_token',
        query: RANGE,
        success: { status: 200, description: 'every day of the range with its count', json: COUNT_SERIES },
      },
    },
    '/api/v1/admin/usage/documents': {
      get: {
        summary: 'Documents added per day',
        access: 'admin_token',
        query: RANGE,
        success: { status: 200, description: 'every day of the range with its count', json: COUNT_SERIES },
      },
    },
    '/api/v1/admin/usage/revenue': {
      get: {
        summary: 'Payments and revenue per day',
        description: 'A payment counts on the day it was paid or failed (UTC); revenue is what the succeeded ones brought in, in minor units per currency.',
        access: 'admin_token',
        query: RANGE,
        success: { status: 200, description: 'every day of the range with its payments and revenue', json: ref('RevenueSeries') },
      },
    },
  },
};
