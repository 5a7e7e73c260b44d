// One chat turn (spec 4.6): a user's message in a conversation and the assistant's answer,
// each an event on the conversation (stream `conversation-<id>`).
//
// The turn, in order:
//  1. the message is checked (400 `invalid_message` naming `message`) and the tenant's message
//     quota asked (429 `quota_exceeded` with limit, used, resets_at): nothing is recorded before;
//  2. without `conversation_id` a conversation starts (channel `console`, titled by the first
//     message, in `workspace_id` when given, which the asker must be able to read: 404
//     otherwise); with one, it must be a console conversation of the tenant the asker may see
//     (404 `conversation_not_found` otherwise, never 403: its existence is not revealed), by
//     the rule of application/conversation: an Admin or Owner sees every one of the tenant, a
//     member their own and those of the workspaces they may read. A public channel's asker (a
//     widget visitor, a WhatsApp sender: `publicChannelAsker`) starts conversations of that
//     channel in the channel's workspace and continues only their own;
//  3. the message is posted (`UserMessagePosted`), with X-End-User-Token / X-End-User-Session
//     sealed (they are for the tool calls of later issues, never logged or shown);
//  4. a handed-off conversation stops there: a person has taken over, the assistant is paused;
//  5. otherwise the passages are retrieved (only from workspaces the asker may read), the
//     engine answers from them and the last HISTORY_MESSAGES messages, and the answer is
//     recorded (`AssistantAnswered`: text, citations, model, latency, usage) or, when the
//     engine fails or the client leaves, the failure (`AssistantFailed`, code `client_gone`
//     for a client that left: a half-streamed answer was never read whole, so it is not kept).
//  6. tools (#12 point 5): in a conversation of a workspace, the workspace's chat-enabled,
//     enabled business tools are offered to the engine (application/tool/chat-tools.ts; none
//     without a workspace). When the engine ends a round with tool calls, each runs as a step:
//     streamed (`tool`, status `requested`, then its outcome), run through the tool-call use
//     case (origin chat, the asker as caller, the turn's X-End-User-Token / Session forwarded),
//     recorded on the conversation (`AssistantToolStepRecorded`), and its result given back to
//     the engine (application/chat/tool-steps.ts has the shapes), which is asked again; at most
//     MAX_TOOL_ROUNDS rounds, then once more without tools. A name that is no offered tool, or
//     arguments that are not a JSON object, make a failed step the model sees, not a call. A
//     call that waits for an owner's or admin's approval ends the turn once the round's calls
//     are made: its answer says so (`awaitingApprovalNote`), and the follow-up saga
//     (tool-follow-up.ts) reports the outcome once it is known.
//  7. connector tools (#13 point 3): the call is run by the connector saga and the turn waits
//     for its outcome (application/tool-call/connector-tool-calls.ts). A call the connector
//     answers with a `challenge` (an OTP) is a step at `challenge` with the prompt; the turn
//     ends once the round's calls are made, its answer asking the user (`challengeNote`). The
//     user's NEXT message in the conversation, while that challenge is open, is the answer: it
//     is recorded as the user's message but masked (CHALLENGE_ANSWER_TEXT, `answers_tool_call`;
//     the answer itself only sealed on the tool call), sent as `tool.resume`, and is no
//     question to the model: the model is given the challenged turn again (its question, its
//     steps with the resumed call's result) and answers. A call that outlives the wait is a
//     step at `running`: the turn says so (`runningNote`) and the follow-up saga reports it.
//
// With an Idempotency-Key the ids of the conversation and both messages derive from its seed,
// so a retry after a crash finds what the first attempt recorded and answers that.

import type { Role } from '../../domain/membership/membership';
import {
  CHALLENGE_ANSWER_TEXT,
  type Channel,
  type Citation,
  type ConversationEvent,
  type LiveConversation,
  MAX_MESSAGE_LENGTH,
  MAX_TITLE_LENGTH,
  type Party,
  assistantAnswersIn,
  conversationDecider,
  conversationStream,
} from '../../domain/conversation/conversation';
import { DomainError, notFound } from '../../domain/shared/errors';
import { type ChatTool, chatToolsOf } from '../tool/chat-tools';
import { HANDOFF_NOTE, HANDOFF_TOOL, HANDOFF_TOOL_NAME, handoffOffered, handoffReasonOf } from './handoff-tool';
import {
  MAX_TOOL_ROUNDS,
  type StepOutcome,
  type ToolCaller,
  type ToolResumer,
  type ToolStepView,
  argumentsOf,
  awaitingApprovalNote,
  challengeNote,
  recordedStepsOf,
  resultForModel,
  runningNote,
  stepFor,
  stepIdOf,
  unmadeCall,
  viewAt,
} from './tool-steps';
import { type ToolCallEvent, toolCallDecider, toolCallStream } from '../../domain/tool-call/tool-call';
import { outcomeOf } from '../tool-call/tool-calls';
import { checkText } from '../../domain/shared/text';
import { TENANTS, type TenantDocument } from '../../projections/tenants';
import { type CommandDependencies, handleCommand } from '../command-handling/handle-command';
import { canSeeConversation, conversationAggregate, conversationVisibility } from '../conversation/conversations';
import { type EntitlementDependencies, requireQuota } from '../entitlement/entitlements';
import { type RetrievalDependencies, retrievePassages } from '../knowledge/retrieval';
import { AssistantEngineError, type AssistantChunk, type AssistantEngine, type AssistantTurn, type Passage, type ToolCallAsk, type ToolStep } from '../ports/assistant-engine';
import type { Secrets } from '../ports/identity';
import type { Logger } from '../ports/logger';
import type { Principal } from '../session/sessions';
import type { ReadModelDependencies, ReadYourWritesDependencies } from '../shared/read-models';
import type { RequestContext } from '../shared/request-context';
import { inactiveTenantError, isActiveTenant } from '../tenant/active-tenant';
import { requireReadableWorkspace } from '../workspace/workspace-access';

