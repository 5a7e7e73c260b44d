// Integration routes of spec 4.12 (user token): `GET, POST /api/v1/workspaces/{workspace_id}
// /integrations` and `GET, PATCH (or PUT), DELETE /api/v1/integrations/{id}`. Who may do what and the
// rules are the use cases' (application/integration/integrations.ts); this file decodes and
// encodes. Creating honours Idempotency-Key; an integration carries its ETag and changes
// honour If-Match. The credentials are never answered (`has_credentials`). Deleting one that
// tools call is 409 unless `?cascade=true`.

import Router from '@koa/router';
import * as t from 'io-ts';
import type { AccessDenialRecorder } from '../../../application/access-denial/access-denials';
import {
  type IntegrationDependencies,
  createIntegration,
  deleteIntegration,
  getIntegration,
  listIntegrations,
  updateIntegration,
} from '../../../application/integration/integrations';
import type { UseCaseDependencies } from '../../../application/shared/dependencies';
import { DefaultHeaders, IntegrationAuth } from '../../../domain/integration/integration';
import { decodeBody } from '../decode';
import { answerVersioned, preconditionsOf } from '../entity-tags';
import type { AuthenticatedState } from '../middleware/authenticate';
import { authenticateUserRecordingDenials } from '../middleware/authorize';
import { idempotencySeedOf, idempotentCreation } from '../middleware/idempotency';
import { pageQuery } from '../pagination';
import { requestContextOf } from '../request-context';

const Credentials = t.union([t.string, t.null, t.undefined]);
export const CreateIntegrationBody = t.type(
  { name: t.string, base_url: t.string, auth: IntegrationAuth, default_headers: t.union([DefaultHeaders, t.undefined]), credentials: Credentials },
  'CreateIntegrationBody',
);
export const UpdateIntegrationBody = t.type(
  {
    name: t.union([t.string, t.undefined]),
    base_url: t.union([t.string, t.undefined]),
    auth: t.union([IntegrationAuth, t.undefined]),
    default_headers: t.union([DefaultHeaders, t.undefined]),
    credentials: Credentials,
  },
  'UpdateIntegrationBody',
);

export const DeleteIntegrationQuery = t.type({ cascade: t.union([t.keyof({ true: null, false: null }, 'true or false'), t.undefined]) }, 'DeleteIntegrationQuery');

/** What the integration routes need beyond the identity ports: the guarded client that checks the addresses given. */
export type IntegrationAdapters = Pick<IntegrationDependencies, 'outbound'>;

export function integrationsRouter(identity: UseCaseDependencies, denials: AccessDenialRecorder, adapters: IntegrationAdapters): Router<AuthenticatedState> {
  const router = new Router<AuthenticatedState>({ prefix: '/api/v1' });
  const user = authenticateUserRecordingDenials(identity, denials);
  const deps: IntegrationDependencies = { ...identity, ...adapters };

  router.get('/workspaces/:workspace_id/integrations', user, async (ctx) => {
    ctx.body = await listIntegrations(deps, ctx.state.principal, ctx.params.workspace_id, pageQuery(ctx.query));
  });

  router.post('/workspaces/:workspace_id/integrations', user, idempotentCreation(identity), async (ctx) => {
    const body = decodeBody(CreateIntegrationBody, ctx.request.body);
    const integration = await createIntegration(deps, ctx.state.principal, ctx.params.workspace_id, body, requestContextOf(ctx), { idempotencyKey: idempotencySeedOf(ctx) });
    ctx.status = 201;
    ctx.set('location', `/api/v1/integrations/${integration.value.id}`);
    answerVersioned(ctx, integration);
  });

  router.get('/integrations/:id', user, async (ctx) => {
    answerVersioned(ctx, await getIntegration(deps, ctx.state.principal, ctx.params.id));
  });

  // PATCH is the spec's (4.12); PUT, which earlier releases answered, does the same for the clients written then.
  for (const method of ['patch', 'put'] as const) {
    router[method]('/integrations/:id', user, async (ctx) => {
      const preconditions = preconditionsOf(ctx);
      const changes = decodeBody(UpdateIntegrationBody, ctx.request.body);
      answerVersioned(ctx, await updateIntegration(deps, ctx.state.principal, ctx.params.id, changes, requestContextOf(ctx), preconditions));
    });
  }

  router.delete('/integrations/:id', user, async (ctx) => {
    const { cascade } = decodeBody(DeleteIntegrationQuery, { cascade: ctx.query.cascade });
    await deleteIntegration(deps, ctx.state.principal, ctx.params.id, requestContextOf(ctx), preconditionsOf(ctx), { cascade: cascade === 'true' });
    ctx.status = 204;
  });

  return router;
}
