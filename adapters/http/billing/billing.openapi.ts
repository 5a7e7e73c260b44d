// OpenAPI description of the billing routes (billing/billing.ts). docs/billing.md tells the
// subscription's states and transitions.

import { PROVIDER_EVENT_OUTCOMES } from '../../../domain/provider-event/provider-event';
import { SUBSCRIPTION_STATUSES } from '../../../domain/subscription/subscription';
import { PAGE_PARAMETERS, type ApiArea, type Schema, arrayOf, boolean, dateTime, enumOf, integer, list, nullable, object, page, ref, schemaOfCodec, string } from '../openapi/describe';
import { CancelBody, CheckoutBody, ConfirmBody, WEBHOOK_TYPES } from './billing';

const INTERVAL = enumOf(['month', 'year']);
const QUOTA_NAMES = ['messages_per_month', 'documents', 'users', 'business_tools'] as const;
const limits = (description: string): Schema => object(Object.fromEntries(QUOTA_NAMES.map((quota) => [quota, nullable(integer())])), description);
const FEATURES = object({ sdk_connections: boolean(), whatsapp: boolean(), handoff: boolean(), crm: boolean() });
const PLAN_REF = object({ id: string(), code: string(), name: string() });

const cancelRoute = (summary: string) => ({
  summary,
  description:
    'Cancels at the end of the paid period (`at_period_end` true, the default: the plan applies until `current_period_end`, status `canceling`) or at once (`false`: back to the free plan now). A past-due subscription is canceled at once either way. The body may be left out. 409 `no_subscription` when there is nothing to cancel.',
  access: 'user' as const,
  role: 'admin' as const,
  body: { json: schemaOfCodec(CancelBody), description: 'optional' },
  success: { status: 200 as const, description: 'the subscription as it stands now', json: ref('Subscription') },
  errors: [409] as const,
});

