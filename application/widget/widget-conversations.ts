// What a widget visitor does with their own conversation besides a turn and reading it
// (widget-chat.ts): one message as the widget shows it (the stored answer /ws/chat sends at a
// turn's end), and feedback on an answer. "Own" is widget-chat.ts's rule: a conversation of
// channel `widget` of the widget's tenant that this visitor started; anything else is 404
// `message_not_found`, never 403, so a visitor learns nothing of other conversations.

import { CONVERSATION_MESSAGES, type ConversationMessageDocument } from '../../projections/conversations';
import type { ConversationDependencies } from '../conversation/conversations';
import type { ReadModelDependencies } from '../shared/read-models';
import type { RequestContext } from '../shared/request-context';
import { giveVisitorFeedback } from './visitor-conversations';
import type { Visitor, WidgetPrincipal } from './widget-access';
import { type WidgetMessageView, widgetMessageView } from './widget-chat';

/** One message of a conversation as the widget shows it, once the read models show it; null when they do not. */
export async function widgetMessage(deps: ReadModelDependencies, conversationId: string, messageId: string): Promise<WidgetMessageView | null> {
  const doc = await deps.readStore.collection<ConversationMessageDocument>(CONVERSATION_MESSAGES).get(messageId);
  return doc && doc.conversation_id === conversationId ? widgetMessageView(doc) : null;
}

/**
 * The visitor's feedback on an answer of their own widget conversation, over /ws/chat: the same
 * use case as `POST /api/v1/widget/messages/{id}/feedback` (visitor-conversations.ts
 * `giveVisitorFeedback`, its refusals too: 403 `widget_feature_disabled` when the widget's
 * settings turned feedback off, 404 `message_not_found`, 409 `feedback_given`, 400
 * `invalid_feedback`), answered in the frame's shape.
 */
export async function giveWidgetFeedback(
  deps: ConversationDependencies,
  widget: WidgetPrincipal,
  visitor: Visitor,
  messageId: string,
  input: { rating: 'up' | 'down'; comment?: string },
  context: RequestContext,
): Promise<{ conversation_id: string; message_id: string; rating: 'up' | 'down' }> {
  const { conversation_id, message_id, rating } = await giveVisitorFeedback(deps, widget, visitor, messageId, input, context);
  return { conversation_id, message_id, rating };
}
