// The subscription aggregate: which paid plan a tenant is on, and until when. One per tenant,
// stream `subscription-<tenantId>`. docs/billing.md draws the states and transitions.
//
//   none ──paid──> active ──cancel (at period end)──> canceling ──period end──> canceled
//                    │  └──cancel (at once)──────────────────────────────────> canceled
//                    └──period end, unpaid──> past_due ──grace over──> ended
//   past_due ──paid──> active        canceled/ended ──paid──> active (a new subscription)
//   canceling ──paid──> active (the cancellation is withdrawn)
//
// - The plan applies while `active`, `canceling` and `past_due` (PLAN_APPLYING_STATUSES);
//   otherwise (`none`, `canceled`, `ended`) the tenant is on the default plan.
// - A payment activates: a first one (or one after the end) starts a period at the payment
//   time; the same plan and interval again extends the current period by one interval from its
//   end (an early renewal loses nothing; after the end, while past_due, the new period starts
//   at the payment); another plan or interval switches at once, the new period starting at the
//   payment, with no proration (what remained of the old period is not refunded).
// - Nothing renews by itself (no stored card): at the end of a period that was not cancelled
//   the subscription goes `past_due` for a grace period (BILLING_GRACE_DAYS, recorded as
//   `grace_until` on the event), then `ended` (reason `unpaid`) back to the default plan.
// - A payment is applied once: the same payment again changes nothing.

import * as t from 'io-ts';
import { type Either, left, right } from 'fp-ts/Either';
import type { PlanInterval } from '../plan/plan';
import type { Decider } from '../shared/decider';
import { type DomainError, conflict } from '../shared/errors';
import { declareEvent, eventGroup, type GroupEvent } from '../shared/events';
import { toStreamName } from '../shared/stream-names';

const Interval = t.keyof({ month: null, year: null });

const Period = t.type({
  tenant_id: t.string,
  plan_id: t.string,
  plan_code: t.string,
  interval: Interval,
  /** The payment that paid for this period, and its checkout. */
  payment_id: t.string,
  checkout_id: t.string,
  current_period_start: t.string,
  current_period_end: t.string,
  activated_at: t.string,
});
export type SubscriptionPeriod = t.TypeOf<typeof Period>;

/** A first subscription, or a new one after the last was canceled or ended. */
export const SubscriptionStarted = declareEvent('SubscriptionStarted', Period);
/** The same plan and interval paid again: the period is extended (or, past due, starts anew). */
export const SubscriptionRenewed = declareEvent('SubscriptionRenewed', Period);
/** Another plan or interval paid for: it applies at once, for a period from the payment. */
export const SubscriptionPlanChanged = declareEvent('SubscriptionPlanChanged', t.intersection([Period, t.type({ previous_plan_id: t.string })]));
export const SubscriptionCancellationScheduled = declareEvent(
  'SubscriptionCancellationScheduled',
  t.type({ tenant_id: t.string, plan_id: t.string, cancel_at: t.string, requested_at: t.string }),
);
/** Back to the default plan: asked to at once, or at the end of a period cancelled earlier. */
export const SubscriptionCanceled = declareEvent('SubscriptionCanceled', t.type({ tenant_id: t.string, plan_id: t.string, at_period_end: t.boolean, canceled_at: t.string }));
export const SubscriptionPastDue = declareEvent(
  'SubscriptionPastDue',
  t.type({ tenant_id: t.string, plan_id: t.string, period_ended_at: t.string, grace_until: t.string, marked_at: t.string }),
);
/** Back to the default plan because the period ran out unpaid and so did the grace period. */
export const SubscriptionEnded = declareEvent('SubscriptionEnded', t.type({ tenant_id: t.string, plan_id: t.string, reason: t.literal('unpaid'), ended_at: t.string }));

export const subscriptionEvents = eventGroup('subscription', [
  SubscriptionStarted,
  SubscriptionRenewed,
  SubscriptionPlanChanged,
  SubscriptionCancellationScheduled,
  SubscriptionCanceled,
  SubscriptionPastDue,
  SubscriptionEnded,
]);
export type SubscriptionEvent = GroupEvent<typeof subscriptionEvents>;