export type ChatDependencies = CommandDependencies &
  EntitlementDependencies &
  RetrievalDependencies &
  ReadYourWritesDependencies & {
    secrets: Pick<Secrets, 'seal'>;
    assistant: AssistantEngine;
    logger: Logger;
    /** Runs the business tool calls the model asks for (application/tool-call's callTool, bound). */
    callTool: ToolCaller;
    /** Sends the user's answer to a connector's challenge (application/tool-call's resumeToolCall, bound). */
    resumeToolCall: ToolResumer;
  };

/** Earlier messages the engine sees: enough for follow-up questions, few enough to stay fast and cheap. */
export const HISTORY_MESSAGES = 10;
/** A conversation's title is its first message, cut here. */
export const TITLE_LENGTH = 80;
/** X-End-User-Token / X-End-User-Session longer than this are refused (400): they are tokens, not documents. */
export const MAX_END_USER_HEADER_LENGTH = 4096;

/** Who asks: their tenant, the role that decides what they see, and how they appear in the conversation. */
export interface Asker {
  tenant_id: string;
  user_id: string;
  role: Role;
  party: Party;
  /**
   * A public channel's asker (a widget visitor, a WhatsApp sender): the channel their
   * conversations are in, and the one workspace the assistant answers them from (chosen by the
   * tenant's admins for the channel). Absent for members and the operator (channel `console`).
   */
  public_channel?: {
    channel: Exclude<Channel, 'console' | 'api'>;
    workspace_id: string;
    /** A verified widget visitor's user id on the host site: kept sealed on the conversations they start. */
    verified_user_id?: string;
    /** The visitor's party id before ids became digests: the conversations they started under it are theirs too. */
    legacy_party_id?: string;
  };
}

/**
 * A member asking with their token. With an impersonation token the member is the author too
 * (the admin acts on their behalf; the event metadata names the admin as actor).
 */
export const askerOf = (principal: Principal): Asker => ({ tenant_id: principal.tenant_id, user_id: principal.user_id, role: principal.role, party: { kind: 'user', id: principal.user_id } });

/**
 * A visitor of a public channel. The owner role only opens the channel's one workspace to
 * retrieval (every turn is fixed to it); the visitor continues only the conversations they
 * started in that channel (canContinueConversation).
 */
export const publicChannelAsker = (
  tenantId: string,
  party: Party,
  channel: Exclude<Channel, 'console' | 'api'>,
  workspaceId: string,
  visitor: Pick<NonNullable<Asker['public_channel']>, 'verified_user_id' | 'legacy_party_id'> = {},
): Asker => ({
  tenant_id: tenantId,
  user_id: party.id,
  role: 'owner',
  party,
  public_channel: { channel, workspace_id: workspaceId, ...visitor },
});

/** The platform's operator trying the assistant (the CLI): an owner's view of every workspace. */
export const operatorAsker = (tenantId: string, operatorId: string): Asker => ({ tenant_id: tenantId, user_id: operatorId, role: 'owner', party: { kind: 'system', id: operatorId } });

/**
 * Whether the asker may continue this conversation through the chat routes: a console
 * conversation they may see (application/conversation: an Admin or Owner every one of the
 * tenant, a member their own and those of the workspaces they may read). Conversations of
 * other channels are the widget's and messaging's, answered by people as agent replies.
 */
export async function canContinueConversation(deps: ChatDependencies, conversation: Pick<LiveConversation, 'tenant_id' | 'channel' | 'workspace_id' | 'started_by'>, asker: Asker): Promise<boolean> {
  if (asker.public_channel) {
    const { channel, legacy_party_id: legacyPartyId } = asker.public_channel;
    const startedByAsker = conversation.started_by.id === asker.party.id || (legacyPartyId !== undefined && conversation.started_by.id === legacyPartyId);
    return conversation.tenant_id === asker.tenant_id && conversation.channel === channel && conversation.started_by.kind === asker.party.kind && startedByAsker;
  }
  if (conversation.channel !== 'console') return false;
  return canSeeConversation(await conversationVisibility(deps, asker), asker, conversation);
}

