// Tool steps of a chat turn (#12 point 5): what the turn and the follow-up after approvals
// share. A step is one call the model asked for: the business tool it named, run through the
// tool-call use case (application/tool-call), its outcome recorded on the conversation and
// handed back to the model as JSON text.
//
// What the model is given back (`resultForModel`), one JSON object per step:
//   {"status":"succeeded","http_status":200,"result":<the API's answer, redacted>}
//   {"status":"failed","error":{"code","message"},"http_status":<n or null>,"result":<...>}
//   {"status":"awaiting_approval","message":"..."}   the call waits for an owner or admin
//   {"status":"refused","reason":"..."}              an owner or admin refused it
//   {"status":"challenge","prompt":"...","message":"..."}  a connector asks the user first (#13)
//   {"status":"running","message":"..."}             a connector call still running
// A text longer than MAX_TOOL_RESULT_CHARACTERS is cut: `{"status", "truncated": true,
// "result_text": <its beginning>}`, so one large answer cannot crowd out the conversation.

import type { ConversationEvent, ToolStepStatus } from '../../domain/conversation/conversation';
import type { ToolCallEvent } from '../../domain/tool-call/tool-call';
import type { ToolCallAsk, ToolStep } from '../ports/assistant-engine';
import type { Caller } from '../../domain/tool-call/tool-call';
import type { RequestContext } from '../shared/request-context';
import { type ToolCallInput, type ToolCallOptions, type ToolCallOutcome, outcomeOf } from '../tool-call/tool-calls';

/** Runs one tool call: application/tool-call's `callTool` with its dependencies bound (the composition root binds them). */
export type ToolCaller = (tenantId: string, input: ToolCallInput, context: RequestContext, options?: ToolCallOptions) => Promise<ToolCallOutcome>;

/** Sends the user's answer to a connector's challenge (application/tool-call's resumeToolCall, bound) and gives the outcome. */
export type ToolResumer = (tenantId: string, toolCallId: string, answer: string, by: Caller, context: RequestContext) => Promise<ToolCallOutcome>;

/** Rounds of tool calls in one turn; after them the model is asked to answer without tools. */
export const MAX_TOOL_ROUNDS = 5;
/** The longest result text the model is given per step. */
export const MAX_TOOL_RESULT_CHARACTERS = 16_000;

/** A step as the client sees it (the SSE `tool` event, the `tool_steps` of POST /chat). */
export interface ToolStepView {
  /** The step within its turn: `<round>:<call_id>`. */
  step_id: string;
  /** The model's id for the call. */
  call_id: string;
  tool_name: string;
  /** Null when the model named no tool that was offered. */
  tool_id: string | null;
  /** The tool call (tool-call aggregate); null when none was made. */
  tool_call_id: string | null;
  /** `requested` only while it runs (streamed, never recorded). */
  status: 'requested' | ToolStepStatus;
  error: { code: string; message: string } | null;
  /** At `challenge` only: what the connector asks the user (an OTP, ...). */
  prompt?: string;
}

/** A call that was never made: no such tool, or arguments that were not a JSON object or not valid. */
export interface UnmadeCall {
  status: 'failed';
  tool_call_id: null;
  code: string;
  message: string;
}

export type StepOutcome = ToolCallOutcome | UnmadeCall;

export const unmadeCall = (code: string, message: string): UnmadeCall => ({ status: 'failed', tool_call_id: null, code, message });

/** The step id of a call within its turn: the round and the model's id (servers that number calls restart each round). */
export const stepIdOf = (round: number, callId: string): string => `${round}:${callId}`;

/** The error of an outcome as the conversation records it. */
export function errorOf(outcome: StepOutcome): { code: string; message: string } | null {
  if (outcome.status === 'failed') return { code: outcome.code, message: outcome.message };
  if (outcome.status === 'refused') return { code: 'refused', message: outcome.reason };
  return null;
}

/** What the model is given back for a step (the header's shapes). */
export function resultForModel(outcome: StepOutcome): string {
  let shown: Record<string, unknown>;
  switch (outcome.status) {
    case 'succeeded':
      shown = { status: 'succeeded', http_status: outcome.http_status, result: outcome.result };
      break;
    case 'failed':
      shown = { status: 'failed', error: { code: outcome.code, message: outcome.message }, http_status: 'http_status' in outcome ? outcome.http_status : null, result: 'result' in outcome ? outcome.result : null };
      break;
    case 'awaiting_approval':
      shown = { status: 'awaiting_approval', message: 'An owner or admin of the organization must approve this call before it runs: it has not run yet.' };
      break;
    case 'refused':
      shown = { status: 'refused', reason: outcome.reason };
      break;
    case 'challenge':
      shown = { status: 'challenge', prompt: outcome.prompt, message: 'The connector asks the user this first; the user was asked, and their answer will be sent to it. The call has not answered yet.' };
      break;
    case 'running':
      shown = { status: 'running', message: 'The call is still running; its result will be reported to the user once it is known.' };
      break;
  }
  const text = JSON.stringify(shown) ?? 'null';
  if (text.length <= MAX_TOOL_RESULT_CHARACTERS) return text;
  return JSON.stringify({ status: outcome.status, truncated: true, result_text: text.slice(0, MAX_TOOL_RESULT_CHARACTERS) });
}

