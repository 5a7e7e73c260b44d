// The payment aggregate: one attempt to collect money for a plan, as the provider reported
// it, succeeded or failed. Stream `payment-<id>`. A successful checkout's payment id is
// derived from the checkout id, so a webhook delivered twice and a confirm racing it record
// one payment; a failed attempt's id is derived from the provider's event id.

import * as t from 'io-ts';
import { type Either, left, right } from 'fp-ts/Either';
import type { Decider } from '../shared/decider';
import { type DomainError, conflict } from '../shared/errors';
import { declareEvent, eventGroup, type GroupEvent } from '../shared/events';
import { toStreamName } from '../shared/stream-names';

const Interval = t.keyof({ month: null, year: null });

const PaymentFacts = t.type({
  payment_id: t.string,
  tenant_id: t.string,
  checkout_id: t.string,
  plan_id: t.string,
  interval: Interval,
  /** Minor units. */
  amount: t.number,
  currency: t.string,
  provider: t.string,
});

export const PaymentSucceeded = declareEvent('PaymentSucceeded', t.intersection([PaymentFacts, t.type({ provider_payment_id: t.string, paid_at: t.string })]));
export const PaymentFailed = declareEvent('PaymentFailed', t.intersection([PaymentFacts, t.type({ failure_code: t.string, failure_message: t.string, failed_at: t.string })]));

export const paymentEvents = eventGroup('payment', [PaymentSucceeded, PaymentFailed]);
export type PaymentEvent = GroupEvent<typeof paymentEvents>;

export type PaymentFactsData = t.TypeOf<typeof PaymentFacts>;

export type PaymentCommand =
  | { type: 'RecordPaymentSucceeded'; data: PaymentFactsData & { provider_payment_id: string; paid_at: string } }
  | { type: 'RecordPaymentFailed'; data: PaymentFactsData & { failure_code: string; failure_message: string; failed_at: string } };

export type PaymentState = { status: 'absent' } | { status: 'succeeded' | 'failed'; payment_id: string; checkout_id: string };

export const paymentStream = (paymentId: string): string => toStreamName(paymentEvents.category, paymentId);

export const paymentDecider: Decider<PaymentCommand, PaymentEvent, PaymentState> = {
  initialState: () => ({ status: 'absent' }),
  evolve(_state, event) {
    switch (event.type) {
      case 'PaymentSucceeded':
        return { status: 'succeeded', payment_id: event.data.payment_id, checkout_id: event.data.checkout_id };
      case 'PaymentFailed':
        return { status: 'failed', payment_id: event.data.payment_id, checkout_id: event.data.checkout_id };
    }
  },
  decide(command, state): Either<DomainError, PaymentEvent[]> {
    // A payment is recorded once; the same report again (a redelivered webhook, a confirm
    // racing it) changes nothing, a contradicting one is a conflict.
    const outcome = command.type === 'RecordPaymentSucceeded' ? 'succeeded' : 'failed';
    if (state.status === outcome && state.checkout_id === command.data.checkout_id) return right([]);
    if (state.status !== 'absent') return left(conflict('payment_recorded', `payment ${state.payment_id} is already recorded as ${state.status}`));
    switch (command.type) {
      case 'RecordPaymentSucceeded':
        return right([{ type: 'PaymentSucceeded', data: command.data }]);
      case 'RecordPaymentFailed':
        return right([{ type: 'PaymentFailed', data: command.data }]);
    }
  },
};
