// The plan aggregate: what a tenant can buy. A plan has a code, a name, a price per billing
// interval (minor units and currency), limits (null: unlimited) and feature flags. A plan is
// sold until it is retired; one nobody subscribes to may be deleted. Stream `plan-<id>`.

import * as t from 'io-ts';
import { type Either, left, right } from 'fp-ts/Either';
import type { Decider } from '../shared/decider';
import { type DomainError, conflict, invalid, notFound } from '../shared/errors';
import { declareEvent, eventGroup, type GroupEvent } from '../shared/events';
import { toStreamName } from '../shared/stream-names';
import { checkText } from '../shared/text';

export const PLAN_INTERVALS = ['month', 'year'] as const;
export type PlanInterval = (typeof PLAN_INTERVALS)[number];

/** What a plan limits: messages per calendar month (UTC), and documents, users and business tools at any time. */
export const QUOTAS = ['messages_per_month', 'documents', 'users', 'business_tools'] as const;
export type Quota = (typeof QUOTAS)[number];

export const FEATURES = ['sdk_connections', 'whatsapp', 'handoff', 'crm'] as const;
export type Feature = (typeof FEATURES)[number];

const Interval = t.keyof({ month: null, year: null });
export const PlanPrice = t.type({ interval: Interval, amount: t.number, currency: t.string });
export type PlanPrice = t.TypeOf<typeof PlanPrice>;

/** A limit per quota; null means unlimited. */
export const PlanLimits = t.type({
  messages_per_month: t.union([t.number, t.null]),
  documents: t.union([t.number, t.null]),
  users: t.union([t.number, t.null]),
  business_tools: t.union([t.number, t.null]),
});
export type PlanLimits = t.TypeOf<typeof PlanLimits>;

export const PlanFeatures = t.type({ sdk_connections: t.boolean, whatsapp: t.boolean, handoff: t.boolean, crm: t.boolean });
export type PlanFeatures = t.TypeOf<typeof PlanFeatures>;

/** What an operator sets of a plan (all of it, on create and on update); the code never changes. */
export const PlanTerms = t.type({
  name: t.string,
  description: t.string,
  prices: t.array(PlanPrice),
  limits: PlanLimits,
  features: PlanFeatures,
});
export type PlanTerms = t.TypeOf<typeof PlanTerms>;

export const PlanCreated = declareEvent('PlanCreated', t.intersection([t.type({ plan_id: t.string, code: t.string, created_at: t.string }), PlanTerms]));
export const PlanTermsChanged = declareEvent('PlanTermsChanged', t.intersection([t.type({ plan_id: t.string, changed_at: t.string }), PlanTerms]));
export const PlanRetired = declareEvent('PlanRetired', t.type({ plan_id: t.string, retired_at: t.string }));
export const PlanReinstated = declareEvent('PlanReinstated', t.type({ plan_id: t.string, reinstated_at: t.string }));
export const PlanDeleted = declareEvent('PlanDeleted', t.type({ plan_id: t.string, code: t.string, deleted_at: t.string }));

export const planEvents = eventGroup('plan', [PlanCreated, PlanTermsChanged, PlanRetired, PlanReinstated, PlanDeleted]);
export type PlanEvent = GroupEvent<typeof planEvents>;

export type PlanCommand =
  | { type: 'CreatePlan'; data: { plan_id: string; code: string } & PlanTerms }
  | { type: 'ChangePlanTerms'; data: PlanTerms }
  | { type: 'RetirePlan'; data: Record<string, never> }
  | { type: 'ReinstatePlan'; data: Record<string, never> }
  /** `subscribers` is what the read model counts now: a plan anybody is on is retired instead. */
  | { type: 'DeletePlan'; data: { subscribers: number } };

export type PlanState =
  | { status: 'absent' }
  | { status: 'sellable' | 'retired'; plan_id: string; code: string; terms: PlanTerms }
  | { status: 'deleted'; plan_id: string; code: string };

export const planStream = (planId: string): string => toStreamName(planEvents.category, planId);

const CODE = /^[a-z][a-z0-9_-]{1,31}$/;
const CURRENCY = /^[a-z]{3}$/;
/** 10 million in major units: far above any plan, low enough that no sum overflows. */
const MAX_AMOUNT = 1_000_000_000;
const MAX_LIMIT = 1_000_000_000;

export function planCodeProblem(code: string): DomainError | null {
  return CODE.test(code) ? null : invalid('invalid_plan', 'code must be 2 to 32 lowercase letters, digits, "-" or "_", starting with a letter', 'code');
}

