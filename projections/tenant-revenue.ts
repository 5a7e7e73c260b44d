// Read model `tenant_revenue`: one document per tenant that ever had a payment attempt, with
// its payments to date and what they brought in per currency, for the super admin's tenant
// analytics. The position of the last payment applied makes a replay harmless.

import { type PaymentEvent, paymentEvents } from '../domain/payment/payment';
import type { EventProjection } from './projection';

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

export const tenantRevenueProjection: EventProjection<PaymentEvent['type']> = {
  name: 'tenant_revenue',
  version: 1,
  collections: [{ name: TENANT_REVENUE }],
  handles: paymentEvents.types,
  async apply(event, view) {
    const current = (await view.get<TenantRevenueDocument>(TENANT_REVENUE, event.data.tenant_id)) ?? emptyDocument(event.data.tenant_id);
    if (current.position >= event.position) return;
    switch (event.type) {
      case 'PaymentSucceeded': {
        const currency = event.data.currency.toLowerCase();
        view.put(TENANT_REVENUE, {
          ...current,
          payments_succeeded: current.payments_succeeded + 1,
          revenue: { ...current.revenue, [currency]: (current.revenue[currency] ?? 0) + event.data.amount },
          last_paid_at: current.last_paid_at && current.last_paid_at > event.data.paid_at ? current.last_paid_at : event.data.paid_at,
          position: event.position,
        });
        return;
      }
      case 'PaymentFailed':
        view.put(TENANT_REVENUE, { ...current, payments_failed: current.payments_failed + 1, position: event.position });
        return;
    }
  },
};