export interface ChatRequest {
  message: string;
  conversation_id?: string | null;
  workspace_id?: string | null;
  /** X-End-User-Token and X-End-User-Session, as sent; sealed before they are recorded. */
  end_user?: { token?: string | null; session?: string | null };
}

export interface ChatAnswer {
  message_id: string;
  text: string;
  citations: Citation[];
  answered_from_knowledge: boolean;
  model: string;
}

/** What POST /chat answers. */
export interface ChatResult {
  conversation_id: string;
  user_message_id: string;
  /** Null when the assistant is paused (handed off). */
  answer: ChatAnswer | null;
  paused: boolean;
  /** The business tools the assistant called in this turn, each at its last status, in the order called. */
  tool_steps: ToolStepView[];
}

/** A turn whose message is recorded; its answer is still to come (`answerTurn`). */
export interface OpenTurn {
  conversation_id: string;
  user_message_id: string;
  /** The user's message as recorded: its text (masked for the answer to a challenge) and when (its `created_at` in the message list). */
  user_message: { text: string; created_at: string };
  /** A person has taken the conversation over: the assistant answers nothing. */
  paused: boolean;
  /** The answer an earlier attempt of this turn recorded (a retry with the same Idempotency-Key), and its tool steps. */
  recorded: ChatAnswer | null;
  recorded_steps: ToolStepView[];
  question: string;
  workspace_id: string | null;
  history: AssistantTurn[];
  answer_message_id: string;
  asker: Asker;
  context: RequestContext;
  /**
   * X-End-User-Token / X-End-User-Session of the turn, in clear, forwarded to the tools it
   * calls. Only in memory, for this turn: recorded sealed, never logged.
   */
  end_user: { token: string | null; session: string | null };
  /**
   * The message answers an open challenge: the step that asked, the turn it belongs to, and
   * the answer in clear (only in memory; sealed on the tool call). `question` and `history`
   * are then the challenged turn's.
   */
  resuming: { view: ToolStepView; reply_to: string; answer: string; steps: ToolStepView[] } | null;
}

/** What the answer of a turn streams: its text in pieces, its citations, then how it ended. */
export type TurnStep =
  | { kind: 'delta'; text: string }
  | { kind: 'citation'; citation: Citation }
  /** A tool step: `requested` when the model asks for it, then its outcome. */
  | { kind: 'tool'; step: ToolStepView }
  | { kind: 'answered'; answer: ChatAnswer }
  | { kind: 'failed'; code: string; message: string };

export interface TurnOptions {
  /** The seed of an Idempotency-Key: the ids of what the turn creates derive from it. */
  idempotencyKey?: string;
}

function checkedEndUserValue(header: string, value: string | null | undefined): string | null {
  if (value === undefined || value === null || value === '') return null;
  if (value.length > MAX_END_USER_HEADER_LENGTH || /[\u0000-\u001f\u007f]/.test(value)) {
    throw new DomainError('invalid', 'invalid_request', `${header}: expected at most ${MAX_END_USER_HEADER_LENGTH} printable characters`, header);
  }
  return value;
}

/** A title from the first message: its first line, spaces collapsed, cut at TITLE_LENGTH characters. */
export function titleFrom(message: string): string {
  const line = message.split(/\r?\n/).find((candidate) => candidate.trim().length > 0) ?? message;
  const characters = [...line.replace(/\s+/g, ' ').trim()];
  return characters.length > Math.min(TITLE_LENGTH, MAX_TITLE_LENGTH) ? `${characters.slice(0, TITLE_LENGTH - 1).join('').trimEnd()}…` : characters.join('');
}

/** The conversation's messages as the engine's history, and the answer a message got (for a retried turn). */
function historyOf(events: readonly ConversationEvent[], excluding: string): { turns: AssistantTurn[]; answers: Map<string, ChatAnswer> } {
  const turns: AssistantTurn[] = [];
  const answers = new Map<string, ChatAnswer>();
  for (const event of events) {
    // An answer to a challenge (an OTP) is no question, and never shown to the model.
    if (event.type === 'UserMessagePosted' && event.data.message_id !== excluding && event.data.answers_tool_call === undefined) turns.push({ role: 'user', text: event.data.text });
    // A person's reply is what the user was told from this side: the model sees it as the assistant's.
    if (event.type === 'AgentReplied') turns.push({ role: 'assistant', text: event.data.text });
    if (event.type === 'AssistantAnswered') {
      const { message_id, text, citations, answered_from_knowledge, model, reply_to } = event.data;
      answers.set(reply_to, { message_id, text, citations, answered_from_knowledge, model });
      if (reply_to !== excluding) turns.push({ role: 'assistant', text });
    }
    // The report after approved tool calls is what the user was told too.
    if (event.type === 'AssistantFollowedUp' && event.data.error === null && event.data.reply_to !== excluding) turns.push({ role: 'assistant', text: event.data.text });
  }
  return { turns: turns.slice(-HISTORY_MESSAGES), answers };
}

