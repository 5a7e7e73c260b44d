// Read model `plans`: one document per plan that exists (a deleted plan's document is
// removed), with its terms and whether it is sold, for the price list, the admin's plans and
// the entitlement check.

import { type PlanEvent, type PlanFeatures, type PlanLimits, type PlanPrice, planEvents } from '../domain/plan/plan';
import { documentProjection } from './document-projection';

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

export const plansProjection = documentProjection<PlanEvent['type'], PlanDocument>({
  name: 'plans',
  version: 1,
  collection: { name: PLANS, indexes: [{ field: 'code', unique: true }, { field: 'status' }, { field: 'sort_amount' }] },
  handles: planEvents.types,
  documentId: (event) => event.data.plan_id,
  evolve(current, event) {
    const touched = { updated_at: event.metadata.occurred_at, revision: event.revision };
    if (event.type === 'PlanCreated') {
      const { plan_id, code, created_at, name, description, prices, limits, features } = event.data;
      return { id: plan_id, code, name, description, prices, limits, features, status: 'sellable', sort_amount: monthlyEquivalent(prices), created_at, ...touched };
    }
    if (!current) return null;
    switch (event.type) {
      case 'PlanTermsChanged': {
        const { name, description, prices, limits, features } = event.data;
        return { ...current, ...touched, name, description, prices, limits, features, sort_amount: monthlyEquivalent(prices) };
      }
      case 'PlanRetired':
        return { ...current, ...touched, status: 'retired' };
      case 'PlanReinstated':
        return { ...current, ...touched, status: 'sellable' };
      case 'PlanDeleted':
        return null;
    }
  },
});
