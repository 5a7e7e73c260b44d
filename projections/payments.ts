// Read model `payments`: one document per payment attempt, succeeded or failed, for the
// tenant's payment history, the admin's payments and revenue.

import { type PaymentEvent, paymentEvents } from '../domain/payment/payment';
import type { EventProjection } from './projection';

export interface PaymentDocument {
  id: string;
  tenant_id: string;
  checkout_id: string;
  plan_id: string;
  interval: 'month' | 'year';
  amount: number;
  currency: string;
  provider: string;
  status: 'succeeded' | 'failed';
  provider_payment_id: string | null;
  failure_code: string | null;
  failure_message: string | null;
  /** When it was paid or failed. */
  occurred_at: string;
  position: number;
  [field: string]: unknown;
}

export const PAYMENTS = 'payments';

export const paymentsProjection: EventProjection<PaymentEvent['type']> = {
  name: 'payments',
  version: 1,
  collections: [{ name: PAYMENTS, indexes: [{ field: 'tenant_id' }, { field: 'status' }, { field: 'occurred_at' }, { field: 'checkout_id' }] }],
  handles: paymentEvents.types,
  async apply(event, view) {
    const { payment_id, tenant_id, checkout_id, plan_id, interval, amount, currency, provider } = event.data;
    const facts = { id: payment_id, tenant_id, checkout_id, plan_id, interval, amount, currency, provider, position: event.position };
    switch (event.type) {
      case 'PaymentSucceeded':
        view.put(PAYMENTS, { ...facts, status: 'succeeded', provider_payment_id: event.data.provider_payment_id, failure_code: null, failure_message: null, occurred_at: event.data.paid_at });
        return;
      case 'PaymentFailed':
        view.put(PAYMENTS, { ...facts, status: 'failed', provider_payment_id: null, failure_code: event.data.failure_code, failure_message: event.data.failure_message, occurred_at: event.data.failed_at });
        return;
    }
  },
};
