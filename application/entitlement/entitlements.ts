// Entitlements: what a tenant may do under its plan and the super admin's overrides. The one
// place every command and route asks "may this tenant do N more of X?" (`requireQuota`) and
// "does its plan include F?" (`requireFeature`), with one error shape each:
//   429 `quota_exceeded` with `quota`, `limit`, `used`, `resets_at` (null for limits that do not reset);
//   403 `feature_not_in_plan` with `feature` and `plan`, the cheapest sellable plan that has it.
// Counts come from read models, so two requests racing for the last unit may both pass: a
// quota is a commercial limit, not a safety limit, and at most the racing requests overshoot.

import { FREE_PLAN_CODE } from '../../domain/plan/catalogue';
import { type Feature, type PlanLimits, QUOTAS, type Quota } from '../../domain/plan/plan';
import { DomainError } from '../../domain/shared/errors';
import { PLAN_APPLYING_STATUSES } from '../../domain/subscription/subscription';
import { INVITATIONS } from '../../projections/invitations';
import { PLANS, type PlanDocument } from '../../projections/plans';
import { PLATFORM_SETTINGS, type PlatformSettingsDocument } from '../../projections/platform-settings';
import { PLATFORM_SETTINGS_ID } from '../../domain/platform-settings/platform-settings';
import { SUBSCRIPTIONS, type SubscriptionDocument } from '../../projections/subscriptions';
import { TENANT_QUOTAS, type TenantQuotaDocument, monthKey } from '../../projections/tenant-quotas';
import type { Clock } from '../ports/clock';
import type { ReadModelDependencies } from '../shared/read-models';

export type EntitlementDependencies = ReadModelDependencies & { clock: Clock };

/** Subscription states whose plan applies; otherwise the tenant is on the default plan. */
const PLAN_APPLIES = new Set<string>(PLAN_APPLYING_STATUSES);

/** A refusal for lack of quota: 429 with the numbers a client needs to explain it. */
export class QuotaExceededError extends DomainError {
  constructor(
    readonly quota: Quota,
    readonly limit: number,
    readonly used: number,
    readonly resetsAt: string | null,
  ) {
    super('rate_limited', 'quota_exceeded', `the ${quota.replace(/_/g, ' ')} limit of this organization's plan is ${limit}, and ${used} are used`);
  }

  override details(): Record<string, unknown> {
    return { quota: this.quota, limit: this.limit, used: this.used, resets_at: this.resetsAt };
  }
}

/** A refusal for a feature the plan lacks: 403 naming the cheapest plan that has it. */
export class FeatureNotInPlanError extends DomainError {
  constructor(
    readonly feature: Feature,
    readonly plan: string | null,
  ) {
    super('forbidden', 'feature_not_in_plan', plan ? `${feature} is not in this organization's plan; the ${plan} plan has it` : `${feature} is not in this organization's plan`);
  }

  override details(): Record<string, unknown> {
    return { feature: this.feature, plan: this.plan };
  }
}

export interface Entitlements {
  plan: PlanDocument;
  /** The plan's limits with the overrides applied; null: unlimited. */
  limits: PlanLimits;
  overrides: Partial<PlanLimits>;
  features: PlanDocument['features'];
}

/** The code of the plan every tenant without a subscription is on (a platform setting, `free` until changed). */
export async function defaultPlanCode(deps: ReadModelDependencies): Promise<string> {
  const settings = await deps.readStore.collection<PlatformSettingsDocument>(PLATFORM_SETTINGS).get(PLATFORM_SETTINGS_ID);
  return typeof settings?.default_plan_code === 'string' ? settings.default_plan_code : FREE_PLAN_CODE;
}

/** The plan tenants are on until they buy one. */
async function defaultPlan(deps: ReadModelDependencies): Promise<PlanDocument> {
  const code = await defaultPlanCode(deps);
  const found = await deps.readStore.collection<PlanDocument>(PLANS).find({ where: { code }, limit: 1 });
  const plan = found.items[0];
  if (!plan) throw new Error(`the default plan "${code}" is not in the plans read model: the catalogue was not seeded`);
  return plan;
}

