// Business tool routes of spec 4.12 (user token): `GET, POST /api/v1/workspaces/{workspace_id}
// /tools` and `GET, PATCH, DELETE /api/v1/tools/{id}`. Who may do what and the rules are the
// use cases' (application/tool/tools.ts); this file decodes and encodes. Creating honours
// Idempotency-Key; a tool carries its ETag and changes honour If-Match.

import Router from '@koa/router';
import * as t from 'io-ts';
import type { AccessDenialRecorder } from '../../../application/access-denial/access-denials';
import type { UseCaseDependencies } from '../../../application/shared/dependencies';
import { createTool, deleteTool, editTool, getTool, listTools } from '../../../application/tool/tools';
import { HttpMethod, JsonSchemaObject, MAX_TOOL_PARAMETERS, ParameterMapping, RiskTier, ToolSource } from '../../../domain/tool/tool';
import { decodeBody } from '../decode';
import { answerVersioned, preconditionsOf } from '../entity-tags';
import type { AuthenticatedState } from '../middleware/authenticate';
import { authenticateUserRecordingDenials } from '../middleware/authorize';
import { idempotencySeedOf, idempotentCreation } from '../middleware/idempotency';
import { pageQuery } from '../pagination';
import { requestContextOf } from '../request-context';

const optional = <C extends t.Mixed>(codec: C) => t.union([codec, t.undefined]);
const Parameters = t.refinement(t.array(ParameterMapping), (items) => items.length <= MAX_TOOL_PARAMETERS, `array of at most ${MAX_TOOL_PARAMETERS} parameter mappings`);

export const CreateToolBody = t.type(
  {
    integration_id: t.string,
    name: t.string,
    description: optional(t.string),
    method: HttpMethod,
    path: t.string,
    parameters: optional(Parameters),
    input_schema: optional(JsonSchemaObject),
    chat: optional(t.boolean),
    risk: optional(RiskTier),
    enabled: optional(t.boolean),
  },
  'CreateToolBody',
);
export const UpdateToolBody = t.type(
  {
    integration_id: optional(t.string),
    name: optional(t.string),
    description: optional(t.string),
    method: optional(HttpMethod),
    path: optional(t.string),
    parameters: optional(Parameters),
    input_schema: optional(JsonSchemaObject),
    chat: optional(t.boolean),
    risk: optional(RiskTier),
    enabled: optional(t.boolean),
  },
  'UpdateToolBody',
);
export const ToolListQuery = t.type({ integration_id: optional(t.string), source: optional(ToolSource) }, 'ToolListQuery');

export function toolsRouter(identity: UseCaseDependencies, denials: AccessDenialRecorder): Router<AuthenticatedState> {
  const router = new Router<AuthenticatedState>({ prefix: '/api/v1' });
  const user = authenticateUserRecordingDenials(identity, denials);

  router.get('/workspaces/:workspace_id/tools', user, async (ctx) => {
    const filter = decodeBody(ToolListQuery, { integration_id: ctx.query.integration_id, source: ctx.query.source });
    ctx.body = await listTools(identity, ctx.state.principal, ctx.params.workspace_id, filter, pageQuery(ctx.query));
  });

  router.post('/workspaces/:workspace_id/tools', user, idempotentCreation(identity), async (ctx) => {
    const body = decodeBody(CreateToolBody, ctx.request.body);
    const tool = await createTool(identity, ctx.state.principal, ctx.params.workspace_id, body, requestContextOf(ctx), { idempotencyKey: idempotencySeedOf(ctx) });
    ctx.status = 201;
    ctx.set('location', `/api/v1/tools/${tool.value.id}`);
    answerVersioned(ctx, tool);
  });

  router.get('/tools/:id', user, async (ctx) => {
    answerVersioned(ctx, await getTool(identity, ctx.state.principal, ctx.params.id));
  });

  router.patch('/tools/:id', user, async (ctx) => {
    const preconditions = preconditionsOf(ctx);
    const changes = decodeBody(UpdateToolBody, ctx.request.body);
    answerVersioned(ctx, await editTool(identity, ctx.state.principal, ctx.params.id, changes, requestContextOf(ctx), preconditions));
  });

  router.delete('/tools/:id', user, async (ctx) => {
    await deleteTool(identity, ctx.state.principal, ctx.params.id, requestContextOf(ctx), preconditionsOf(ctx));
    ctx.status = 204;
  });

  return router;
}
