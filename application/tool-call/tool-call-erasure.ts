// Erasing one tool call (docs/personal-data.md, "Erasure"): what a call carries of people (its
// arguments, the exchange with the API or connector, a failure's message, a challenge, a
// refusal's reason) is sealed under the call's key; erasing it records ToolCallErased and
// deletes the key, so it reads as erased everywhere, the history and any rebuild included,
// while the execution log keeps what happened (status, times, latency). A conversation's
// erasure does it for the calls of its turns (conversation-erasure.ts); this is for the calls
// no conversation reaches: a flow's step, a test. A call still awaiting approval is refused
// first, so nobody approves it afterwards.
//
// Owners and admins (403 `insufficient_role`), a call of their organization (404
// `tool_call_not_found` otherwise); erasing again answers the first erasure.

import { forbidden } from '../../domain/shared/errors';
import { type Caller, type ToolCallEvent, toolCallStream, toolCallSubject } from '../../domain/tool-call/tool-call';
import { type CommandDependencies, handleCommand } from '../command-handling/handle-command';
import type { PersonalDataVault } from '../ports/personal-data';
import { type Principal, actingContext } from '../session/sessions';
import type { ReadYourWritesDependencies } from '../shared/read-models';
import type { RequestContext } from '../shared/request-context';
import { isApprover } from './execution-log';
import { toolCallAggregate } from './tool-calls';

/** Why a call that awaited approval is refused with its erasure. */
export const ERASED_TOOL_CALL_REASON = 'its data was erased';

export type ToolCallErasureDependencies = CommandDependencies & ReadYourWritesDependencies & { personalData: PersonalDataVault };

export interface ToolCallErasureView {
  id: string;
  erased_at: string;
}

export async function eraseToolCall(deps: ToolCallErasureDependencies, principal: Principal, toolCallId: string, context: RequestContext): Promise<ToolCallErasureView> {
  if (!isApprover(principal)) throw forbidden('insufficient_role', 'only an owner or admin erases a tool call');
  const by: Caller = principal.impersonator ? { kind: 'admin', id: principal.impersonator.id } : { kind: 'user', id: principal.user_id };
  return eraseToolCallOf(deps, principal.tenant_id, toolCallId, by, actingContext(principal, context));
}

/** The erasure itself, for the route above and for the operator (`npm run cli -- erase tool-call`). */
export async function eraseToolCallOf(deps: ToolCallErasureDependencies, tenantId: string, toolCallId: string, by: Caller, context: RequestContext): Promise<ToolCallErasureView> {
  const stream = toolCallStream(toolCallId);
  const result = await handleCommand(deps, toolCallAggregate, stream, { type: 'EraseToolCall', data: { tenant_id: tenantId, by, reason: ERASED_TOOL_CALL_REASON } }, context);
  // The saga personal_data_erasure does it too, for a process that stops right here.
  await deps.personalData.erase(toolCallSubject(toolCallId));
  await deps.readYourWrites(result.position);
  // This erasure's time, or the first one's (a repeated request).
  const events = (await deps.eventStore.readStream(stream)) as unknown as ToolCallEvent[];
  const erased = events.find((event) => event.type === 'ToolCallErased');
  if (erased?.type !== 'ToolCallErased') throw new Error(`tool call ${toolCallId}: erased, yet no ToolCallErased`);
  return { id: toolCallId, erased_at: erased.data.erased_at };
}
