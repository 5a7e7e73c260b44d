// Saga `chat_tool_follow_up` (version 1): the rest of a chat turn that ended waiting for
// approvals (#12 point 5). A turn whose model called an `approval_required` tool ends with an
// answer saying the action awaits approval (application/chat/chat.ts). When an owner or admin
// approves the call and it runs (the approval saga of application/tool-call), or refuses it,
// this saga:
//  1. records the step's outcome on the conversation (`AssistantToolStepRecorded`, the step
//     moves on from awaiting_approval), for each call of the turn that waited and is settled;
//  2. once every call of the turn that waited is settled (the last one to settle triggers it),
//     gives the model the turn again: the conversation before the user's message, the message,
//     and every step of the turn with its result, without business tools (it reports; the user
//     asks again for more), and records its report as the turn's follow-up (`AssistantFollowedUp`),
//     a new assistant message of the conversation. When the model fails, the follow-up records
//     why (`error`), as a failed answer is recorded: nobody is waiting for a retry. Where the
//     turn could hand the conversation to a person (a public channel, the handoff on:
//     handoff-tool.ts), so can the report: the model is offered `hand_off_to_person` alone, and
//     calling it hands the conversation off before the report, which ends with the handoff note.
// Nothing is followed up in a conversation that is deleted, or handed off to a person (the
// assistant is paused there; the step's outcome is still recorded for the person to see).
//
// The same goes for a connector tool's call (#13) that outlived its turn's wait: its step is
// recorded at `running`, and its outcome is reported here once the connector saga records it.
//
// A connector call that is challenged after its turn ended (approved, then the connector asks
// for an OTP; or a slow call that ends in a challenge) is asked in the conversation here: the
// step is recorded at `challenge` with the prompt, and the turn's follow-up is the question
// (`challengeNote`, a follow-up message of its own), without the model. The user's next message
// is then the answer, as for a challenge within a turn (application/chat/chat.ts), and that turn
// gives the model the challenged turn again; so the turn gets no report of its own after that:
// its other calls are recorded on the conversation when they settle, and another call of it
// challenged late is asked in turn (the next message answers the first challenge still open).
//
// It reacts to ToolCallSucceeded, ToolCallFailed, ToolCallRefused and ToolCallChallenged, and reads the call's
// ToolCallRequested: only calls of a chat turn (origin `chat`) that waited for an approval, or
// connector calls, are its business; a turn none of whose steps waited (its connector calls
// answered within the turn) gets no follow-up. Idempotent on redelivery: the step's
// outcome and each follow-up message are recorded once (the conversation decider); a redelivery
// after a crash between the model's report and its record asks the model again. A call settled
// before its turn recorded the step (an approval within milliseconds) is retried by redelivery.
// Its events carry the system actor `chat_tool_follow_up`, caused by the outcome's event.

import { type ConversationEvent, type ConversationState, assistantAnswersIn, conversationDecider, conversationStream, isPublicChannel } from '../../domain/conversation/conversation';
import { DomainError } from '../../domain/shared/errors';
import { type ToolCallEvent, toolCallStream } from '../../domain/tool-call/tool-call';
import { type CommandDependencies, handleCommand } from '../command-handling/handle-command';
import { conversationAggregate } from '../conversation/conversations';
import { AssistantEngineError, type AssistantEngine, type ToolStep } from '../ports/assistant-engine';
import type { RecordedOf } from '../ports/domain-event-store';
import type { Logger } from '../ports/logger';
import type { Saga } from '../sagas/saga';
import type { ReadModelDependencies } from '../shared/read-models';
import { type RequestContext, systemContext } from '../shared/request-context';
import { assistantOf, historyBefore } from './chat';
import { HANDOFF_NOTE, HANDOFF_TOOL, HANDOFF_TOOL_NAME, handoffOffered, handoffReasonOf } from './handoff-tool';
import { type StepOutcome, type ToolStepView, challengeNote, errorOf, settledOutcomeOf, recordedStepsOf, stepFor, unmadeCall } from './tool-steps';