export const SUBSCRIPTION_STATUSES = ['none', 'active', 'canceling', 'past_due', 'canceled', 'ended'] as const;
export type SubscriptionStatus = (typeof SUBSCRIPTION_STATUSES)[number];
/** The statuses in which the subscription's plan applies; in the others the tenant is on the default plan. */
export const PLAN_APPLYING_STATUSES: readonly SubscriptionStatus[] = ['active', 'canceling', 'past_due'];

export type SubscriptionCommand =
  /** A payment for one period of a plan succeeded. */
  | { type: 'ActivateSubscription'; data: { tenant_id: string; plan_id: string; plan_code: string; interval: PlanInterval; payment_id: string; checkout_id: string; paid_at: string } }
  /** At the end of the period (the default), or at once. */
  | { type: 'CancelSubscription'; data: { at_period_end: boolean } }
  /** The due pass: ends what is over by now (`grace_days` of BILLING_GRACE_DAYS). */
  | { type: 'EndSubscriptionPeriod'; data: { grace_days: number } };

interface Subscribed {
  tenant_id: string;
  plan_id: string;
  plan_code: string;
  interval: PlanInterval;
  payment_id: string;
  checkout_id: string;
  current_period_start: string;
  current_period_end: string;
}

export type SubscriptionState =
  | { status: 'none' }
  | ({ status: 'active' } & Subscribed)
  | ({ status: 'canceling'; cancel_at: string } & Subscribed)
  | ({ status: 'past_due'; grace_until: string } & Subscribed)
  | ({ status: 'canceled'; canceled_at: string } & Subscribed)
  | ({ status: 'ended'; ended_at: string } & Subscribed);

export const subscriptionStream = (tenantId: string): string => toStreamName(subscriptionEvents.category, tenantId);

const DAY_MS = 24 * 3600 * 1000;

/**
 * One interval after `from`, in UTC calendar months (a year is twelve): the same day of the
 * month, or the month's last day when it has fewer (January 31 + 1 month = February 28 or 29).
 */
export function addInterval(from: Date, interval: PlanInterval): Date {
  const months = interval === 'year' ? 12 : 1;
  const target = new Date(from.getTime());
  target.setUTCDate(1);
  target.setUTCMonth(target.getUTCMonth() + months);
  const lastDay = new Date(Date.UTC(target.getUTCFullYear(), target.getUTCMonth() + 1, 0)).getUTCDate();
  target.setUTCDate(Math.min(from.getUTCDate(), lastDay));
  return target;
}

function subscribedOf(state: Exclude<SubscriptionState, { status: 'none' }>): Subscribed {
  const { tenant_id, plan_id, plan_code, interval, payment_id, checkout_id, current_period_start, current_period_end } = state;
  return { tenant_id, plan_id, plan_code, interval, payment_id, checkout_id, current_period_start, current_period_end };
}

const periodOf = (data: SubscriptionPeriod): Subscribed => ({
  tenant_id: data.tenant_id,
  plan_id: data.plan_id,
  plan_code: data.plan_code,
  interval: data.interval,
  payment_id: data.payment_id,
  checkout_id: data.checkout_id,
  current_period_start: data.current_period_start,
  current_period_end: data.current_period_end,
});

const reached = (now: Date, at: string): boolean => now.getTime() >= Date.parse(at);

