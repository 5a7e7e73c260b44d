// The checkout aggregate: one attempt of a tenant to buy one period of a plan, from the
// provider's checkout page being opened to the payment. Stream `checkout-<id>`.
//
// - `open` from CheckoutStarted: the payer may try, fail (CheckoutAttemptFailed, still open:
//   they may try another card) and pay.
// - `paid` for good once a payment completes it (CheckoutCompleted, naming the payment). A paid
//   checkout stays paid: the same payment again (a redelivered webhook, a second confirm)
//   changes nothing, and a failure reported late changes nothing either.
// - `expired` when the provider says its page expired unpaid. Money the provider did take is
//   never refused: a payment reported for an expired checkout still completes it.

import * as t from 'io-ts';
import { type Either, left, right } from 'fp-ts/Either';
import type { Decider } from '../shared/decider';
import { type DomainError, conflict, notFound } from '../shared/errors';
import { declareEvent, eventGroup, type GroupEvent } from '../shared/events';
import { toStreamName } from '../shared/stream-names';
import { type PlanInterval, type PlanPrice, priceOf } from '../plan/plan';

const Interval = t.keyof({ month: null, year: null });

const CheckoutFacts = t.type({
  checkout_id: t.string,
  tenant_id: t.string,
  plan_id: t.string,
  plan_code: t.string,
  interval: Interval,
  /** Minor units, more than zero. */
  amount: t.number,
  currency: t.string,
  /** `sandbox` or `stripe`: the provider that holds the checkout page. */
  provider: t.string,
  provider_checkout_id: t.string,
  /** The provider's page the payer opens. */
  url: t.string,
  expires_at: t.string,
  /** The user who opened it. */
  started_by: t.string,
});
export type CheckoutFacts = t.TypeOf<typeof CheckoutFacts>;

export const CheckoutStarted = declareEvent('CheckoutStarted', t.intersection([CheckoutFacts, t.type({ started_at: t.string })]));
export const CheckoutCompleted = declareEvent('CheckoutCompleted', t.type({ checkout_id: t.string, tenant_id: t.string, payment_id: t.string, completed_at: t.string }));
export const CheckoutAttemptFailed = declareEvent(
  'CheckoutAttemptFailed',
  t.type({ checkout_id: t.string, tenant_id: t.string, payment_id: t.string, failure_code: t.string, failure_message: t.string, failed_at: t.string }),
);
export const CheckoutExpired = declareEvent('CheckoutExpired', t.type({ checkout_id: t.string, tenant_id: t.string, expired_at: t.string }));

export const checkoutEvents = eventGroup('checkout', [CheckoutStarted, CheckoutCompleted, CheckoutAttemptFailed, CheckoutExpired]);
export type CheckoutEvent = GroupEvent<typeof checkoutEvents>;

export type CheckoutCommand =
  | { type: 'StartCheckout'; data: CheckoutFacts }
  /** A payment for this checkout succeeded. */
  | { type: 'CompleteCheckout'; data: { payment_id: string } }
  /** The payer tried and the provider refused (a declined card): the checkout stays open. */
  | { type: 'RecordCheckoutAttemptFailure'; data: { payment_id: string; failure_code: string; failure_message: string } }
  /** The provider says the page expired unpaid. */
  | { type: 'ExpireCheckout'; data: Record<string, never> };

export interface CheckoutLastFailure {
  code: string;
  message: string;
}

interface CheckoutRecord extends CheckoutFacts {
  started_at: string;
  /** The payment ids of the failed attempts, oldest first. */
  failed_payments: string[];
  last_failure: CheckoutLastFailure | null;
}

export type CheckoutState =
  | { status: 'absent' }
  | ({ status: 'open' } & CheckoutRecord)
  | ({ status: 'paid'; payment_id: string; completed_at: string } & CheckoutRecord)
  | ({ status: 'expired'; expired_at: string } & CheckoutRecord);

export type CheckoutStatus = Exclude<CheckoutState['status'], 'absent'>;

export const checkoutStream = (checkoutId: string): string => toStreamName(checkoutEvents.category, checkoutId);

/** The record behind a state, whatever its status. */
function recordOf(state: Exclude<CheckoutState, { status: 'absent' }>): CheckoutRecord {
  const { checkout_id, tenant_id, plan_id, plan_code, interval, amount, currency, provider, provider_checkout_id, url, expires_at, started_by, started_at, failed_payments, last_failure } = state;
  return { checkout_id, tenant_id, plan_id, plan_code, interval, amount, currency, provider, provider_checkout_id, url, expires_at, started_by, started_at, failed_payments, last_failure };
}

