// SDK connection routes of spec 4.2, mounted under /api/v1/org (user token; a widget token is
// 401): `GET, POST /sdk-connections`, `GET, PATCH, DELETE /sdk-connections/{id}`, `POST
// .../{id}/test` (`?deep=true`), `POST .../{id}/sync-tools`, `GET .../{id}/flows`, `GET
// .../{id}/schedules`. Owners and
// admins only (403 `insufficient_role`, recorded). The rules are the use cases'
// (application/sdk-connection/sdk-connections.ts); this file decodes and encodes. Creating
// honours Idempotency-Key; a connection carries its ETag and changes honour If-Match. The
// signing secret is answered only by the create and by an update that rotates it.

import Router from '@koa/router';
import * as t from 'io-ts';
import {
  ConnectorUnavailableError,
  type SdkConnectionDependencies,
  createSdkConnection,
  deleteSdkConnection,
  getSdkConnection,
  listSdkConnectionFlows,
  listSdkConnectionSchedules,
  listSdkConnections,
  syncSdkConnectionTools,
  testSdkConnection,
  updateSdkConnection,
} from '../../../application/sdk-connection/sdk-connections';
import type { UseCaseDependencies } from '../../../application/shared/dependencies';
import { invalid } from '../../../domain/shared/errors';
import { decodeBody } from '../decode';
import { answerVersioned, preconditionsOf } from '../entity-tags';
import type { AuthenticatedState } from '../middleware/authenticate';
import { requireRole } from '../middleware/authorize';
import { idempotencySeedOf, idempotentCreation } from '../middleware/idempotency';
import { pageQuery } from '../pagination';
import { requestContextOf } from '../request-context';

const optional = <C extends t.Mixed>(codec: C) => t.union([codec, t.undefined]);

export const CreateSdkConnectionBody = t.type(
  { name: t.string, webhook_url: t.string, signing_secret: optional(t.string), enabled: optional(t.boolean) },
  'CreateSdkConnectionBody',
);
export const UpdateSdkConnectionBody = t.type(
  { name: optional(t.string), webhook_url: optional(t.string), enabled: optional(t.boolean), signing_secret: optional(t.string), grace_seconds: optional(t.number) },
  'UpdateSdkConnectionBody',
);
export const SyncToolsBody = t.type({ workspace_id: optional(t.string), auto_register: optional(t.boolean) }, 'SyncToolsBody');

/** What the routes need beyond the identity ports: the outbound guard, the connector client and doctor, the rotation's default grace. */
export type SdkConnectionAdapters = Pick<SdkConnectionDependencies, 'outbound' | 'connectorClient' | 'connectorDoctor' | 'sdkConnections'>;

/** `?deep=true` or `false` (absent: false); anything else is 400 naming `deep`. */
function deepOf(value: string | string[] | undefined): boolean {
  if (value === undefined || value === 'false') return false;
  if (value === 'true') return true;
  throw invalid('invalid_request', 'deep: expected true or false', 'deep');
}

/** Mounted under /api/v1/org after authentication. */
export function sdkConnectionsRouter(identity: UseCaseDependencies, adapters: SdkConnectionAdapters): Router<AuthenticatedState> {
  const router = new Router<AuthenticatedState>();
  const deps: SdkConnectionDependencies = { ...identity, ...adapters };
  router.use('/sdk-connections', requireRole('admin'));

  router.get('/sdk-connections', async (ctx) => {
    ctx.body = await listSdkConnections(deps, ctx.state.principal, pageQuery(ctx.query));
  });

  router.post('/sdk-connections', idempotentCreation(identity), async (ctx) => {
    const body = decodeBody(CreateSdkConnectionBody, ctx.request.body);
    const connection = await createSdkConnection(deps, ctx.state.principal, body, requestContextOf(ctx), { idempotencyKey: idempotencySeedOf(ctx) });
    ctx.status = 201;
    ctx.set('location', `/api/v1/org/sdk-connections/${connection.value.id}`);
    answerVersioned(ctx, connection);
  });

  router.get('/sdk-connections/:id', async (ctx) => {
    answerVersioned(ctx, await getSdkConnection(deps, ctx.state.principal, ctx.params.id));
  });

  router.patch('/sdk-connections/:id', async (ctx) => {
    const preconditions = preconditionsOf(ctx);
    const changes = decodeBody(UpdateSdkConnectionBody, ctx.request.body);
    answerVersioned(ctx, await updateSdkConnection(deps, ctx.state.principal, ctx.params.id, changes, requestContextOf(ctx), preconditions));
  });

  router.delete('/sdk-connections/:id', async (ctx) => {
    await deleteSdkConnection(deps, ctx.state.principal, ctx.params.id, requestContextOf(ctx), preconditionsOf(ctx));
    ctx.status = 204;
  });

  router.post('/sdk-connections/:id/test', async (ctx) => {
    const deep = deepOf(ctx.query.deep);
    ctx.body = await testSdkConnection(deps, ctx.state.principal, ctx.params.id, { deep }, requestContextOf(ctx));
  });

  router.post('/sdk-connections/:id/sync-tools', async (ctx) => {
    const body = decodeBody(SyncToolsBody, ctx.request.body);
    try {
      ctx.body = await syncSdkConnectionTools(deps, ctx.state.principal, ctx.params.id, body, requestContextOf(ctx));
    } catch (error) {
      if (!(error instanceof ConnectorUnavailableError)) throw error;
      // The connector's failure, not the client's: 502, with why (the sync is recorded as failed).
      ctx.status = 502;
      ctx.body = { code: 'connector_unavailable', message: error.message, reason: error.reason, detail: error.detail };
    }
  });

  router.get('/sdk-connections/:id/flows', async (ctx) => {
    ctx.body = await listSdkConnectionFlows(deps, ctx.state.principal, ctx.params.id);
  });

  router.get('/sdk-connections/:id/schedules', async (ctx) => {
    ctx.body = await listSdkConnectionSchedules(deps, ctx.state.principal, ctx.params.id);
  });

  return router;
}
