// Checkouts: a tenant's owner or admin buys one period of a plan through the payment provider
// (`startCheckout`), and the payment settles it (`settleCheckout`), whichever way the platform
// learns of it: the provider's signed webhook (application/provider-event) or the client's
// confirm (`confirmCheckout`, which asks the provider).
//
// Settling is crash-safe and idempotent, in this order: the payment is recorded first (one
// stream per payment, application/payment), then its checkout is completed (or its failed
// attempt noted) and the tenant's subscription activated, each at most once per payment (event
// ids derived from the payment id). The request that recorded the payment settles at once and
// answers after the read models show it (read-your-writes); the `checkout_settlement` saga
// (checkout-settlement.ts) settles every recorded payment again, so a process that stopped
// between the payment and the activation is finished by whichever process runs the saga.

import { type CheckoutCommand, type CheckoutEvent, type CheckoutState, checkoutDecider, checkoutEvents, checkoutPrice, checkoutStream } from '../../domain/checkout/checkout';
import { paymentStream } from '../../domain/payment/payment';
import type { PlanInterval } from '../../domain/plan/plan';
import { conflict, invalid, notFound } from '../../domain/shared/errors';
import { subscriptionStream } from '../../domain/subscription/subscription';
import { PLANS, type PlanDocument } from '../../projections/plans';
import { USERS, type UserDocument } from '../../projections/users';
import { type Aggregate, type CommandDependencies, handleCommand, loadAggregate } from '../command-handling/handle-command';
import { type EntitlementDependencies, defaultPlanCode } from '../entitlement/entitlements';
import { paidCheckoutPaymentId, recordPaymentSucceeded } from '../payment/payments';
import type { PaymentProvider } from '../ports/payment-provider';
import { type Principal, actingContext } from '../session/sessions';
import type { ReadModelDependencies, ReadYourWritesDependencies } from '../shared/read-models';
import type { RequestContext } from '../shared/request-context';
import { type SubscriptionView, activateSubscription, currentSubscription } from '../subscription/subscriptions';

export const checkoutAggregate: Aggregate<CheckoutCommand, CheckoutEvent, CheckoutState> = { decider: checkoutDecider, events: checkoutEvents };

/** The payment provider and where the payer's browser goes back to. */
export interface CheckoutDependencies extends CommandDependencies, ReadModelDependencies, ReadYourWritesDependencies {
  paymentProvider: PaymentProvider;
  billing: {
    /** BILLING_RETURN_URL: the page payers return to (with `checkout_id` and `checkout` = `success` or `canceled`); null: the platform's base URL. */
    returnUrl: string | null;
    /** PUBLIC_URL: the platform's base URL; null: the base of the request that opens the checkout. */
    publicUrl: string | null;
  };
}

/** A checkout as its buyer sees it. */
export interface CheckoutView {
  id: string;
  plan_id: string;
  plan_code: string;
  interval: PlanInterval;
  amount: number;
  currency: string;
  provider: string;
  /** The provider's page where the payer pays. */
  url: string;
  expires_at: string;
  /** `open` until paid (failed attempts leave it open) or expired unpaid; `paid` for good. */
  status: 'open' | 'paid' | 'expired';
  payment_id: string | null;
  failed_attempts: number;
  last_failure: { code: string; message: string } | null;
  started_at: string;
  completed_at: string | null;
}

export function checkoutView(state: Exclude<CheckoutState, { status: 'absent' }>): CheckoutView {
  return {
    id: state.checkout_id,
    plan_id: state.plan_id,
    plan_code: state.plan_code,
    interval: state.interval,
    amount: state.amount,
    currency: state.currency,
    provider: state.provider,
    url: state.url,
    expires_at: state.expires_at,
    status: state.status,
    payment_id: state.status === 'paid' ? state.payment_id : null,
    failed_attempts: state.failed_payments.length,
    last_failure: state.last_failure,
    started_at: state.started_at,
    completed_at: state.status === 'paid' ? state.completed_at : null,
  };
}

const checkoutNotFound = () => notFound('checkout_not_found', 'no such checkout');

/** Which plan to buy (by id or by code, one of them) and for which interval. */
export interface CheckoutInput {
  plan_id?: string;
  plan_code?: string;
  interval: PlanInterval;
}

