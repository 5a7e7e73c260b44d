// The CRM connector routes (spec 4.8): `GET, POST /tenant/crm` read and set the configuration
// (the credential is never answered: `has_credential`). It carries its ETag; a POST honours If-Match.

import Router from '@koa/router';
import * as t from 'io-ts';
import { type CrmConfigDependencies, configureCrm, readCrmConfig } from '../../../application/crm/crm-config';
import { CrmKind } from '../../../domain/crm-config/crm-config';
import { decodeBody } from '../decode';
import { answerVersioned, preconditionsOf } from '../entity-tags';
import type { AuthenticatedState } from '../middleware/authenticate';
import { requestContextOf } from '../request-context';

export const CrmBody = t.type(
  {
    kind: CrmKind,
    url: t.string,
    /** Omitted: keep the current one; null: remove it. */
    credential: t.union([t.string, t.null, t.undefined]),
    /** Lead field -> CRM field; omitted: keep the current mapping. */
    field_mapping: t.union([t.record(t.string, t.string), t.undefined]),
    enabled: t.union([t.boolean, t.undefined]),
  },
  'CrmBody',
);

export function tenantCrmRouter(deps: CrmConfigDependencies): Router<AuthenticatedState> {
  const router = new Router<AuthenticatedState>();

  router.get('/crm', async (ctx) => {
    answerVersioned(ctx, await readCrmConfig(deps, ctx.state.principal.tenant_id));
  });

  router.post('/crm', async (ctx) => {
    const preconditions = preconditionsOf(ctx);
    const body = decodeBody(CrmBody, ctx.request.body);
    answerVersioned(ctx, await configureCrm(deps, ctx.state.principal, body, requestContextOf(ctx), preconditions));
  });

  return router;
}
