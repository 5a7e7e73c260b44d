// `GET /tenant/leads` (spec 4.8): the leads the widget's visitors left, newest first, with how
// each one's delivery to the CRM stands; filtered by `crm_status` and by `from`/`to` (when
// captured); cursor pages. `DELETE /tenant/leads/{id}` deletes one, `POST /tenant/leads/{id}/erase`
// erases it (docs/personal-data.md).

import Router from '@koa/router';
import { eraseLead } from '../../../application/lead/lead-erasure';
import { LEAD_CRM_STATUSES, deleteLead, listLeads } from '../../../application/lead/leads';
import type { UseCaseDependencies } from '../../../application/shared/dependencies';
import { invalid } from '../../../domain/shared/errors';
import type { AuthenticatedState } from '../middleware/authenticate';
import { pageQuery } from '../pagination';
import { requestContextOf } from '../request-context';
import { oneOf, timeBound } from './query';

export function tenantLeadsRouter(deps: UseCaseDependencies): Router<AuthenticatedState> {
  const router = new Router<AuthenticatedState>();

  router.get('/leads', async (ctx) => {
    const filter = { crm_status: oneOf(ctx.query, 'crm_status', LEAD_CRM_STATUSES), from: timeBound(ctx.query, 'from'), to: timeBound(ctx.query, 'to') };
    if (filter.from && filter.to && filter.from > filter.to) throw invalid('invalid_request', 'from: must not be after to', 'from');
    ctx.body = await listLeads(deps, ctx.state.principal.tenant_id, filter, pageQuery(ctx.query));
  });

  router.delete('/leads/:id', async (ctx) => {
    await deleteLead(deps, ctx.state.principal, ctx.params.id, requestContextOf(ctx));
    ctx.status = 204;
  });

  router.post('/leads/:id/erase', async (ctx) => {
    ctx.body = await eraseLead(deps, ctx.state.principal, ctx.params.id, requestContextOf(ctx));
  });

  return router;
}
