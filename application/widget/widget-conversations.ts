// What a widget visitor may do with their own conversations besides a turn (spec 4.4): read
// its last messages (the thread /ws/chat's `ready` gives back after a reconnect) and give
// feedback on an answer. "Own" is the rule of publicChannelAsker: a conversation of channel
// `widget` of the widget's tenant that this visitor (the same party) started. Anything else is
// 404 `conversation_not_found` / `message_not_found`, never 403, so a visitor learns nothing
// of other visitors' conversations.

import type { Party } from '../../domain/conversation/conversation';
import { conversationStream } from '../../domain/conversation/conversation';
import { notFound } from '../../domain/shared/errors';
import { CONVERSATIONS, CONVERSATION_MESSAGES, type ConversationDocument, type ConversationMessageDocument } from '../../projections/conversations';
import { handleCommand, loadAggregate } from '../command-handling/handle-command';
import { type ConversationDependencies, conversationAggregate } from '../conversation/conversations';
import type { ReadModelDependencies } from '../shared/read-models';
import type { RequestContext } from '../shared/request-context';
import { type Visitor, type WidgetPrincipal, visitorContext } from './widget-access';

/** How many of the last messages a reconnecting widget is given back. */
export const WIDGET_THREAD_MESSAGES = 50;

/**
 * A message as the widget shows it: what the visitor saw or could see, without the platform's
 * bookkeeping (model, latency, usage, authors' ids). A failed answer is an assistant message
 * with empty text and `failed` true; a tool step is a message of role `tool` with `tool` set.
 */
export interface WidgetMessageView {
  id: string;
  role: ConversationMessageDocument['role'];
  text: string;
  citations: ConversationMessageDocument['citations'];
  created_at: string;
  /** For an answer or a tool step: the user's message it answers. */
  reply_to: string | null;
  failed: boolean;
  tool: { tool_name: string; status: string } | null;
  feedback_rating: 'up' | 'down' | null;
}

export const widgetMessageView = (doc: ConversationMessageDocument): WidgetMessageView => ({
  id: doc.id,
  role: doc.role,
  text: doc.text,
  citations: doc.citations,
  created_at: doc.created_at,
  reply_to: doc.reply_to,
  failed: doc.error !== null && doc.role === 'assistant',
  tool: doc.tool ? { tool_name: doc.tool.tool_name, status: doc.tool.status } : null,
  feedback_rating: doc.feedback_rating,
});

const sameParty = (a: Party, b: Party): boolean => a.kind === b.kind && a.id === b.id;

/** Whether the conversation is the visitor's own widget conversation (and not deleted). */
export const isOwnWidgetConversation = (doc: Pick<ConversationDocument, 'tenant_id' | 'channel' | 'started_by' | 'deleted'>, widget: Pick<WidgetPrincipal, 'tenant_id'>, visitor: Visitor): boolean =>
  !doc.deleted && doc.tenant_id === widget.tenant_id && doc.channel === 'widget' && sameParty(doc.started_by, visitor.party);

const conversationNotFound = () => notFound('conversation_not_found', 'no such conversation');

/** The last `limit` messages of the visitor's own widget conversation, oldest first; 404 `conversation_not_found` otherwise. */
export async function lastWidgetMessages(deps: ReadModelDependencies, widget: Pick<WidgetPrincipal, 'tenant_id'>, visitor: Visitor, conversationId: string, limit = WIDGET_THREAD_MESSAGES): Promise<WidgetMessageView[]> {
  const conversation = await deps.readStore.collection<ConversationDocument>(CONVERSATIONS).get(conversationId);
  if (!conversation || !isOwnWidgetConversation(conversation, widget, visitor)) throw conversationNotFound();
  const newest = await deps.readStore
    .collection<ConversationMessageDocument>(CONVERSATION_MESSAGES)
    .find({ where: { conversation_id: conversationId }, sort: { field: 'seq', direction: 'desc' }, limit });
  return newest.items.reverse().map(widgetMessageView);
}

/** One message of a conversation as the widget shows it (the read models must have passed its write); null when absent. */
export async function widgetMessage(deps: ReadModelDependencies, conversationId: string, messageId: string): Promise<WidgetMessageView | null> {
  const doc = await deps.readStore.collection<ConversationMessageDocument>(CONVERSATION_MESSAGES).get(messageId);
  return doc && doc.conversation_id === conversationId ? widgetMessageView(doc) : null;
}

/**
 * The visitor's feedback on an answer in their own widget conversation, the visitor as giver:
 * 404 `message_not_found` for a message that is not an answer of one of their conversations,
 * 409 `feedback_given` for a second one on the same answer, 400 `invalid_feedback` for a
 * comment too long. Ownership is checked on the conversation's stream (the write model).
 */
export async function giveWidgetFeedback(
  deps: ConversationDependencies,
  widget: Pick<WidgetPrincipal, 'tenant_id'>,
  visitor: Visitor,
  messageId: string,
  input: { rating: 'up' | 'down'; comment?: string },
  context: RequestContext,
): Promise<{ conversation_id: string; message_id: string; rating: 'up' | 'down' }> {
  const messageNotFound = () => notFound('message_not_found', 'feedback is given on an answer of the assistant in your conversation');
  const message = await deps.readStore.collection<ConversationMessageDocument>(CONVERSATION_MESSAGES).get(messageId);
  if (!message || message.tenant_id !== widget.tenant_id) throw messageNotFound();
  const stream = conversationStream(message.conversation_id);
  const { state } = await loadAggregate(deps, conversationAggregate, stream);
  if (state.status === 'absent' || state.status === 'deleted' || !isOwnWidgetConversation({ ...state, deleted: false }, widget, visitor)) throw messageNotFound();
  const result = await handleCommand(
    deps,
    conversationAggregate,
    stream,
    { type: 'GiveFeedback', data: { message_id: messageId, rating: input.rating, comment: input.comment ?? '', given_by: visitor.party } },
    visitorContext(widget, visitor, context),
  );
  await deps.readYourWrites(result.position);
  return { conversation_id: message.conversation_id, message_id: messageId, rating: input.rating };
}
