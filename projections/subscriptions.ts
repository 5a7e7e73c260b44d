// Read model `subscriptions`: one document per tenant that ever paid (id = tenant id), with its
// plan, status and period, for the entitlement check (application/entitlement), the tenant's
// billing page and the due pass that ends periods (`next_due_at`). A tenant without a
// document has never subscribed: it is on the default plan.

import { type SubscriptionEvent, type SubscriptionStatus, subscriptionEvents } from '../domain/subscription/subscription';
import type { EventProjection } from './projection';

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

export const subscriptionsProjection: EventProjection<SubscriptionEvent['type']> = {
  name: 'subscriptions',
  version: 1,
  collections: [{ name: SUBSCRIPTIONS, indexes: [{ field: 'plan_id' }, { field: 'status' }, { field: 'current_period_end' }, { field: 'next_due_at' }] }],
  handles: subscriptionEvents.types,
  async apply(event, view) {
    const tenantId = event.data.tenant_id;
    const current = await view.get<SubscriptionDocument>(SUBSCRIPTIONS, tenantId);
    if (current && current.position >= event.position) return;
    const base = { updated_at: event.metadata.occurred_at, position: event.position };
    switch (event.type) {
      case 'SubscriptionStarted':
      case 'SubscriptionRenewed':
      case 'SubscriptionPlanChanged': {
        const { plan_id, plan_code, interval, payment_id, current_period_start, current_period_end } = event.data;
        const doc: SubscriptionDocument = {
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
          ...base,
        };
        view.put(SUBSCRIPTIONS, doc);
        return;
      }
    }
    if (!current) return;
    switch (event.type) {
      case 'SubscriptionCancellationScheduled':
        view.patch(SUBSCRIPTIONS, tenantId, { ...base, status: 'canceling', cancel_at_period_end: true });
        return;
      case 'SubscriptionCanceled':
        view.patch(SUBSCRIPTIONS, tenantId, { ...base, status: 'canceled', cancel_at_period_end: false, canceled_at: event.data.canceled_at, next_due_at: null });
        return;
      case 'SubscriptionPastDue':
        view.patch(SUBSCRIPTIONS, tenantId, { ...base, status: 'past_due', grace_until: event.data.grace_until, next_due_at: event.data.grace_until });
        return;
      case 'SubscriptionEnded':
        view.patch(SUBSCRIPTIONS, tenantId, { ...base, status: 'ended', ended_at: event.data.ended_at, next_due_at: null });
        return;
    }
  },
};