/** The engine's history for the turn that answers `messageId`: the conversation before that message. */
export function historyBefore(events: readonly ConversationEvent[], messageId: string): AssistantTurn[] {
  const at = events.findIndex((event) => event.type === 'UserMessagePosted' && event.data.message_id === messageId);
  return historyOf(at < 0 ? events : events.slice(0, at), messageId).turns;
}

/**
 * Steps 1 to 4: checks, quota, the conversation, the user's message. Every refusal (400, 404,
 * 429) comes from here, before anything is recorded, so a streaming route can still answer it
 * as a plain JSON error.
 */
export async function openTurn(deps: ChatDependencies, asker: Asker, request: ChatRequest, context: RequestContext, options: TurnOptions = {}): Promise<OpenTurn> {
  const checked = checkText('message', request.message, { max: MAX_MESSAGE_LENGTH, multiline: true, code: 'invalid_message' });
  if (checked._tag === 'Left') throw checked.left;
  const question = checked.right;
  const endUserToken = checkedEndUserValue('X-End-User-Token', request.end_user?.token);
  const endUserSession = checkedEndUserValue('X-End-User-Session', request.end_user?.session);
  await requireQuota(deps, asker.tenant_id, 'messages_per_month');

  const seed = options.idempotencyKey;
  const idFor = (part: string): string => (seed ? deps.ids.fromKey(`${seed}:${part}`) : deps.ids.newId());
  const acting: RequestContext = { ...context, tenant_id: asker.tenant_id };
  let conversationId: string;
  let workspaceId: string | null;
  let paused = false;
  let events: ConversationEvent[] = [];

  if (request.conversation_id) {
    conversationId = request.conversation_id;
    const recorded = (await deps.eventStore.readStream(conversationStream(conversationId))) as unknown as ConversationEvent[];
    const state = recorded.reduce(conversationDecider.evolve, conversationDecider.initialState());
    if (state.status === 'absent' || state.status === 'deleted' || !(await canContinueConversation(deps, state, asker))) throw notFound('conversation_not_found', 'no such conversation');
    if (request.workspace_id && request.workspace_id !== state.workspace_id) {
      throw new DomainError('conflict', 'workspace_mismatch', 'a conversation keeps the workspace it started in; leave workspace_id out, or start a new conversation');
    }
    workspaceId = state.workspace_id;
    paused = !assistantAnswersIn(state.status);
    events = recorded;
  } else {
    if (asker.public_channel && request.workspace_id) throw new DomainError('invalid', 'invalid_request', 'workspace_id: the channel answers from the workspace its admins chose', 'workspace_id');
    workspaceId = asker.public_channel?.workspace_id ?? request.workspace_id ?? null;
    if (workspaceId) await requireReadableWorkspace(deps, asker, workspaceId);
    conversationId = idFor('conversation');
    const started = await handleCommand(
      deps,
      conversationAggregate,
      conversationStream(conversationId),
      {
        type: 'StartConversation',
        data: {
          conversation_id: conversationId,
          tenant_id: asker.tenant_id,
          workspace_id: workspaceId,
          channel: asker.public_channel?.channel ?? 'console',
          title: titleFrom(question),
          started_by: asker.party,
          ...(asker.public_channel?.verified_user_id === undefined ? {} : { verified_user_id: asker.public_channel.verified_user_id }),
        },
      },
      acting,
      // A retry with the same seed finds the conversation it started and records nothing.
      seed ? { idempotencyKey: `${seed}:start` } : {},
    );
    if (seed && started.events.length === 0) events = (await deps.eventStore.readStream(conversationStream(conversationId))) as unknown as ConversationEvent[];
  }

  // A retry whose earlier attempt failed is a new attempt: the user asks again, as a new message
  // (one outcome per message), its ids derived from the seed and the attempt.
  const failed = new Set(events.flatMap((event) => (event.type === 'AssistantFailed' ? [event.data.reply_to] : [])));
  let attempt = 0;
  const attemptId = (part: string): string => idFor(attempt === 0 ? part : `${part}:${attempt}`);
  while (seed && failed.has(attemptId('user-message'))) attempt += 1;
  const userMessageId = attemptId('user-message');
  const challenge = paused ? null : await openChallengeOf(deps, events);
  const posted = await handleCommand(
    deps,
    conversationAggregate,
    conversationStream(conversationId),
    {
      type: 'PostUserMessage',
      data: {
        message_id: userMessageId,
        text: challenge === null ? question : CHALLENGE_ANSWER_TEXT,
        ...(challenge === null ? {} : { answers_tool_call: challenge.view.tool_call_id! }),
        author: asker.party,
        end_user_token_sealed: endUserToken === null ? null : deps.secrets.seal(endUserToken),
        end_user_session_sealed: endUserSession === null ? null : deps.secrets.seal(endUserSession),
      },
    },
    acting,
  );
  const { turns, answers } = historyOf(events, userMessageId);
  // A retry that found its message recorded appended nothing: the first attempt's record tells.
  const postedEvent = [...posted.events, ...events].find((event) => event.type === 'UserMessagePosted' && event.data.message_id === userMessageId);
  const userMessage = postedEvent?.type === 'UserMessagePosted' ? { text: postedEvent.data.text, created_at: postedEvent.data.posted_at } : { text: challenge === null ? question : CHALLENGE_ANSWER_TEXT, created_at: deps.clock.now().toISOString() };
  const challenged = challenge === null ? null : events.find((event) => event.type === 'UserMessagePosted' && event.data.message_id === challenge.reply_to);
  return {
    conversation_id: conversationId,
    user_message_id: userMessageId,
    user_message: userMessage,
    paused,
    recorded: answers.get(userMessageId) ?? null,
    recorded_steps: recordedStepsOf(events).get(userMessageId) ?? [],
    question: challenged?.type === 'UserMessagePosted' ? challenged.data.text : question,
    workspace_id: workspaceId,
    history: challenge === null ? turns : historyBefore(events, challenge.reply_to),
    resuming: challenge === null ? null : { ...challenge, answer: question },
    answer_message_id: attemptId('answer'),
    asker,
    context: acting,
    end_user: { token: endUserToken, session: endUserSession },
  };
}

