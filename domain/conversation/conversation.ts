// The conversation aggregate: one conversation between a tenant's assistant (or its people)
// and a user or end user, with every message in it. Stream `conversation-<id>`.
//
// Status (docs/conversations.md lists the transitions):
//   open       the assistant answers;
//   pending    waiting for the customer; the assistant still answers a new message;
//   handed_off a person has taken over: the assistant is paused and answers nothing;
//   resolved   done; a new message from the user opens it again (an explicit
//              ConversationStatusChanged resolved -> open follows the message, so every
//              reader sees the reopening as the same event as any other status change).
// Allowed: open -> pending | handed_off | resolved; pending -> open | handed_off | resolved;
// handed_off -> open | resolved; resolved -> open. A human agent's reply moves an open or
// pending conversation to handed_off: the assistant stays paused until someone sets it back
// to open. A deleted conversation is kept for audit and accepts nothing more.
//
// Tool steps (issue #12 point 5): a business tool the assistant called while answering a user
// message is a step of that turn, recorded here as `AssistantToolStepRecorded` (the call itself
// is the tool-call aggregate, referenced by `tool_call_id`; a call that could not be made, such
// as arguments that were not JSON, has none). A step is recorded with each outcome the
// conversation learns: one that awaited an owner's or admin's approval is recorded again
// once it ran or was refused. A turn that ended waiting for approvals gets one follow-up
// answer (`AssistantFollowedUp`) once all of them are settled: the model's report of what
// they gave, or the reason it could not give one (`error`).
//
// End-user identity (spec 5.1 rule 4): X-End-User-Token / X-End-User-Session sent with a message
// are sealed on it and forwarded to the tools of its turn, also to calls that run later (after an
// approval, a challenge, a long connector call). `EndUserIdentityCleared` (the widget's
// clearIdentity(), POST /api/v1/widget/identity/clear) ends that: a call whose message came
// before it forwards neither (application/tool-call/end-user.ts). It is recorded only when a
// message since the last clear held one, so clearing again records nothing.
//
// Erasure (docs/personal-data.md): the texts of a conversation (messages, answers, replies,
// titles, feedback comments, status reasons, challenge prompts, a messaging channel's contact, a
// verified widget visitor's user id)
// are personal data of the subject `conversation:<id>`, stored sealed under its key.
// `ConversationErased` (an admin's erasure, of a live or deleted conversation) deletes that
// key: the texts read as ERASED_PERSONAL_DATA from then on, and the conversation is deleted
// and accepts nothing more.

import * as t from 'io-ts';
import { type Either, left, right } from 'fp-ts/Either';
import type { Decider } from '../shared/decider';
import { type DomainError, conflict, notFound } from '../shared/errors';
import { declareEvent, type EventOf, eventGroup, type GroupEvent } from '../shared/events';
import { toStreamName } from '../shared/stream-names';
import { checkText } from '../shared/text';

export const CONVERSATION_STATUSES = ['open', 'pending', 'handed_off', 'resolved'] as const;
export const ConversationStatus = t.keyof({ open: null, pending: null, handed_off: null, resolved: null });
export type ConversationStatus = t.TypeOf<typeof ConversationStatus>;

export const CHANNELS = ['console', 'api', 'widget', 'whatsapp'] as const;
export const Channel = t.keyof({ console: null, api: null, widget: null, whatsapp: null });
export type Channel = t.TypeOf<typeof Channel>;
/** A channel the organization's public reaches (the widget, WhatsApp), not its members' console or API. */
export const isPublicChannel = (channel: Channel): boolean => channel !== 'console' && channel !== 'api';

const Party = t.type({ kind: t.keyof({ user: null, end_user: null, admin: null, system: null }), id: t.string });

/** A passage of the knowledge base an answer cites. */
export const Citation = t.type({ passage_id: t.string, document_id: t.string, chunk_id: t.string, title: t.string });
export type Citation = t.TypeOf<typeof Citation>;

