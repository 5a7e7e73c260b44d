// Read model `subscriptions`: one document per tenant with the plan it subscribes to and the
// subscription's state. Its events come with the subscription aggregate (billing); until then
// the collection exists and is empty, so every tenant is on the default plan.

import type { EventProjection } from './projection';

export interface SubscriptionDocument {
  id: string;
  tenant_id: string;
  plan_id: string;
  status: string;
  position: number;
  [field: string]: unknown;
}

export const SUBSCRIPTIONS = 'subscriptions';

export const subscriptionsProjection: EventProjection<never> = {
  name: 'subscriptions',
  version: 1,
  collections: [{ name: SUBSCRIPTIONS, indexes: [{ field: 'plan_id' }, { field: 'status' }] }],
  handles: [],
  apply() {},
};
