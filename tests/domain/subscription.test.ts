// The subscription decider given/when/then: activation by a payment (started, renewed,
// switched; each payment once), cancellation at period end or at once, and what the end of a
// period does (canceling -> canceled; unpaid -> past_due -> ended after the grace period).

import { expect } from 'chai';
import { type SubscriptionEvent, type SubscriptionPeriod, addInterval, nextDueAt, subscriptionDecider } from '../../domain/subscription/subscription';
import { FIXED_NOW, deciderSpec } from '../support/decider-spec';

const spec = deciderSpec(subscriptionDecider);
const at = FIXED_NOW.toISOString();
const DAY = 24 * 3600 * 1000;
const days = (count: number, from = FIXED_NOW): Date => new Date(from.getTime() + count * DAY);

const T = 't1';
const paid = (payment_id: string, plan = 'starter', interval: 'month' | 'year' = 'month', paidAt = at) => ({
  type: 'ActivateSubscription' as const,
  data: { tenant_id: T, plan_id: plan, plan_code: plan, interval, payment_id, checkout_id: `co-${payment_id}`, paid_at: paidAt },
});
const period = (payment_id: string, start: string, end: string, plan = 'starter', interval: 'month' | 'year' = 'month'): SubscriptionPeriod => ({
  tenant_id: T,
  plan_id: plan,
  plan_code: plan,
  interval,
  payment_id,
  checkout_id: `co-${payment_id}`,
  current_period_start: start,
  current_period_end: end,
  activated_at: at,
});
const PERIOD_END = '2026-12-22T10:00:00.000Z';
const started: SubscriptionEvent = { type: 'SubscriptionStarted', data: period('pay-1', at, PERIOD_END) };
const scheduled: SubscriptionEvent = { type: 'SubscriptionCancellationScheduled', data: { tenant_id: T, plan_id: 'starter', cancel_at: PERIOD_END, requested_at: at } };
const canceledAtOnce: SubscriptionEvent = { type: 'SubscriptionCanceled', data: { tenant_id: T, plan_id: 'starter', at_period_end: false, canceled_at: at } };
const pastDue: SubscriptionEvent = {
  type: 'SubscriptionPastDue',
  data: { tenant_id: T, plan_id: 'starter', period_ended_at: PERIOD_END, grace_until: '2026-12-29T10:00:00.000Z', marked_at: at },
};
const ended: SubscriptionEvent = { type: 'SubscriptionEnded', data: { tenant_id: T, plan_id: 'starter', reason: 'unpaid', ended_at: at } };
const cancel = (at_period_end: boolean) => ({ type: 'CancelSubscription' as const, data: { at_period_end } });
const endPeriod = { type: 'EndSubscriptionPeriod' as const, data: { grace_days: 7 } };

