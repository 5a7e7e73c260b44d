// Billing routes of spec 4.9 under /api/v1/billing. Every route but the webhook needs a user
// token of an active organization: the price list and the subscription are for any member;
// buying, confirming, cancelling and the payment history need the admin role (owner or admin),
// and a member's attempt is 403 `insufficient_role` (recorded like every denial). The webhook
// is the payment provider's: no token, its signature over the raw body instead.
// Checkout and confirm honour Idempotency-Key. `POST /subscription` and `POST /cancel` are the
// same cancellation (the spec names both).

import Router from '@koa/router';
import type { Middleware } from 'koa';
import * as t from 'io-ts';
import type { AccessDenialRecorder } from '../../../application/access-denial/access-denials';
import { type CheckoutDependencies, confirmCheckout, startCheckout } from '../../../application/checkout/checkouts';
import { paymentHistory } from '../../../application/payment/payments';
import { sellablePlans } from '../../../application/plan/plans';
import { receiveWebhook } from '../../../application/provider-event/provider-events';
import type { UseCaseDependencies } from '../../../application/shared/dependencies';
import { cancelSubscription, currentSubscription } from '../../../application/subscription/subscriptions';
import { NonEmptyTrimmed } from '../../../domain/shared/codecs';
import { rawBody, rawBodyOf } from '../bodies/raw';
import { decodeBody } from '../decode';
import type { AuthenticatedState } from '../middleware/authenticate';
import { authenticateUserRecordingDenials, requireRole } from '../middleware/authorize';
import { idempotencySeedOf, idempotentCreation } from '../middleware/idempotency';
import { pageQuery } from '../pagination';
import { requestContextOf } from '../request-context';

const Interval = t.keyof({ month: null, year: null }, 'BillingInterval');
const PlanReference = t.union([NonEmptyTrimmed, t.undefined]);
export const CheckoutBody = t.type({ plan_id: PlanReference, plan_code: PlanReference, interval: Interval }, 'CheckoutBody');
export const ConfirmBody = t.type({ checkout_id: NonEmptyTrimmed }, 'ConfirmBody');
export const CancelBody = t.type({ at_period_end: t.union([t.boolean, t.undefined]) }, 'CancelBody');

/** The media types provider webhooks come in (Stripe and the sandbox send JSON). */
export const WEBHOOK_TYPES = ['application/json'] as const;
/** Provider events are a few kilobytes; this leaves room for the largest Stripe sends. */
export const WEBHOOK_LIMIT_BYTES = 512 * 1024;

/** What the billing routes need beyond the identity ports: the payment provider and its settings. */
export type BillingAdapters = Pick<CheckoutDependencies, 'paymentProvider' | 'billing'>;

export function billingRouter(identity: UseCaseDependencies, denials: AccessDenialRecorder, payments: BillingAdapters): Router<AuthenticatedState> {
  const router = new Router<AuthenticatedState>({ prefix: '/api/v1/billing' });
  const deps = { ...identity, ...payments };
  const user = [authenticateUserRecordingDenials(identity, denials)];
  const admin = [...user, requireRole('admin')];

  router.get('/plans', ...user, async (ctx) => {
    ctx.body = { items: await sellablePlans(identity) };
  });

  router.post('/checkout', ...admin, idempotentCreation(identity), async (ctx) => {
    const body = decodeBody(CheckoutBody, ctx.request.body);
    const input = { plan_id: body.plan_id, plan_code: body.plan_code, interval: body.interval };
    ctx.body = await startCheckout(deps, ctx.state.principal, input, `${ctx.protocol}://${ctx.host}`, requestContextOf(ctx), { idempotencyKey: idempotencySeedOf(ctx) });
    ctx.status = 201;
  });

  router.post('/confirm', ...admin, idempotentCreation(identity), async (ctx) => {
    const { checkout_id } = decodeBody(ConfirmBody, ctx.request.body);
    ctx.body = await confirmCheckout(deps, ctx.state.principal, checkout_id, requestContextOf(ctx));
  });

  router.get('/subscription', ...user, async (ctx) => {
    ctx.body = await currentSubscription(identity, ctx.state.principal.tenant_id);
  });

  const cancel: Middleware<AuthenticatedState> = async (ctx) => {
    const { at_period_end } = decodeBody(CancelBody, ctx.request.body);
    ctx.body = await cancelSubscription(identity, ctx.state.principal, { at_period_end: at_period_end ?? true }, requestContextOf(ctx));
  };
  router.post('/subscription', ...admin, cancel);
  router.post('/cancel', ...admin, cancel);

  router.get('/payments', ...admin, async (ctx) => {
    ctx.body = await paymentHistory(identity, ctx.state.principal.tenant_id, pageQuery(ctx.query));
  });

  router.post('/webhook', rawBody({ types: WEBHOOK_TYPES, limitBytes: WEBHOOK_LIMIT_BYTES }), async (ctx) => {
    ctx.body = await receiveWebhook(deps, rawBodyOf(ctx), ctx.headers, requestContextOf(ctx));
  });

  return router;
}