/**
 * The challenge a new message in the conversation answers: the first step recorded at
 * `challenge` whose call still waits for an answer (one answered meanwhile, or whose turn moved
 * on, is not open). Null when none is open.
 */
async function openChallengeOf(deps: Pick<ChatDependencies, 'eventStore'>, events: readonly ConversationEvent[]): Promise<{ view: ToolStepView; reply_to: string; steps: ToolStepView[] } | null> {
  for (const [replyTo, steps] of recordedStepsOf(events)) {
    for (const view of steps) {
      if (view.status !== 'challenge' || view.tool_call_id === null) continue;
      const recorded = (await deps.eventStore.readStream(toolCallStream(view.tool_call_id))) as unknown as ToolCallEvent[];
      if (recorded.reduce(toolCallDecider.evolve, toolCallDecider.initialState()).status === 'challenged') return { view, reply_to: replyTo, steps };
    }
  }
  return null;
}

/** The steps of a turn as the model is given them again: each call's arguments and its outcome as its events tell it now. */
async function stepsOfTurn(deps: Pick<ChatDependencies, 'eventStore'>, views: readonly ToolStepView[]): Promise<ToolStep[]> {
  return Promise.all(
    views.map(async (view) => {
      if (view.tool_call_id === null) return stepFor(view, null, unmadeCall(view.error?.code ?? 'failed', view.error?.message ?? 'the call was not made'));
      const events = (await deps.eventStore.readStream(toolCallStream(view.tool_call_id))) as unknown as ToolCallEvent[];
      const args = events[0]?.type === 'ToolCallRequested' ? events[0].data.arguments : null;
      let outcome: StepOutcome;
      try {
        outcome = outcomeOf(events);
      } catch (error) {
        if (!(error instanceof DomainError)) throw error;
        outcome = { status: 'running', tool_call_id: view.tool_call_id };
      }
      return stepFor(view, args, outcome);
    }),
  );
}

/** The tenant's assistant as its settings say: name, instructions, language. */
export async function assistantOf(deps: ReadModelDependencies, tenantId: string): Promise<{ name: string; instructions: string; language: string }> {
  const tenant = await deps.readStore.collection<TenantDocument>(TENANTS).get(tenantId);
  const settings = (tenant?.settings ?? {}) as { assistant_name?: string; assistant_instructions?: string; default_language?: string };
  return { name: settings.assistant_name || 'Assistant', instructions: settings.assistant_instructions ?? '', language: settings.default_language || 'en' };
}

export const citationOf = (passage: Passage): Citation => ({ passage_id: passage.id, document_id: passage.document_id, chunk_id: passage.chunk_id, title: passage.title });

/**
 * Steps 5 and 6: the answer, streamed as it comes (with the tool steps it takes), then
 * recorded. Ends with `answered` or `failed` (nothing more for a paused conversation). An
 * engine failure is recorded and ends as `failed`; when `signal` aborts (the client left) the
 * failure is recorded as `client_gone`.
 */