describe('subscription decider', () => {
  describe('activation by a payment', () => {
    it('starts a period of the plan from the payment time, a month or a year long', () => {
      spec.given([]).when(paid('pay-1')).then([started]);
      spec.given([]).when(paid('pay-1', 'growth', 'year')).then([{ type: 'SubscriptionStarted', data: period('pay-1', at, '2027-11-22T10:00:00.000Z', 'growth', 'year') }]);
    });

    it('applies each payment once: the same payment again records nothing', () => {
      spec.given([started]).when(paid('pay-1')).thenNothingHappened();
    });

    it('extends the period by one interval from its end when the same plan is paid early', () => {
      spec.given([started]).when(paid('pay-2')).then([{ type: 'SubscriptionRenewed', data: period('pay-2', at, '2027-01-22T10:00:00.000Z') }]);
      // Paid after the end, before the due pass noticed it: from the payment.
      const late = days(40).toISOString();
      spec.given([started]).when(paid('pay-2', 'starter', 'month', late)).then([{ type: 'SubscriptionRenewed', data: period('pay-2', at, addInterval(days(40), 'month').toISOString()) }]);
    });

    it('switches at once to another plan or interval, for a period from the payment (no proration)', () => {
      const paidAt = days(10).toISOString();
      spec.given([started]).when(paid('pay-2', 'growth', 'month', paidAt)).then([
        { type: 'SubscriptionPlanChanged', data: { ...period('pay-2', paidAt, addInterval(days(10), 'month').toISOString(), 'growth'), previous_plan_id: 'starter' } },
      ]);
      spec.given([started]).when(paid('pay-2', 'starter', 'year', paidAt)).then([
        { type: 'SubscriptionPlanChanged', data: { ...period('pay-2', paidAt, addInterval(days(10), 'year').toISOString(), 'starter', 'year'), previous_plan_id: 'starter' } },
      ]);
    });

    it('renews a past-due subscription from the payment, and withdraws a scheduled cancellation', () => {
      const paidAt = days(33).toISOString();
      spec.given([started, pastDue]).when(paid('pay-2', 'starter', 'month', paidAt)).then([{ type: 'SubscriptionRenewed', data: period('pay-2', paidAt, addInterval(days(33), 'month').toISOString()) }]);
      spec.given([started, scheduled]).when(paid('pay-2')).then([{ type: 'SubscriptionRenewed', data: period('pay-2', at, '2027-01-22T10:00:00.000Z') }]);
      const renewed: SubscriptionEvent = { type: 'SubscriptionRenewed', data: period('pay-2', at, '2027-01-22T10:00:00.000Z') };
      // Active again: the old period's end cancels nothing.
      deciderSpec(subscriptionDecider, new Date(PERIOD_END)).given([started, scheduled, renewed]).when(endPeriod).thenNothingHappened();
    });

    it('starts a new subscription after the last was canceled or ended', () => {
      const paidAt = days(60).toISOString();
      const again: SubscriptionEvent = { type: 'SubscriptionStarted', data: period('pay-2', paidAt, addInterval(days(60), 'month').toISOString()) };
      spec.given([started, canceledAtOnce]).when(paid('pay-2', 'starter', 'month', paidAt)).then([again]);
      spec.given([started, pastDue, ended]).when(paid('pay-2', 'starter', 'month', paidAt)).then([again]);
    });
  });

  describe('cancellation', () => {
    it('at period end: schedules it for the end of the paid period; asked again, nothing', () => {
      spec.given([started]).when(cancel(true)).then([scheduled]);
      spec.given([started, scheduled]).when(cancel(true)).thenNothingHappened();
    });

    it('at once: back to the default plan now, from active, canceling or past_due', () => {
      spec.given([started]).when(cancel(false)).then([canceledAtOnce]);
      spec.given([started, scheduled]).when(cancel(false)).then([canceledAtOnce]);
      spec.given([started, pastDue]).when(cancel(true)).then([canceledAtOnce]);
    });

    it('refuses when there is nothing to cancel', () => {
      spec.given([]).when(cancel(true)).thenThrows('conflict', 'no_subscription');
      spec.given([started, canceledAtOnce]).when(cancel(false)).thenThrows('conflict', 'no_subscription');
      spec.given([started, pastDue, ended]).when(cancel(true)).thenThrows('conflict', 'no_subscription');
    });
  });

  describe('the end of a period (the due pass)', () => {
    const atTime = (when: Date) => deciderSpec(subscriptionDecider, when);
    const end = new Date(PERIOD_END);

    it('does nothing before the end of the period', () => {
      atTime(new Date(end.getTime() - 1)).given([started]).when(endPeriod).thenNothingHappened();
      atTime(new Date(end.getTime() - 1)).given([started, scheduled]).when(endPeriod).thenNothingHappened();
    });

    it('cancels a canceling subscription at the end of its period', () => {
      atTime(end).given([started, scheduled]).when(endPeriod).then([{ type: 'SubscriptionCanceled', data: { tenant_id: T, plan_id: 'starter', at_period_end: true, canceled_at: PERIOD_END } }]);
    });

    it('marks an unpaid one past due for the grace period, then ends it (unpaid)', () => {
      atTime(end).given([started]).when(endPeriod).then([{ ...pastDue, data: { ...pastDue.data, marked_at: PERIOD_END } }]);
      atTime(days(6.9, end)).given([started, pastDue]).when(endPeriod).thenNothingHappened();
      const graceOver = days(7, end);
      atTime(graceOver).given([started, pastDue]).when(endPeriod).then([{ ...ended, data: { ...ended.data, ended_at: graceOver.toISOString() } }]);
    });

    it('records both steps when the pass comes after the grace period too', () => {
      const late = days(30, end);
      atTime(late).given([started]).when(endPeriod).then([
        { ...pastDue, data: { ...pastDue.data, marked_at: late.toISOString() } },
        { ...ended, data: { ...ended.data, ended_at: late.toISOString() } },
      ]);
    });

    it('has nothing to end without a subscription, or after it was canceled or ended', () => {
      atTime(days(400)).given([]).when(endPeriod).thenNothingHappened();
      atTime(days(400)).given([started, canceledAtOnce]).when(endPeriod).thenNothingHappened();
      atTime(days(400)).given([started, pastDue, ended]).when(endPeriod).thenNothingHappened();
    });
  });

  it('says when the due pass should next look at a subscription', () => {
    const fold = (events: SubscriptionEvent[]) => events.reduce(subscriptionDecider.evolve, subscriptionDecider.initialState());
    expect(nextDueAt(fold([]))).to.equal(null);
    expect(nextDueAt(fold([started]))).to.equal(PERIOD_END);
    expect(nextDueAt(fold([started, scheduled]))).to.equal(PERIOD_END);
    expect(nextDueAt(fold([started, pastDue]))).to.equal('2026-12-29T10:00:00.000Z');
    expect(nextDueAt(fold([started, canceledAtOnce]))).to.equal(null);
  });
});

describe('addInterval', () => {
  it('adds calendar months in UTC, keeping the day or taking the last day of a shorter month', () => {
    expect(addInterval(new Date('2026-01-31T12:00:00Z'), 'month').toISOString()).to.equal('2026-02-28T12:00:00.000Z');
    expect(addInterval(new Date('2028-01-31T12:00:00Z'), 'month').toISOString()).to.equal('2028-02-29T12:00:00.000Z');
    expect(addInterval(new Date('2026-12-15T00:00:00Z'), 'month').toISOString()).to.equal('2027-01-15T00:00:00.000Z');
    expect(addInterval(new Date('2028-02-29T08:00:00Z'), 'year').toISOString()).to.equal('2029-02-28T08:00:00.000Z');
  });
});
