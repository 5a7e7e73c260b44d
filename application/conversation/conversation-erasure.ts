// Erasing a conversation reaches the tool calls that were steps of its turns: their arguments
// and exchanges are about the same people. Each gets ToolCallErased (refused first when it still
// awaited approval, so it leaves the approval queue) and its key is deleted. The use case
// (eraseConversation) does it right after the conversation's own erasure; the saga
// `conversation_erasure` does it again after ConversationErased, for a process that stopped in
// between. Both are idempotent. A call is found through the conversation's recorded steps: one
// asked for by a turn that never recorded its step (a process stopped between the two) is not.

import { type ConversationEvent, conversationStream } from '../../domain/conversation/conversation';
import { DomainError } from '../../domain/shared/errors';
import { type Caller, toolCallStream, toolCallSubject } from '../../domain/tool-call/tool-call';
import { type CommandDependencies, handleCommand } from '../command-handling/handle-command';
import type { PersonalDataVault } from '../ports/personal-data';
import type { Saga } from '../sagas/saga';
import { type RequestContext, systemContext } from '../shared/request-context';
import { toolCallAggregate } from '../tool-call/tool-calls';

export const CONVERSATION_ERASURE = 'conversation_erasure';

/** Why a call that awaited approval is refused when its conversation is erased. */
export const ERASED_CONVERSATION_REASON = 'the conversation it was asked in was erased';

export type ConversationErasureDependencies = CommandDependencies & { personalData: PersonalDataVault };

/** Erases the tool calls of the conversation's recorded steps; answers how many it found. */
export async function eraseToolCallsOf(deps: ConversationErasureDependencies, tenantId: string, conversationId: string, context: RequestContext): Promise<number> {
  // The refusal names who erased: a member, or the platform (the saga).
  const by: Caller = context.actor.kind === 'user' || context.actor.kind === 'admin' ? { kind: context.actor.kind, id: context.actor.id } : { kind: 'system', id: CONVERSATION_ERASURE };
  const events = (await deps.eventStore.readStream(conversationStream(conversationId))) as unknown as ConversationEvent[];
  const toolCallIds = new Set(events.flatMap((event) => (event.type === 'AssistantToolStepRecorded' && event.data.tool_call_id !== null ? [event.data.tool_call_id] : [])));
  for (const toolCallId of toolCallIds) {
    try {
      await handleCommand(deps, toolCallAggregate, toolCallStream(toolCallId), { type: 'EraseToolCall', data: { tenant_id: tenantId, by, reason: ERASED_CONVERSATION_REASON } }, context);
    } catch (error) {
      // A step naming a call that is not there (or not this organization's) has nothing to erase.
      if (!(error instanceof DomainError && error.code === 'tool_call_not_found')) throw error;
    }
    await deps.personalData.erase(toolCallSubject(toolCallId));
  }
  return toolCallIds.size;
}

export function conversationErasureSaga(deps: ConversationErasureDependencies): Saga<'ConversationErased'> {
  return {
    name: CONVERSATION_ERASURE,
    version: 1,
    filter: { kind: 'event_type', types: ['ConversationErased'] },
    async handle(event) {
      const { tenant_id, conversation_id } = event.data;
      await eraseToolCallsOf(deps, tenant_id, conversation_id, { ...systemContext(event.metadata.correlation_id, CONVERSATION_ERASURE, event.id), tenant_id });
    },
  };
}
