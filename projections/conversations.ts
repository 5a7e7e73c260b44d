// Read models `conversations` and `conversation_messages`, built by one projection from the
// conversation events (domain/conversation/conversation.ts); docs/conversations.md.
//
// - `conversations`: one document per conversation, with what a list shows (title, status,
//   channel, workspace, who started it with a messaging channel's contact or a verified widget
//   visitor's user id, message count, last activity and a short plain preview of the last
//   message). A deleted conversation keeps its document, marked `deleted`, its title, contact,
//   user id and preview emptied: lists and reads skip it.
// - `conversation_messages`: one document per message, its id the message id: the user's
//   messages, the assistant's answers and human agents' replies. A failed answer is a message
//   too (role `assistant`, empty text, `error` set) with the id `failedAnswerId(reply_to)`, so
//   the thread shows where the assistant failed; it counts as no message and moves no
//   activity. `seq` is the event's revision in the conversation's stream: the thread's order.
//   A tool step of the assistant (#12 point 5) is a message of role `tool` with `tool` set (the
//   tool, the call and its status; no text), id `toolStepMessageId(reply_to, step_id)`, placed
//   where the step was first recorded; a later outcome of the same step (after an approval)
//   updates its status in place. It counts as no message either. The follow-up answer after
//   approved calls is a message of role `assistant` (with `error` when it could not be given).
//   A deleted conversation's messages are deleted.
// A conversation's document stores the position of the last event applied to it and skips
// older ones; a message document is written once (an existing one is left alone), so a
// replay changes nothing.

import { type Citation, type Contact, type ConversationEvent, type ConversationStatus, type Channel, type Party, type ToolStepStatus, contactOf, conversationEvents, verifiedUserIdOf } from '../domain/conversation/conversation';
import type { EventProjection, ProjectionView } from './projection';

export const CONVERSATIONS = 'conversations';
export const CONVERSATION_MESSAGES = 'conversation_messages';

export interface ConversationDocument {
  id: string;
  tenant_id: string;
  workspace_id: string | null;
  channel: Channel;
  title: string;
  /** The title in lower case, NFC: what the search by title prefix compares with. */
  title_key: string;
  status: ConversationStatus;
  started_by: Party;
  /** `started_by.id` when a tenant user started it (console, API), else null: who sees it without a workspace grant. */
  started_by_user_id: string | null;
  /** `started_by.id` when an end user started it (a widget visitor, a WhatsApp sender), else null: a visitor's own conversations. */
  started_by_end_user_id?: string | null;
  /** The end user on a messaging channel (a WhatsApp sender's number, where replies go, and profile name); null for none, and once deleted. */
  contact: Contact | null;
  /** The host site's user id of the verified widget visitor who started it; null for any other starter, and once deleted. */
  verified_user_id: string | null;
  started_at: string;
  /** When the last user message, answer or agent reply was recorded; null before the first. */
  last_message_at: string | null;
  /** `last_message_at`, or `started_at` before the first message: the order of "recently active". */
  last_activity_at: string;
  /** User messages, answers and agent replies (failed answers are not messages). */
  message_count: number;
  /** The last message's text, plain and short (PREVIEW_LENGTH characters at most); null before the first. */
  last_message_preview: string | null;
  status_changed_at: string | null;
  deleted: boolean;
  deleted_at: string | null;
  updated_at: string;
  position: number;
  /** Revision of the conversation's stream at the last event applied: its version (ETag). */
  revision: number;
  [field: string]: unknown;
}

export type MessageRole = 'user' | 'assistant' | 'agent' | 'tool';

/** A tool step as its message shows it. */
export interface ToolStepOfMessage {
  call_id: string;
  tool_name: string;
  tool_id: string | null;
  tool_call_id: string | null;
  status: ToolStepStatus;
}

