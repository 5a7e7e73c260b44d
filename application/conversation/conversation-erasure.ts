// Erasing a conversation reaches what other aggregates hold of the same people:
// - the tool calls that were steps of its turns (their arguments and exchanges): each gets
//   ToolCallErased (refused first when it still awaited approval, so it leaves the approval
//   queue). A call is found through the conversation's recorded steps, and through the read
//   model `tool_calls` by its origin (a turn that asked for it but never recorded its step: a
//   process stopped between the two).
// - its WhatsApp messages (the sender's number, profile name and text: WhatsAppMessageErased)
//   and replies (the recipient and text: WhatsAppReplyErased, a reply not yet sent never is),
//   found through the read models `whatsapp_messages` and `whatsapp_replies` by conversation;
//   and the messages of its sender that became no conversation's turn (a photo, a reaction, a
//   message while the channel was off, received before the erasure), found by the sender's
//   party id, with the notice each may have been answered with.
// - the leads its visitor left in it (name, email, phone...: LeadErased), found through the
//   read model `lead_origins`, deleted leads too.
// Each one's key is deleted. The use case (eraseConversation) does it right after the
// conversation's own erasure; the saga `conversation_erasure` does it again after
// ConversationErased, for a process that stopped in between. Both are idempotent.

import { type ConversationEvent, contactOf, conversationStream } from '../../domain/conversation/conversation';
import { ERASED_PERSONAL_DATA } from '../../domain/shared/events';
import { DomainError } from '../../domain/shared/errors';
import { type Caller, toolCallStream, toolCallSubject } from '../../domain/tool-call/tool-call';
import { type LeadParty, leadStream, leadSubject } from '../../domain/lead/lead';
import { whatsappMessageStream, whatsappMessageSubject } from '../../domain/whatsapp-message/whatsapp-message';
import { whatsappReplyStream, whatsappReplySubject } from '../../domain/whatsapp-reply/whatsapp-reply';
import { LEAD_ORIGINS, type LeadOriginDocument } from '../../projections/lead-origins';
import { TOOL_CALLS, type ToolCallDocument } from '../../projections/tool-calls';
import { WHATSAPP_MESSAGES, type WhatsAppMessageDocument } from '../../projections/whatsapp-messages';
import { WHATSAPP_REPLIES, type WhatsAppReplyDocument } from '../../projections/whatsapp-replies';
import { type CommandDependencies, handleCommand, loadAggregate } from '../command-handling/handle-command';
import type { Secrets } from '../ports/identity';
import type { PersonalDataVault } from '../ports/personal-data';
import type { Collection, Where } from '../ports/read-store';
import type { ReadModelDependencies, ReadYourWritesDependencies } from '../shared/read-models';
import { leadAggregate } from '../lead/lead-aggregate';
import { whatsappReplyAggregate } from '../whatsapp/reply-delivery';
import { senderPartyId, whatsappMessageAggregate } from '../whatsapp/whatsapp-webhook';
import type { Saga } from '../sagas/saga';
import { type RequestContext, systemContext } from '../shared/request-context';
import { toolCallAggregate } from '../tool-call/tool-calls';

export const CONVERSATION_ERASURE = 'conversation_erasure';

/** Why a call that awaited approval is refused when its conversation is erased. */
export const ERASED_CONVERSATION_REASON = 'the conversation it was asked in was erased';

export type ConversationErasureDependencies = CommandDependencies & ReadModelDependencies & ReadYourWritesDependencies & { personalData: PersonalDataVault; secrets: Pick<Secrets, 'digest'> };

/** Erases what other aggregates hold of the conversation's people (the header's list). */
export async function eraseWhatTheConversationReached(deps: ConversationErasureDependencies, tenantId: string, conversationId: string, context: RequestContext): Promise<void> {
  await eraseToolCallsOf(deps, tenantId, conversationId, context);
  await eraseWhatsAppOf(deps, tenantId, conversationId, context);
  await eraseLeadsOf(deps, tenantId, conversationId, context);
}

