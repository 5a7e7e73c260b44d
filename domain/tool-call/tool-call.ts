// The tool-call aggregate (issue #12 points 3 to 5): one call of a business tool, from the
// request to its outcome. Stream `toolCall-<id>`. A test from the API, a step of a chat turn
// and (#14) a step of a flow are all tool calls, so the execution log, approvals and the
// audit see one shape.
//
// States:
//   awaiting_approval  an `approval_required` tool's call waits for an owner or admin;
//   ready              may run (a read or write tool's call at once, or an approved one);
//   refused            an owner or admin refused it: it never runs;
//   challenged         a connector tool's call waits for the user's answer to a challenge (an OTP);
//   succeeded          the API answered 2xx (a connector: `result`);
//   failed             the API answered otherwise, or could not be reached, or timed out.
// Allowed: awaiting_approval -> ready (approved) | refused; ready -> succeeded | failed |
// challenged; challenged -> ready (resumed with the user's answer).
// A call approved as it is requested (an owner's or admin's own test of an `approval_required`
// tool) is recorded requested, not waiting, and approved in one append: it runs with the
// request. Only a call that waited is run by the approval saga once approved.
//
// What is recorded of the exchange is already redacted (credentials, the end user's token and
// session) and cut to size by the application: events never hold a secret in clear. The end
// user's token and session ride along sealed, so a call approved later can still forward them.
//
// A connector tool's call (issue #13 point 3; `connector` on ToolCallRequested) is run by a saga
// (application/tool-call/connector-tool-calls.ts), so each sending is recorded before it goes
// (`ToolCallDispatched`, with the protocol `request_id` derived from the call's id and the
// phase: `<id>:invoke`, then `<id>:resume:<n>`). A run that finds the phase already sent (a
// process stopped mid-call) sends it once more with the same request_id; a third sending is
// refused (`tool_call_interrupted`): the call fails rather than repeat without end. A
// `challenge` answer records its prompt (it is shown to the user) and the resume token sealed;
// the user's answer (an OTP) is recorded sealed only.
//
// Erasure (docs/personal-data.md): what a call carries of the people it is about (its
// arguments, the exchange with the API, a failure's message, a challenge, a refusal's reason)
// is personal data of the subject `toolCall:<id>`, stored sealed under its key. `ToolCallErased`
// (recorded when the conversation the call was a step of is erased) deletes that key: those
// fields read as their erased values, and the call accepts nothing more (404). A call still
// awaiting approval is refused with it, so that it leaves the approval queue.

import * as t from 'io-ts';
import { type Either, left, right } from 'fp-ts/Either';
import type { Decider } from '../shared/decider';
import { type DomainError, conflict, notFound } from '../shared/errors';
import { declareEvent, type EventOf, eventGroup, type GroupEvent } from '../shared/events';
import { toStreamName } from '../shared/stream-names';
import { RiskTier } from '../tool/tool';

export const ToolCallOrigin = t.union([
  /** `POST /tools/{id}/test` by a person. */
  t.type({ kind: t.literal('test') }),
  /** A step of a chat turn: the conversation, the user message it answers, and the model's id for the call. */
  t.type({ kind: t.literal('chat'), conversation_id: t.string, reply_to: t.string, call_id: t.string }),
  /** A step of a flow run (#14). */
  t.type({ kind: t.literal('flow'), event_id: t.string, flow: t.string, step: t.number }),
]);
export type ToolCallOrigin = t.TypeOf<typeof ToolCallOrigin>;

/** Who asked for the call: a member, an end user of the widget, or the platform itself. */
export const Caller = t.type({ kind: t.keyof({ user: null, end_user: null, admin: null, system: null }), id: t.string });
export type Caller = t.TypeOf<typeof Caller>;

/** The HTTP exchange as recorded: credentials and end-user headers already redacted, bodies cut. */
export const RecordedExchange = t.type({
  request: t.type({ method: t.string, url: t.string, headers: t.record(t.string, t.string), body: t.union([t.string, t.null]) }),
  response: t.union([
    t.type({ status: t.number, headers: t.record(t.string, t.string), body: t.string, truncated: t.boolean }),
    t.null,
  ]),
});
export type RecordedExchange = t.TypeOf<typeof RecordedExchange>;

const CallIdentity = { tenant_id: t.string, workspace_id: t.string, tool_call_id: t.string, tool_id: t.string };

