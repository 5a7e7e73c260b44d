// OpenAPI description of the chat routes (chat/chat.ts). docs/assistant.md tells the engines,
// the citations, the event-stream format and who sees which conversation.

import { MAX_END_USER_HEADER_LENGTH } from '../../../application/chat/chat';
import { MAX_TOOL_ROUNDS } from '../../../application/chat/tool-steps';
import { TOOL_STEP_STATUSES } from '../../../domain/conversation/conversation';
import { type ApiArea, type QueryParameter, arrayOf, boolean, enumOf, nullable, object, ref, schemaOfCodec, string } from '../openapi/describe';
import { ChatBody, END_USER_SESSION_HEADER, END_USER_TOKEN_HEADER } from './chat';

export const END_USER_HEADERS: readonly QueryParameter[] = [
  {
    name: END_USER_TOKEN_HEADER,
    description: "the end user's token in the tenant's own systems, stored sealed on the message and forwarded to the business tools the assistant calls in this turn (and to a call approved later); never logged or returned",
    schema: { type: 'string', maxLength: MAX_END_USER_HEADER_LENGTH },
  },
  {
    name: END_USER_SESSION_HEADER,
    description: "the end user's session in the tenant's own systems, stored sealed like X-End-User-Token",
    schema: { type: 'string', maxLength: MAX_END_USER_HEADER_LENGTH },
  },
];

const BODY_DESCRIPTION =
  '`message` (1 to 8000 characters, 400 `invalid_message` otherwise). Without `conversation_id` a conversation starts, titled by the message, in `workspace_id` when given (404 `workspace_not_found` unless the caller may read it; without it the assistant searches every workspace the caller may read). With `conversation_id` the turn continues that conversation: 404 `conversation_not_found` unless it is a console conversation the caller may see (an admin or owner: every one of the organization; a member: their own); `workspace_id`, if sent, must be the conversation\'s (409 `workspace_mismatch`).';

const TOOLS_DESCRIPTION = `In a conversation of a workspace, the assistant may call the workspace's business tools whose \`chat\` flag is on and which are enabled (none without a workspace; the embedded engine never calls one, and says so when asked to act): each call is a step of the turn, at most ${MAX_TOOL_ROUNDS} rounds of calls. A call of an \`approval_required\` tool waits for an owner or admin (POST /api/v1/tool-calls/{id}/approve): the answer then says so, and once it ran (or was refused) the assistant's report of it is a new assistant message of the conversation.`;

export const EVENT_STREAM = [
  'Server-Sent Events, in this order:',
  '`event: delta` with `data: {"text": ...}`, the answer in pieces (concatenate them);',
  '`event: tool` with `data: {"step_id", "call_id", "tool_name", "tool_id", "tool_call_id", "status", "error"}` for each business tool the assistant calls, between the deltas: first with status `requested` (tool_call_id null), then with its outcome (`succeeded`, `failed`, `awaiting_approval`, `refused`; `error` {code, message} when failed or refused);',
  '`event: citation` with `data: {"passage_id", "document_id", "chunk_id", "title"}`, one per passage the answer cites, in order of first use, after the last delta;',
  '`event: done` with `data: {"conversation_id", "user_message_id", "message_id", "paused", "answered_from_knowledge", "model"}` (`message_id` null and `paused` true when a person has taken the conversation over: no answer comes);',
  'or, when the assistant could not answer, `event: error` with `data: {"code": "assistant_unavailable" | "internal_error", "message", "conversation_id", "user_message_id"}` instead of `done`.',
  'A comment line `: keep-alive` comes every CHAT_HEARTBEAT_MS while the answer is awaited. When the client leaves, the answer stops and the conversation records it (`AssistantFailed`, code `client_gone`).',
].join(' ');