/** Erases the leads left in the conversation; answers how many. */
export async function eraseLeadsOf(deps: ConversationErasureDependencies, tenantId: string, conversationId: string, context: RequestContext): Promise<number> {
  const leadIds = await idsOfConversation(deps.readStore.collection<LeadOriginDocument>(LEAD_ORIGINS), tenantId, conversationId);
  const by: LeadParty = context.actor.kind === 'user' || context.actor.kind === 'admin' ? { kind: context.actor.kind, id: context.actor.id } : { kind: 'system', id: CONVERSATION_ERASURE };
  for (const leadId of leadIds) {
    await handleCommand(deps, leadAggregate, leadStream(leadId), { type: 'EraseLead', data: { tenant_id: tenantId, erased_by: by } }, context);
    await deps.personalData.erase(leadSubject(leadId));
  }
  return leadIds.length;
}

/** The ids of the documents a query on one index finds, page by page, those `keep` keeps. */
async function idsFound<Doc extends { id: string }>(collection: Collection<Doc>, where: Where, index: string, keep: (doc: Doc) => boolean): Promise<string[]> {
  const ids: string[] = [];
  let cursor: string | undefined;
  do {
    const page = await collection.find({ where, limit: 500, index, ...(cursor ? { cursor } : {}) });
    ids.push(...page.items.filter(keep).map((doc) => doc.id));
    cursor = page.next_cursor ?? undefined;
  } while (cursor);
  return ids;
}

/** Every id of a collection's documents of the conversation (its tenant's). */
const idsOfConversation = (collection: Collection<{ id: string; tenant_id: string; conversation_id: string | null; position: number }>, tenantId: string, conversationId: string): Promise<string[]> =>
  idsFound(collection, { conversation_id: conversationId }, 'conversation_id', (doc) => doc.tenant_id === tenantId);

/**
 * The messages of a WhatsApp sender that became no conversation's turn, received before the
 * erasure at `erasedAt` (a position in the log: one received since may be waiting for its
 * turn, and is not the erased conversation's).
 */
const strayMessagesOf = (collection: Collection<WhatsAppMessageDocument>, tenantId: string, sender: string, erasedAt: number): Promise<string[]> =>
  idsFound(collection, { sender, conversation_id: null }, 'sender', (doc) => doc.tenant_id === tenantId && doc.received_position < erasedAt);

/**
 * The WhatsApp sender of a conversation of that channel and the position of its erasure; null
 * for another channel or before its erasure. The sender's party ids: the conversation's starter,
 * and for a conversation started under the number itself (`whatsapp:<number>`, before ids were
 * digests) the digest its messages since carry too.
 */
async function erasedSenderOf(deps: ConversationErasureDependencies, tenantId: string, conversationId: string): Promise<{ senders: string[]; position: number } | null> {
  const events = await deps.eventStore.readStream(conversationStream(conversationId));
  const started = events.find((event) => event.type === 'ConversationStarted');
  const erased = events.find((event) => event.type === 'ConversationErased');
  if (started?.type !== 'ConversationStarted' || erased === undefined) return null;
  if (started.data.channel !== 'whatsapp' || started.data.started_by.kind !== 'end_user') return null;
  const senders = new Set([started.data.started_by.id]);
  // Erased, a sealed contact reads as ERASED_PERSONAL_DATA: its digest is the starter already.
  const number = contactOf(started.data)?.address;
  if (number !== undefined && number !== ERASED_PERSONAL_DATA) senders.add(senderPartyId(deps.secrets, tenantId, number));
  return { senders: [...senders], position: erased.position };
}

/** Erases the conversation's WhatsApp messages and replies, and its sender's stray messages and their notices; answers how many of each. */
export async function eraseWhatsAppOf(deps: ConversationErasureDependencies, tenantId: string, conversationId: string, context: RequestContext): Promise<{ messages: number; replies: number }> {
  const messages = await idsOfConversation(deps.readStore.collection<WhatsAppMessageDocument>(WHATSAPP_MESSAGES), tenantId, conversationId);
  const replies = await idsOfConversation(deps.readStore.collection<WhatsAppReplyDocument>(WHATSAPP_REPLIES), tenantId, conversationId);
  const erasedSender = await erasedSenderOf(deps, tenantId, conversationId);
  const stray = erasedSender === null ? { messages: 0, replies: 0 } : await eraseStrayWhatsAppMessages(deps, tenantId, erasedSender.senders, erasedSender.position, context);
  await eraseWhatsAppMessagesAndReplies(deps, tenantId, messages, replies, context);
  return { messages: messages.length + stray.messages, replies: replies.length + stray.replies };
}

