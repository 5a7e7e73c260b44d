// What a widget visitor does with their own conversation besides a turn and reading it
// (widget-chat.ts): one message as the widget shows it (the stored answer /ws/chat sends at a
// turn's end), and feedback on an answer. "Own" is widget-chat.ts's rule: a conversation of
// channel `widget` of the widget's tenant that this visitor started; anything else is 404
// `message_not_found`, never 403, so a visitor learns nothing of other conversations.

import { conversationStream } from '../../domain/conversation/conversation';
import { DomainError, forbidden, notFound } from '../../domain/shared/errors';
import { CONVERSATION_MESSAGES, type ConversationMessageDocument } from '../../projections/conversations';
import { handleCommand } from '../command-handling/handle-command';
import { type ConversationDependencies, conversationAggregate } from '../conversation/conversations';
import type { ReadModelDependencies } from '../shared/read-models';
import type { RequestContext } from '../shared/request-context';
import { type Visitor, type WidgetPrincipal, visitorContext } from './widget-access';
import { type WidgetMessageView, requireVisitorConversation, widgetMessageView } from './widget-chat';

/** One message of a conversation as the widget shows it, once the read models show it; null when they do not. */
export async function widgetMessage(deps: ReadModelDependencies, conversationId: string, messageId: string): Promise<WidgetMessageView | null> {
  const doc = await deps.readStore.collection<ConversationMessageDocument>(CONVERSATION_MESSAGES).get(messageId);
  return doc && doc.conversation_id === conversationId ? widgetMessageView(doc) : null;
}

/**
 * The visitor's feedback on an answer of their own widget conversation, the visitor as giver:
 * 403 `feedback_disabled` when the widget's settings turned feedback off; 404
 * `message_not_found` for anything that is not an answer of one of their conversations; 409
 * `feedback_given` for a second one on the same answer; 400 `invalid_feedback` for a comment
 * too long. Ownership is checked on the conversation's stream (the write model).
 */
export async function giveWidgetFeedback(
  deps: ConversationDependencies,
  widget: Pick<WidgetPrincipal, 'tenant_id' | 'settings'>,
  visitor: Visitor,
  messageId: string,
  input: { rating: 'up' | 'down'; comment?: string },
  context: RequestContext,
): Promise<{ conversation_id: string; message_id: string; rating: 'up' | 'down' }> {
  if (!widget.settings.feedback) throw forbidden('feedback_disabled', 'this widget takes no feedback: an admin turned it off');
  const messageNotFound = () => notFound('message_not_found', 'feedback is given on an answer of the assistant in your conversation');
  const message = await deps.readStore.collection<ConversationMessageDocument>(CONVERSATION_MESSAGES).get(messageId);
  if (!message || message.tenant_id !== widget.tenant_id) throw messageNotFound();
  try {
    await requireVisitorConversation(deps, widget, visitor, message.conversation_id);
  } catch (error) {
    if (error instanceof DomainError && error.kind === 'not_found') throw messageNotFound();
    throw error;
  }
  const result = await handleCommand(
    deps,
    conversationAggregate,
    conversationStream(message.conversation_id),
    { type: 'GiveFeedback', data: { message_id: messageId, rating: input.rating, comment: input.comment ?? '', given_by: visitor.party } },
    visitorContext(widget, visitor, context),
  );
  await deps.readYourWrites(result.position);
  return { conversation_id: message.conversation_id, message_id: messageId, rating: input.rating };
}