/** A connector tool's call: the SDK connection and the connector's name for the tool (what `tool.invoke` sends). */
export const ConnectorOfCall = t.type({ connection_id: t.string, tool: t.string });
export type ConnectorOfCall = t.TypeOf<typeof ConnectorOfCall>;

export const ToolCallRequested = declareEvent(
  'ToolCallRequested',
  t.intersection([
    t.type({
      ...CallIdentity,
      tool_name: t.string,
      risk: RiskTier,
      arguments: t.UnknownRecord,
      caller: Caller,
      origin: ToolCallOrigin,
      /** True when the call waits for an approval before it runs. */
      awaiting_approval: t.boolean,
      end_user_token_sealed: t.union([t.string, t.null]),
      end_user_session_sealed: t.union([t.string, t.null]),
      requested_at: t.string,
    }),
    /** Absent for a call of an integration's tool (and for every call recorded before #13). */
    t.partial({ connector: ConnectorOfCall }),
  ]),
);
export const ToolCallApproved = declareEvent('ToolCallApproved', t.type({ ...CallIdentity, approved_by: Caller, approved_at: t.string }));
export const ToolCallRefused = declareEvent('ToolCallRefused', t.type({ ...CallIdentity, refused_by: Caller, reason: t.string, refused_at: t.string }));
export const ToolCallSucceeded = declareEvent(
  'ToolCallSucceeded',
  t.type({ ...CallIdentity, status: t.number, latency_ms: t.number, exchange: RecordedExchange, finished_at: t.string }),
);
export const ToolCallFailed = declareEvent(
  'ToolCallFailed',
  t.type({
    ...CallIdentity,
    /** `http_error` (a non-2xx answer), `timeout`, `network`, `private_address`, `response_too_large`, `integration_gone`, `auth_failed` (no OAuth2 token) ... */
    code: t.string,
    message: t.string,
    status: t.union([t.number, t.null]),
    latency_ms: t.number,
    exchange: t.union([RecordedExchange, t.null]),
    finished_at: t.string,
  }),
);

/** A connector call is about to be sent (once more, after a stop mid-call, with the same request_id). */
export const ToolCallDispatched = declareEvent('ToolCallDispatched', t.type({ ...CallIdentity, request_id: t.string, attempt: t.number, dispatched_at: t.string }));
export const ToolCallChallenged = declareEvent(
  'ToolCallChallenged',
  t.type({
    ...CallIdentity,
    /** The human text of the challenge, shown to the user. */
    prompt: t.string,
    /** The connector's `challenge` object as it came (kind, channel, masked destination, ...): shown, never secret. */
    challenge: t.UnknownRecord,
    resume_token_sealed: t.string,
    latency_ms: t.number,
    challenged_at: t.string,
  }),
);
export const ToolCallResumed = declareEvent(
  'ToolCallResumed',
  t.type({ ...CallIdentity, /** The user's answer (an OTP), sealed: never in clear. */ response_sealed: t.string, resumed_by: Caller, resumed_at: t.string }),
);

/** The call's personal data was erased: its key is deleted. */
export const ToolCallErased = declareEvent('ToolCallErased', t.type({ ...CallIdentity, erased_at: t.string }));

/** The data subject of what a tool call carries. */
export const toolCallSubject = (toolCallId: string): string => `toolCall:${toolCallId}`;

/** What an erased exchange reads as: no request worth showing, no answer. */
export const ERASED_EXCHANGE: RecordedExchange = { request: { method: '', url: '', headers: {}, body: null }, response: null };

export const toolCallEvents = eventGroup(
  'toolCall',
  [ToolCallRequested, ToolCallApproved, ToolCallRefused, ToolCallSucceeded, ToolCallFailed, ToolCallDispatched, ToolCallChallenged, ToolCallResumed, ToolCallErased],
  {
    subject: (data) => toolCallSubject(String(data.tool_call_id)),
    fields: { ToolCallRefused: ['reason'], ToolCallFailed: ['message'], ToolCallChallenged: ['prompt'] },
    json: {
      ToolCallRequested: { arguments: {} },
      ToolCallSucceeded: { exchange: ERASED_EXCHANGE },
      ToolCallFailed: { exchange: null },
      ToolCallChallenged: { challenge: {} },
    },
    erasedBy: 'ToolCallErased',
  },
);
export type ToolCallEvent = GroupEvent<typeof toolCallEvents>;