export const CHAT_TOOL_FOLLOW_UP = 'chat_tool_follow_up';

export type ChatFollowUpDependencies = CommandDependencies &
  ReadModelDependencies & {
    assistant: AssistantEngine;
    logger: Logger;
  };

type SettledType = 'ToolCallSucceeded' | 'ToolCallFailed' | 'ToolCallRefused';
type HandledType = SettledType | 'ToolCallChallenged';

/** The report's message id: one per turn, derived from the user message it follows up. */
export const followUpMessageId = (deps: Pick<CommandDependencies, 'ids'>, replyTo: string): string => deps.ids.fromKey(`${replyTo}:tool-follow-up`);
/** A late challenge's question: one per call. */
const lateChallengeMessageId = (deps: Pick<CommandDependencies, 'ids'>, toolCallId: string): string => deps.ids.fromKey(`${toolCallId}:late-challenge`);

/** The turn's chat call settled: thrown so that delivery tries again once the turn has recorded its step. */
class StepNotRecordedYet extends Error {
  constructor(toolCallId: string) {
    super(`the tool call ${toolCallId} settled before its chat turn recorded the step`);
    this.name = 'StepNotRecordedYet';
  }
}

interface TurnCall {
  view: ToolStepView;
  requested: Extract<ToolCallEvent, { type: 'ToolCallRequested' }>['data'] | null;
  outcome: StepOutcome | null;
}

async function callOf(deps: ChatFollowUpDependencies, view: ToolStepView): Promise<TurnCall> {
  if (view.tool_call_id === null) return { view, requested: null, outcome: unmadeCall(view.error?.code ?? 'failed', view.error?.message ?? 'the call was not made') };
  const events = (await deps.eventStore.readStream(toolCallStream(view.tool_call_id))) as unknown as ToolCallEvent[];
  const requested = events[0]?.type === 'ToolCallRequested' ? events[0].data : null;
  return { view, requested, outcome: settledOutcomeOf(events) };
}

