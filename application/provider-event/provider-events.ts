// The payment provider's webhook (POST /billing/webhook): the one way a provider tells the
// platform of a payment attempt by itself. The signature over the exact raw body is checked
// first (bad or older than the provider's tolerance: 400 `invalid_signature`, nothing
// recorded). Then, in this order, so a delivery cut short anywhere is completed by the next:
//   1. an event already recorded as received is a repeat: answered, nothing applied again;
//   2. a paid or failed attempt of a checkout the platform opened records its payment (once per
//      checkout, or per provider event for a failure: application/payment) and settles the
//      checkout (application/checkout `settleCheckout`);
//   3. the event is recorded as received (`ProviderEventReceived`, one stream per provider
//      event, appended only where none exists), with what was done: `applied`, or
//      `ignored_unknown_checkout` for a checkout the platform does not know, or `ignored` for a
//      kind of event it does not act on. The answer is 200 either way, so the provider stops
//      delivering it.
// A delivery that stops between 2 and 3 leaves the event unrecorded: the provider delivers it
// again, and step 2 then records nothing new (the checkout_settlement saga has settled it).

import { checkoutStream } from '../../domain/checkout/checkout';
import {
  type ProviderEventCommand,
  type ProviderEventEvent,
  type ProviderEventOutcome,
  type ProviderEventReceipt,
  type ProviderEventState,
  providerEventDecider,
  providerEventEvents,
  providerEventStream,
} from '../../domain/provider-event/provider-event';
import { invalid } from '../../domain/shared/errors';
import { checkoutAggregate, settleCheckout } from '../checkout/checkouts';
import { type Aggregate, type CommandDependencies, handleCommand, loadAggregate } from '../command-handling/handle-command';
import { failedAttemptPaymentId, paidCheckoutPaymentId, recordPaymentFailed, recordPaymentSucceeded } from '../payment/payments';
import { type PaymentProvider, type ProviderEvent, WebhookSignatureError } from '../ports/payment-provider';
import type { ReadYourWritesDependencies } from '../shared/read-models';
import type { RequestContext } from '../shared/request-context';

export const providerEventAggregate: Aggregate<ProviderEventCommand, ProviderEventEvent, ProviderEventState> = { decider: providerEventDecider, events: providerEventEvents };

export type WebhookDependencies = CommandDependencies & ReadYourWritesDependencies & { paymentProvider: PaymentProvider };

/** What the webhook answers the provider. */
export interface WebhookReceipt {
  received: true;
  outcome: ProviderEventOutcome;
  /** The event was received before: nothing was done again. */
  duplicate: boolean;
}

/** Longer ids are nobody's checkout (ours are UUIDs). */
const MAX_CHECKOUT_ID = 200;

/** Normalizes the provider's time; the platform's clock when it is not one. */
const instant = (at: string, now: Date): string => (Number.isNaN(Date.parse(at)) ? now.toISOString() : new Date(at).toISOString());

/** Verifies, deduplicates and applies one webhook delivery. */
export async function receiveWebhook(
  deps: WebhookDependencies,
  rawBody: Buffer,
  headers: Readonly<Record<string, string | string[] | undefined>>,
  context: RequestContext,
): Promise<WebhookReceipt> {
  let event: ProviderEvent;
  try {
    event = deps.paymentProvider.parseWebhook(rawBody, headers);
  } catch (error) {
    if (error instanceof WebhookSignatureError) throw invalid('invalid_signature', error.message);
    throw error;
  }
  const provider = deps.paymentProvider.name;
  // The provider's ids are not ours: the stream is named by a digest of them.
  const stream = providerEventStream(deps.ids.fromKey(`providerEvent:${provider}:${event.id}`));
  const earlier = await loadAggregate(deps, providerEventAggregate, stream);
  if (earlier.state.status === 'received') return { received: true, outcome: earlier.state.outcome, duplicate: true };

  const asProvider: RequestContext = { ...context, actor: { kind: 'system', id: `payment_provider:${provider}` } };
  const record = async (receipt: Omit<ProviderEventReceipt, 'provider' | 'event_id'>, tenantId: string | null, settledAt: number | null): Promise<WebhookReceipt> => {
    const result = await handleCommand(deps, providerEventAggregate, stream, { type: 'RecordProviderEvent', data: { provider, event_id: event.id, ...receipt } }, { ...asProvider, tenant_id: tenantId });
    await deps.readYourWrites(Math.max(result.position ?? 0, settledAt ?? 0) || null);
    return { received: true, outcome: receipt.outcome, duplicate: result.events.length === 0 };
  };

  if (event.kind === 'other') return record({ kind: event.type, checkout_id: null, outcome: 'ignored' }, null, null);
  const known = event.checkout_id.length > 0 && event.checkout_id.length <= MAX_CHECKOUT_ID;
  const { state: checkout } = known ? await loadAggregate(deps, checkoutAggregate, checkoutStream(event.checkout_id)) : { state: { status: 'absent' as const } };
  if (checkout.status === 'absent' || checkout.provider !== provider || checkout.provider_checkout_id !== event.provider_checkout_id) {
    return record({ kind: event.kind, checkout_id: event.checkout_id, outcome: 'ignored_unknown_checkout' }, null, null);
  }
  const { checkout_id, tenant_id, plan_id, interval } = checkout;
  const now = deps.clock.now();
  let paymentId: string;
  if (event.kind === 'checkout_paid') {
    const paidAt = instant(event.occurred_at, now);
    await recordPaymentSucceeded(
      deps,
      { tenant_id, checkout_id, plan_id, interval, amount: event.amount, currency: event.currency, provider, provider_payment_id: event.provider_payment_id, paid_at: paidAt },
      asProvider,
    );
    paymentId = paidCheckoutPaymentId(deps.ids, checkout_id);
  } else {
    const { failure_code, failure_message } = event;
    const failedAt = instant(event.occurred_at, now);
    await recordPaymentFailed(deps, event.id, { tenant_id, checkout_id, plan_id, interval, amount: event.amount, currency: event.currency, provider, failure_code, failure_message, failed_at: failedAt }, asProvider);
    paymentId = failedAttemptPaymentId(deps.ids, provider, event.id);
  }
  const settledAt = await settleCheckout(deps, paymentId, asProvider);
  return record({ kind: event.kind, checkout_id, outcome: 'applied' }, tenant_id, settledAt);
}
