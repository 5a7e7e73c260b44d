// The handoff webhook routes (spec 4.8): `GET, POST /tenant/handoff` read and set the
// configuration (the secret is never answered, except a secret the platform makes, once, in
// the POST that made it), and `GET /tenant/handoff/deliveries` lists the handoffs sent and
// how each delivery stands. The configuration carries its ETag; a POST honours If-Match.

import Router from '@koa/router';
import * as t from 'io-ts';
import { type HandoffConfigDependencies, configureHandoff, readHandoffConfig } from '../../../application/handoff/handoff-config';
import { DELIVERY_STATUSES, listHandoffDeliveries } from '../../../application/handoff/handoff-deliveries';
import { decodeBody } from '../decode';
import { answerVersioned, preconditionsOf } from '../entity-tags';
import type { AuthenticatedState } from '../middleware/authenticate';
import { pageQuery } from '../pagination';
import { requestContextOf } from '../request-context';
import { oneOf, single } from './query';

export const HandoffBody = t.type(
  {
    url: t.string,
    /** Omitted: keep the current secret (one is made when there is none); "": make a new one. */
    secret: t.union([t.string, t.undefined]),
    enabled: t.union([t.boolean, t.undefined]),
  },
  'HandoffBody',
);

export function tenantHandoffRouter(deps: HandoffConfigDependencies): Router<AuthenticatedState> {
  const router = new Router<AuthenticatedState>();

  router.get('/handoff', async (ctx) => {
    answerVersioned(ctx, await readHandoffConfig(deps, ctx.state.principal.tenant_id));
  });

  router.post('/handoff', async (ctx) => {
    const preconditions = preconditionsOf(ctx);
    const body = decodeBody(HandoffBody, ctx.request.body);
    answerVersioned(ctx, await configureHandoff(deps, ctx.state.principal, body, requestContextOf(ctx), preconditions));
  });

  router.get('/handoff/deliveries', async (ctx) => {
    const conversationId = single(ctx.query, 'conversation_id');
    const filter = { status: oneOf(ctx.query, 'status', DELIVERY_STATUSES), ...(conversationId ? { conversation_id: conversationId } : {}) };
    ctx.body = await listHandoffDeliveries(deps, ctx.state.principal.tenant_id, filter, pageQuery(ctx.query));
  });

  return router;
}