/** The terms as stored (texts normalized), or the first problem naming its field. */
export function checkedTerms(terms: PlanTerms): Either<DomainError, PlanTerms> {
  const name = checkText('name', terms.name, { max: 100, code: 'invalid_plan' });
  if (name._tag === 'Left') return name;
  const description = checkText('description', terms.description, { min: 0, max: 1000, multiline: true, code: 'invalid_plan' });
  if (description._tag === 'Left') return description;
  if (terms.prices.length === 0) return left(invalid('invalid_plan', 'prices: a plan needs a price for at least one interval', 'prices'));
  const seen = new Set<string>();
  for (const [index, price] of terms.prices.entries()) {
    if (seen.has(price.interval)) return left(invalid('invalid_plan', `prices[${index}].interval: ${price.interval} is priced twice`, `prices[${index}].interval`));
    seen.add(price.interval);
    if (!Number.isSafeInteger(price.amount) || price.amount < 0 || price.amount > MAX_AMOUNT) {
      return left(invalid('invalid_plan', `prices[${index}].amount: expected whole minor units (cents) from 0 to ${MAX_AMOUNT}`, `prices[${index}].amount`));
    }
    if (!CURRENCY.test(price.currency)) return left(invalid('invalid_plan', `prices[${index}].currency: expected an ISO 4217 code in lowercase, such as "usd"`, `prices[${index}].currency`));
  }
  const currencies = new Set(terms.prices.map((price) => price.currency));
  if (currencies.size > 1) return left(invalid('invalid_plan', 'prices: every interval of a plan is priced in the same currency', 'prices'));
  for (const quota of QUOTAS) {
    const limit = terms.limits[quota];
    if (limit !== null && (!Number.isSafeInteger(limit) || limit < 0 || limit > MAX_LIMIT)) {
      return left(invalid('invalid_plan', `limits.${quota}: expected a whole number from 0 to ${MAX_LIMIT}, or null for unlimited`, `limits.${quota}`));
    }
  }
  // Only the known fields are kept: a stray key in a request never reaches an event.
  const limits = Object.fromEntries(QUOTAS.map((quota) => [quota, terms.limits[quota]])) as PlanLimits;
  const features = Object.fromEntries(FEATURES.map((feature) => [feature, terms.features[feature]])) as PlanFeatures;
  const prices = terms.prices.map(({ interval, amount, currency }) => ({ interval, amount, currency }));
  return right({ name: name.right, description: description.right, prices, limits, features });
}

/** The price of one interval, or null when the plan is not sold by that interval. */
export const priceOf = (terms: Pick<PlanTerms, 'prices'>, interval: PlanInterval): PlanPrice | null => terms.prices.find((price) => price.interval === interval) ?? null;

const sameTerms = (a: PlanTerms, b: PlanTerms): boolean => JSON.stringify(a) === JSON.stringify(b);

export const planDecider: Decider<PlanCommand, PlanEvent, PlanState> = {
  initialState: () => ({ status: 'absent' }),
  evolve(state, event) {
    switch (event.type) {
      case 'PlanCreated': {
        const { plan_id, code, created_at: _at, ...terms } = event.data;
        return { status: 'sellable', plan_id, code, terms };
      }
      case 'PlanTermsChanged': {
        if (state.status !== 'sellable' && state.status !== 'retired') return state;
        const { plan_id: _id, changed_at: _at, ...terms } = event.data;
        return { ...state, terms };
      }
      case 'PlanRetired':
        return state.status === 'sellable' ? { ...state, status: 'retired' } : state;
      case 'PlanReinstated':
        return state.status === 'retired' ? { ...state, status: 'sellable' } : state;
      case 'PlanDeleted':
        return state.status === 'absent' ? state : { status: 'deleted', plan_id: state.plan_id, code: state.code };
    }
  },
  decide(command, state, { now }): Either<DomainError, PlanEvent[]> {
    const at = now.toISOString();
    if (command.type === 'CreatePlan') {
      if (state.status !== 'absent') return left(conflict('plan_exists', 'the plan already exists'));
      const codeProblem = planCodeProblem(command.data.code);
      if (codeProblem) return left(codeProblem);
      const { plan_id, code, ...given } = command.data;
      const terms = checkedTerms(given);
      if (terms._tag === 'Left') return terms;
      return right([{ type: 'PlanCreated', data: { plan_id, code, ...terms.right, created_at: at } }]);
    }
    if (state.status === 'absent' || state.status === 'deleted') return left(notFound('plan_not_found', 'no such plan'));
    switch (command.type) {
      case 'ChangePlanTerms': {
        const terms = checkedTerms(command.data);
        if (terms._tag === 'Left') return terms;
        if (sameTerms(terms.right, state.terms)) return right([]);
        return right([{ type: 'PlanTermsChanged', data: { plan_id: state.plan_id, ...terms.right, changed_at: at } }]);
      }
      case 'RetirePlan':
        return right(state.status === 'retired' ? [] : [{ type: 'PlanRetired', data: { plan_id: state.plan_id, retired_at: at } }]);
      case 'ReinstatePlan':
        return right(state.status === 'sellable' ? [] : [{ type: 'PlanReinstated', data: { plan_id: state.plan_id, reinstated_at: at } }]);
      case 'DeletePlan':
        // A plan with subscribers is never removed: they keep its terms, nobody new can buy it.
        if (command.data.subscribers > 0) {
          return right(state.status === 'retired' ? [] : [{ type: 'PlanRetired', data: { plan_id: state.plan_id, retired_at: at } }]);
        }
        return right([{ type: 'PlanDeleted', data: { plan_id: state.plan_id, code: state.code, deleted_at: at } }]);
    }
  },
};