const Usage = t.union([t.type({ prompt_tokens: t.number, completion_tokens: t.number }), t.null]);

export const ConversationStarted = declareEvent(
  'ConversationStarted',
  t.intersection([
    t.type({ conversation_id: t.string, tenant_id: t.string, workspace_id: t.union([t.string, t.null]), channel: Channel, title: t.string, started_by: Party, started_at: t.string }),
    // The end user's address on a messaging channel, where replies go (a WhatsApp sender's
    // number), and the name they go by there: personal data, so they are sealed here, and the
    // party id is a digest of the address.
    t.partial({ contact: t.string, contact_name: t.string }),
    // The host site's user id of a widget visitor it vouched for (identify() with a signed user
    // id): personal data, sealed here; the party id is a digest of it.
    t.partial({ verified_user_id: t.string }),
  ]),
);
export const UserMessagePosted = declareEvent(
  'UserMessagePosted',
  t.intersection([
    t.type({
      conversation_id: t.string,
      tenant_id: t.string,
      message_id: t.string,
      /** The message; CHALLENGE_ANSWER_TEXT for the answer to a connector's challenge (never the answer itself). */
      text: t.string,
      author: Party,
      /** X-End-User-Token and X-End-User-Session of the turn, sealed (tool calls forward them); null when absent. */
      end_user_token_sealed: t.union([t.string, t.null]),
      end_user_session_sealed: t.union([t.string, t.null]),
      posted_at: t.string,
    }),
    /** The tool call whose challenge this message answers (#13): its text is kept on the call, sealed, and out of the model's history. */
    t.partial({ answers_tool_call: t.string }),
  ]),
);

/** What a conversation shows of a message that answered a challenge (an OTP is never recorded in clear). */
export const CHALLENGE_ANSWER_TEXT = '••••••';
export const AssistantAnswered = declareEvent(
  'AssistantAnswered',
  t.type({
    conversation_id: t.string,
    tenant_id: t.string,
    message_id: t.string,
    reply_to: t.string,
    text: t.string,
    citations: t.array(Citation),
    /** Whether the answer rests on the knowledge base (false: the assistant said it has nothing relevant). */
    answered_from_knowledge: t.boolean,
    model: t.string,
    latency_ms: t.number,
    usage: Usage,
    answered_at: t.string,
  }),
);
export const AssistantFailed = declareEvent(
  'AssistantFailed',
  t.type({ conversation_id: t.string, tenant_id: t.string, reply_to: t.string, code: t.string, message: t.string, failed_at: t.string }),
);
export const TOOL_STEP_STATUSES = ['succeeded', 'failed', 'awaiting_approval', 'refused', 'challenge', 'running'] as const;
/**
 * `challenge`: a connector asked the user something (an OTP) before it answers; the user's next
 * message answers it. `running`: a connector call outlived the turn's wait; its outcome is
 * reported later (#13).
 */
export const ToolStepStatus = t.keyof({ succeeded: null, failed: null, awaiting_approval: null, refused: null, challenge: null, running: null });
export type ToolStepStatus = t.TypeOf<typeof ToolStepStatus>;
/** A step's outcome the conversation will not hear of again: awaiting_approval, challenge and running move on. */
export const isSettledToolStep = (status: ToolStepStatus): boolean => status !== 'awaiting_approval' && status !== 'challenge' && status !== 'running';

const StepError = t.union([t.type({ code: t.string, message: t.string }), t.null]);

