// Tool execution and approval routes of spec 4.12 (user token): `POST /api/v1/tools/{id}/test`,
// `GET /api/v1/tools/{id}/logs`, `GET /api/v1/tool-calls`, `GET /api/v1/tool-calls/{id}`, and
// `POST /api/v1/tool-calls/{id}/approve` and `/refuse`. Who may do what and the rules are the
// use cases' (application/tool-call); this file decodes and encodes. A test honours
// Idempotency-Key: a retry gets the first answer, and the API is called once.

import Router from '@koa/router';
import * as t from 'io-ts';
import type { Context } from 'koa';
import type { AccessDenialRecorder } from '../../../application/access-denial/access-denials';
import { approveToolCall, refuseToolCall } from '../../../application/tool-call/approvals';
import { eraseToolCall } from '../../../application/tool-call/tool-call-erasure';
import { getToolCall, listToolCalls, statusFilter, toolLogs } from '../../../application/tool-call/execution-log';
import type { ToolCallDependencies } from '../../../application/tool-call/tool-calls';
import { type ToolTestDependencies, testTool } from '../../../application/tool-call/tool-test';
import type { UseCaseDependencies } from '../../../application/shared/dependencies';
import { toolCallSubject } from '../../../domain/tool-call/tool-call';
import { decodeBody } from '../decode';
import type { AuthenticatedState } from '../middleware/authenticate';
import { authenticateUserRecordingDenials } from '../middleware/authorize';
import { answerHoldsPersonalDataOf, idempotencySeedOf, idempotentCreation } from '../middleware/idempotency';
import { pageQuery } from '../pagination';
import { requestContextOf } from '../request-context';

export const ToolTestBody = t.type({ arguments: t.UnknownRecord }, 'ToolTestBody');
export const RefusalBody = t.type({ reason: t.string }, 'RefusalBody');

export const END_USER_TOKEN_HEADER = 'X-End-User-Token';
export const END_USER_SESSION_HEADER = 'X-End-User-Session';

/** What the execution routes need beyond the identity ports: the execution's own (outbound client, limits, token cache, logger). */
export type ToolCallAdapters = Omit<ToolCallDependencies, keyof UseCaseDependencies>;

const single = (value: string | string[] | undefined): string | undefined => (typeof value === 'string' && value.length > 0 ? value : undefined);

/** The end user's headers the tester sent, to be forwarded as a chat turn's would be. */
function endUserOf(ctx: Context): { token: string | null; session: string | null } | undefined {
  const token = single(ctx.headers[END_USER_TOKEN_HEADER.toLowerCase()]) ?? null;
  const session = single(ctx.headers[END_USER_SESSION_HEADER.toLowerCase()]) ?? null;
  return token === null && session === null ? undefined : { token, session };
}

export function toolCallsRouter(identity: UseCaseDependencies, denials: AccessDenialRecorder, adapters: ToolCallAdapters): Router<AuthenticatedState> {
  const router = new Router<AuthenticatedState>({ prefix: '/api/v1' });
  const user = authenticateUserRecordingDenials(identity, denials);
  const deps: ToolTestDependencies = { ...identity, ...adapters };

  router.post('/tools/:id/test', user, idempotentCreation(identity), async (ctx) => {
    const body = decodeBody(ToolTestBody, ctx.request.body);
    const endUser = endUserOf(ctx);
    const { call, outcome } = await testTool(deps, ctx.state.principal, ctx.params.id, { arguments: body.arguments, ...(endUser ? { end_user: endUser } : {}) }, requestContextOf(ctx), {
      idempotencyKey: idempotencySeedOf(ctx),
    });
    answerHoldsPersonalDataOf(ctx, toolCallSubject(call.id));
    ctx.status = outcome.status === 'awaiting_approval' ? 202 : 200;
    ctx.body = { ...call, result: 'result' in outcome ? outcome.result : null };
  });

  router.get('/tools/:id/logs', user, async (ctx) => {
    ctx.body = await toolLogs(deps, ctx.state.principal, ctx.params.id, { status: statusFilter(ctx.query.status) }, pageQuery(ctx.query));
  });

  router.get('/tool-calls', user, async (ctx) => {
    const toolId = single(ctx.query.tool_id);
    ctx.body = await listToolCalls(deps, ctx.state.principal, { status: statusFilter(ctx.query.status), ...(toolId ? { tool_id: toolId } : {}) }, pageQuery(ctx.query));
  });

  router.get('/tool-calls/:id', user, async (ctx) => {
    ctx.body = await getToolCall(deps, ctx.state.principal, ctx.params.id);
  });

  router.post('/tool-calls/:id/approve', user, async (ctx) => {
    ctx.body = await approveToolCall(deps, ctx.state.principal, ctx.params.id, requestContextOf(ctx));
  });

  router.post('/tool-calls/:id/refuse', user, async (ctx) => {
    const body = decodeBody(RefusalBody, ctx.request.body);
    ctx.body = await refuseToolCall(deps, ctx.state.principal, ctx.params.id, body.reason, requestContextOf(ctx));
  });

  router.post('/tool-calls/:id/erase', user, async (ctx) => {
    ctx.body = await eraseToolCall(identity, ctx.state.principal, ctx.params.id, requestContextOf(ctx));
  });

  return router;
}