/**
 * Erases the messages of a WhatsApp sender (any of their party ids) that became no
 * conversation's turn, received before `before` (a position in the log), with the notice each
 * was answered with; answers how many of each.
 */
export async function eraseStrayWhatsAppMessages(deps: ConversationErasureDependencies, tenantId: string, senders: readonly string[], before: number, context: RequestContext): Promise<{ messages: number; replies: number }> {
  const collection = deps.readStore.collection<WhatsAppMessageDocument>(WHATSAPP_MESSAGES);
  const messages = (await Promise.all(senders.map((sender) => strayMessagesOf(collection, tenantId, sender, before)))).flat();
  const replies: string[] = [];
  for (const messageId of messages) {
    // The notice it was answered with (only text is read, the assistant is unavailable...), by the id its outcome names.
    const { state } = await loadAggregate(deps, whatsappMessageAggregate, whatsappMessageStream(messageId));
    if (state.status === 'handled' && state.handled.reply_id !== null) replies.push(state.handled.reply_id);
  }
  await eraseWhatsAppMessagesAndReplies(deps, tenantId, messages, replies, context);
  return { messages: messages.length, replies: replies.length };
}

async function eraseWhatsAppMessagesAndReplies(deps: ConversationErasureDependencies, tenantId: string, messages: readonly string[], replies: readonly string[], context: RequestContext): Promise<void> {
  for (const messageId of messages) {
    await handleCommand(deps, whatsappMessageAggregate, whatsappMessageStream(messageId), { type: 'EraseWhatsAppMessage', data: { tenant_id: tenantId } }, context);
    await deps.personalData.erase(whatsappMessageSubject(messageId));
  }
  for (const replyId of replies) {
    await handleCommand(deps, whatsappReplyAggregate, whatsappReplyStream(replyId), { type: 'EraseWhatsAppReply', data: { tenant_id: tenantId } }, context);
    await deps.personalData.erase(whatsappReplySubject(replyId));
  }
}

/** The calls chat turns of the conversation asked for, as the execution log knows them. */
const toolCallsAskedIn = (collection: Collection<ToolCallDocument>, tenantId: string, conversationId: string): Promise<string[]> =>
  idsFound(collection, { 'origin.conversation_id': conversationId }, 'origin.conversation_id', (doc) => doc.tenant_id === tenantId);

/** Erases the tool calls the conversation's turns asked for; answers how many it found. */
export async function eraseToolCallsOf(deps: ConversationErasureDependencies, tenantId: string, conversationId: string, context: RequestContext): Promise<number> {
  // The refusal names who erased: a member, or the platform (the saga).
  const by: Caller = context.actor.kind === 'user' || context.actor.kind === 'admin' ? { kind: context.actor.kind, id: context.actor.id } : { kind: 'system', id: CONVERSATION_ERASURE };
  const events = (await deps.eventStore.readStream(conversationStream(conversationId))) as unknown as ConversationEvent[];
  const toolCallIds = new Set(events.flatMap((event) => (event.type === 'AssistantToolStepRecorded' && event.data.tool_call_id !== null ? [event.data.tool_call_id] : [])));
  for (const toolCallId of await toolCallsAskedIn(deps.readStore.collection<ToolCallDocument>(TOOL_CALLS), tenantId, conversationId)) toolCallIds.add(toolCallId);
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
      // The read models it looks in must have seen what came before the erasure: when they have
      // not yet, the delivery is tried again later rather than missing what they do not show.
      if (!(await deps.readYourWrites(event.position))) throw new Error(`the read models are behind ConversationErased at ${event.position}: tried again`);
      await eraseWhatTheConversationReached(deps, tenant_id, conversation_id, { ...systemContext(event.metadata.correlation_id, CONVERSATION_ERASURE, event.id), tenant_id });
    },
  };
}
