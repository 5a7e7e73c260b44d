// The super admin's view and overrides of a tenant's quotas (spec 4.16): `GET` shows the
// plan's limits, the overrides, what applies and what is used; `PUT` replaces the overrides,
// which apply at once.

import Router from '@koa/router';
import * as t from 'io-ts';
import { setQuotaOverrides, tenantQuotas } from '../../../application/quota-override/quota-overrides';
import type { UseCaseDependencies } from '../../../application/shared/dependencies';
import { closedPartial, decodeBody } from '../decode';
import { adminRequest } from './plans';
import { type AdminState, requireAdmin } from './require-admin';

const Limit = t.union([t.number, t.null]);
export const QuotaOverridesBody = t.intersection(
  // Closed: PUT replaces the overrides, so a misspelt quota would clear the others.
  [t.type({ overrides: closedPartial({ messages_per_month: Limit, documents: Limit, users: Limit, business_tools: Limit }) }), t.partial({ reason: t.string })],
  'QuotaOverrides',
);

export function adminQuotasRouter(identity: UseCaseDependencies): Router<AdminState> {
  const router = new Router<AdminState>({ prefix: '/api/v1/admin' });
  const admin = requireAdmin(identity);

  router.get('/tenants/:id/quotas', admin, async (ctx) => {
    ctx.body = await tenantQuotas(identity, ctx.params.id);
  });

  router.put('/tenants/:id/quotas', admin, async (ctx) => {
    const body = decodeBody(QuotaOverridesBody, ctx.request.body);
    ctx.body = await setQuotaOverrides(identity, ctx.state.admin.admin_id, ctx.params.id, { overrides: body.overrides, reason: body.reason ?? '' }, adminRequest(ctx));
  });

  return router;
}
