// The super admin's analytics and usage (spec 4.16): the platform's overview, tenants with
// their figures, and daily series of messages, documents and revenue over a `from`/`to`
// range of days (UTC). Shapes in docs/admin-analytics.md.

import Router from '@koa/router';
import { dayRange } from '../../../application/analytics/day-range';
import { TENANT_STATUSES, platformOverview } from '../../../application/analytics/overview';
import { TENANT_ANALYTICS_SORTS, type TenantAnalyticsFilter, listTenantAnalytics } from '../../../application/analytics/tenant-analytics';
import { documentsSeries, messagesSeries, revenueSeries } from '../../../application/analytics/usage-series';
import type { UseCaseDependencies } from '../../../application/shared/dependencies';
import { invalid } from '../../../domain/shared/errors';
import { pageQuery } from '../pagination';
import { type AdminState, requireAdmin } from './require-admin';

type Query = Record<string, string | string[] | undefined>;

/** One query parameter given at most once; 400 naming it otherwise. */
function single(query: Query, name: string): string | undefined {
  const value = query[name];
  if (value === undefined || typeof value === 'string') return value;
  throw invalid('invalid_request', `${name}: give it once`, name);
}

function oneOf<T extends string>(query: Query, name: string, allowed: readonly T[]): T | undefined {
  const value = single(query, name);
  if (value === undefined) return undefined;
  if (!allowed.some((known) => known === value)) throw invalid('invalid_request', `${name}: expected one of ${allowed.join(', ')}`, name);
  return value as T;
}

export function adminAnalyticsRouter(identity: UseCaseDependencies): Router<AdminState> {
  const router = new Router<AdminState>({ prefix: '/api/v1/admin' });
  const admin = requireAdmin(identity);
  const rangeOf = (query: Query) => dayRange({ from: single(query, 'from'), to: single(query, 'to') }, identity.clock.now());

  router.get('/analytics/overview', admin, async (ctx) => {
    ctx.body = await platformOverview(identity);
  });

  router.get('/analytics/tenants', admin, async (ctx) => {
    const filter: TenantAnalyticsFilter = { status: oneOf(ctx.query, 'status', TENANT_STATUSES), sort: oneOf(ctx.query, 'sort', TENANT_ANALYTICS_SORTS) };
    ctx.body = await listTenantAnalytics(identity, filter, pageQuery(ctx.query));
  });

  router.get('/usage/messages', admin, async (ctx) => {
    ctx.body = await messagesSeries(identity, rangeOf(ctx.query));
  });

  router.get('/usage/documents', admin, async (ctx) => {
    ctx.body = await documentsSeries(identity, rangeOf(ctx.query));
  });

  router.get('/usage/revenue', admin, async (ctx) => {
    ctx.body = await revenueSeries(identity, rangeOf(ctx.query));
  });

  return router;
}