export async function* answerTurn(deps: ChatDependencies, turn: OpenTurn, signal?: AbortSignal): AsyncGenerator<TurnStep> {
  if (turn.paused) return;
  if (turn.recorded) {
    for (const step of turn.recorded_steps) yield { kind: 'tool', step };
    yield { kind: 'delta', text: turn.recorded.text };
    for (const citation of turn.recorded.citations) yield { kind: 'citation', citation };
    yield { kind: 'answered', answer: turn.recorded };
    return;
  }
  const started = performance.now();
  let text = '';
  try {
    const steps: ToolStep[] = [];
    if (turn.resuming) {
      const resumed = yield* resumeStep(deps, turn, turn.resuming);
      if (resumed.status === 'challenge' || resumed.status === 'running') {
        text = resumed.status === 'challenge' ? challengeNote([resumed.prompt!]) : runningNote([resumed.tool_name]);
        yield { kind: 'delta', text };
        yield* recordAnswer(deps, turn, { text, citations: [], answered_from_knowledge: false, model: deps.assistant.model }, started, null);
        return;
      }
      // The model is given the challenged turn again, every step with what it gave.
      const views = turn.resuming.steps.map((view) => (view.step_id === resumed.step_id ? resumed : view));
      steps.push(...(await stepsOfTurn(deps, views)));
    }
    const [assistant, passages, businessTools, mayHandOff] = await Promise.all([
      assistantOf(deps, turn.asker.tenant_id),
      retrievePassages(deps, turn.asker, turn.question, { workspaceId: turn.workspace_id }),
      chatToolsOf(deps, turn.asker.tenant_id, turn.workspace_id),
      handoffOffered(deps, turn.asker.tenant_id, turn.asker.public_channel !== undefined),
    ]);
    const offered = new Map(businessTools.map((tool) => [tool.spec.name, tool]));
    // The handoff is offered beside the business tools, unless one of them has its name.
    const handingOff = mayHandOff && !offered.has(HANDOFF_TOOL_NAME);
    const tools = [...businessTools.map((tool) => tool.spec), ...(handingOff ? [HANDOFF_TOOL] : [])];
    let usage: Usage = null;
    for (let round = 0; ; round += 1) {
      // After MAX_TOOL_ROUNDS rounds of calls the model answers with what it has.
      const specs = round < MAX_TOOL_ROUNDS ? tools : [];
      let roundStarted = false;
      let ending: Exclude<AssistantChunk, { kind: 'delta' }> | null = null;
      for await (const chunk of deps.assistant.answer({ assistant, history: turn.history, question: turn.question, passages, tools: specs, steps: [...steps], signal })) {
        if (signal?.aborted) break;
        if (chunk.kind !== 'delta') {
          ending = chunk;
          break;
        }
        // What the model says after a round of calls starts a paragraph of its own.
        const piece = !roundStarted && text !== '' && chunk.text !== '' ? `\n\n${chunk.text}` : chunk.text;
        roundStarted ||= chunk.text !== '';
        text += piece;
        yield { kind: 'delta', text: piece };
      }
      if (signal?.aborted) break;
      // The engine stopped without `done` or calls: only an abort ends it so.
      if (ending === null) throw new AssistantEngineError('model_error', 'the engine ended without finishing its answer');
      usage = addedUsage(usage, ending.usage);
      if (ending.kind === 'tool_calls') {
        if (specs.length === 0) throw new AssistantEngineError('model_error', 'the model asked for a tool, but none was offered');
        const awaiting: string[] = [];
        const prompts: string[] = [];
        const running: string[] = [];
        let handOff: { reason: string | undefined } | null = null;
        for (const ask of ending.calls) {
          if (handingOff && ask.name === HANDOFF_TOOL_NAME) {
            handOff ??= { reason: handoffReasonOf(ask.arguments) };
            continue;
          }
          const ran = yield* runToolStep(deps, turn, offered, round, ask);
          steps.push(ran.step);
          if (ran.view.status === 'awaiting_approval') awaiting.push(ran.view.tool_name);
          if (ran.view.status === 'challenge') prompts.push(ran.view.prompt ?? '');
          if (ran.view.status === 'running') running.push(ran.view.tool_name);
        }
        if (awaiting.length === 0 && prompts.length === 0 && running.length === 0 && handOff === null) continue;
        // The turn ends here: the user's next message answers a challenge; the follow-up saga
        // reports the outcome of a call once an owner or admin decided, or once it ran; a
        // person takes over a conversation handed off.
        const notes = [
          ...(prompts.length > 0 ? [challengeNote(prompts)] : []),
          ...(awaiting.length > 0 ? [awaitingApprovalNote(awaiting)] : []),
          ...(running.length > 0 ? [runningNote(running)] : []),
          ...(handOff !== null ? [HANDOFF_NOTE] : []),
        ];
        const note = `${text === '' ? '' : '\n\n'}${notes.join('\n\n')}`;
        text += note;
        // The handoff before the answer that announces it: a process that stops in between
        // leaves the conversation with a person (a retry finds it paused), never an answer
        // promising one that never came.
        if (handOff !== null) await handOffConversation(deps, turn, handOff.reason);
        yield { kind: 'delta', text: note };
        yield* recordAnswer(deps, turn, { text, citations: [], answered_from_knowledge: false, model: ending.model }, started, usage);
        return;
      }
      const byId = new Map(passages.map((passage) => [passage.id, passage]));
      const citations = ending.cited.flatMap((id) => (byId.has(id) ? [citationOf(byId.get(id)!)] : []));
      for (const citation of citations) yield { kind: 'citation', citation };
      yield* recordAnswer(deps, turn, { text, citations, answered_from_knowledge: ending.answered_from_knowledge && citations.length > 0, model: ending.model }, started, usage);
      return;
    }
  } catch (error) {
    if (!signal?.aborted && !(error instanceof AssistantEngineError)) {
      await recordFailure(deps, turn, 'internal_error', 'the assistant failed unexpectedly');
      throw error;
    }
    if (!signal?.aborted) {
      const failure = error as AssistantEngineError;
      deps.logger.warn({ conversation_id: turn.conversation_id, code: failure.code, err: failure.message }, 'the assistant could not answer');
      await recordFailure(deps, turn, failure.code, failure.message);
      yield { kind: 'failed', code: failure.code, message: failure.message };
      return;
    }
  }
  await recordFailure(deps, turn, 'client_gone', `the client left after ${[...text].length} characters of the answer`);
}

