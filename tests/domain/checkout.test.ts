// The checkout decider given/when/then: started once, paid once and for good, failed attempts
// leave it open, expiry; and which plans a checkout may sell.

import { expect } from 'chai';
import { type CheckoutEvent, type CheckoutFacts, type PlanForSale, checkoutDecider, checkoutPrice } from '../../domain/checkout/checkout';
import { FIXED_NOW, deciderSpec } from '../support/decider-spec';

const spec = deciderSpec(checkoutDecider);
const at = FIXED_NOW.toISOString();

const facts: CheckoutFacts = {
  checkout_id: 'co-1',
  tenant_id: 't1',
  plan_id: 'starter',
  plan_code: 'starter',
  interval: 'month',
  amount: 2900,
  currency: 'usd',
  provider: 'sandbox',
  provider_checkout_id: 'pc-1',
  url: 'https://pay.example/pc-1',
  expires_at: '2026-11-23T10:00:00.000Z',
  started_by: 'user-1',
};
const started: CheckoutEvent = { type: 'CheckoutStarted', data: { ...facts, started_at: at } };
const completed = (payment_id: string): CheckoutEvent => ({ type: 'CheckoutCompleted', data: { checkout_id: 'co-1', tenant_id: 't1', payment_id, completed_at: at } });
const failed = (payment_id: string): CheckoutEvent => ({
  type: 'CheckoutAttemptFailed',
  data: { checkout_id: 'co-1', tenant_id: 't1', payment_id, failure_code: 'card_declined', failure_message: 'declined', failed_at: at },
});
const expired: CheckoutEvent = { type: 'CheckoutExpired', data: { checkout_id: 'co-1', tenant_id: 't1', expired_at: at } };
const failure = (payment_id: string) => ({ type: 'RecordCheckoutAttemptFailure' as const, data: { payment_id, failure_code: 'card_declined', failure_message: 'declined' } });

describe('checkout decider', () => {
  it('starts once; the same start again records nothing, a different one is a conflict', () => {
    spec.given([]).when({ type: 'StartCheckout', data: facts }).then([started]);
    spec.given([started]).when({ type: 'StartCheckout', data: facts }).thenNothingHappened();
    spec.given([started]).when({ type: 'StartCheckout', data: { ...facts, plan_id: 'growth' } }).thenThrows('conflict', 'checkout_exists');
  });

  it('refuses to start a checkout that collects nothing', () => {
    spec.given([]).when({ type: 'StartCheckout', data: { ...facts, amount: 0 } }).thenThrows('conflict', 'plan_is_free');
  });

  it('is completed by a payment once, and stays paid: the same payment again changes nothing', () => {
    spec.given([started]).when({ type: 'CompleteCheckout', data: { payment_id: 'pay-1' } }).then([completed('pay-1')]);
    spec.given([started, completed('pay-1')]).when({ type: 'CompleteCheckout', data: { payment_id: 'pay-1' } }).thenNothingHappened();
    spec.given([started, completed('pay-1')]).when({ type: 'CompleteCheckout', data: { payment_id: 'pay-2' } }).thenThrows('conflict', 'checkout_paid');
  });

  it('notes a failed attempt and stays open, so the payer may pay after it; each attempt once', () => {
    spec.given([started]).when(failure('pay-f1')).then([failed('pay-f1')]);
    spec.given([started, failed('pay-f1')]).when(failure('pay-f1')).thenNothingHappened();
    spec.given([started, failed('pay-f1')]).when({ type: 'CompleteCheckout', data: { payment_id: 'pay-1' } }).then([completed('pay-1')]);
  });

  it('ignores a failure reported after the payment', () => {
    spec.given([started, completed('pay-1')]).when(failure('pay-f1')).thenNothingHappened();
  });

  it('expires an open checkout once; a payment the provider took still completes an expired one', () => {
    spec.given([started]).when({ type: 'ExpireCheckout', data: {} }).then([expired]);
    spec.given([started, expired]).when({ type: 'ExpireCheckout', data: {} }).thenNothingHappened();
    spec.given([started, completed('pay-1')]).when({ type: 'ExpireCheckout', data: {} }).thenNothingHappened();
    spec.given([started, expired]).when({ type: 'CompleteCheckout', data: { payment_id: 'pay-1' } }).then([completed('pay-1')]);
  });

  it('knows no checkout that was never started', () => {
    spec.given([]).when({ type: 'CompleteCheckout', data: { payment_id: 'pay-1' } }).thenThrows('not_found', 'checkout_not_found');
    spec.given([]).when(failure('pay-f1')).thenThrows('not_found', 'checkout_not_found');
    spec.given([]).when({ type: 'ExpireCheckout', data: {} }).thenThrows('not_found', 'checkout_not_found');
  });
});

describe('checkoutPrice: what a checkout may sell', () => {
  const starter: PlanForSale = {
    code: 'starter',
    status: 'sellable',
    prices: [
      { interval: 'month', amount: 2900, currency: 'usd' },
      { interval: 'year', amount: 0, currency: 'usd' },
    ],
  };
  const refusal = (plan: PlanForSale, interval: 'month' | 'year'): string => {
    const price = checkoutPrice(plan, interval, 'free');
    if (price._tag === 'Right') throw new Error(`expected a refusal, got ${JSON.stringify(price.right)}`);
    return `${price.left.kind}:${price.left.code}`;
  };

  it('prices a sellable plan for an interval it is sold by', () => {
    expect(checkoutPrice(starter, 'month', 'free')).to.deep.equal({ _tag: 'Right', right: { interval: 'month', amount: 2900, currency: 'usd' } });
  });

  it('refuses a retired plan, the default plan (whatever its price), a zero price and an interval the plan is not sold by', () => {
    expect(refusal({ ...starter, status: 'retired' }, 'month')).to.equal('conflict:plan_not_sellable');
    expect(refusal({ ...starter, code: 'free' }, 'month')).to.equal('conflict:plan_is_default');
    expect(refusal(starter, 'year')).to.equal('conflict:plan_is_free');
    expect(refusal({ ...starter, prices: [starter.prices[0]] }, 'year')).to.equal('conflict:interval_not_offered');
  });
});
