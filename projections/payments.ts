// Read model `payments`: one document per payment attempt, succeeded or failed, for the
// tenant's payment history, the admin's payments and revenue.

import { type PaymentEvent, paymentEvents } from '../domain/payment/payment';
import { documentProjection } from './document-projection';

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

export const paymentsProjection = documentProjection<PaymentEvent['type'], PaymentDocument>({
  name: 'payments',
  version: 1,
  collection: { name: PAYMENTS, indexes: [{ field: 'tenant_id' }, { field: 'status' }, { field: 'occurred_at' }, { field: 'checkout_id' }] },
  handles: paymentEvents.types,
  documentId: (event) => event.data.payment_id,
  evolve(_current, event) {
    const { payment_id, tenant_id, checkout_id, plan_id, interval, amount, currency, provider } = event.data;
    const facts = { id: payment_id, tenant_id, checkout_id, plan_id, interval, amount, currency, provider };
    switch (event.type) {
      case 'PaymentSucceeded':
        return { ...facts, status: 'succeeded', provider_payment_id: event.data.provider_payment_id, failure_code: null, failure_message: null, occurred_at: event.data.paid_at };
      case 'PaymentFailed':
        return { ...facts, status: 'failed', provider_payment_id: null, failure_code: event.data.failure_code, failure_message: event.data.failure_message, occurred_at: event.data.failed_at };
    }
  },
});
