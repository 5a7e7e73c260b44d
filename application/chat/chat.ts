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
//     member their own and those of the workspaces they may read;
//  3. the message is posted (`UserMessagePosted`), with X-End-User-Token / X-End-User-Session
//     sealed (they are for the tool calls of later issues, never logged or shown);
//  4. a handed-off conversation stops there: a person has taken over, the assistant is paused;
//  5. otherwise the passages are retrieved (only from workspaces the asker may read), the
//     engine answers from them and the last HISTORY_MESSAGES messages, and the answer is
//     recorded (`AssistantAnswered`: text, citations, model, latency, usage) or, when the
//     engine fails or the client leaves, the failure (`AssistantFailed`, code `client_gone`
//     for a client that left: a half-streamed answer was never read whole, so it is not kept).
//
// With an Idempotency-Key the ids of the conversation and both messages derive from its seed,
// so a retry after a crash finds what the first attempt recorded and answers that.

import type { Role } from '../../domain/membership/membership';
import {
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
import { checkText } from '../../domain/shared/text';
import { TENANTS, type TenantDocument } from '../../projections/tenants';
import { type CommandDependencies, handleCommand } from '../command-handling/handle-command';
import { canSeeConversation, conversationAggregate, conversationVisibility } from '../conversation/conversations';
import { type EntitlementDependencies, requireQuota } from '../entitlement/entitlements';
import { type RetrievalDependencies, retrievePassages } from '../knowledge/retrieval';
import { AssistantEngineError, type AssistantEngine, type AssistantTurn, type Passage } from '../ports/assistant-engine';
import type { Secrets } from '../ports/identity';
import type { Logger } from '../ports/logger';
import type { Principal } from '../session/sessions';
import type { ReadYourWritesDependencies } from '../shared/read-models';
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
}

/**
 * A member asking with their token. With an impersonation token the member is the author too
 * (the admin acts on their behalf; the event metadata names the admin as actor).
 */
export const askerOf = (principal: Principal): Asker => ({ tenant_id: principal.tenant_id, user_id: principal.user_id, role: principal.role, party: { kind: 'user', id: principal.user_id } });

/** The platform's operator trying the assistant (the CLI): an owner's view of every workspace. */
export const operatorAsker = (tenantId: string, operatorId: string): Asker => ({ tenant_id: tenantId, user_id: operatorId, role: 'owner', party: { kind: 'system', id: operatorId } });

/**
 * Whether the asker may continue this conversation through the chat routes: a console
 * conversation they may see (application/conversation: an Admin or Owner every one of the
 * tenant, a member their own and those of the workspaces they may read). Conversations of
 * other channels are the widget's and messaging's, answered by people as agent replies.
 */
export async function canContinueConversation(deps: ChatDependencies, conversation: Pick<LiveConversation, 'tenant_id' | 'channel' | 'workspace_id' | 'started_by'>, asker: Asker): Promise<boolean> {
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
}

/** A turn whose message is recorded; its answer is still to come (`answerTurn`). */
export interface OpenTurn {
  conversation_id: string;
  user_message_id: string;
  /** A person has taken the conversation over: the assistant answers nothing. */
  paused: boolean;
  /** The answer an earlier attempt of this turn recorded (a retry with the same Idempotency-Key). */
  recorded: ChatAnswer | null;
  question: string;
  workspace_id: string | null;
  history: AssistantTurn[];
  answer_message_id: string;
  asker: Asker;
  context: RequestContext;
}

/** What the answer of a turn streams: its text in pieces, its citations, then how it ended. */
export type TurnStep =
  | { kind: 'delta'; text: string }
  | { kind: 'citation'; citation: Citation }
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
    if (event.type === 'UserMessagePosted' && event.data.message_id !== excluding) turns.push({ role: 'user', text: event.data.text });
    // A person's reply is what the user was told from this side: the model sees it as the assistant's.
    if (event.type === 'AgentReplied') turns.push({ role: 'assistant', text: event.data.text });
    if (event.type === 'AssistantAnswered') {
      const { message_id, text, citations, answered_from_knowledge, model, reply_to } = event.data;
      answers.set(reply_to, { message_id, text, citations, answered_from_knowledge, model });
      if (reply_to !== excluding) turns.push({ role: 'assistant', text });
    }
  }
  return { turns: turns.slice(-HISTORY_MESSAGES), answers };
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
    workspaceId = request.workspace_id ?? null;
    if (workspaceId) await requireReadableWorkspace(deps, asker, workspaceId);
    conversationId = idFor('conversation');
    const started = await handleCommand(
      deps,
      conversationAggregate,
      conversationStream(conversationId),
      { type: 'StartConversation', data: { conversation_id: conversationId, tenant_id: asker.tenant_id, workspace_id: workspaceId, channel: 'console', title: titleFrom(question), started_by: asker.party } },
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
  await handleCommand(
    deps,
    conversationAggregate,
    conversationStream(conversationId),
    {
      type: 'PostUserMessage',
      data: {
        message_id: userMessageId,
        text: question,
        author: asker.party,
        end_user_token_sealed: endUserToken === null ? null : deps.secrets.seal(endUserToken),
        end_user_session_sealed: endUserSession === null ? null : deps.secrets.seal(endUserSession),
      },
    },
    acting,
  );
  const { turns, answers } = historyOf(events, userMessageId);
  return {
    conversation_id: conversationId,
    user_message_id: userMessageId,
    paused,
    recorded: answers.get(userMessageId) ?? null,
    question,
    workspace_id: workspaceId,
    history: turns,
    answer_message_id: attemptId('answer'),
    asker,
    context: acting,
  };
}