async function planToBuy(deps: ReadModelDependencies, input: CheckoutInput): Promise<PlanDocument> {
  if (input.plan_id === undefined && input.plan_code === undefined) throw invalid('invalid_request', 'plan_id: name the plan to buy by plan_id or by plan_code', 'plan_id');
  if (input.plan_id !== undefined && input.plan_code !== undefined) throw invalid('invalid_request', 'plan_code: name the plan by plan_id or by plan_code, not both', 'plan_code');
  const plans = deps.readStore.collection<PlanDocument>(PLANS);
  const plan = input.plan_id !== undefined ? await plans.get(input.plan_id) : (await plans.find({ where: { code: input.plan_code as string }, limit: 1 })).items[0];
  if (!plan) throw notFound('plan_not_found', 'no such plan');
  return plan;
}

/** `base` with the checkout's id and outcome added to its query. */
function returnUrl(base: string, checkoutId: string, outcome: 'success' | 'canceled'): string {
  const url = new URL(base);
  url.searchParams.set('checkout_id', checkoutId);
  url.searchParams.set('checkout', outcome);
  return url.toString();
}

/**
 * Opens a checkout for one period of a sellable, priced plan (409 `plan_not_sellable`,
 * `plan_is_default`, `plan_is_free`, `interval_not_offered`; 404 `plan_not_found`) at the
 * payment provider, and answers where the payer pays. The checkout's URLs are on PUBLIC_URL,
 * or else on `platformUrl`, the platform's base URL as the caller reached it: the provider's
 * webhooks go there. Under an Idempotency-Key the checkout's id derives from
 * the key, so a retry finds the checkout the first request opened.
 */
export async function startCheckout(
  deps: CheckoutDependencies,
  principal: Principal,
  input: CheckoutInput,
  platformUrl: string,
  context: RequestContext,
  options: { idempotencyKey?: string } = {},
): Promise<CheckoutView> {
  const plan = await planToBuy(deps, input);
  const price = checkoutPrice(plan, input.interval, await defaultPlanCode(deps));
  if (price._tag === 'Left') throw price.left;
  const checkoutId = options.idempotencyKey === undefined ? deps.ids.newId() : deps.ids.fromKey(`${options.idempotencyKey}:checkout`);
  const stream = checkoutStream(checkoutId);
  const earlier = await loadAggregate(deps, checkoutAggregate, stream);
  if (earlier.state.status !== 'absent') {
    if (earlier.state.tenant_id !== principal.tenant_id) throw checkoutNotFound();
    return checkoutView(earlier.state);
  }
  const user = await deps.readStore.collection<UserDocument>(USERS).get(principal.user_id);
  const base = (deps.billing.publicUrl ?? platformUrl).replace(/\/+$/, '');
  const returnTo = deps.billing.returnUrl ?? `${base}/`;
  const opened = await deps.paymentProvider.createCheckout({
    checkout_id: checkoutId,
    tenant_id: principal.tenant_id,
    plan: { id: plan.id, code: plan.code, name: plan.name },
    interval: input.interval,
    amount: price.right.amount,
    currency: price.right.currency,
    customer_email: user?.email ?? null,
    success_url: returnUrl(returnTo, checkoutId, 'success'),
    cancel_url: returnUrl(returnTo, checkoutId, 'canceled'),
    webhook_url: `${base}/api/v1/billing/webhook`,
    platform_url: base,
  });
  const command: CheckoutCommand = {
    type: 'StartCheckout',
    data: {
      checkout_id: checkoutId,
      tenant_id: principal.tenant_id,
      plan_id: plan.id,
      plan_code: plan.code,
      interval: input.interval,
      amount: price.right.amount,
      currency: price.right.currency,
      provider: deps.paymentProvider.name,
      provider_checkout_id: opened.provider_checkout_id,
      url: opened.url,
      expires_at: opened.expires_at,
      started_by: principal.user_id,
    },
  };
  await handleCommand(deps, checkoutAggregate, stream, command, actingContext(principal, context));
  const { state } = await loadAggregate(deps, checkoutAggregate, stream);
  if (state.status === 'absent') throw new Error(`checkout ${checkoutId} was recorded and cannot be read back`);
  return checkoutView(state);
}

/** The position of a stream's last event, or null when it has none. */
async function lastPosition(deps: Pick<CommandDependencies, 'eventStore'>, stream: string): Promise<number | null> {
  const [last] = await deps.eventStore.readStream(stream, { direction: 'backwards', maxCount: 1 });
  return last ? last.position : null;
}

/**
 * Applies a recorded payment to its checkout and the tenant's subscription: a success completes
 * the checkout and activates (renews, switches) the subscription; a failure notes the failed
 * attempt on the checkout, and changes no plan. Each step at most once per payment. Answers the
 * position the read models must reach to show it (whoever wrote it), or null for an unknown
 * payment.
 */
