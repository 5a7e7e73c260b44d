// OpenAPI description of the conversation routes (conversations/conversations.ts); docs/conversations.md.

import { CONVERSATION_SORTS, PREVIEW_LENGTH } from '../../../application/conversation/conversations';
import { CHANNELS, CONVERSATION_STATUSES, TOOL_STEP_STATUSES, MAX_FEEDBACK_COMMENT_LENGTH, MAX_MESSAGE_LENGTH, MAX_TITLE_LENGTH } from '../../../domain/conversation/conversation';
import { PAGE_PARAMETERS, type ApiArea, arrayOf, boolean, dateTime, enumOf, integer, nullable, object, page, ref, schemaOfCodec, string } from '../openapi/describe';
import { AgentReplyBody, ConversationStatusBody, FeedbackBody, MAX_FILTER_LENGTH, RenameConversationBody } from './conversations';

const PARTY = ref('ConversationParty');
const TEXT_FILTER = { type: 'string', minLength: 1, maxLength: MAX_FILTER_LENGTH };
const TIME_BOUND = { type: 'string', description: 'a day `YYYY-MM-DD` (UTC) or an ISO 8601 date-time with its offset' };
const WHO = 'An Admin or Owner sees every conversation of the organization; a member those they started and those of the workspaces their teams may read. Any other conversation is 404.';