/** The model's arguments as an object; null when they are not a JSON object. */
export function argumentsOf(text: string): Record<string, unknown> | null {
  try {
    const parsed: unknown = JSON.parse(text.trim() === '' ? '{}' : text);
    return parsed !== null && typeof parsed === 'object' && !Array.isArray(parsed) ? (parsed as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}

/** The words the turn ends with when calls wait for approval (recorded as its answer). */
export function awaitingApprovalNote(toolNames: readonly string[]): string {
  const names = [...new Set(toolNames)].map((name) => `“${name}”`);
  const listed = names.length === 1 ? names[0] : `${names.slice(0, -1).join(', ')} and ${names[names.length - 1]}`;
  return names.length === 1
    ? `The action ${listed} awaits approval by an owner or admin of the organization: it has not run yet. Its result will be reported here once it has.`
    : `The actions ${listed} await approval by an owner or admin of the organization: they have not run yet. Their results will be reported here once they have.`;
}

/** The words a turn ends with when a connector asks the user something first (recorded as its answer). */
export function challengeNote(prompts: readonly string[]): string {
  return prompts.length === 1 ? `To go on, I need a confirmation from you: ${prompts[0]}` : `To go on, I need confirmations from you, one message each: ${prompts.map((prompt) => `“${prompt}”`).join(', ')}`;
}

/** The words a turn ends with when connector calls outlive its wait. */
export function runningNote(toolNames: readonly string[]): string {
  const names = [...new Set(toolNames)].map((name) => `“${name}”`).join(', ');
  return `The action ${names} is still running. Its result will be reported here once it is known.`;
}

/** A step's view once its call was made: at an outcome, never `requested`. */
export type MadeStepView = ToolStepView & { status: ToolStepStatus };

/** A view of a step at an outcome: its status, error and, for a challenge, the prompt. */
export function viewAt(named: Omit<ToolStepView, 'tool_call_id' | 'status' | 'error' | 'prompt'>, outcome: StepOutcome): MadeStepView {
  return { ...named, tool_call_id: outcome.tool_call_id, status: outcome.status, error: errorOf(outcome), ...(outcome.status === 'challenge' ? { prompt: outcome.prompt } : {}) };
}

/** How a recorded call ended (the tool-call use case's reading of its events); null while it waits for approval or runs. */
export function settledOutcomeOf(events: readonly ToolCallEvent[]): ToolCallOutcome | null {
  const settled = events.some((event) => event.type === 'ToolCallSucceeded' || event.type === 'ToolCallFailed' || event.type === 'ToolCallRefused');
  return settled ? outcomeOf(events) : null;
}

/** The steps of each turn recorded on a conversation, by the user message they answer, each at its last status, in the order first recorded. */
export function recordedStepsOf(events: readonly ConversationEvent[]): Map<string, ToolStepView[]> {
  const byTurn = new Map<string, Map<string, ToolStepView>>();
  for (const event of events) {
    if (event.type !== 'AssistantToolStepRecorded') continue;
    const { reply_to, step_id, call_id, tool_name, tool_id, tool_call_id, status, error, prompt } = event.data;
    const steps = byTurn.get(reply_to) ?? new Map<string, ToolStepView>();
    steps.set(step_id, { step_id, call_id, tool_name, tool_id, tool_call_id, status, error, ...(prompt === undefined ? {} : { prompt }) });
    byTurn.set(reply_to, steps);
  }
  return new Map([...byTurn].map(([replyTo, steps]) => [replyTo, [...steps.values()]]));
}

/** A step as the model is given it again: its call (the arguments as recorded) and its result. */
export function stepFor(view: ToolStepView, args: Record<string, unknown> | null, outcome: StepOutcome): ToolStep {
  const call: ToolCallAsk = { id: view.call_id, name: view.tool_name, arguments: JSON.stringify(args ?? {}) };
  return { call, result: resultForModel(outcome) };
}
