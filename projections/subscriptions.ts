// Read model `subscriptions`: one document per tenant that ever paid (id = tenant id), with its
// plan, status and period, for the entitlement check (application/entitlement), the tenant's
// billing page and the due pass that ends periods (`next_due_at`). A tenant without a
// document has never subscribed: it is on the default plan.

import { type SubscriptionEvent, type SubscriptionStatus, subscriptionEvents } from '../domain/subscription/subscription';
import { documentProjection } from './document-projection';

export interface SubscriptionDocument {
  id: string;
  tenant_id: string;
  plan_id: string;
  plan_code: string;
  status: Exclude<SubscriptionStatus, 'none'>;
  interval: 'month' | 'year';
  current_period_start: string;
  current_period_end: string;
  /** True while canceling: the plan stops at `current_period_end`. */
  cancel_at_period_end: boolean;
  canceled_at: string | null;
  /** While past_due: when the tenant returns to the default plan unless it pays. */
  grace_until: string | null;
  /** When it ended unpaid. */
  ended_at: string | null;
  /** The payment that paid for the current period. */
  payment_id: string;
  /** When the due pass should look at it next; null when nothing falls due (canceled, ended). */
  next_due_at: string | null;
  updated_at: string;
  position: number;
  [field: string]: unknown;
}

export const SUBSCRIPTIONS = 'subscriptions';

export const subscriptionsProjection = documentProjection<SubscriptionEvent['type'], SubscriptionDocument>({
  name: 'subscriptions',
  version: 1,
  collection: { name: SUBSCRIPTIONS, indexes: [{ field: 'plan_id' }, { field: 'status' }, { field: 'current_period_end' }, { field: 'next_due_at' }] },
  handles: subscriptionEvents.types,
  documentId: (event) => event.data.tenant_id,
  evolve(current, event) {
    const tenantId = event.data.tenant_id;
    const updated_at = event.metadata.occurred_at;
    switch (event.type) {
      case 'SubscriptionStarted':
      case 'SubscriptionRenewed':
      case 'SubscriptionPlanChanged': {
        const { plan_id, plan_code, interval, payment_id, current_period_start, current_period_end } = event.data;
        return {
          id: tenantId,
          tenant_id: tenantId,
          plan_id,
          plan_code,
          status: 'active',
          interval,
          current_period_start,
          current_period_end,
          cancel_at_period_end: false,
          canceled_at: null,
          grace_until: null,
          ended_at: null,
          payment_id,
          next_due_at: current_period_end,
          updated_at,
        };
      }
    }
    if (!current) return null;
    switch (event.type) {
      case 'SubscriptionCancellationScheduled':
        return { ...current, updated_at, status: 'canceling', cancel_at_period_end: true };
      case 'SubscriptionCanceled':
        return { ...current, updated_at, status: 'canceled', cancel_at_period_end: false, canceled_at: event.data.canceled_at, next_due_at: null };
      case 'SubscriptionPastDue':
        return { ...current, updated_at, status: 'past_due', grace_until: event.data.grace_until, next_due_at: event.data.grace_until };
      case 'SubscriptionEnded':
        return { ...current, updated_at, status: 'ended', ended_at: event.data.ended_at, next_due_at: null };
    }
  },
});