/** The plan the tenant is on: its subscription's while that applies, otherwise the default plan. */
export async function currentPlan(deps: ReadModelDependencies, tenantId: string): Promise<PlanDocument> {
  const subscription = await deps.readStore.collection<SubscriptionDocument>(SUBSCRIPTIONS).get(tenantId);
  if (subscription && PLAN_APPLIES.has(subscription.status)) {
    const plan = await deps.readStore.collection<PlanDocument>(PLANS).get(subscription.plan_id);
    if (plan) return plan;
  }
  return defaultPlan(deps);
}

async function quotaDocument(deps: ReadModelDependencies, tenantId: string): Promise<TenantQuotaDocument | null> {
  return deps.readStore.collection<TenantQuotaDocument>(TENANT_QUOTAS).get(tenantId);
}

export async function entitlementsOf(deps: ReadModelDependencies, tenantId: string): Promise<Entitlements> {
  const [plan, quotas] = await Promise.all([currentPlan(deps, tenantId), quotaDocument(deps, tenantId)]);
  const overrides = (quotas?.overrides ?? {}) as Partial<PlanLimits>;
  const limits = Object.fromEntries(QUOTAS.map((quota) => [quota, quota in overrides && overrides[quota] !== undefined ? overrides[quota] : plan.limits[quota]])) as PlanLimits;
  return { plan, limits, overrides, features: plan.features };
}

/** The first instant of the next calendar month (UTC): when a monthly counter starts again. */
export function nextMonthStart(now: Date): string {
  return new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1)).toISOString();
}

/** What is used of each quota now: seats are members plus pending, unexpired invitations. */
export async function usageOf(deps: EntitlementDependencies, tenantId: string): Promise<Record<Quota, number>> {
  const now = deps.clock.now();
  const [quotas, pendingInvitations] = await Promise.all([
    quotaDocument(deps, tenantId),
    deps.readStore.collection(INVITATIONS).count({ tenant_id: tenantId, status: 'pending', expires_at: { gt: now.toISOString() } }),
  ]);
  return {
    users: (quotas?.counters.users ?? 0) + pendingInvitations,
    documents: quotas?.counters.documents ?? 0,
    business_tools: quotas?.counters.business_tools ?? 0,
    messages_per_month: quotas?.messages_by_month[monthKey(now)] ?? 0,
  };
}

export interface QuotaAnswer {
  allowed: boolean;
  quota: Quota;
  /** Null: unlimited. */
  limit: number | null;
  used: number;
  resets_at: string | null;
}

/** May this tenant do `more` more of `quota`? */
export async function checkQuota(deps: EntitlementDependencies, tenantId: string, quota: Quota, more = 1): Promise<QuotaAnswer> {
  const [entitlements, usage] = await Promise.all([entitlementsOf(deps, tenantId), usageOf(deps, tenantId)]);
  const limit = entitlements.limits[quota];
  const used = usage[quota];
  const resets_at = quota === 'messages_per_month' ? nextMonthStart(deps.clock.now()) : null;
  return { allowed: limit === null || used + more <= limit, quota, limit, used, resets_at };
}

/** Refuses with 429 `quota_exceeded` unless the tenant may do `more` more of `quota`. */
export async function requireQuota(deps: EntitlementDependencies, tenantId: string, quota: Quota, more = 1): Promise<void> {
  const answer = await checkQuota(deps, tenantId, quota, more);
  if (!answer.allowed) throw new QuotaExceededError(quota, answer.limit as number, answer.used, answer.resets_at);
}

/** Refuses with 403 `feature_not_in_plan` unless the tenant's plan includes `feature`. */
export async function requireFeature(deps: ReadModelDependencies, tenantId: string, feature: Feature): Promise<void> {
  const { features } = await entitlementsOf(deps, tenantId);
  if (features[feature]) return;
  const sellable = await deps.readStore.collection<PlanDocument>(PLANS).find({ where: { status: 'sellable' }, sort: { field: 'sort_amount', direction: 'asc' }, limit: 1000 });
  const cheapest = sellable.items.find((plan) => plan.features[feature]);
  throw new FeatureNotInPlanError(feature, cheapest?.code ?? null);
}
