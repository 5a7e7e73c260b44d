// Read model `plans`: one document per plan that exists (a deleted plan's document is
// removed), with its terms and whether it is sold, for the price list, the admin's plans and
// the entitlement check.

import { type PlanEvent, type PlanFeatures, type PlanLimits, type PlanPrice, planEvents } from '../domain/plan/plan';
import type { EventProjection } from './projection';

export interface PlanDocument {
  id: string;
  code: string;
  name: string;
  description: string;
  prices: PlanPrice[];
  limits: PlanLimits;
  features: PlanFeatures;
  status: 'sellable' | 'retired';
  /** The lowest monthly-equivalent price, for listing plans cheapest first. */
  sort_amount: number;
  created_at: string;
  updated_at: string;
  position: number;
  /** Revision of the plan's stream at the last event applied: its version (ETag). */
  revision: number;
  [field: string]: unknown;
}

export const PLANS = 'plans';

const monthlyEquivalent = (prices: readonly PlanPrice[]): number =>
  Math.min(...prices.map((price) => (price.interval === 'year' ? Math.round(price.amount / 12) : price.amount)));

export const plansProjection: EventProjection<PlanEvent['type']> = {
  name: 'plans',
  version: 1,
  collections: [{ name: PLANS, indexes: [{ field: 'code', unique: true }, { field: 'status' }, { field: 'sort_amount' }] }],
  handles: planEvents.types,
  async apply(event, view) {
    const base = { updated_at: event.metadata.occurred_at, position: event.position, revision: event.revision };
    if (event.type === 'PlanCreated') {
      const { plan_id, code, created_at, name, description, prices, limits, features } = event.data;
      const existing = await view.get<PlanDocument>(PLANS, plan_id);
      if (existing && existing.position >= event.position) return;
      const doc: PlanDocument = { id: plan_id, code, name, description, prices, limits, features, status: 'sellable', sort_amount: monthlyEquivalent(prices), created_at, ...base };
      view.put(PLANS, doc);
      return;
    }
    const current = await view.get<PlanDocument>(PLANS, event.data.plan_id);
    if (!current || current.position >= event.position) return;
    switch (event.type) {
      case 'PlanTermsChanged': {
        const { name, description, prices, limits, features } = event.data;
        view.patch(PLANS, current.id, { ...base, name, description, prices, limits, features, sort_amount: monthlyEquivalent(prices) });
        return;
      }
      case 'PlanRetired':
        view.patch(PLANS, current.id, { ...base, status: 'retired' });
        return;
      case 'PlanReinstated':
        view.patch(PLANS, current.id, { ...base, status: 'sellable' });
        return;
      case 'PlanDeleted':
        view.delete(PLANS, current.id);
        return;
    }
  },
};