export const subscriptionDecider: Decider<SubscriptionCommand, SubscriptionEvent, SubscriptionState> = {
  initialState: () => ({ status: 'none' }),
  evolve(state, event) {
    switch (event.type) {
      case 'SubscriptionStarted':
      case 'SubscriptionRenewed':
      case 'SubscriptionPlanChanged':
        return { status: 'active', ...periodOf(event.data) };
      case 'SubscriptionCancellationScheduled':
        return state.status === 'active' ? { ...subscribedOf(state), status: 'canceling', cancel_at: event.data.cancel_at } : state;
      case 'SubscriptionCanceled':
        return state.status === 'none' ? state : { ...subscribedOf(state), status: 'canceled', canceled_at: event.data.canceled_at };
      case 'SubscriptionPastDue':
        return state.status === 'active' ? { ...subscribedOf(state), status: 'past_due', grace_until: event.data.grace_until } : state;
      case 'SubscriptionEnded':
        return state.status === 'none' ? state : { ...subscribedOf(state), status: 'ended', ended_at: event.data.ended_at };
    }
  },
  decide(command, state, { now }): Either<DomainError, SubscriptionEvent[]> {
    const at = now.toISOString();
    switch (command.type) {
      case 'ActivateSubscription': {
        const { paid_at, ...paid } = command.data;
        if (state.status !== 'none' && state.payment_id === paid.payment_id) return right([]);
        const paidAt = new Date(paid_at);
        const fromPayment = { current_period_start: paidAt.toISOString(), current_period_end: addInterval(paidAt, paid.interval).toISOString() };
        if (state.status === 'none' || state.status === 'canceled' || state.status === 'ended') {
          return right([{ type: 'SubscriptionStarted', data: { ...paid, ...fromPayment, activated_at: at } }]);
        }
        if (state.plan_id !== paid.plan_id || state.interval !== paid.interval) {
          return right([{ type: 'SubscriptionPlanChanged', data: { ...paid, ...fromPayment, previous_plan_id: state.plan_id, activated_at: at } }]);
        }
        if (state.status === 'past_due') return right([{ type: 'SubscriptionRenewed', data: { ...paid, ...fromPayment, activated_at: at } }]);
        // Paid early: one more interval after the current one, whichever comes later of its end and the payment.
        const from = new Date(Math.max(Date.parse(state.current_period_end), paidAt.getTime()));
        const extended = { current_period_start: state.current_period_start, current_period_end: addInterval(from, paid.interval).toISOString() };
        return right([{ type: 'SubscriptionRenewed', data: { ...paid, ...extended, activated_at: at } }]);
      }
      case 'CancelSubscription': {
        if (state.status === 'none' || state.status === 'canceled' || state.status === 'ended') {
          return left(conflict('no_subscription', 'this organization has no paid subscription to cancel; it is on the default plan'));
        }
        const { tenant_id, plan_id } = state;
        const atOnce: SubscriptionEvent = { type: 'SubscriptionCanceled', data: { tenant_id, plan_id, at_period_end: false, canceled_at: at } };
        switch (state.status) {
          case 'active':
            return right(command.data.at_period_end ? [{ type: 'SubscriptionCancellationScheduled', data: { tenant_id, plan_id, cancel_at: state.current_period_end, requested_at: at } }] : [atOnce]);
          case 'canceling':
            return right(command.data.at_period_end ? [] : [atOnce]);
          case 'past_due':
            // The paid period is over already: there is no end to wait for.
            return right([atOnce]);
        }
      }
      // eslint-disable-next-line no-fallthrough
      case 'EndSubscriptionPeriod': {
        if (state.status !== 'active' && state.status !== 'canceling' && state.status !== 'past_due') return right([]);
        const { tenant_id, plan_id } = state;
        const ended: SubscriptionEvent = { type: 'SubscriptionEnded', data: { tenant_id, plan_id, reason: 'unpaid', ended_at: at } };
        switch (state.status) {
          case 'canceling':
            return right(reached(now, state.current_period_end) ? [{ type: 'SubscriptionCanceled', data: { tenant_id, plan_id, at_period_end: true, canceled_at: at } }] : []);
          case 'past_due':
            return right(reached(now, state.grace_until) ? [ended] : []);
          case 'active': {
            if (!reached(now, state.current_period_end)) return right([]);
            const graceUntil = new Date(Date.parse(state.current_period_end) + command.data.grace_days * DAY_MS).toISOString();
            const pastDue: SubscriptionEvent = { type: 'SubscriptionPastDue', data: { tenant_id, plan_id, period_ended_at: state.current_period_end, grace_until: graceUntil, marked_at: at } };
            // A pass that comes after the grace period too (the platform was down) records both steps.
            return right(reached(now, graceUntil) ? [pastDue, ended] : [pastDue]);
          }
        }
      }
    }
  },
};

/** When the due pass should next look at a subscription in this state; null when nothing falls due. */
export function nextDueAt(state: SubscriptionState): string | null {
  switch (state.status) {
    case 'active':
    case 'canceling':
      return state.current_period_end;
    case 'past_due':
      return state.grace_until;
    default:
      return null;
  }
}