export const AssistantToolStepRecorded = declareEvent(
  'AssistantToolStepRecorded',
  t.intersection([
    t.type({
      conversation_id: t.string,
      tenant_id: t.string,
      /** The user message whose turn made the call. */
      reply_to: t.string,
      /** The step within the turn (its round and the model's call id): the same step keeps it as its outcome moves on. */
      step_id: t.string,
      /** The model's id for the call. */
      call_id: t.string,
      tool_name: t.string,
      /** Null when no such tool was offered. */
      tool_id: t.union([t.string, t.null]),
      /** The tool call (tool-call aggregate); null when no call was made (no such tool, arguments that were not JSON or not valid). */
      tool_call_id: t.union([t.string, t.null]),
      status: ToolStepStatus,
      /** Why it failed or was refused; null otherwise. */
      error: StepError,
      recorded_at: t.string,
    }),
    /** The challenge's human text, for a step at `challenge` (shown to the user; #13). */
    t.partial({ prompt: t.string }),
  ]),
);
export const AssistantFollowedUp = declareEvent(
  'AssistantFollowedUp',
  t.type({
    conversation_id: t.string,
    tenant_id: t.string,
    message_id: t.string,
    /** The user message whose turn waited for approvals. */
    reply_to: t.string,
    /** The calls that waited, settled now. */
    tool_call_ids: t.array(t.string),
    /** Empty when `error` says why no follow-up could be given. */
    text: t.string,
    citations: t.array(Citation),
    answered_from_knowledge: t.boolean,
    model: t.string,
    latency_ms: t.number,
    usage: Usage,
    error: StepError,
    answered_at: t.string,
  }),
);
export const AgentReplied = declareEvent('AgentReplied', t.type({ conversation_id: t.string, tenant_id: t.string, message_id: t.string, text: t.string, agent: Party, replied_at: t.string }));
export const ConversationRenamed = declareEvent('ConversationRenamed', t.type({ conversation_id: t.string, title: t.string, previous_title: t.string }));
export const ConversationStatusChanged = declareEvent(
  'ConversationStatusChanged',
  t.intersection([
    t.type({ conversation_id: t.string, tenant_id: t.string, status: ConversationStatus, previous_status: ConversationStatus, changed_at: t.string }),
    /** Why, in the words of whoever changed it (a widget visitor asking for a person says why); the handoff webhook carries it. */
    t.partial({ reason: t.string }),
  ]),
);
export const FeedbackGiven = declareEvent(
  'FeedbackGiven',
  t.type({ conversation_id: t.string, tenant_id: t.string, message_id: t.string, rating: t.keyof({ up: null, down: null }), comment: t.string, given_by: Party, given_at: t.string }),
);
export const EndUserIdentityCleared = declareEvent('EndUserIdentityCleared', t.type({ conversation_id: t.string, tenant_id: t.string, cleared_at: t.string }));
export const ConversationDeleted = declareEvent('ConversationDeleted', t.type({ conversation_id: t.string, tenant_id: t.string, deleted_at: t.string }));
export const ConversationErased = declareEvent('ConversationErased', t.type({ conversation_id: t.string, tenant_id: t.string, erased_at: t.string }));

/** The data subject of a conversation's texts: erasing it makes them unreadable. */
export const conversationSubject = (conversationId: string): string => `conversation:${conversationId}`;

export const conversationEvents = eventGroup(
  'conversation',
  [
    ConversationStarted,
    UserMessagePosted,
    AssistantAnswered,
    AssistantFailed,
    AgentReplied,
    ConversationRenamed,
    ConversationStatusChanged,
    FeedbackGiven,
    ConversationDeleted,
    ConversationErased,
    AssistantToolStepRecorded,
    AssistantFollowedUp,
    EndUserIdentityCleared,
  ],
  {
    subject: (data) => conversationSubject(String(data.conversation_id)),
    fields: {
      ConversationStarted: ['title', 'contact', 'contact_name', 'verified_user_id'],
      UserMessagePosted: ['text'],
      AssistantAnswered: ['text'],
      AssistantFollowedUp: ['text'],
      AgentReplied: ['text'],
      AssistantToolStepRecorded: ['prompt'],
      ConversationRenamed: ['title', 'previous_title'],
      ConversationStatusChanged: ['reason'],
      FeedbackGiven: ['comment'],
    },
    erasedBy: 'ConversationErased',
  },
);
export type ConversationEvent = GroupEvent<typeof conversationEvents>;
export type Party = t.TypeOf<typeof Party>;