/**
 * The conversation becomes handed_off, as the model asked (handoff-tool.ts), with the turn's
 * user as the actor. One a person took over meanwhile, or resolved, is left as it is.
 */
async function handOffConversation(deps: ChatDependencies, turn: OpenTurn, reason: string | undefined): Promise<void> {
  try {
    await handleCommand(deps, conversationAggregate, conversationStream(turn.conversation_id), { type: 'ChangeConversationStatus', data: { status: 'handed_off', ...(reason === undefined ? {} : { reason }) } }, turn.context);
  } catch (error) {
    if (!(error instanceof DomainError)) throw error;
    deps.logger.warn({ conversation_id: turn.conversation_id, code: error.code }, 'the assistant could not hand the conversation off');
  }
}

type Usage = { prompt_tokens: number; completion_tokens: number } | null;

/** The tokens of every round of a turn, added up; null when no round reported any. */
function addedUsage(total: Usage, round: Usage): Usage {
  if (round === null) return total;
  return { prompt_tokens: (total?.prompt_tokens ?? 0) + round.prompt_tokens, completion_tokens: (total?.completion_tokens ?? 0) + round.completion_tokens };
}

async function* recordAnswer(
  deps: ChatDependencies,
  turn: OpenTurn,
  content: Pick<ChatAnswer, 'text' | 'citations' | 'answered_from_knowledge' | 'model'>,
  started: number,
  usage: Usage,
): AsyncGenerator<TurnStep> {
  const answer: ChatAnswer = { message_id: turn.answer_message_id, ...content };
  const result = await handleCommand(
    deps,
    conversationAggregate,
    conversationStream(turn.conversation_id),
    { type: 'RecordAnswer', data: { ...answer, reply_to: turn.user_message_id, latency_ms: Math.round(performance.now() - started), usage } },
    turn.context,
  );
  await deps.readYourWrites(result.position);
  yield { kind: 'answered', answer };
}

/**
 * One call the model asked for: streamed as requested, made (unless the tool or arguments
 * rule it out), recorded on the conversation, streamed with its outcome; gives back the step
 * for the model. A refusal of the tool-call use case (a DomainError: arguments not valid for
 * the schema, a tool deleted meanwhile, ...) is a failed step the model can explain or correct.
 */