export interface ConversationMessageDocument {
  /** The message id (for a failed answer: failedAnswerId(reply_to)). */
  id: string;
  conversation_id: string;
  tenant_id: string;
  role: MessageRole;
  /** Empty for a failed answer. */
  text: string;
  /** The passages an answer cites; empty for other messages. */
  citations: Citation[];
  /** Who wrote a user message or an agent reply; null for the assistant. */
  author: Party | null;
  /** For an answer or a failure: the user message it answers; else null. */
  reply_to: string | null;
  created_at: string;
  /** The event's revision in the conversation's stream: messages sort by it, oldest first. */
  seq: number;
  /** Answers only (else null): whether it rests on the knowledge base. */
  answered_from_knowledge: boolean | null;
  model: string | null;
  latency_ms: number | null;
  usage: { prompt_tokens: number; completion_tokens: number } | null;
  /** A failed answer's (or tool step's, or follow-up's) reason; null for every other message. */
  error: { code: string; message: string } | null;
  /** Tool steps only (role `tool`): the tool, the call and its status; null for every other message. */
  tool: ToolStepOfMessage | null;
  /** The feedback given on an answer; null until then (the feedbacks read model has the rest). */
  feedback_rating: 'up' | 'down' | null;
  position: number;
  [field: string]: unknown;
}

/**
 * A question the assistant answered without the knowledge base (`answered_from_knowledge:
 * false`: it found no relevant passage): what the knowledge base lacks. Id: the answer's
 * message id. Deleted with its conversation.
 */
export interface UnansweredQuestionDocument {
  id: string;
  tenant_id: string;
  conversation_id: string;
  workspace_id: string | null;
  channel: Channel;
  /** The user message asked. */
  question_id: string;
  question: string;
  asked_at: string;
  answered_at: string;
  position: number;
  [field: string]: unknown;
}

export const UNANSWERED_QUESTIONS = 'unanswered_questions';

/** The id of the message that stands for a tool step of the turn answering `replyTo`. */
export const toolStepMessageId = (replyTo: string, stepId: string): string => `tool-${replyTo}-${stepId}`;

/** The id of the message that stands for a failed answer to `replyTo` (one outcome per user message). */
export const failedAnswerId = (replyTo: string): string => `failed-${replyTo}`;

/** The form of a title the search compares with: NFC, lower case. */
export const conversationTitleKey = (title: string): string => title.normalize('NFC').toLowerCase();

export const PREVIEW_LENGTH = 120;

/**
 * A message as a one-line plain preview: the usual Markdown marks (emphasis, code, headings,
 * quotes, list bullets, link targets, citation markers like `[1]`) dropped, white space
 * collapsed, cut at PREVIEW_LENGTH characters with an ellipsis.
 */
export function messagePreview(text: string): string {
  const plain = text
    .replace(/```[^\n]*\n?/g, ' ')
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/\[\d+\]/g, '')
    .replace(/^\s{0,3}(#{1,6}|>|[-*+]|\d+\.)\s+/gm, '')
    .replace(/[*_`~]+/g, '')
    .replace(/\s+/g, ' ')
    .trim();
  const characters = [...plain];
  return characters.length <= PREVIEW_LENGTH ? plain : `${characters.slice(0, PREVIEW_LENGTH - 1).join('').trimEnd()}…`;
}

type Recorded = Parameters<EventProjection<ConversationEvent['type']>['apply']>[0];

function message(event: Recorded, fields: Pick<ConversationMessageDocument, 'id' | 'conversation_id' | 'tenant_id' | 'role' | 'text' | 'created_at'> & Partial<ConversationMessageDocument>): ConversationMessageDocument {
  return {
    citations: [],
    author: null,
    reply_to: null,
    answered_from_knowledge: null,
    model: null,
    latency_ms: null,
    usage: null,
    error: null,
    tool: null,
    feedback_rating: null,
    ...fields,
    seq: event.revision,
    position: event.position,
  };
}