/** `schema` with properties that are present only sometimes (not required). */
function withOptional(schema: ReturnType<typeof object>, optional: Record<string, ReturnType<typeof string>>): ReturnType<typeof object> {
  return { ...schema, properties: { ...(schema.properties as Record<string, unknown>), ...optional } } as ReturnType<typeof object>;
}

export const chatApi: ApiArea = {
  tag: 'chat',
  description: "The assistant (spec 4.6): a question answered from the organization's knowledge base, with citations, in a conversation. Each message counts against the plan's message quota.",
  schemas: {
    Citation: object({
      passage_id: string('the number the answer cites it by: `[1]` is passage_id `1`'),
      document_id: string(),
      chunk_id: string(),
      title: string("the document's title"),
    }),
    ChatAnswer: object({
      message_id: string(),
      text: string('the answer; cites passages as [1], [2] ...'),
      citations: arrayOf(ref('Citation'), 'the passages the answer cites, in order of first use'),
      answered_from_knowledge: boolean('false when the answer says the knowledge base has nothing about the question'),
      model: string('the model that answered; `extractive` for the embedded engine'),
    }),
    ChatToolStep: withOptional(object({
      step_id: string('the step within its turn: the round and the call id'),
      call_id: string("the model's id for the call"),
      tool_name: string(),
      tool_id: nullable(string('null when the model named no tool that was offered')),
      tool_call_id: nullable(string('the tool call; null when none was made (no such tool, arguments that were not valid)')),
      status: enumOf(['requested', ...TOOL_STEP_STATUSES], '`requested` only in the stream, while the call is made'),
      error: nullable({ ...object({ code: string(), message: string() }), description: 'why it failed or was refused' }),
    }), { prompt: string("at `challenge` only: what a connector asks the user first (an OTP, ...); the user's next message in the conversation is the answer") }),
    ChatTurn: object({
      conversation_id: string(),
      user_message_id: string(),
      answer: nullable(ref('ChatAnswer')),
      paused: boolean('a person has taken the conversation over (handed off): the assistant answers nothing until its status is open again'),
      tool_steps: arrayOf(ref('ChatToolStep'), 'the business tools the assistant called in this turn, each at its last status, in the order called'),
    }),
  },
  routes: {
    '/api/v1/chat': {
      post: {
        summary: 'Ask the assistant',
        description: `One turn: the message is recorded, the assistant answers from the knowledge base the caller may read, and both are answered when the answer is complete. ${BODY_DESCRIPTION} ${TOOLS_DESCRIPTION} Counts one message against the plan's quota (429 \`quota_exceeded\` when used up: nothing is recorded). 502 \`assistant_unavailable\` when the model server fails: the failure is recorded on the conversation. A retry with the Idempotency-Key of a turn whose conversation was erased since is 410 \`personal_data_erased\` (its answer was kept under the conversation's key).`,
        access: 'user',
        headers: END_USER_HEADERS,
        body: { json: schemaOfCodec(ChatBody) },
        success: { status: 200, description: 'the turn: the conversation, the recorded message and the answer', json: ref('ChatTurn') },
        errors: [404, 409, 410, 429, 502],
        idempotent: true,
      },
    },
    '/api/v1/chat/stream': {
      post: {
        summary: 'Ask the assistant, the answer streamed',
        description: `The turn of POST /api/v1/chat, its answer streamed as Server-Sent Events. ${BODY_DESCRIPTION} ${TOOLS_DESCRIPTION} Refusals before the stream starts (400, 401, 403, 404, 409, 429) are JSON errors. Not idempotent: a stream cannot be given again (send a retry-safe turn to POST /api/v1/chat).`,
        access: 'user',
        headers: END_USER_HEADERS,
        body: { json: schemaOfCodec(ChatBody) },
        success: { status: 200, description: EVENT_STREAM, content: { type: 'text/event-stream', schema: { type: 'string', description: 'event: / data: frames, each ended by a blank line' } } },
        errors: [404, 409, 429],
      },
    },
  },
};
