// OpenAPI description of the visitor's feedback and handoff routes (widget/feedback-handoff.ts); docs/widget.md, "Feedback and handoff".

import { MAX_FEEDBACK_COMMENT_LENGTH, MAX_STATUS_REASON_LENGTH } from '../../../domain/conversation/conversation';
import { type ApiArea, boolean, dateTime, enumOf, object, ref, schemaOfCodec, string } from '../openapi/describe';
import { FeedbackBody } from '../conversations/conversations';
import { VisitorHandoffBody } from './feedback-handoff';
import { WIDGET_AUTH_ERRORS } from './leads.openapi';
import { VISITOR_HEADERS } from './widget.openapi';

export const widgetFeedbackHandoffApi: ApiArea = {
  tag: 'widget',
  schemas: {
    VisitorHandoff: object({
      conversation_id: string(),
      status: enumOf(['handed_off']),
      assistant_paused: boolean('true: the assistant answers nothing more until a person of the organization sets the conversation back to open'),
      handed_off_at: dateTime(),
    }),
  },
  routes: {
    '/api/v1/widget/messages/{id}/feedback': {
      post: {
        summary: 'Rate an answer of the assistant',
        description: `The visitor’s rating of an answer of the assistant in one of their own widget conversations (the same feedback a member gives: it shows in GET /api/v1/tenant/feedbacks, given by the visitor). Any other message is 404 \`message_not_found\`; a second rating of the same answer is 409 \`feedback_given\`; \`comment\` at most ${MAX_FEEDBACK_COMMENT_LENGTH} characters (400 \`invalid_feedback\`). 403 \`widget_feature_disabled\` when the organization turned feedback off. ${WIDGET_AUTH_ERRORS}`,
        access: 'widget_token',
        headers: VISITOR_HEADERS,
        body: { json: schemaOfCodec(FeedbackBody) },
        success: { status: 201, description: 'the feedback', json: ref('ConversationFeedback') },
        errors: [404, 409],
      },
    },
    '/api/v1/widget/conversations/{id}/handoff': {
      post: {
        summary: 'Ask for a person',
        description: `One of the visitor’s own widget conversations becomes handed_off (the assistant pauses), and the organization’s handoff webhook is posted the conversation, with \`reason\` (at most ${MAX_STATUS_REASON_LENGTH} characters; 400 naming it), as for a member’s handoff (docs/tenant-configuration.md). Any other conversation is 404 \`conversation_not_found\`. 403 \`feature_not_in_plan\` when the plan lacks handoff, \`widget_feature_disabled\` when the organization turned the handoff button off; 409 \`handoff_not_configured\` when no handoff webhook is on, \`already_handed_off\`, \`invalid_status_transition\` for a resolved conversation. ${WIDGET_AUTH_ERRORS}`,
        access: 'widget_token',
        headers: VISITOR_HEADERS,
        body: { json: schemaOfCodec(VisitorHandoffBody) },
        success: { status: 200, description: 'the conversation is with a person now', json: ref('VisitorHandoff') },
        errors: [404, 409],
      },
    },
    '/api/v1/widget/conversations/{id}/erase': {
      post: {
        summary: 'Erase one of the visitor’s own conversations',
        description: `The visitor erases one of their own widget conversations, as an owner or admin does with POST /api/v1/conversations/{id}/erase: its texts are unreadable everywhere from then on (in the log too), it leaves every list, and its tool calls and the leads left in it are erased with it; the audit log names the visitor. A conversation the organization deleted is still theirs to erase. Cannot be undone; asked again, the same answer. No body. Any other conversation is 404 \`conversation_not_found\`. 403 \`widget_feature_disabled\` when the organization turned \`visitor_erasure\` off. ${WIDGET_AUTH_ERRORS}`,
        access: 'widget_token',
        headers: VISITOR_HEADERS,
        success: { status: 200, description: 'what was erased, and when (the first erasure’s time when asked again)', json: ref('ConversationErasure') },
        errors: [404],
      },
    },
  },
};
