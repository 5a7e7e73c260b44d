// Read model `tenant_revenue`: one document per tenant that ever had a payment attempt, with
// its payments to date and what they brought in per currency, for the super admin's tenant
// analytics. The position of the last payment applied makes a replay harmless.

import { type PaymentEvent, paymentEvents } from '../domain/payment/payment';
import { documentProjection } from './document-projection';

export interface TenantRevenueDocument {
  id: string;
  tenant_id: string;
  payments_succeeded: number;
  payments_failed: number;
  /** Minor units per lowercase currency, of the succeeded payments. */
  revenue: Record<string, number>;
  last_paid_at: string | null;
  position: number;
  [field: string]: unknown;
}

export const TENANT_REVENUE = 'tenant_revenue';

const emptyDocument = (tenantId: string): TenantRevenueDocument => ({
  id: tenantId,
  tenant_id: tenantId,
  payments_succeeded: 0,
  payments_failed: 0,
  revenue: {},
  last_paid_at: null,
  position: -1,
});

export const tenantRevenueProjection = documentProjection<PaymentEvent['type'], TenantRevenueDocument>({
  name: 'tenant_revenue',
  version: 1,
  collection: { name: TENANT_REVENUE },
  handles: paymentEvents.types,
  documentId: (event) => event.data.tenant_id,
  evolve(current, event) {
    const before = current ?? emptyDocument(event.data.tenant_id);
    switch (event.type) {
      case 'PaymentSucceeded': {
        const currency = event.data.currency.toLowerCase();
        return {
          ...before,
          payments_succeeded: before.payments_succeeded + 1,
          revenue: { ...before.revenue, [currency]: (before.revenue[currency] ?? 0) + event.data.amount },
          last_paid_at: before.last_paid_at && before.last_paid_at > event.data.paid_at ? before.last_paid_at : event.data.paid_at,
        };
      }
      case 'PaymentFailed':
        return { ...before, payments_failed: before.payments_failed + 1 };
    }
  },
});