async function* runToolStep(deps: ChatDependencies, turn: OpenTurn, offered: ReadonlyMap<string, ChatTool>, round: number, ask: ToolCallAsk): AsyncGenerator<TurnStep, { step: ToolStep; view: ToolStepView }> {
  const tool = offered.get(ask.name) ?? null;
  const stepId = stepIdOf(round, ask.id);
  const named = { step_id: stepId, call_id: ask.id, tool_name: ask.name, tool_id: tool?.tool_id ?? null };
  yield { kind: 'tool', step: { ...named, tool_call_id: null, status: 'requested', error: null } };
  const args = argumentsOf(ask.arguments);
  let outcome: StepOutcome;
  if (tool === null) {
    outcome = unmadeCall('unknown_tool', `no tool named ${JSON.stringify(ask.name).slice(0, 100)} is offered; the tools are: ${[...offered.keys()].join(', ') || 'none'}`);
  } else if (args === null) {
    outcome = unmadeCall('invalid_arguments_json', 'the arguments are not a JSON object');
  } else {
    const endUser = turn.end_user.token !== null || turn.end_user.session !== null ? { end_user: turn.end_user } : {};
    try {
      outcome = await deps.callTool(
        turn.asker.tenant_id,
        {
          tool_id: tool.tool_id,
          arguments: args,
          caller: turn.asker.party,
          origin: { kind: 'chat', conversation_id: turn.conversation_id, reply_to: turn.user_message_id, call_id: ask.id },
          ...endUser,
        },
        turn.context,
        // A retried turn (same answer id) finds the call it made instead of making another.
        { idempotencyKey: `${turn.answer_message_id}:tool:${stepId}` },
      );
    } catch (error) {
      if (!(error instanceof DomainError)) throw error;
      outcome = unmadeCall(error.code, error.message);
    }
  }
  const view = viewAt(named, outcome);
  await handleCommand(deps, conversationAggregate, conversationStream(turn.conversation_id), { type: 'RecordToolStep', data: { reply_to: turn.user_message_id, ...view } }, turn.context);
  yield { kind: 'tool', step: view };
  return { step: { call: ask, result: resultForModel(outcome) }, view };
}

/**
 * The user's message sent as the answer to the open challenge (`tool.resume`): the step of the
 * challenged turn recorded at its new outcome and streamed. A refusal of the use case (the
 * call was answered meanwhile) is a failed step, never a crash.
 */
async function* resumeStep(deps: ChatDependencies, turn: OpenTurn, resuming: NonNullable<OpenTurn['resuming']>): AsyncGenerator<TurnStep, ToolStepView> {
  const { view: asked, reply_to } = resuming;
  const toolCallId = asked.tool_call_id!;
  let outcome: StepOutcome;
  try {
    outcome = await deps.resumeToolCall(turn.asker.tenant_id, toolCallId, resuming.answer, turn.asker.party, turn.context);
  } catch (error) {
    if (!(error instanceof DomainError)) throw error;
    outcome = { status: 'failed', tool_call_id: toolCallId, code: error.code, message: error.message, http_status: null, latency_ms: 0, result: null };
  }
  const { step_id, call_id, tool_name, tool_id } = asked;
  const view = viewAt({ step_id, call_id, tool_name, tool_id }, outcome);
  await handleCommand(deps, conversationAggregate, conversationStream(turn.conversation_id), { type: 'RecordToolStep', data: { reply_to, ...view } }, turn.context);
  yield { kind: 'tool', step: view };
  return view;
}

async function recordFailure(deps: ChatDependencies, turn: OpenTurn, code: string, message: string): Promise<void> {
  const result = await handleCommand(deps, conversationAggregate, conversationStream(turn.conversation_id), { type: 'RecordAnswerFailure', data: { reply_to: turn.user_message_id, code, message } }, turn.context);
  await deps.readYourWrites(result.position);
}

/** The assistant could not answer (the model server refused, failed or timed out); the failure is recorded on the conversation. */
export class AssistantUnavailableError extends Error {
  constructor(
    readonly code: string,
    readonly detail: string,
  ) {
    super(`the assistant could not answer (${code}); try again`);
    this.name = 'AssistantUnavailableError';
  }
}

/** A whole turn (POST /chat): throws AssistantUnavailableError when the engine fails, after recording it. */
export async function chat(deps: ChatDependencies, asker: Asker, request: ChatRequest, context: RequestContext, options: TurnOptions = {}): Promise<ChatResult> {
  const turn = await openTurn(deps, asker, request, context, options);
  let answer: ChatAnswer | null = null;
  const steps = new Map<string, ToolStepView>();
  for await (const step of answerTurn(deps, turn)) {
    if (step.kind === 'answered') answer = step.answer;
    if (step.kind === 'tool' && step.step.status !== 'requested') steps.set(step.step.step_id, step.step);
    if (step.kind === 'failed') throw new AssistantUnavailableError(step.code, step.message);
  }
  return { conversation_id: turn.conversation_id, user_message_id: turn.user_message_id, answer, paused: turn.paused, tool_steps: [...steps.values()] };
}

/**
 * The operator trying a tenant's assistant (the CLI's `chat ask`): a turn as the system actor
 * with an owner's view of every workspace; 404 `tenant_not_found` for an unknown tenant, 403
 * for a suspended or deleted one. It counts against the tenant's message quota like any turn.
 */
export async function askAsOperator(deps: ChatDependencies, tenantId: string, request: ChatRequest, context: RequestContext): Promise<ChatResult> {
  const tenant = await deps.readStore.collection<TenantDocument>(TENANTS).get(tenantId);
  if (!tenant) throw notFound('tenant_not_found', `no tenant ${tenantId}`);
  if (!isActiveTenant(tenant)) throw inactiveTenantError(tenant);
  return chat(deps, operatorAsker(tenantId, context.actor.id), request, { ...context, tenant_id: tenantId });
}
