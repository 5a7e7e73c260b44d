// The super admin's overview of the platform: tenants by status, members, subscriptions by
// plan, and this calendar month's (UTC) sign-ups, payments, revenue, messages and documents.
// Counts come from read models: totals from the collections' counts, the month from the
// `daily_usage` days since the first of the month.

import { PLAN_APPLYING_STATUSES } from '../../domain/subscription/subscription';
import { type DailyUsageDocument, USAGE_METRICS } from '../../projections/daily-usage';
import { MEMBERSHIPS } from '../../projections/memberships';
import { PLANS, type PlanDocument } from '../../projections/plans';
import { SUBSCRIPTIONS } from '../../projections/subscriptions';
import { TENANTS, type TenantDocument } from '../../projections/tenants';
import type { Clock } from '../ports/clock';
import type { ReadModelDependencies } from '../shared/read-models';
import { monthToDate } from './day-range';
import { dailyDocuments } from './usage-series';

export type AnalyticsDependencies = ReadModelDependencies & { clock: Clock };

/**
 * Every status a tenant document can have. A record over the type, so that a new status does
 * not compile until it is counted here too. Soft-deleted tenants stay counted: their data
 * stays for audit.
 */
const TENANT_STATUSES_COUNTED: Record<TenantDocument['status'], true> = { active: true, suspended: true, deleted: true };
export const TENANT_STATUSES = Object.keys(TENANT_STATUSES_COUNTED) as Array<TenantDocument['status']>;


export interface PlatformOverview {
  generated_at: string;
  /** The calendar month (UTC) of the `*_this_month` figures, `YYYY-MM`. */
  month: string;
  tenants: { total: number; by_status: Record<TenantDocument['status'], number>; created_this_month: number };
  members: { total: number; joined_this_month: number };
  subscriptions: { active: number; by_plan: Array<{ plan_id: string; plan_code: string; plan_name: string; active: number }> };
  payments_this_month: { succeeded: number; failed: number; revenue: Record<string, number> };
  messages_this_month: number;
  documents_this_month: number;
}

async function subscriptionsByPlan(deps: ReadModelDependencies): Promise<PlatformOverview['subscriptions']> {
  const plans = await deps.readStore.collection<PlanDocument>(PLANS).find({ sort: { field: 'sort_amount', direction: 'asc' }, limit: 1000 });
  const subscriptions = deps.readStore.collection(SUBSCRIPTIONS);
  const by_plan = await Promise.all(
    plans.items.map(async (plan) => ({
      plan_id: plan.id,
      plan_code: plan.code,
      plan_name: plan.name,
      active: await subscriptions.count({ plan_id: plan.id, status: { in: PLAN_APPLYING_STATUSES } }),
    })),
  );
  return { active: by_plan.reduce((sum, plan) => sum + plan.active, 0), by_plan };
}

/** This month's figures from the days so far. */
function monthFigures(days: readonly DailyUsageDocument[]) {
  const count = (metric: DailyUsageDocument['metric']) => days.filter((doc) => doc.metric === metric).reduce((sum, doc) => sum + doc.count, 0);
  const revenue: Record<string, number> = {};
  for (const doc of days) if (doc.metric === 'revenue' && doc.currency) revenue[doc.currency] = (revenue[doc.currency] ?? 0) + doc.amount;
  return {
    tenants_created: count('tenants_created'),
    members_joined: count('members_joined'),
    payments: { succeeded: count('payments_succeeded'), failed: count('payments_failed'), revenue },
    messages: count('messages'),
    documents: count('documents'),
  };
}

export async function platformOverview(deps: AnalyticsDependencies): Promise<PlatformOverview> {
  const now = deps.clock.now();
  const month = monthToDate(now);
  const tenants = deps.readStore.collection(TENANTS);
  const [total, byStatus, members, subscriptions, days] = await Promise.all([
    tenants.count(),
    Promise.all(TENANT_STATUSES.map(async (status) => [status, await tenants.count({ status })] as const)),
    deps.readStore.collection(MEMBERSHIPS).count(),
    subscriptionsByPlan(deps),
    dailyDocuments(deps, USAGE_METRICS, month),
  ]);
  const figures = monthFigures(days);
  return {
    generated_at: now.toISOString(),
    month: month.from.slice(0, 7),
    tenants: {
      total,
      by_status: Object.fromEntries(byStatus) as Record<TenantDocument['status'], number>,
      created_this_month: figures.tenants_created,
    },
    members: { total: members, joined_this_month: figures.members_joined },
    subscriptions,
    payments_this_month: figures.payments,
    messages_this_month: figures.messages,
    documents_this_month: figures.documents,
  };
}