/** Follows up the turn answering `replyTo` in the conversation, as the header says. */
export async function followUpTurn(deps: ChatFollowUpDependencies, tenantId: string, conversationId: string, replyTo: string, trigger: string, context: RequestContext): Promise<void> {
  const stream = conversationStream(conversationId);
  const events = (await deps.eventStore.readStream(stream)) as unknown as ConversationEvent[];
  const state: ConversationState = events.reduce(conversationDecider.evolve, conversationDecider.initialState());
  if (state.status === 'absent' || state.status === 'deleted' || state.tenant_id !== tenantId) return;
  const views = recordedStepsOf(events).get(replyTo) ?? [];
  if (!views.some((view) => view.tool_call_id === trigger)) throw new StepNotRecordedYet(trigger);

  const calls = await Promise.all(views.map((view) => callOf(deps, view)));
  const waited = calls.filter((call) => call.view.status === 'awaiting_approval' || call.view.status === 'running' || (call.requested?.awaiting_approval ?? false));
  // Every call of the turn was reported by the turn itself.
  if (waited.length === 0) return;
  for (const call of waited) {
    if (call.outcome === null || call.outcome.status === 'awaiting_approval' || call.view.status === call.outcome.status) continue;
    const { step_id, call_id, tool_name, tool_id, tool_call_id } = call.view;
    await handleCommand(
      deps,
      conversationAggregate,
      stream,
      { type: 'RecordToolStep', data: { reply_to: replyTo, step_id, call_id, tool_name, tool_id, tool_call_id, status: call.outcome.status, error: errorOf(call.outcome) } },
      context,
    );
  }
  // The last call of the turn to settle gives the report; a paused assistant gives none, nor a
  // turn that asked a late challenge (the answer's turn gives the model the turn again).
  if (state.followed_up.has(replyTo) || waited.some((call) => call.outcome === null) || !assistantAnswersIn(state.status)) return;

  const question = events.find((event) => event.type === 'UserMessagePosted' && event.data.message_id === replyTo);
  if (question?.type !== 'UserMessagePosted') return;
  const steps: ToolStep[] = calls.map((call) => stepFor(call.view, call.requested?.arguments ?? null, call.outcome ?? unmadeCall('no_outcome', 'the call has no recorded outcome')));
  const started = performance.now();
  let text = '';
  let ending: { model: string; usage: { prompt_tokens: number; completion_tokens: number } | null } = { model: deps.assistant.model, usage: null };
  let error: { code: string; message: string } | null = null;
  try {
    const [assistant, mayHandOff] = await Promise.all([assistantOf(deps, tenantId), handoffOffered(deps, tenantId, isPublicChannel(state.channel))]);
    // The one tool of a report: handing the conversation to a person, where the turn could have.
    const tools = mayHandOff ? [HANDOFF_TOOL] : [];
    let done = false;
    for await (const chunk of deps.assistant.answer({ assistant, history: historyBefore(events, replyTo), question: question.data.text, passages: [], tools, steps })) {
      if (chunk.kind === 'delta') text += chunk.text;
      else if (chunk.kind === 'tool_calls') {
        const handOff = mayHandOff ? chunk.calls.find((ask) => ask.name === HANDOFF_TOOL_NAME) : undefined;
        if (handOff === undefined) throw new AssistantEngineError('model_error', mayHandOff ? `the model asked for a tool other than ${HANDOFF_TOOL_NAME}` : 'the model asked for a tool, but none was offered');
        // Handed off before the report announces it, as in a turn (chat.ts).
        await handOffFollowedUp(deps, conversationId, handoffReasonOf(handOff.arguments), context);
        text += `${text === '' ? '' : '\n\n'}${HANDOFF_NOTE}`;
        ending = { model: chunk.model, usage: chunk.usage };
        done = true;
      } else {
        ending = { model: chunk.model, usage: chunk.usage };
        done = true;
      }
    }
    if (!done) throw new AssistantEngineError('model_error', 'the engine ended without finishing its answer');
  } catch (failure) {
    if (!(failure instanceof AssistantEngineError)) throw failure;
    deps.logger.warn({ conversation_id: conversationId, code: failure.code, err: failure.message }, 'the assistant could not follow up the approved tool calls');
    error = { code: failure.code, message: failure.message };
    text = '';
  }
  const toolCallIds = waited.flatMap((call) => (call.view.tool_call_id === null ? [] : [call.view.tool_call_id]));
  await recordFollowUp(deps, conversationId, replyTo, followUpMessageId(deps, replyTo), { tool_call_ids: toolCallIds, text, model: ending.model, latency_ms: Math.round(performance.now() - started), usage: ending.usage, error }, context);
}

/**
 * The conversation becomes handed_off, as the model asked in its report (handoff-tool.ts). One a
 * person took over meanwhile, or resolved, is left as it is.
 */
async function handOffFollowedUp(deps: ChatFollowUpDependencies, conversationId: string, reason: string | undefined, context: RequestContext): Promise<void> {
  try {
    await handleCommand(deps, conversationAggregate, conversationStream(conversationId), { type: 'ChangeConversationStatus', data: { status: 'handed_off', ...(reason === undefined ? {} : { reason }) } }, context);
  } catch (error) {
    if (!(error instanceof DomainError)) throw error;
    deps.logger.warn({ conversation_id: conversationId, code: error.code }, 'the assistant could not hand the conversation off in its report');
  }
}