export async function settleCheckout(deps: CommandDependencies, paymentId: string, context: RequestContext): Promise<number | null> {
  const [payment] = await deps.eventStore.readStream(paymentStream(paymentId), { maxCount: 1 });
  if (!payment || (payment.type !== 'PaymentSucceeded' && payment.type !== 'PaymentFailed')) return null;
  const { checkout_id, tenant_id } = payment.data;
  const stream = checkoutStream(checkout_id);
  const { state: checkout } = await loadAggregate(deps, checkoutAggregate, stream);
  if (checkout.status === 'absent') return null;
  const scoped = { ...context, tenant_id };
  if (payment.type === 'PaymentFailed') {
    const { failure_code, failure_message } = payment.data;
    await handleCommand(deps, checkoutAggregate, stream, { type: 'RecordCheckoutAttemptFailure', data: { payment_id: paymentId, failure_code, failure_message } }, scoped, {
      idempotencyKey: `checkout:failure:${paymentId}`,
    });
    return lastPosition(deps, stream);
  }
  await handleCommand(deps, checkoutAggregate, stream, { type: 'CompleteCheckout', data: { payment_id: paymentId } }, scoped, { idempotencyKey: `checkout:completion:${paymentId}` });
  const { plan_id, interval, paid_at } = payment.data;
  await activateSubscription(deps, { tenant_id, plan_id, plan_code: checkout.plan_code, interval, payment_id: paymentId, checkout_id, paid_at }, scoped);
  const positions = [await lastPosition(deps, stream), await lastPosition(deps, subscriptionStream(tenant_id))].filter((position): position is number => position !== null);
  return positions.length > 0 ? Math.max(...positions) : null;
}

/** What confirming a checkout answers: the checkout as it stands, and the subscription. */
export interface CheckoutConfirmation {
  checkout: CheckoutView;
  subscription: SubscriptionView;
}

/**
 * Asks the provider how the caller's checkout stands and records what it says: paid, the
 * payment (once, whoever reports it) and the activation; expired, the expiry; open or failed,
 * nothing (failed attempts reach the platform by webhook, each with its own event). The same
 * checkout confirmed again gives the same answer and records nothing more.
 */
export async function confirmCheckout(
  deps: CheckoutDependencies & EntitlementDependencies,
  principal: Principal,
  checkoutId: string,
  context: RequestContext,
): Promise<CheckoutConfirmation> {
  const stream = checkoutStream(checkoutId);
  const { state } = await loadAggregate(deps, checkoutAggregate, stream);
  if (state.status === 'absent' || state.tenant_id !== principal.tenant_id) throw checkoutNotFound();
  const acting = actingContext(principal, context);
  let position: number | null;
  if (state.status === 'paid') {
    // Settled already; settling again finishes what a stopped process may have left undone.
    position = await settleCheckout(deps, state.payment_id, acting);
  } else {
    if (state.provider !== deps.paymentProvider.name) {
      throw conflict('checkout_of_another_provider', `this checkout was opened with the ${state.provider} payment provider, which the platform no longer uses`);
    }
    const status = await deps.paymentProvider.retrieveCheckout(state.provider_checkout_id);
    if (status.status === 'paid') {
      const { checkout_id, tenant_id, plan_id, interval, provider } = state;
      const paidAt = Number.isNaN(Date.parse(status.paid_at)) ? deps.clock.now().toISOString() : new Date(status.paid_at).toISOString();
      const recorded = await recordPaymentSucceeded(
        deps,
        { tenant_id, checkout_id, plan_id, interval, amount: status.amount, currency: status.currency, provider, provider_payment_id: status.provider_payment_id, paid_at: paidAt },
        acting,
      );
      const settled = await settleCheckout(deps, paidCheckoutPaymentId(deps.ids, checkout_id), acting);
      position = Math.max(recorded.position ?? 0, settled ?? 0) || null;
    } else if (status.status === 'expired') {
      position = (await handleCommand(deps, checkoutAggregate, stream, { type: 'ExpireCheckout', data: {} }, acting)).position;
    } else {
      position = null;
    }
  }
  await deps.readYourWrites(position);
  const { state: now } = await loadAggregate(deps, checkoutAggregate, stream);
  if (now.status === 'absent') throw checkoutNotFound();
  return { checkout: checkoutView(now), subscription: await currentSubscription(deps, principal.tenant_id) };
}