export const billingApi: ApiArea = {
  tag: 'billing',
  description: 'Plans, checkout, the subscription and payments (spec 4.9). A checkout is paid on the payment provider’s page; the provider reports it by signed webhook, or the client confirms it.',
  schemas: {
    PlanOffer: object(
      {
        id: string(),
        code: string(),
        name: string(),
        description: string(),
        prices: arrayOf(object({ interval: INTERVAL, amount: integer('minor units (cents)'), currency: string('ISO 4217, lowercase') })),
        limits: limits('null: unlimited'),
        features: FEATURES,
      },
      'a sellable plan',
    ),
    Checkout: object({
      id: string(),
      plan_id: string(),
      plan_code: string(),
      interval: INTERVAL,
      amount: integer('minor units (cents)'),
      currency: string(),
      provider: string('`sandbox` or `stripe`'),
      url: string('the payment provider’s page where the payer pays'),
      expires_at: dateTime(),
      status: enumOf(['open', 'paid', 'expired'], 'open until paid (a failed attempt leaves it open) or expired unpaid; paid for good'),
      payment_id: nullable(string()),
      failed_attempts: integer(),
      last_failure: nullable(object({ code: string('the provider’s decline code'), message: string() })),
      started_at: dateTime(),
      completed_at: nullable(dateTime()),
    }),
    Subscription: object({
      status: enumOf(SUBSCRIPTION_STATUSES, 'none (never subscribed), active, canceling (ends at period end), past_due (period over unpaid: the plan applies during the grace period), canceled or ended (unpaid): see docs/billing.md'),
      plan: { ...PLAN_REF, description: 'the plan that applies now (free unless active, canceling or past_due)' },
      subscribed_plan_id: nullable(string('the plan the subscription is or was for')),
      interval: { anyOf: [INTERVAL, { type: 'null' }] },
      current_period_start: nullable(dateTime()),
      current_period_end: nullable(dateTime()),
      cancel_at_period_end: boolean(),
      canceled_at: nullable(dateTime()),
      grace_until: nullable(dateTime('while past_due: when the organization returns to the free plan unless it pays')),
      ended_at: nullable(dateTime()),
      limits: limits('the plan’s limits with the super admin’s overrides; null: unlimited'),
      overrides: {
        type: 'object',
        description: 'the limits the super admin set for this organization',
        properties: Object.fromEntries(QUOTA_NAMES.map((quota) => [quota, nullable(integer())])),
      },
      features: FEATURES,
      usage: object(Object.fromEntries(QUOTA_NAMES.map((quota) => [quota, integer()])), 'users counts members and pending invitations; messages_per_month the calendar month (UTC)'),
      usage_resets_at: dateTime('when messages_per_month starts again'),
    }),
    CheckoutConfirmation: object({ checkout: ref('Checkout'), subscription: ref('Subscription') }),
    Payment: object(
      {
        id: string(),
        tenant_id: string(),
        checkout_id: string(),
        plan_id: string(),
        interval: INTERVAL,
        amount: integer('minor units (cents)'),
        currency: string(),
        provider: string(),
        status: enumOf(['succeeded', 'failed']),
        provider_payment_id: nullable(string()),
        failure_code: nullable(string()),
        failure_message: nullable(string()),
        occurred_at: dateTime('when it was paid, or refused'),
      },
      'a payment attempt',
    ),
    WebhookReceipt: object({
      received: { const: true },
      outcome: enumOf(PROVIDER_EVENT_OUTCOMES, 'applied (a payment recorded), ignored_unknown_checkout (recorded, not acted on), ignored (a kind of event the platform does not act on)'),
      duplicate: boolean('the event was received before: nothing was done again'),
    }),
  },
  routes: {
    '/api/v1/billing/plans': {
      get: { summary: 'The plans on sale, with their limits', access: 'user', success: { status: 200, description: 'sellable plans, cheapest first', json: list(ref('PlanOffer')) } },
    },
    '/api/v1/billing/checkout': {
      post: {
        idempotent: true,
        summary: 'Start buying a plan',
        description:
          'Opens a checkout for one period of a plan, named by `plan_id` or `plan_code` (one of them). The payer pays at `url`. 404 `plan_not_found`; 409 `plan_not_sellable` (retired), `plan_is_default` (the default plan), `plan_is_free` (a zero price), `interval_not_offered`. 502 `payment_provider_error` when the provider refuses or cannot be reached.',
        access: 'user',
        role: 'admin',
        body: { json: schemaOfCodec(CheckoutBody) },
        success: { status: 201, description: 'the open checkout', json: ref('Checkout') },
        errors: [404, 409, 502],
      },
    },
    '/api/v1/billing/confirm': {
      post: {
        idempotent: true,
        summary: 'Confirm a checkout',
        description:
          'Asks the payment provider how the checkout stands. Paid: the payment is recorded (once, however often it is confirmed or reported by webhook) and the subscription activated. The same checkout confirmed again gives the same answer. 404 `checkout_not_found`; 502 `payment_provider_error` when the provider refuses, cannot be reached, or has lost the checkout.',
        access: 'user',
        role: 'admin',
        body: { json: schemaOfCodec(ConfirmBody) },
        success: { status: 200, description: 'the checkout and the subscription', json: ref('CheckoutConfirmation') },
        errors: [404, 409, 502],
      },
    },
    '/api/v1/billing/subscription': {
      get: { summary: 'The current subscription, its limits and usage', access: 'user', success: { status: 200, description: 'the subscription', json: ref('Subscription') } },
      post: cancelRoute('Cancel the subscription (the same as POST /billing/cancel)'),
    },
    '/api/v1/billing/cancel': { post: cancelRoute('Cancel the subscription') },
    '/api/v1/billing/payments': {
      get: {
        summary: 'Payment history',
        access: 'user',
        role: 'admin',
        query: PAGE_PARAMETERS,
        success: { status: 200, description: 'payments, succeeded and failed, newest first', json: page(ref('Payment')) },
      },
    },
    '/api/v1/billing/webhook': {
      post: {
        summary: 'The payment provider’s webhook',
        description:
          'Authenticated by the provider’s signature over the exact body (Stripe: `Stripe-Signature`); a bad or stale one is 400 `invalid_signature` and nothing is recorded. The same event delivered again is applied once; an event for a checkout the platform did not open is recorded and ignored.',
        access: 'public',
        body: { raw: WEBHOOK_TYPES },
        success: { status: 200, description: 'received', json: ref('WebhookReceipt') },
        errors: [400],
      },
    },
  },
};
