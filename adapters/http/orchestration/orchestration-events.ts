// Orchestration event routes of spec 4.13 (user token, owner or admin; a member is 403), an
// area of the /api/v1/org router (org/index.ts authenticates and records every 403):
// `GET, POST /api/v1/org/events`, `GET /api/v1/org/events/{id}`, `POST .../{id}/retry`,
// `POST .../{id}/replay`, `POST /api/v1/org/events/replay` (a time range, by pages or in the
// background), `GET /api/v1/org/events/replays/{id}` (a background range replay's progress),
// `POST /api/v1/org/events/payloads/erase` (the payloads of the days before a date),
// `POST /api/v1/org/events/redrive` (dead letters re-queued a page at a time) and
// `POST /api/v1/org/events/ingest/{tenant_id}`. The rules are the use cases'
// (application/orchestration/orchestration-events.ts); this file decodes and encodes. Emit,
// ingest and both replays honour Idempotency-Key; an event carries its ETag and retry honours
// If-Match. docs/orchestration-events.md is the reference.

import Router from '@koa/router';
import * as t from 'io-ts';
import type { Context } from 'koa';
import {
  type EmitDependencies,
  type EmitOutcome,
  correlationFilter,
  emitOrchestrationEvent,
  getOrchestrationEvent,
  ingestOrchestrationEvent,
  listOrchestrationEvents,
  nameFilter,
  replayOrchestrationEvent,
  replayOrchestrationRange,
  requireOwnTenant,
  retryOrchestrationEvent,
  statusFilter,
  timeRange,
} from '../../../application/orchestration/orchestration-events';
import { getRangeReplay, startRangeReplay } from '../../../application/orchestration/range-replay';
import { erasePayloadsOnRequest } from '../../../application/orchestration/payload-retention';
import { redriveAs } from '../../../application/orchestration/redrive';
import type { UseCaseDependencies } from '../../../application/shared/dependencies';
import { EnvelopeBody } from '../../../domain/orchestration-event/orchestration-event';
import { decodeBody } from '../decode';
import { answerVersioned, preconditionsOf } from '../entity-tags';
import type { AuthenticatedState } from '../middleware/authenticate';
import { requireRole } from '../middleware/authorize';
import { idempotencySeedOf, idempotentCreation } from '../middleware/idempotency';
import { pageQuery } from '../pagination';
import { requestContextOf } from '../request-context';

const optional = <C extends t.Mixed>(codec: C) => t.union([codec, t.null, t.undefined]);

export const ReplayBody = t.type({ reason: optional(t.string) }, 'ReplayBody');
export const PayloadErasureBody = t.type({ before: t.string }, 'PayloadErasureBody');
export const RedriveBody = t.type(
  { status: optional(t.string), name: optional(t.string), from: optional(t.string), to: optional(t.string), limit: optional(t.number), cursor: optional(t.string) },
  'RedriveBody',
);
export const RangeReplayBody = t.type(
  { from: t.string, to: t.string, name: optional(t.string), limit: optional(t.number), cursor: optional(t.string), reason: optional(t.string), background: optional(t.boolean) },
  'RangeReplayBody',
);

/** What the routes need beyond the identity ports: the deployment's orchestration bounds and the emit budget's limiter. */
export type OrchestrationAdapters = Pick<EmitDependencies, 'orchestration' | 'dispatchOnReceipt' | 'limiter'>;

/** The decoded envelope, with `replay_of` as sent, so that the use case refuses it by name. */
function envelopeOf(body: unknown) {
  const decoded = decodeBody(EnvelopeBody, body);
  const replayOf = typeof body === 'object' && body !== null ? (body as { replay_of?: unknown }).replay_of : undefined;
  return { ...decoded, replay_of: replayOf };
}

/** 201 with Location for a new event; 200 for the event an earlier emit with the same idempotency_key made. */
function answerEmitted(ctx: Context, outcome: EmitOutcome): void {
  ctx.status = outcome.created ? 201 : 200;
  if (outcome.created) ctx.set('location', `/api/v1/org/events/${outcome.event.value.id}`);
  answerVersioned(ctx, outcome.event);
}

const single = (value: string | string[] | undefined): string | undefined => (Array.isArray(value) ? value[0] : value);