export const conversationsApi: ApiArea = {
  tag: 'conversations',
  description:
    'Conversations (spec 4.6): list, read, rename, delete (soft: the events stay for audit), erase (its texts unreadable for good: docs/personal-data.md), status, messages, a human agent’s reply, feedback on an answer. Statuses: open, pending, handed_off (the assistant is paused), resolved; docs/conversations.md lists the transitions.',
  schemas: {
    ConversationErasure: object({ id: string(), erased_at: dateTime('when it was first erased') }),
    ConversationParty: object({ kind: enumOf(['user', 'end_user', 'admin', 'system']), id: string() }, 'who wrote or started something: a tenant user, a widget end user, ...'),
    Conversation: object({
      id: string(),
      workspace_id: nullable(string('the workspace whose knowledge the assistant answers from')),
      channel: enumOf(CHANNELS),
      title: string(`1 to ${MAX_TITLE_LENGTH} characters`),
      status: enumOf(CONVERSATION_STATUSES),
      assistant_paused: boolean('true while handed_off: the assistant answers nothing until the status is set back to open'),
      started_by: PARTY,
      contact: {
        anyOf: [
          object({
            address: string("where replies go: a WhatsApp sender's number (their `started_by` id is a digest of it)"),
            name: nullable(string('the name they go by there (a WhatsApp profile name), when the channel says')),
          }),
          { type: 'null' },
        ],
        description: 'the end user on a messaging channel: personal data, erased with the conversation; null for the console, the API and the widget',
      },
      verified_user_id: nullable(
        string(
          "the host site's user id of the widget visitor who started it, when the site vouched for them (identify() with a signed user id; their `started_by` id is a digest of it): personal data, erased with the conversation",
        ),
      ),
      started_at: dateTime(),
      last_message_at: nullable(dateTime('the last user message, answer or agent reply; null before the first')),
      last_activity_at: dateTime('last_message_at, or started_at before the first message'),
      message_count: integer('user messages, answers and agent replies (failed answers not counted)'),
      last_message_preview: nullable(string(`the last message as plain text, at most ${PREVIEW_LENGTH} characters`)),
      status_changed_at: nullable(dateTime()),
      updated_at: dateTime(),
    }),
    ConversationMessage: object({
      id: string('the message id (a failed answer: `failed-` and the id of the user message; a tool step: `tool-`, the id of the user message, `-` and the step)'),
      conversation_id: string(),
      role: enumOf(['user', 'assistant', 'agent', 'tool'], 'agent: a person of the organization replying; tool: a business tool the assistant called while answering (`tool` says which and how it went)'),
      text: string('empty for a failed answer and a tool step'),
      citations: arrayOf(object({ passage_id: string(), document_id: string(), chunk_id: string(), title: string() }), 'the passages an answer cites'),
      author: { anyOf: [PARTY, { type: 'null' }], description: 'who wrote a user message or an agent reply; null for the assistant' },
      reply_to: nullable(string('for an answer, a failure, a tool step or a follow-up: the user message whose turn it belongs to')),
      created_at: dateTime(),
      answered_from_knowledge: nullable(boolean('answers: whether the answer rests on the knowledge base')),
      model: nullable(string()),
      latency_ms: nullable(integer()),
      usage: nullable({ ...object({ prompt_tokens: integer(), completion_tokens: integer() }), description: 'tokens, where the model reports them' }),
      error: nullable({ ...object({ code: string(), message: string() }), description: 'a failed answer, a failed or refused tool step, a follow-up that could not be given: why' }),
      tool: nullable({
        ...object({
          call_id: string("the model's id for the call"),
          tool_name: string(),
          tool_id: nullable(string('null when the model named no tool that was offered')),
          tool_call_id: nullable(string('the tool call (its log: GET /api/v1/tools/{id}/logs); null when no call was made (no such tool, arguments that were not valid)')),
          status: enumOf(TOOL_STEP_STATUSES, 'awaiting_approval moves on to succeeded, failed or refused once an owner or admin decided and the call ran'),
        }),
        description: 'a tool step (role tool); null for other messages',
      }),
      feedback_rating: { anyOf: [enumOf(['up', 'down']), { type: 'null' }], description: 'the feedback given on an answer; null until then' },
    }),
    ConversationFeedback: object({
      conversation_id: string(),
      message_id: string(),
      rating: enumOf(['up', 'down']),
      comment: string('may be empty'),
      given_by: PARTY,
      given_at: dateTime(),
    }),
  },
  routes: {
    '/api/v1/conversations': {
      get: {
        summary: 'List conversations',
        description: `${WHO} Newest first by \`sort\`; deleted conversations are not listed.`,
        access: 'user',
        query: [
          { name: 'status', description: 'only conversations of this status', schema: enumOf(CONVERSATION_STATUSES) },
          { name: 'channel', description: 'only conversations of this channel', schema: enumOf(CHANNELS) },
          { name: 'workspace_id', description: 'only conversations of this workspace', schema: TEXT_FILTER },
          { name: 'from', description: 'started at or after this time (a day: from its start)', schema: TIME_BOUND },
          { name: 'to', description: 'started at or before this time (a day: up to its end)', schema: TIME_BOUND },
          { name: 'q', description: 'titles starting with this text, ignoring case', schema: TEXT_FILTER },
          { name: 'verified_user_id', description: 'only those a widget visitor the host site vouched for started, by the host’s user id (400 for a malformed one)', schema: TEXT_FILTER },
          { name: 'whatsapp_number', description: 'only those a WhatsApp sender started, by their number in international format (not with verified_user_id; 400 for a malformed one)', schema: TEXT_FILTER },
          { name: 'sort', description: 'newest first by start (default) or by last activity', schema: enumOf(CONVERSATION_SORTS) },
          ...PAGE_PARAMETERS,
        ],
        success: { status: 200, description: 'a page of conversations', json: page(ref('Conversation')) },
      },
    },
    '/api/v1/conversations/{id}': {
      get: { versioned: 'read', summary: 'One conversation', description: WHO, access: 'user', success: { status: 200, description: 'the conversation', json: ref('Conversation') }, errors: [404] },
      patch: {
        versioned: 'conditional',
        summary: 'Rename a conversation',
        description: 'The member who started it, or an admin (another member who sees it: 403 `conversation_starter_only`).',
        access: 'user',
        body: { json: schemaOfCodec(RenameConversationBody) },
        success: { status: 200, description: 'the conversation after the change', json: ref('Conversation') },
        errors: [404],
      },
      delete: {
        versioned: 'conditional',
        summary: 'Delete a conversation',
        description: 'Soft: it leaves every list and read (404 afterwards), its events stay for audit. The member who started it, or an admin (403 `conversation_starter_only`).',
        access: 'user',
        success: { status: 204, description: 'deleted' },
        errors: [404],
      },
    },
    '/api/v1/conversations/{id}/erase': {
      post: {
        summary: 'Erase a conversation',
        description:
          "For a person's request to have their data erased (docs/personal-data.md): the key its texts (messages, answers, replies, titles, feedback comments, status reasons) are sealed under is deleted, so they cannot be read again anywhere, in the event log or by a rebuild; the conversation is deleted too (404 everywhere afterwards). It cannot be undone. A live or deleted conversation of the organization; erasing it again answers the first erasure. Owners and admins only.",
        access: 'user',
        role: 'admin',
        success: { status: 200, description: 'erased', json: ref('ConversationErasure') },
        errors: [404],
      },
    },
    '/api/v1/conversations/{id}/status': {
      put: {
        versioned: 'conditional',
        summary: "Set a conversation's status",
        description:
          'open -> pending, handed_off, resolved; pending -> open, handed_off, resolved; handed_off -> open, resolved; resolved -> open. Any other change is 409 `invalid_status_transition`; the current status again changes nothing. Setting handed_off back to open lets the assistant answer again.',
        access: 'user',
        body: { json: schemaOfCodec(ConversationStatusBody) },
        success: { status: 200, description: 'the conversation after the change', json: ref('Conversation') },
        errors: [404, 409],
      },
    },
    '/api/v1/conversations/{id}/messages': {
      get: {
        summary: "A conversation's messages",
        description: `${WHO} Oldest first; a failed answer is a message of role assistant with \`error\`; a tool the assistant called is a message of role tool with \`tool\`, and the report after calls that awaited approval a message of role assistant.`,
        access: 'user',
        query: PAGE_PARAMETERS,
        success: { status: 200, description: 'a page of messages', json: page(ref('ConversationMessage')) },
        errors: [404],
      },
      post: {
        idempotent: true,
        summary: 'Reply as a human agent',
        description: `The caller replies as an agent (\`text\`: 1 to ${MAX_MESSAGE_LENGTH} characters). An open or pending conversation becomes handed_off: the assistant is paused until someone sets the status back to open. A retry with the Idempotency-Key of a reply in a conversation erased since is 410 \`personal_data_erased\`.`,
        access: 'user',
        body: { json: schemaOfCodec(AgentReplyBody) },
        success: { status: 201, description: 'the reply and the conversation after it', json: object({ message: ref('ConversationMessage'), conversation: ref('Conversation') }) },
        errors: [404, 410],
      },
    },
    '/api/v1/conversations/{id}/messages/{message_id}/feedback': {
      post: {
        summary: 'Give feedback on an answer',
        description: `Anyone who sees the conversation; one feedback per answer (409 \`feedback_given\`); a message that is not one of the assistant's answers here is 404 \`message_not_found\`. \`comment\`: at most ${MAX_FEEDBACK_COMMENT_LENGTH} characters.`,
        access: 'user',
        body: { json: schemaOfCodec(FeedbackBody) },
        success: { status: 201, description: 'the feedback as recorded', json: ref('ConversationFeedback') },
        errors: [404, 409],
      },
    },
  },
};