async function assistantOf(deps: ChatDependencies, tenantId: string): Promise<{ name: string; instructions: string; language: string }> {
  const tenant = await deps.readStore.collection<TenantDocument>(TENANTS).get(tenantId);
  const settings = (tenant?.settings ?? {}) as { assistant_name?: string; assistant_instructions?: string; default_language?: string };
  return { name: settings.assistant_name || 'Assistant', instructions: settings.assistant_instructions ?? '', language: settings.default_language || 'en' };
}

const citationOf = (passage: Passage): Citation => ({ passage_id: passage.id, document_id: passage.document_id, chunk_id: passage.chunk_id, title: passage.title });

/**
 * Step 5: the answer, streamed as it comes, then recorded. Ends with `answered` or `failed`
 * (nothing more for a paused conversation). An engine failure is recorded and ends as
 * `failed`; when `signal` aborts (the client left) the failure is recorded as `client_gone`.
 */
export async function* answerTurn(deps: ChatDependencies, turn: OpenTurn, signal?: AbortSignal): AsyncGenerator<TurnStep> {
  if (turn.paused) return;
  if (turn.recorded) {
    yield { kind: 'delta', text: turn.recorded.text };
    for (const citation of turn.recorded.citations) yield { kind: 'citation', citation };
    yield { kind: 'answered', answer: turn.recorded };
    return;
  }
  const stream = conversationStream(turn.conversation_id);
  const started = performance.now();
  let text = '';
  try {
    const [assistant, passages] = await Promise.all([
      assistantOf(deps, turn.asker.tenant_id),
      retrievePassages(deps, turn.asker, turn.question, { workspaceId: turn.workspace_id }),
    ]);
    for await (const chunk of deps.assistant.answer({ assistant, history: turn.history, question: turn.question, passages, signal })) {
      if (signal?.aborted) break;
      if (chunk.kind === 'delta') {
        text += chunk.text;
        yield chunk;
        continue;
      }
      // No tools are offered yet (the tool-calling turn comes with issue #12 point 5).
      if (chunk.kind === 'tool_calls') throw new AssistantEngineError('model_error', 'the model asked for a tool, but none was offered');
      const byId = new Map(passages.map((passage) => [passage.id, passage]));
      const citations = chunk.cited.flatMap((id) => (byId.has(id) ? [citationOf(byId.get(id)!)] : []));
      for (const citation of citations) yield { kind: 'citation', citation };
      const answer: ChatAnswer = { message_id: turn.answer_message_id, text, citations, answered_from_knowledge: chunk.answered_from_knowledge && citations.length > 0, model: chunk.model };
      const result = await handleCommand(
        deps,
        conversationAggregate,
        stream,
        {
          type: 'RecordAnswer',
          data: { ...answer, reply_to: turn.user_message_id, latency_ms: Math.round(performance.now() - started), usage: chunk.usage },
        },
        turn.context,
      );
      await deps.readYourWrites(result.position);
      yield { kind: 'answered', answer };
      return;
    }
    // The engine stopped without `done`: only an abort ends it so.
    if (!signal?.aborted) throw new AssistantEngineError('model_error', 'the engine ended without finishing its answer');
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
  for await (const step of answerTurn(deps, turn)) {
    if (step.kind === 'answered') answer = step.answer;
    if (step.kind === 'failed') throw new AssistantUnavailableError(step.code, step.message);
  }
  return { conversation_id: turn.conversation_id, user_message_id: turn.user_message_id, answer, paused: turn.paused };
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
