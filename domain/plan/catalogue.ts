// The default catalogue: the plans a new platform starts with, recorded as PlanCreated events
// on the first start (application/plan/plans.ts `seedPlanCatalogue`), then managed by the
// super admin like any other plan. Reads never consult this file: it only seeds the log.
// docs/billing.md lists the same numbers for people.

import type { PlanTerms } from './plan';

export interface CataloguePlan extends PlanTerms {
  /** Catalogue plans have fixed ids, so that two processes seeding at once record one plan. */
  plan_id: string;
  code: string;
}

const NO_FEATURES = { sdk_connections: false, whatsapp: false, handoff: false, crm: false };

export const FREE_PLAN_CODE = 'free';

export const DEFAULT_CATALOGUE: readonly CataloguePlan[] = [
  {
    plan_id: 'free',
    code: FREE_PLAN_CODE,
    name: 'Free',
    description: 'Try the assistant on a small knowledge base.',
    prices: [
      { interval: 'month', amount: 0, currency: 'usd' },
      { interval: 'year', amount: 0, currency: 'usd' },
    ],
    limits: { messages_per_month: 500, documents: 20, users: 3, business_tools: 2 },
    features: NO_FEATURES,
  },
  {
    plan_id: 'starter',
    code: 'starter',
    name: 'Starter',
    description: 'A customer assistant for a small team, with human handoff.',
    prices: [
      { interval: 'month', amount: 2900, currency: 'usd' },
      { interval: 'year', amount: 29000, currency: 'usd' },
    ],
    limits: { messages_per_month: 5000, documents: 200, users: 10, business_tools: 10 },
    features: { ...NO_FEATURES, handoff: true },
  },
  {
    plan_id: 'growth',
    code: 'growth',
    name: 'Growth',
    description: 'More conversations and documents, WhatsApp and CRM.',
    prices: [
      { interval: 'month', amount: 9900, currency: 'usd' },
      { interval: 'year', amount: 99000, currency: 'usd' },
    ],
    limits: { messages_per_month: 25000, documents: 1000, users: 25, business_tools: 50 },
    features: { ...NO_FEATURES, handoff: true, whatsapp: true, crm: true },
  },
  {
    plan_id: 'premium',
    code: 'premium',
    name: 'Premium',
    description: 'Everything, with SDK Connections to your own systems.',
    prices: [
      { interval: 'month', amount: 29900, currency: 'usd' },
      { interval: 'year', amount: 299000, currency: 'usd' },
    ],
    limits: { messages_per_month: 100000, documents: 10000, users: 100, business_tools: 200 },
    features: { sdk_connections: true, whatsapp: true, handoff: true, crm: true },
  },
];
