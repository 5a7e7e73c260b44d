// `POST /tools/{id}/test` (spec 4.12): a person runs a tool with arguments they give, to see
// what its API answers (the request and response as recorded, redacted), through the very
// path a chat step takes (`requestToolCall`), as a call of origin `test`.
//
// - Who: the team write flag on the tool's workspace (admins and owners always): 403
//   `workspace_read_only` for a reader; a tool of a workspace the caller may not read is 404.
// - An owner's or admin's test of an `approval_required` tool runs at once, the approval
//   recorded as theirs; a member's waits for one like any other call (answered
//   `awaiting_approval`).
// - The tester may send X-End-User-Token and X-End-User-Session, to see them forwarded as a
//   chat turn's would be (recorded only sealed, redacted everywhere else).

import { notFound } from '../../domain/shared/errors';
import { type Principal, actingContext } from '../session/sessions';
import { type ReadModelDependencies, type ReadYourWritesDependencies, readBack } from '../shared/read-models';
import type { RequestContext } from '../shared/request-context';
import { requireWritableWorkspace, workspaceAccess } from '../workspace/workspace-access';
import { type ToolCallView, getToolCall, isApprover } from './execution-log';
import { type ToolCallDependencies, type ToolCallOutcome, liveTool, requestToolCall } from './tool-calls';

export type ToolTestDependencies = ToolCallDependencies & ReadModelDependencies & ReadYourWritesDependencies;

export interface ToolTestInput {
  arguments: unknown;
  end_user?: { token: string | null; session: string | null };
}

/** Runs the tool (or queues it for approval); the call as the execution log shows it, and its outcome. */
export async function testTool(
  deps: ToolTestDependencies,
  principal: Principal,
  toolId: string,
  input: ToolTestInput,
  context: RequestContext,
  options: { idempotencyKey?: string } = {},
): Promise<{ call: ToolCallView; outcome: ToolCallOutcome }> {
  const tool = await liveTool(deps, principal.tenant_id, toolId);
  if (!(await workspaceAccess(deps, principal)).readable.has(tool.workspace_id)) throw notFound('tool_not_found', 'no such tool');
  await requireWritableWorkspace(deps, principal, tool.workspace_id);
  const caller = { kind: 'user' as const, id: principal.user_id };
  const { outcome, position } = await requestToolCall(
    deps,
    principal.tenant_id,
    { tool_id: toolId, arguments: input.arguments, caller, origin: { kind: 'test' }, ...(input.end_user ? { end_user: input.end_user } : {}) },
    actingContext(principal, context),
    { ...(isApprover(principal) ? { approvedBy: caller } : {}), idempotencyKey: options.idempotencyKey },
  );
  // A call the read models do not show yet was a 404 right after it ran.
  const call = await readBack(deps, position, 'the test call', () => getToolCall(deps, principal, outcome.tool_call_id), `its outcome is in the tool's logs (GET /api/v1/tools/${toolId}/logs) once they show it`);
  return { call, outcome };
}