const sameFacts = (state: CheckoutRecord, facts: CheckoutFacts): boolean => (Object.keys(facts) as Array<keyof CheckoutFacts>).every((key) => state[key] === facts[key]);

export const checkoutDecider: Decider<CheckoutCommand, CheckoutEvent, CheckoutState> = {
  initialState: () => ({ status: 'absent' }),
  evolve(state, event) {
    switch (event.type) {
      case 'CheckoutStarted':
        return { status: 'open', ...event.data, failed_payments: [], last_failure: null };
      case 'CheckoutCompleted':
        return state.status === 'absent' ? state : { ...recordOf(state), status: 'paid', payment_id: event.data.payment_id, completed_at: event.data.completed_at };
      case 'CheckoutAttemptFailed': {
        if (state.status === 'absent') return state;
        const failure = { failed_payments: [...state.failed_payments, event.data.payment_id], last_failure: { code: event.data.failure_code, message: event.data.failure_message } };
        return { ...state, ...failure };
      }
      case 'CheckoutExpired':
        return state.status === 'open' ? { ...recordOf(state), status: 'expired', expired_at: event.data.expired_at } : state;
    }
  },
  decide(command, state, { now }): Either<DomainError, CheckoutEvent[]> {
    const at = now.toISOString();
    if (command.type === 'StartCheckout') {
      // The same start again (a request retried under its Idempotency-Key) records nothing new.
      if (state.status !== 'absent') return sameFacts(state, command.data) ? right([]) : left(conflict('checkout_exists', 'this checkout exists already'));
      if (!Number.isSafeInteger(command.data.amount) || command.data.amount <= 0) return left(conflict('plan_is_free', 'a checkout collects money: this plan costs nothing for that interval'));
      return right([{ type: 'CheckoutStarted', data: { ...command.data, started_at: at } }]);
    }
    if (state.status === 'absent') return left(notFound('checkout_not_found', 'no such checkout'));
    const { checkout_id, tenant_id } = state;
    switch (command.type) {
      case 'CompleteCheckout':
        if (state.status === 'paid') {
          if (state.payment_id === command.data.payment_id) return right([]);
          return left(conflict('checkout_paid', `the checkout was paid by payment ${state.payment_id}`));
        }
        return right([{ type: 'CheckoutCompleted', data: { checkout_id, tenant_id, payment_id: command.data.payment_id, completed_at: at } }]);
      case 'RecordCheckoutAttemptFailure':
        // A failure reported after the payment (deliveries cross) does not undo it.
        if (state.status === 'paid' || state.failed_payments.includes(command.data.payment_id)) return right([]);
        return right([{ type: 'CheckoutAttemptFailed', data: { checkout_id, tenant_id, ...command.data, failed_at: at } }]);
      case 'ExpireCheckout':
        return right(state.status === 'open' ? [{ type: 'CheckoutExpired', data: { checkout_id, tenant_id, expired_at: at } }] : []);
    }
  },
};

/** What a checkout needs to know of the plan being bought. */
export interface PlanForSale {
  code: string;
  status: 'sellable' | 'retired';
  prices: PlanPrice[];
}

/**
 * The price a checkout collects for one period of `plan`, or why it cannot be bought: a
 * retired plan is no longer sold, the default plan (every tenant without a subscription is on
 * it; a tenant returns to it by cancelling) and a zero price need no payment, and an interval
 * the plan is not priced for cannot be chosen.
 */
export function checkoutPrice(plan: PlanForSale, interval: PlanInterval, defaultPlanCode: string): Either<DomainError, PlanPrice> {
  if (plan.status !== 'sellable') return left(conflict('plan_not_sellable', `the ${plan.code} plan is no longer sold`));
  if (plan.code === defaultPlanCode) return left(conflict('plan_is_default', `the ${plan.code} plan is the default plan, which needs no payment: cancel the subscription to return to it`));
  const price = priceOf(plan, interval);
  if (!price) return left(conflict('interval_not_offered', `the ${plan.code} plan is not sold by the ${interval}`));
  if (price.amount <= 0) return left(conflict('plan_is_free', `the ${plan.code} plan costs nothing by the ${interval}: there is nothing to pay`));
  return right(price);
}