export type ConversationStartedData = EventOf<typeof ConversationStarted>['data'];

/** What party ids of WhatsApp senders were before they became digests: `whatsapp:<number>`. */
const NUMBER_PARTY_ID = /^whatsapp:(\d{1,20})$/;

/** Who the end user of a messaging channel is there: their address (a WhatsApp number), where replies go, and the name they go by. */
export interface Contact {
  address: string;
  name: string | null;
}

/**
 * The end user's contact on a messaging channel: the conversation's `contact` and
 * `contact_name` (ERASED_PERSONAL_DATA once erased), or the number a party id of old was; null
 * for none (a conversation of the console, the API or the widget).
 */
export function contactOf(started: ConversationStartedData): Contact | null {
  if (started.contact !== undefined) return { address: started.contact, name: started.contact_name ?? null };
  if (started.channel !== 'whatsapp' || started.started_by.kind !== 'end_user') return null;
  const number = NUMBER_PARTY_ID.exec(started.started_by.id)?.[1];
  return number === undefined ? null : { address: number, name: null };
}

/** What party ids of verified widget visitors were before they became digests: `verified:<the host's user id>`. */
const VERIFIED_PARTY_PREFIX = 'verified:';

/**
 * The host site's user id of the verified widget visitor who started the conversation: its
 * `verified_user_id` (ERASED_PERSONAL_DATA once erased), or what a party id of old held; null
 * for any other starter.
 */
export function verifiedUserIdOf(started: ConversationStartedData): string | null {
  if (started.verified_user_id !== undefined) return started.verified_user_id;
  if (started.channel !== 'widget' || started.started_by.kind !== 'end_user' || !started.started_by.id.startsWith(VERIFIED_PARTY_PREFIX)) return null;
  return started.started_by.id.slice(VERIFIED_PARTY_PREFIX.length);
}

type UserMessageData = EventOf<typeof UserMessagePosted>['data'];
type AnswerData = EventOf<typeof AssistantAnswered>['data'];
type ToolStepData = EventOf<typeof AssistantToolStepRecorded>['data'];
type FollowUpData = EventOf<typeof AssistantFollowedUp>['data'];

export type ConversationCommand =
  | { type: 'StartConversation'; data: Omit<ConversationStartedData, 'started_at'> }
  | { type: 'PostUserMessage'; data: Omit<UserMessageData, 'posted_at' | 'conversation_id' | 'tenant_id'> }
  | { type: 'RecordAnswer'; data: Omit<AnswerData, 'answered_at' | 'conversation_id' | 'tenant_id'> }
  | { type: 'RecordAnswerFailure'; data: { reply_to: string; code: string; message: string } }
  | { type: 'RecordToolStep'; data: Omit<ToolStepData, 'recorded_at' | 'conversation_id' | 'tenant_id'> }
  | { type: 'RecordFollowUp'; data: Omit<FollowUpData, 'answered_at' | 'conversation_id' | 'tenant_id'> }
  | { type: 'PostAgentReply'; data: { message_id: string; text: string; agent: Party } }
  | { type: 'RenameConversation'; data: { title: string } }
  | { type: 'ChangeConversationStatus'; data: { status: ConversationStatus; reason?: string } }
  | { type: 'GiveFeedback'; data: { message_id: string; rating: 'up' | 'down'; comment: string; given_by: Party } }
  | { type: 'DeleteConversation'; data: Record<string, never> }
  | { type: 'EraseConversation'; data: Record<string, never> }
  | { type: 'ClearEndUserIdentity'; data: Record<string, never> };

