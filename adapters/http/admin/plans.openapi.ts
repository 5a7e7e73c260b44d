// OpenAPI description of the super admin's plans and tenant quotas (admin/plans.ts, admin/quotas.ts).

import { PAGE_PARAMETERS, type ApiArea, arrayOf, boolean, dateTime, enumOf, integer, nullable, object, page, ref, schemaOfCodec, string } from '../openapi/describe';
import { ChangePlanBody, CreatePlanBody } from './plans';
import { QuotaOverridesBody } from './quotas';
import { FILTERS } from '../org/audit-logs.openapi';

const limit = (what: string) => nullable(integer(`${what}; null: unlimited`));
const LIMITS = object({
  messages_per_month: limit('messages per calendar month (UTC)'),
  documents: limit('documents at any time'),
  users: limit('members and pending invitations'),
  business_tools: limit('business tools at any time'),
});
const FEATURES = object({ sdk_connections: boolean(), whatsapp: boolean(), handoff: boolean(), crm: boolean() });
export const PLAN_OFFER_FIELDS = {
  id: string(),
  code: string('unique, never changes'),
  name: string(),
  description: string(),
  prices: arrayOf(object({ interval: enumOf(['month', 'year']), amount: integer('minor units (cents)'), currency: string('ISO 4217, lowercase') })),
  limits: LIMITS,
  features: FEATURES,
};
const USED = object({ messages_per_month: integer(), documents: integer(), users: integer(), business_tools: integer() });

export const adminPlansApi: ApiArea = {
  tag: 'super admin',
  schemas: {
    Plan: object({ ...PLAN_OFFER_FIELDS, status: enumOf(['sellable', 'retired'], 'retired: no longer sold; its subscribers keep it'), created_at: dateTime(), updated_at: dateTime() }),
    PlanWithSubscribers: object({
      ...PLAN_OFFER_FIELDS,
      status: enumOf(['sellable', 'retired']),
      created_at: dateTime(),
      updated_at: dateTime(),
      subscribers: integer('tenants whose subscription is on this plan'),
    }),
    TenantQuotas: object({
      tenant_id: string(),
      plan: object({ id: string(), code: string(), name: string() }),
      plan_limits: LIMITS,
      overrides: {
        type: 'object',
        description: 'only the quotas overridden',
        properties: { messages_per_month: limit('override'), documents: limit('override'), users: limit('override'), business_tools: limit('override') },
      },
      overrides_reason: string(),
      limits: LIMITS,
      used: USED,
      messages_reset_at: dateTime('when the monthly message count starts again'),
    }),
  },
  routes: {
    '/api/v1/admin/audit-logs': {
      get: {
        summary: "Search the platform's audit log",
        description: 'Entries of the events that belong to no tenant: plans, platform settings, admin sign-ins. Tenant events are in each tenant\'s own log.',
        access: 'admin_token',
        query: [...FILTERS, ...PAGE_PARAMETERS],
        success: { status: 200, description: 'a page of entries, newest first (`tenant_id` is `platform`)', json: page(ref('AuditLogEntry')) },
      },
    },
    '/api/v1/admin/audit-logs/verify': {
      get: {
        summary: "Verify the platform audit log's hash chain",
        access: 'admin_token',
        success: { status: 200, description: 'whether the chain holds, and its first break', json: ref('AuditChainVerification') },
      },
    },
    '/api/v1/admin/plans': {
      get: {
        summary: 'List plans, cheapest first',
        access: 'admin_token',
        query: [{ name: 'status', description: 'only plans of this status', schema: enumOf(['sellable', 'retired']) }, ...PAGE_PARAMETERS],
        success: { status: 200, description: 'a page of plans', json: page(ref('Plan')) },
      },
      post: {
        summary: 'Create a plan',
        description: 'Every interval of a plan is priced in the same currency; features not given are off.',
        access: 'admin_token',
        versioned: 'read',
        body: { json: schemaOfCodec(CreatePlanBody) },
        success: { status: 201, description: 'the plan', json: ref('PlanWithSubscribers') },
        errors: [409],
      },
    },
    '/api/v1/admin/plans/{id}': {
      get: { summary: 'One plan', access: 'admin_token', versioned: 'read', success: { status: 200, description: 'the plan', json: ref('PlanWithSubscribers') }, errors: [404] },
      put: {
        summary: "Replace a plan's terms",
        description: 'Subscribers get the new limits and features at once. `sellable: false` retires the plan, `true` sells it again.',
        access: 'admin_token',
        versioned: 'conditional',
        body: { json: schemaOfCodec(ChangePlanBody) },
        success: { status: 200, description: 'the plan', json: ref('PlanWithSubscribers') },
        errors: [404, 409],
      },
      delete: {
        summary: 'Delete a plan, or retire it when it has subscribers',
        access: 'admin_token',
        success: { status: 200, description: 'what happened', json: object({ id: string(), outcome: enumOf(['deleted', 'retired']) }) },
        errors: [404, 409],
      },
    },
    '/api/v1/admin/tenants/{id}/quotas': {
      get: { summary: "A tenant's limits, overrides and usage", access: 'admin_token', success: { status: 200, description: 'the quotas', json: ref('TenantQuotas') }, errors: [404] },
      put: {
        summary: "Replace a tenant's quota overrides",
        description: 'A quota named replaces the plan limit (null: unlimited); one not named keeps the plan limit; `{"overrides": {}}` removes them all. Applies at once.',
        access: 'admin_token',
        body: { json: schemaOfCodec(QuotaOverridesBody) },
        success: { status: 200, description: 'the quotas as they now apply', json: ref('TenantQuotas') },
        errors: [404],
      },
    },
  },
};