/** The area's routes, mounted by the org router under /api/v1/org (which authenticates). */
export function orchestrationEventsRouter(identity: UseCaseDependencies, adapters: OrchestrationAdapters): Router<AuthenticatedState> {
  const router = new Router<AuthenticatedState>();
  const ownerOrAdmin = requireRole('admin');
  const deps: EmitDependencies = { ...identity, ...adapters };

  router.get('/events', ownerOrAdmin, async (ctx) => {
    const filter = {
      status: statusFilter(ctx.query.status),
      name: nameFilter(single(ctx.query.name)),
      correlation_id: correlationFilter(single(ctx.query.correlation_id)),
      ...timeRange(single(ctx.query.from), single(ctx.query.to)),
    };
    ctx.body = await listOrchestrationEvents(deps, ctx.state.principal.tenant_id, filter, pageQuery(ctx.query));
  });

  router.post('/events', ownerOrAdmin, idempotentCreation(identity), async (ctx) => {
    const envelope = envelopeOf(ctx.request.body);
    answerEmitted(ctx, await emitOrchestrationEvent(deps, ctx.state.principal, envelope, requestContextOf(ctx), { idempotencyKey: idempotencySeedOf(ctx) }));
  });

  // Before `/events/:id/...`, so that no event id is taken for `ingest` or `replay`.
  router.post('/events/ingest/:tenant_id', ownerOrAdmin, idempotentCreation(identity), async (ctx) => {
    requireOwnTenant(ctx.state.principal, ctx.params.tenant_id);
    const envelope = envelopeOf(ctx.request.body);
    answerEmitted(ctx, await ingestOrchestrationEvent(deps, ctx.state.principal, ctx.params.tenant_id, envelope, requestContextOf(ctx), { idempotencyKey: idempotencySeedOf(ctx) }));
  });

  router.post('/events/replay', ownerOrAdmin, idempotentCreation(identity), async (ctx) => {
    const body = decodeBody(RangeReplayBody, ctx.request.body);
    const input = {
      from: body.from,
      to: body.to,
      ...(body.name === null || body.name === undefined ? {} : { name: body.name }),
      ...(body.limit === null || body.limit === undefined ? {} : { limit: body.limit }),
      ...(body.cursor === null || body.cursor === undefined ? {} : { cursor: body.cursor }),
      reason: body.reason ?? null,
    };
    const options = { idempotencyKey: idempotencySeedOf(ctx) };
    if (body.background !== true) {
      ctx.body = await replayOrchestrationRange(deps, ctx.state.principal, input, requestContextOf(ctx), options);
      return;
    }
    // The platform replays the range by itself, page after page; the answer is where to follow it.
    const started = await startRangeReplay(deps, ctx.state.principal, input, requestContextOf(ctx), options);
    ctx.status = 202;
    ctx.set('location', `/api/v1/org/events/replays/${started.id}`);
    ctx.body = started;
  });

  router.post('/events/redrive', ownerOrAdmin, async (ctx) => {
    ctx.body = await redriveAs(deps, ctx.state.principal, decodeBody(RedriveBody, ctx.request.body ?? {}), requestContextOf(ctx));
  });

  router.post('/events/payloads/erase', ownerOrAdmin, async (ctx) => {
    const body = decodeBody(PayloadErasureBody, ctx.request.body);
    ctx.body = await erasePayloadsOnRequest(identity, ctx.state.principal, body, requestContextOf(ctx));
  });

  router.get('/events/replays/:id', ownerOrAdmin, async (ctx) => {
    ctx.body = await getRangeReplay(deps, ctx.state.principal.tenant_id, ctx.params.id);
  });

  router.get('/events/:id', ownerOrAdmin, async (ctx) => {
    answerVersioned(ctx, await getOrchestrationEvent(deps, ctx.state.principal.tenant_id, ctx.params.id));
  });

  router.post('/events/:id/retry', ownerOrAdmin, async (ctx) => {
    const preconditions = preconditionsOf(ctx);
    answerVersioned(ctx, await retryOrchestrationEvent(deps, ctx.state.principal, ctx.params.id, requestContextOf(ctx), preconditions));
  });

  router.post('/events/:id/replay', ownerOrAdmin, idempotentCreation(identity), async (ctx) => {
    const body = decodeBody(ReplayBody, ctx.request.body);
    const replay = await replayOrchestrationEvent(deps, ctx.state.principal, ctx.params.id, { reason: body.reason ?? null }, requestContextOf(ctx), { idempotencyKey: idempotencySeedOf(ctx) });
    ctx.status = 201;
    ctx.set('location', `/api/v1/org/events/${replay.value.id}`);
    answerVersioned(ctx, replay);
  });

  return router;
}