export interface LiveConversation {
  status: ConversationStatus;
  conversation_id: string;
  tenant_id: string;
  workspace_id: string | null;
  channel: Channel;
  title: string;
  started_by: Party;
  /** Message ids by kind, to check what a reply or a feedback refers to. */
  user_messages: ReadonlySet<string>;
  answered: ReadonlySet<string>;
  assistant_messages: ReadonlySet<string>;
  feedback: ReadonlySet<string>;
  /** Each tool step's last recorded status, by `reply_to` and `step_id` (`<reply_to> <step_id>`). */
  tool_steps: ReadonlyMap<string, ToolStepStatus>;
  /** User messages whose turn got its follow-up. */
  followed_up: ReadonlySet<string>;
  /** Whether a message since the last EndUserIdentityCleared carried an end-user token or session. */
  end_user_held: boolean;
}

/** A deleted conversation; `erased_at` once its texts were erased too. */
export interface DeletedConversation {
  status: 'deleted';
  conversation_id: string;
  tenant_id: string;
  erased_at: string | null;
  /** Where it was held and who started it, kept from the conversation: whose it was stays known (a visitor's erasure asked again). */
  channel: Channel | null;
  started_by: Party | null;
}

export type ConversationState = { status: 'absent' } | LiveConversation | DeletedConversation;

export const conversationStream = (conversationId: string): string => toStreamName(conversationEvents.category, conversationId);

export const MAX_MESSAGE_LENGTH = 8000;
export const MAX_TITLE_LENGTH = 200;
export const MAX_FEEDBACK_COMMENT_LENGTH = 2000;
export const MAX_STATUS_REASON_LENGTH = 500;

/** The status changes `PUT .../status` may make (a human agent's reply and a user's message make theirs themselves). */
export const CONVERSATION_TRANSITIONS: Readonly<Record<ConversationStatus, readonly ConversationStatus[]>> = {
  open: ['pending', 'handed_off', 'resolved'],
  pending: ['open', 'handed_off', 'resolved'],
  handed_off: ['open', 'resolved'],
  resolved: ['open'],
};

/** Whether the assistant answers in this status (a person took over a handed-off one). */
export const assistantAnswersIn = (status: ConversationStatus): boolean => status !== 'handed_off';

const toolStepKey = (replyTo: string, stepId: string): string => `${replyTo} ${stepId}`;

const isLive = (state: ConversationState): state is LiveConversation => state.status !== 'absent' && state.status !== 'deleted';
const withAdded = (set: ReadonlySet<string>, id: string): ReadonlySet<string> => new Set([...set, id]);