/** Records a follow-up message of the turn (a redelivered one records nothing: the conversation decider). */
async function recordFollowUp(
  deps: ChatFollowUpDependencies,
  conversationId: string,
  replyTo: string,
  messageId: string,
  followUp: { tool_call_ids: string[]; text: string; model: string; latency_ms: number; usage: { prompt_tokens: number; completion_tokens: number } | null; error: { code: string; message: string } | null },
  context: RequestContext,
): Promise<void> {
  const data = { message_id: messageId, reply_to: replyTo, citations: [], answered_from_knowledge: false, ...followUp };
  await handleCommand(deps, conversationAggregate, conversationStream(conversationId), { type: 'RecordFollowUp', data }, context);
}

/**
 * Asks the user, in the conversation, a connector's challenge that came after the turn ended
 * (see the header); nothing when the turn itself asked it (its step is at `challenge`
 * already), the call moved on since, or the turn was followed up.
 */
export async function askLateChallenge(deps: ChatFollowUpDependencies, tenantId: string, conversationId: string, replyTo: string, toolCallId: string, context: RequestContext): Promise<void> {
  const stream = conversationStream(conversationId);
  const events = (await deps.eventStore.readStream(stream)) as unknown as ConversationEvent[];
  const state: ConversationState = events.reduce(conversationDecider.evolve, conversationDecider.initialState());
  if (state.status === 'absent' || state.status === 'deleted' || state.tenant_id !== tenantId) return;
  const view = (recordedStepsOf(events).get(replyTo) ?? []).find((step) => step.tool_call_id === toolCallId);
  if (view === undefined) throw new StepNotRecordedYet(toolCallId);
  if (view.status !== 'awaiting_approval' && view.status !== 'running') return;
  // Still challenged now? A redelivery after the user answered must not ask again.
  const call = (await deps.eventStore.readStream(toolCallStream(toolCallId))) as unknown as ToolCallEvent[];
  const challenged = [...call].reverse().find((event) => event.type === 'ToolCallChallenged');
  if (call[call.length - 1]?.type !== 'ToolCallChallenged' || challenged?.type !== 'ToolCallChallenged') return;
  const { step_id, call_id, tool_name, tool_id } = view;
  const prompt = challenged.data.prompt;
  await handleCommand(deps, conversationAggregate, stream, { type: 'RecordToolStep', data: { reply_to: replyTo, step_id, call_id, tool_name, tool_id, tool_call_id: toolCallId, status: 'challenge', error: null, prompt } }, context);
  // A paused assistant (a person took the conversation over) asks nothing: the step shows the prompt to the person.
  if (!assistantAnswersIn(state.status)) return;
  await recordFollowUp(deps, conversationId, replyTo, lateChallengeMessageId(deps, toolCallId), { tool_call_ids: [toolCallId], text: challengeNote([prompt]), model: deps.assistant.model, latency_ms: 0, usage: null, error: null }, context);
}

export function chatToolFollowUpSaga(deps: ChatFollowUpDependencies): Saga<HandledType> {
  return {
    name: CHAT_TOOL_FOLLOW_UP,
    version: 1,
    filter: { kind: 'event_type', types: ['ToolCallSucceeded', 'ToolCallFailed', 'ToolCallRefused', 'ToolCallChallenged'] },
    async handle(event: RecordedOf<HandledType>) {
      const { tenant_id, tool_call_id } = event.data;
      const [first] = await deps.eventStore.readStream(toolCallStream(tool_call_id), { maxCount: 1 });
      if (first?.type !== 'ToolCallRequested' || !(first.data.awaiting_approval || first.data.connector !== undefined) || first.data.origin.kind !== 'chat') return;
      const context = { ...systemContext(event.metadata.correlation_id, CHAT_TOOL_FOLLOW_UP, event.id), tenant_id };
      const { conversation_id, reply_to } = first.data.origin;
      if (event.type === 'ToolCallChallenged') await askLateChallenge(deps, tenant_id, conversation_id, reply_to, tool_call_id, context);
      else await followUpTurn(deps, tenant_id, conversation_id, reply_to, tool_call_id, context);
    },
  };
}