type RequestedData = EventOf<typeof ToolCallRequested>['data'];

export type ToolCallCommand =
  /** `approved_by`: the caller approves their own call as they make it (recorded only for an `approval_required` tool). */
  | { type: 'RequestToolCall'; data: Omit<RequestedData, 'requested_at'> & { approved_by?: Caller } }
  | { type: 'ApproveToolCall'; data: { tenant_id: string; by: Caller } }
  | { type: 'RefuseToolCall'; data: { tenant_id: string; by: Caller; reason: string } }
  | { type: 'RecordToolCallSuccess'; data: { tenant_id: string; status: number; latency_ms: number; exchange: RecordedExchange } }
  | { type: 'RecordToolCallFailure'; data: { tenant_id: string; code: string; message: string; status: number | null; latency_ms: number; exchange: RecordedExchange | null } }
  | { type: 'DispatchToolCall'; data: { tenant_id: string } }
  | { type: 'RecordToolCallChallenge'; data: { tenant_id: string; prompt: string; challenge: Record<string, unknown>; resume_token_sealed: string; latency_ms: number } }
  | { type: 'ResumeToolCall'; data: { tenant_id: string; response_sealed: string; by: Caller } }
  /** `reason`: why a call still awaiting approval is refused with its erasure (nobody should approve it then). */
  | { type: 'EraseToolCall'; data: { tenant_id: string; by: Caller; reason: string } };

export const TOOL_CALL_STATUSES = ['awaiting_approval', 'ready', 'challenged', 'refused', 'succeeded', 'failed'] as const;
export type ToolCallStatus = (typeof TOOL_CALL_STATUSES)[number];

/** How often one phase of a connector call (its invoke, each resume) is sent: once, and once more after a stop mid-call. */
export const MAX_CONNECTOR_DISPATCHES = 2;

export type ToolCallState =
  | { status: 'absent' }
  | ({
      status: ToolCallStatus;
      /** Resumes so far: the phase a connector call is in (0: its invoke). */
      resumes: number;
      /** Sendings of the current phase so far. */
      dispatches: number;
      /** Its personal data was erased: it accepts nothing more. */
      erased: boolean;
    } & Omit<RequestedData, 'awaiting_approval' | 'requested_at'>);

/** The protocol request_id of a connector call's phase: derived from the call, so a repeat is recognisable. */
export const connectorRequestId = (toolCallId: string, resumes: number): string => (resumes === 0 ? `${toolCallId}:invoke` : `${toolCallId}:resume:${resumes}`);

export const toolCallStream = (toolCallId: string): string => toStreamName(toolCallEvents.category, toolCallId);

const toolCallNotFound = (): DomainError => notFound('tool_call_not_found', 'no such tool call');