export const conversationDecider: Decider<ConversationCommand, ConversationEvent, ConversationState> = {
  initialState: () => ({ status: 'absent' }),
  evolve(state, event) {
    if (event.type === 'ConversationStarted') {
      const { conversation_id, tenant_id, workspace_id, channel, title, started_by } = event.data;
      const none = new Set<string>();
      return {
        status: 'open',
        conversation_id,
        tenant_id,
        workspace_id,
        channel,
        title,
        started_by,
        user_messages: none,
        answered: none,
        assistant_messages: none,
        feedback: none,
        tool_steps: new Map(),
        followed_up: none,
        end_user_held: false,
      };
    }
    const whose = state.status === 'absent' ? { channel: null, started_by: null } : { channel: state.channel, started_by: state.started_by };
    if (event.type === 'ConversationDeleted') return { status: 'deleted', conversation_id: event.data.conversation_id, tenant_id: event.data.tenant_id, erased_at: null, ...whose };
    if (event.type === 'ConversationErased') return { status: 'deleted', conversation_id: event.data.conversation_id, tenant_id: event.data.tenant_id, erased_at: event.data.erased_at, ...whose };
    if (!isLive(state)) return state;
    switch (event.type) {
      case 'UserMessagePosted':
        // The reopening of a resolved conversation is the ConversationStatusChanged after it.
        return {
          ...state,
          user_messages: withAdded(state.user_messages, event.data.message_id),
          end_user_held: state.end_user_held || event.data.end_user_token_sealed !== null || event.data.end_user_session_sealed !== null,
        };
      case 'AssistantAnswered':
        return { ...state, answered: withAdded(state.answered, event.data.reply_to), assistant_messages: withAdded(state.assistant_messages, event.data.message_id) };
      case 'AssistantFailed':
        return { ...state, answered: withAdded(state.answered, event.data.reply_to) };
      case 'AgentReplied':
        return state;
      case 'AssistantToolStepRecorded':
        return { ...state, tool_steps: new Map([...state.tool_steps, [toolStepKey(event.data.reply_to, event.data.step_id), event.data.status]]) };
      case 'AssistantFollowedUp':
        return { ...state, followed_up: withAdded(state.followed_up, event.data.reply_to), assistant_messages: withAdded(state.assistant_messages, event.data.message_id) };
      case 'ConversationRenamed':
        return { ...state, title: event.data.title };
      case 'ConversationStatusChanged':
        return { ...state, status: event.data.status };
      case 'FeedbackGiven':
        return { ...state, feedback: withAdded(state.feedback, event.data.message_id) };
      case 'EndUserIdentityCleared':
        return { ...state, end_user_held: false };
    }
  },
  decide(command, state, { now }): Either<DomainError, ConversationEvent[]> {
    const at = now.toISOString();
    if (command.type === 'StartConversation') {
      if (state.status !== 'absent') return left(conflict('conversation_exists', 'the conversation already exists'));
      const title = checkText('title', command.data.title, { max: MAX_TITLE_LENGTH, code: 'invalid_conversation' });
      if (title._tag === 'Left') return title;
      return right([{ type: 'ConversationStarted', data: { ...command.data, title: title.right, started_at: at } }]);
    }
    if (command.type === 'EraseConversation') {
      if (state.status === 'absent') return left(notFound('conversation_not_found', 'no such conversation'));
      // Erased already: nothing more to do (a repeated request).
      if (state.status === 'deleted' && state.erased_at !== null) return right([]);
      return right([{ type: 'ConversationErased', data: { conversation_id: state.conversation_id, tenant_id: state.tenant_id, erased_at: at } }]);
    }
    if (!isLive(state)) return left(notFound('conversation_not_found', 'no such conversation'));
    const { conversation_id, tenant_id } = state;
    switch (command.type) {
      case 'PostUserMessage': {
        if (state.user_messages.has(command.data.message_id)) return right([]);
        const text = checkText('message', command.data.text, { max: MAX_MESSAGE_LENGTH, multiline: true, code: 'invalid_message' });
        if (text._tag === 'Left') return text;
        const posted: ConversationEvent = { type: 'UserMessagePosted', data: { ...command.data, conversation_id, tenant_id, text: text.right, posted_at: at } };
        if (state.status !== 'resolved') return right([posted]);
        // A new message opens a resolved conversation again, as a recorded status change.
        return right([posted, { type: 'ConversationStatusChanged', data: { conversation_id, tenant_id, status: 'open', previous_status: 'resolved', changed_at: at } }]);
      }
      case 'RecordAnswer':
      case 'RecordAnswerFailure': {
        if (!state.user_messages.has(command.data.reply_to)) return left(notFound('message_not_found', 'no such user message in this conversation'));
        // One outcome per user message: a redelivered answer records nothing.
        if (state.answered.has(command.data.reply_to)) return right([]);
        if (command.type === 'RecordAnswerFailure') {
          return right([{ type: 'AssistantFailed', data: { conversation_id, tenant_id, ...command.data, failed_at: at } }]);
        }
        return right([{ type: 'AssistantAnswered', data: { ...command.data, conversation_id, tenant_id, answered_at: at } }]);
      }
      case 'RecordToolStep': {
        if (!state.user_messages.has(command.data.reply_to)) return left(notFound('message_not_found', 'no such user message in this conversation'));
        const recorded = state.tool_steps.get(toolStepKey(command.data.reply_to, command.data.step_id));
        // The same outcome again (a redelivery), or any after a settled one, records nothing.
        if (recorded !== undefined && (recorded === command.data.status || isSettledToolStep(recorded))) return right([]);
        return right([{ type: 'AssistantToolStepRecorded', data: { ...command.data, conversation_id, tenant_id, recorded_at: at } }]);
      }
      case 'RecordFollowUp': {
        if (!state.user_messages.has(command.data.reply_to)) return left(notFound('message_not_found', 'no such user message in this conversation'));
        // Each follow-up message once: a redelivered one records nothing. A turn may have several
        // (a question for each call challenged after it ended, the report once its calls settled).
        if (state.assistant_messages.has(command.data.message_id)) return right([]);
        return right([{ type: 'AssistantFollowedUp', data: { ...command.data, conversation_id, tenant_id, answered_at: at } }]);
      }
      case 'PostAgentReply': {
        const text = checkText('text', command.data.text, { max: MAX_MESSAGE_LENGTH, multiline: true, code: 'invalid_message' });
        if (text._tag === 'Left') return text;
        const reply: ConversationEvent = { type: 'AgentReplied', data: { conversation_id, tenant_id, ...command.data, text: text.right, replied_at: at } };
        if (state.status === 'handed_off' || state.status === 'resolved') return right([reply]);
        // A person answering takes the conversation over: the assistant pauses.
        return right([reply, { type: 'ConversationStatusChanged', data: { conversation_id, tenant_id, status: 'handed_off', previous_status: state.status, changed_at: at } }]);
      }
      case 'RenameConversation': {
        const title = checkText('title', command.data.title, { max: MAX_TITLE_LENGTH, code: 'invalid_conversation' });
        if (title._tag === 'Left') return title;
        if (title.right === state.title) return right([]);
        return right([{ type: 'ConversationRenamed', data: { conversation_id, title: title.right, previous_title: state.title } }]);
      }
      case 'ChangeConversationStatus': {
        const next = command.data.status;
        if (next === state.status) return right([]);
        if (!CONVERSATION_TRANSITIONS[state.status].includes(next)) {
          return left(conflict('invalid_status_transition', `a conversation that is ${state.status} can become ${CONVERSATION_TRANSITIONS[state.status].join(', ')}, not ${next}`));
        }
        const reason = checkText('reason', command.data.reason ?? '', { min: 0, max: MAX_STATUS_REASON_LENGTH, multiline: true, code: 'invalid_request' });
        if (reason._tag === 'Left') return reason;
        return right([
          { type: 'ConversationStatusChanged', data: { conversation_id, tenant_id, status: next, previous_status: state.status, changed_at: at, ...(reason.right === '' ? {} : { reason: reason.right }) } },
        ]);
      }
      case 'GiveFeedback': {
        if (!state.assistant_messages.has(command.data.message_id)) return left(notFound('message_not_found', 'feedback is given on an answer of the assistant in this conversation'));
        const comment = checkText('comment', command.data.comment, { min: 0, max: MAX_FEEDBACK_COMMENT_LENGTH, multiline: true, code: 'invalid_feedback' });
        if (comment._tag === 'Left') return comment;
        if (state.feedback.has(command.data.message_id)) return left(conflict('feedback_given', 'feedback on this answer was already given'));
        return right([{ type: 'FeedbackGiven', data: { conversation_id, tenant_id, ...command.data, comment: comment.right, given_at: at } }]);
      }
      case 'DeleteConversation':
        return right([{ type: 'ConversationDeleted', data: { conversation_id, tenant_id, deleted_at: at } }]);
      case 'ClearEndUserIdentity':
        // Nothing held since the last clear: nothing to forget.
        if (!state.end_user_held) return right([]);
        return right([{ type: 'EndUserIdentityCleared', data: { conversation_id, tenant_id, cleared_at: at } }]);
    }
  },
};
