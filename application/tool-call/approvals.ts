// Approvals of tool calls (issue #12 point 3): a call of an `approval_required` tool waits
// until an owner or admin approves it (it then runs: approved-tool-calls.ts) or refuses it
// with a reason (it never runs). Both are events of the call, with the approver as actor.
//
// - Only an owner or admin: 403 `insufficient_role` for a member, whatever the call.
// - Another tenant's call, or none, is 404 `tool_call_not_found`; a call that is not waiting
//   (already approved, refused, or one that never had to wait) is 409
//   `tool_call_not_awaiting_approval`.
// - A refusal's reason: 1 to 500 characters of text (400 naming `reason`).

import { isLeft } from 'fp-ts/Either';
import { forbidden } from '../../domain/shared/errors';
import { checkText } from '../../domain/shared/text';
import { toolCallStream } from '../../domain/tool-call/tool-call';
import { TOOL_CALLS, type ToolCallDocument } from '../../projections/tool-calls';
import { type CommandDependencies, handleCommand } from '../command-handling/handle-command';
import { type Principal, actingContext } from '../session/sessions';
import { type ReadModelDependencies, type ReadYourWritesDependencies, requireApplied } from '../shared/read-models';
import type { RequestContext } from '../shared/request-context';
import { type ToolCallView, getToolCall, isApprover } from './execution-log';
import { toolCallAggregate } from './tool-calls';

export const REFUSAL_REASON_MAX_LENGTH = 500;

export type ApprovalDependencies = CommandDependencies & ReadModelDependencies & ReadYourWritesDependencies;

function requireApprover(principal: Principal): void {
  if (!isApprover(principal)) throw forbidden('insufficient_role', 'only an owner or admin approves or refuses tool calls');
}

async function decideOn(deps: ApprovalDependencies, principal: Principal, toolCallId: string, decision: { refuse: string } | 'approve', context: RequestContext): Promise<ToolCallView> {
  requireApprover(principal);
  const by = { kind: 'user' as const, id: principal.user_id };
  const command =
    decision === 'approve'
      ? { type: 'ApproveToolCall' as const, data: { tenant_id: principal.tenant_id, by } }
      : { type: 'RefuseToolCall' as const, data: { tenant_id: principal.tenant_id, by, reason: decision.refuse } };
  const result = await handleCommand(deps, toolCallAggregate, toolCallStream(toolCallId), command, actingContext(principal, context));
  // Behind the decision, the read model would answer the call still awaiting approval.
  await requireApplied(deps, result.position, 'the decision', () => deps.readStore.collection<ToolCallDocument>(TOOL_CALLS).get(toolCallId));
  return getToolCall(deps, principal, toolCallId);
}

/** Approves a waiting call: it runs next (the approval saga), its outcome recorded on it. */
export function approveToolCall(deps: ApprovalDependencies, principal: Principal, toolCallId: string, context: RequestContext): Promise<ToolCallView> {
  return decideOn(deps, principal, toolCallId, 'approve', context);
}

/** Refuses a waiting call, saying why: it never runs. */
export function refuseToolCall(deps: ApprovalDependencies, principal: Principal, toolCallId: string, reason: string, context: RequestContext): Promise<ToolCallView> {
  requireApprover(principal);
  const checked = checkText('reason', reason, { max: REFUSAL_REASON_MAX_LENGTH, multiline: true });
  if (isLeft(checked)) throw checked.left;
  return decideOn(deps, principal, toolCallId, { refuse: checked.right }, context);
}