export const toolCallDecider: Decider<ToolCallCommand, ToolCallEvent, ToolCallState> = {
  initialState: () => ({ status: 'absent' }),

  evolve(state, event) {
    switch (event.type) {
      case 'ToolCallRequested': {
        const { awaiting_approval, requested_at: _at, ...call } = event.data;
        return { ...call, status: awaiting_approval ? 'awaiting_approval' : 'ready', resumes: 0, dispatches: 0, erased: false };
      }
      case 'ToolCallApproved':
        return state.status === 'absent' ? state : { ...state, status: 'ready' };
      case 'ToolCallRefused':
        return state.status === 'absent' ? state : { ...state, status: 'refused' };
      case 'ToolCallSucceeded':
        return state.status === 'absent' ? state : { ...state, status: 'succeeded' };
      case 'ToolCallFailed':
        return state.status === 'absent' ? state : { ...state, status: 'failed' };
      case 'ToolCallDispatched':
        return state.status === 'absent' ? state : { ...state, dispatches: state.dispatches + 1 };
      case 'ToolCallChallenged':
        return state.status === 'absent' ? state : { ...state, status: 'challenged' };
      case 'ToolCallResumed':
        return state.status === 'absent' ? state : { ...state, status: 'ready', resumes: state.resumes + 1, dispatches: 0 };
      case 'ToolCallErased':
        return state.status === 'absent' ? state : { ...state, erased: true };
    }
  },

  decide(command, state, { now }): Either<DomainError, ToolCallEvent[]> {
    const at = now.toISOString();
    if (command.type === 'RequestToolCall') {
      if (state.status !== 'absent') return right([]);
      const { approved_by, ...requested } = command.data;
      if (approved_by === undefined || requested.risk !== 'approval_required') return right([{ type: 'ToolCallRequested', data: { ...requested, requested_at: at } }]);
      const { tenant_id, workspace_id, tool_call_id, tool_id } = requested;
      return right([
        { type: 'ToolCallRequested', data: { ...requested, awaiting_approval: false, requested_at: at } },
        { type: 'ToolCallApproved', data: { tenant_id, workspace_id, tool_call_id, tool_id, approved_by, approved_at: at } },
      ]);
    }
    if (state.status === 'absent' || state.tenant_id !== command.data.tenant_id) return left(toolCallNotFound());
    const { tenant_id, workspace_id, tool_call_id, tool_id } = state;
    const identity = { tenant_id, workspace_id, tool_call_id, tool_id };
    if (command.type === 'EraseToolCall') {
      if (state.erased) return right([]);
      const erased: ToolCallEvent = { type: 'ToolCallErased', data: { ...identity, erased_at: at } };
      if (state.status !== 'awaiting_approval') return right([erased]);
      return right([{ type: 'ToolCallRefused', data: { ...identity, refused_by: command.data.by, reason: command.data.reason, refused_at: at } }, erased]);
    }
    if (state.erased) return left(toolCallNotFound());
    switch (command.type) {
      case 'ApproveToolCall':
        if (state.status !== 'awaiting_approval') return left(conflict('tool_call_not_awaiting_approval', `the tool call is ${state.status}, not awaiting approval`));
        return right([{ type: 'ToolCallApproved', data: { ...identity, approved_by: command.data.by, approved_at: at } }]);
      case 'RefuseToolCall':
        if (state.status !== 'awaiting_approval') return left(conflict('tool_call_not_awaiting_approval', `the tool call is ${state.status}, not awaiting approval`));
        return right([{ type: 'ToolCallRefused', data: { ...identity, refused_by: command.data.by, reason: command.data.reason, refused_at: at } }]);
      case 'RecordToolCallSuccess':
      case 'RecordToolCallFailure': {
        if (state.status !== 'ready') return left(conflict('tool_call_not_ready', `the tool call is ${state.status}: it cannot run`));
        if (command.type === 'RecordToolCallSuccess') {
          const { status, latency_ms, exchange } = command.data;
          return right([{ type: 'ToolCallSucceeded', data: { ...identity, status, latency_ms, exchange, finished_at: at } }]);
        }
        const { code, message, status, latency_ms, exchange } = command.data;
        return right([{ type: 'ToolCallFailed', data: { ...identity, code, message, status, latency_ms, exchange, finished_at: at } }]);
      }
      case 'DispatchToolCall':
        if (state.status !== 'ready') return left(conflict('tool_call_not_ready', `the tool call is ${state.status}: it cannot run`));
        if (state.connector === undefined) return left(conflict('tool_call_not_connector', 'only a connector tool call is dispatched'));
        if (state.dispatches >= MAX_CONNECTOR_DISPATCHES) {
          return left(conflict('tool_call_interrupted', `the call was sent ${state.dispatches} times without an answer being recorded: it is not sent again`));
        }
        return right([{ type: 'ToolCallDispatched', data: { ...identity, request_id: connectorRequestId(tool_call_id, state.resumes), attempt: state.dispatches + 1, dispatched_at: at } }]);
      case 'RecordToolCallChallenge': {
        if (state.status !== 'ready' || state.connector === undefined) return left(conflict('tool_call_not_ready', `the tool call is ${state.status}: it cannot run`));
        const { prompt, challenge, resume_token_sealed, latency_ms } = command.data;
        return right([{ type: 'ToolCallChallenged', data: { ...identity, prompt, challenge, resume_token_sealed, latency_ms, challenged_at: at } }]);
      }
      case 'ResumeToolCall':
        if (state.status !== 'challenged') return left(conflict('tool_call_not_challenged', `the tool call is ${state.status}, not waiting for a challenge answer`));
        return right([{ type: 'ToolCallResumed', data: { ...identity, response_sealed: command.data.response_sealed, resumed_by: command.data.by, resumed_at: at } }]);
    }
  },
};