/** Records a message once; with `counted`, it is the conversation's latest message too. */
async function addMessage(view: ProjectionView, conversation: ConversationDocument, event: Recorded, doc: ConversationMessageDocument, counted: boolean): Promise<void> {
  if (!(await view.get(CONVERSATION_MESSAGES, doc.id))) view.put(CONVERSATION_MESSAGES, doc);
  const base = { updated_at: event.metadata.occurred_at, position: event.position, revision: event.revision };
  if (!counted) {
    view.patch(CONVERSATIONS, conversation.id, base);
    return;
  }
  view.patch(CONVERSATIONS, conversation.id, {
    ...base,
    message_count: conversation.message_count + 1,
    last_message_at: doc.created_at,
    last_activity_at: doc.created_at,
    last_message_preview: messagePreview(doc.text),
  });
}

export const conversationsProjection: EventProjection<ConversationEvent['type']> = {
  name: 'conversations',
  // 2: a deleted conversation's messages, title and preview are deleted.
  // 3: the contact of a messaging channel's conversation.
  // 4: a verified widget visitor's user id; who started it when an end user did, indexed.
  // 5: the questions answered without the knowledge base (unanswered_questions).
  version: 5,
  collections: [
    {
      name: CONVERSATIONS,
      indexes: [
        { field: 'tenant_id' },
        { field: 'deleted' },
        { field: 'status' },
        { field: 'channel' },
        { field: 'workspace_id' },
        { field: 'started_by_user_id' },
        { field: 'started_by_end_user_id', sparse: true },
        { field: 'started_at' },
        { field: 'last_activity_at' },
        { field: 'title_key' },
      ],
    },
    { name: CONVERSATION_MESSAGES, indexes: [{ field: 'conversation_id' }, { field: 'tenant_id' }, { field: 'seq' }, { field: 'role' }, { field: 'created_at' }] },
    { name: UNANSWERED_QUESTIONS, indexes: [{ field: 'tenant_id', then: ['asked_at'] }, { field: 'conversation_id' }, { field: 'workspace_id' }] },
  ],
  handles: conversationEvents.types,
  async apply(event, view) {
    const { position, revision } = event;
    const at = event.metadata.occurred_at;
    if (event.type === 'ConversationStarted') {
      if (await view.get(CONVERSATIONS, event.data.conversation_id)) return;
      const { conversation_id, tenant_id, workspace_id, channel, title, started_by, started_at } = event.data;
      const doc: ConversationDocument = {
        id: conversation_id,
        tenant_id,
        workspace_id,
        channel,
        title,
        title_key: conversationTitleKey(title),
        status: 'open',
        started_by,
        started_by_user_id: started_by.kind === 'user' ? started_by.id : null,
        started_by_end_user_id: started_by.kind === 'end_user' ? started_by.id : null,
        contact: contactOf(event.data),
        verified_user_id: verifiedUserIdOf(event.data),
        started_at,
        last_message_at: null,
        last_activity_at: started_at,
        message_count: 0,
        last_message_preview: null,
        status_changed_at: null,
        deleted: false,
        deleted_at: null,
        updated_at: started_at,
        position,
        revision,
      };
      view.put(CONVERSATIONS, doc);
      return;
    }
    const conversation = await view.get<ConversationDocument>(CONVERSATIONS, event.data.conversation_id);
    if (!conversation || conversation.position >= position) return;
    const base = { updated_at: at, position, revision };
    const { id } = conversation;
    switch (event.type) {
      case 'UserMessagePosted': {
        const { message_id, tenant_id, text, author, posted_at } = event.data;
        // The sealed end-user token and session stay in the event: no read model holds them.
        await addMessage(view, conversation, event, message(event, { id: message_id, conversation_id: id, tenant_id, role: 'user', text, author, created_at: posted_at }), true);
        return;
      }
      case 'AssistantAnswered': {
        const { message_id, tenant_id, text, reply_to, citations, answered_from_knowledge, model, latency_ms, usage, answered_at } = event.data;
        const doc = message(event, { id: message_id, conversation_id: id, tenant_id, role: 'assistant', text, reply_to, citations, answered_from_knowledge, model, latency_ms, usage, created_at: answered_at });
        await addMessage(view, conversation, event, doc, true);
        const question = answered_from_knowledge ? null : await view.get<ConversationMessageDocument>(CONVERSATION_MESSAGES, reply_to);
        if (question !== null && question.role === 'user') {
          view.put(UNANSWERED_QUESTIONS, {
            id: message_id,
            tenant_id,
            conversation_id: id,
            workspace_id: conversation.workspace_id,
            channel: conversation.channel,
            question_id: question.id,
            question: question.text,
            asked_at: question.created_at,
            answered_at,
            position,
          } satisfies UnansweredQuestionDocument);
        }
        return;
      }
      case 'AssistantFailed': {
        const { tenant_id, reply_to, code, message: reason, failed_at } = event.data;
        const doc = message(event, { id: failedAnswerId(reply_to), conversation_id: id, tenant_id, role: 'assistant', text: '', reply_to, error: { code, message: reason }, created_at: failed_at });
        await addMessage(view, conversation, event, doc, false);
        return;
      }
      case 'AssistantToolStepRecorded': {
        const { tenant_id, reply_to, step_id, call_id, tool_name, tool_id, tool_call_id, status, error, recorded_at } = event.data;
        const stepMessageId = toolStepMessageId(reply_to, step_id);
        const tool: ToolStepOfMessage = { call_id, tool_name, tool_id, tool_call_id, status };
        // A later outcome of the same step (after an approval): the step moves on in place.
        if (await view.get(CONVERSATION_MESSAGES, stepMessageId)) view.patch(CONVERSATION_MESSAGES, stepMessageId, { tool, error, position });
        else view.put(CONVERSATION_MESSAGES, message(event, { id: stepMessageId, conversation_id: id, tenant_id, role: 'tool', text: '', reply_to, tool, error, created_at: recorded_at }));
        view.patch(CONVERSATIONS, id, base);
        return;
      }
      case 'AssistantFollowedUp': {
        const { message_id, tenant_id, text, reply_to, citations, answered_from_knowledge, model, latency_ms, usage, error, answered_at } = event.data;
        const doc = message(event, { id: message_id, conversation_id: id, tenant_id, role: 'assistant', text, reply_to, citations, answered_from_knowledge, model, latency_ms, usage, error, created_at: answered_at });
        await addMessage(view, conversation, event, doc, error === null);
        return;
      }
      case 'AgentReplied': {
        const { message_id, tenant_id, text, agent, replied_at } = event.data;
        await addMessage(view, conversation, event, message(event, { id: message_id, conversation_id: id, tenant_id, role: 'agent', text, author: agent, created_at: replied_at }), true);
        return;
      }
      case 'ConversationRenamed':
        view.patch(CONVERSATIONS, id, { ...base, title: event.data.title, title_key: conversationTitleKey(event.data.title) });
        return;
      case 'ConversationStatusChanged':
        view.patch(CONVERSATIONS, id, { ...base, status: event.data.status, status_changed_at: event.data.changed_at });
        return;
      case 'FeedbackGiven': {
        const answer = await view.get<ConversationMessageDocument>(CONVERSATION_MESSAGES, event.data.message_id);
        if (answer && answer.feedback_rating === null) view.patch(CONVERSATION_MESSAGES, answer.id, { feedback_rating: event.data.rating });
        view.patch(CONVERSATIONS, id, base);
        return;
      }
      case 'ConversationDeleted':
      case 'ConversationErased':
        // Its messages go, and what the document showed of them (the title is the first message's
        // first line unless renamed): the document stays as the record that it was, its position
        // keeping a replay of older events from writing them again. An erasure deletes it too.
        view.deleteWhere(CONVERSATION_MESSAGES, { conversation_id: id });
        view.deleteWhere(UNANSWERED_QUESTIONS, { conversation_id: id });
        view.patch(CONVERSATIONS, id, {
          ...base,
          deleted: true,
          deleted_at: conversation.deleted_at ?? (event.type === 'ConversationDeleted' ? event.data.deleted_at : event.data.erased_at),
          title: '',
          title_key: '',
          last_message_preview: null,
          contact: null,
          verified_user_id: null,
        });
        return;
      case 'EndUserIdentityCleared':
        // Nothing shown changes; the revision moves on with the stream's (the conversation's ETag).
        view.patch(CONVERSATIONS, id, base);
        return;
    }
  },
};
