// The super admin's tenants with their figures: a page of tenants (newest first by default),
// each with the plan it is on, its members, documents and messages this month (the counters
// the quotas read), and its payments and revenue to date.

import { TENANTS, type TenantDocument } from '../../projections/tenants';
import { TENANT_QUOTAS, type TenantQuotaDocument, monthKey } from '../../projections/tenant-quotas';
import { TENANT_REVENUE, type TenantRevenueDocument } from '../../projections/tenant-revenue';
import { currentPlan } from '../entitlement/entitlements';
import type { FindOptions, Page } from '../ports/read-store';
import type { AnalyticsDependencies } from './overview';

export const TENANT_ANALYTICS_SORTS = ['newest', 'oldest', 'name'] as const;
export type TenantAnalyticsSort = (typeof TENANT_ANALYTICS_SORTS)[number];

const SORTS: Record<TenantAnalyticsSort, NonNullable<FindOptions['sort']>> = {
  newest: { field: 'created_at', direction: 'desc' },
  oldest: { field: 'created_at', direction: 'asc' },
  name: { field: 'name', direction: 'asc' },
};

export interface TenantAnalyticsFilter {
  status?: TenantDocument['status'];
  sort?: TenantAnalyticsSort;
}

export interface TenantFigures {
  id: string;
  name: string;
  slug: string;
  status: TenantDocument['status'];
  created_at: string;
  plan: { id: string; code: string; name: string };
  members: number;
  documents: number;
  messages_this_month: number;
  payments_succeeded: number;
  payments_failed: number;
  /** Minor units per lowercase currency, of the succeeded payments to date. */
  revenue: Record<string, number>;
}

async function figuresOf(deps: AnalyticsDependencies, tenant: TenantDocument, month: string): Promise<TenantFigures> {
  const [plan, quotas, revenue] = await Promise.all([
    currentPlan(deps, tenant.id),
    deps.readStore.collection<TenantQuotaDocument>(TENANT_QUOTAS).get(tenant.id),
    deps.readStore.collection<TenantRevenueDocument>(TENANT_REVENUE).get(tenant.id),
  ]);
  return {
    id: tenant.id,
    name: tenant.name,
    slug: tenant.slug,
    status: tenant.status,
    created_at: tenant.created_at,
    plan: { id: plan.id, code: plan.code, name: plan.name },
    members: quotas?.counters.users ?? 0,
    documents: quotas?.counters.documents ?? 0,
    messages_this_month: quotas?.messages_by_month[month] ?? 0,
    payments_succeeded: revenue?.payments_succeeded ?? 0,
    payments_failed: revenue?.payments_failed ?? 0,
    revenue: revenue?.revenue ?? {},
  };
}

export async function listTenantAnalytics(deps: AnalyticsDependencies, filter: TenantAnalyticsFilter, page: { limit?: number; cursor?: string }): Promise<Page<TenantFigures>> {
  const found = await deps.readStore
    .collection<TenantDocument>(TENANTS)
    .find({ where: filter.status ? { status: filter.status } : {}, sort: SORTS[filter.sort ?? 'newest'], ...page });
  const month = monthKey(deps.clock.now());
  return { items: await Promise.all(found.items.map((tenant) => figuresOf(deps, tenant, month))), next_cursor: found.next_cursor };
}
