import type { RecordedExchange, ToolCallCommand, ToolCallEvent } from '../../domain/tool-call/tool-call';
import type { RiskTier } from '../../domain/tool/tool';
import { toolCallDecider } from '../../domain/tool-call/tool-call';
import { FIXED_NOW, deciderSpec } from '../support/decider-spec';

describe('tool call (decider)', () => {
  const spec = deciderSpec(toolCallDecider);
  const at = FIXED_NOW.toISOString();
  const ids = { tenant_id: 't1', workspace_id: 'w1', tool_call_id: 'c1', tool_id: 'tool-1' };
  const member = { kind: 'user' as const, id: 'u-member' };
  const admin = { kind: 'user' as const, id: 'u-admin' };
  const call = {
    ...ids,
    tool_name: 'refund_order',
    risk: 'approval_required' as RiskTier,
    arguments: { orderId: 'o-1' },
    caller: member,
    origin: { kind: 'test' as const },
    awaiting_approval: true,
    end_user_token_sealed: 'sealed-token',
    end_user_session_sealed: null,
  };
  const request = (over: Partial<typeof call> & { approved_by?: typeof admin } = {}): ToolCallCommand => ({ type: 'RequestToolCall', data: { ...call, ...over } });
  const requested = (over: Partial<typeof call> = {}): ToolCallEvent => ({ type: 'ToolCallRequested', data: { ...call, ...over, requested_at: at } });
  const approved: ToolCallEvent = { type: 'ToolCallApproved', data: { ...ids, approved_by: admin, approved_at: at } };
  const refused: ToolCallEvent = { type: 'ToolCallRefused', data: { ...ids, refused_by: admin, reason: 'not today', refused_at: at } };
  const exchange: RecordedExchange = {
    request: { method: 'POST', url: 'https://api.example.com/refunds/o-1', headers: { authorization: '[redacted]' }, body: null },
    response: { status: 200, headers: {}, body: '{}', truncated: false },
  };
  const succeeded: ToolCallEvent = { type: 'ToolCallSucceeded', data: { ...ids, status: 200, latency_ms: 12, exchange, finished_at: at } };
  const failed: ToolCallEvent = { type: 'ToolCallFailed', data: { ...ids, code: 'timeout', message: 'no answer within 15000 ms', status: null, latency_ms: 15000, exchange: null, finished_at: at } };
  const success: ToolCallCommand = { type: 'RecordToolCallSuccess', data: { tenant_id: 't1', status: 200, latency_ms: 12, exchange } };
  const failure: ToolCallCommand = { type: 'RecordToolCallFailure', data: { tenant_id: 't1', code: 'timeout', message: 'no answer within 15000 ms', status: null, latency_ms: 15000, exchange: null } };
  const approve = (tenant = 't1'): ToolCallCommand => ({ type: 'ApproveToolCall', data: { tenant_id: tenant, by: admin } });
  const refuse: ToolCallCommand = { type: 'RefuseToolCall', data: { tenant_id: 't1', by: admin, reason: 'not today' } };

  it('records a request once: the same request again records nothing', () => {
    spec.given([]).when(request()).then([requested()]);
    spec.given([requested()]).when(request()).thenNothingHappened();
    spec.given([]).when(request({ risk: 'read', awaiting_approval: false })).then([requested({ risk: 'read', awaiting_approval: false })]);
  });

  it('records a call approved as it is requested as requested, not waiting, and approved, in one decision', () => {
    spec.given([]).when(request({ awaiting_approval: false, approved_by: admin })).then([requested({ awaiting_approval: false }), approved]);
    // Only an approval_required tool's call has an approval to record.
    spec.given([]).when(request({ risk: 'write', awaiting_approval: false, approved_by: admin })).then([requested({ risk: 'write', awaiting_approval: false })]);
  });

  it('approves or refuses a waiting call, once', () => {
    spec.given([requested()]).when(approve()).then([approved]);
    spec.given([requested()]).when(refuse).then([refused]);
    spec.given([requested(), approved]).when(approve()).thenThrows('conflict', 'tool_call_not_awaiting_approval');
    spec.given([requested(), approved]).when(refuse).thenThrows('conflict', 'tool_call_not_awaiting_approval');
    spec.given([requested(), refused]).when(approve()).thenThrows('conflict', 'tool_call_not_awaiting_approval');
    spec.given([requested({ risk: 'read', awaiting_approval: false })]).when(approve()).thenThrows('conflict', 'tool_call_not_awaiting_approval');
  });

  it('records one outcome of a ready call: a waiting or refused call cannot run, a finished one not again', () => {
    spec.given([requested(), approved]).when(success).then([succeeded]);
    spec.given([requested({ risk: 'read', awaiting_approval: false })]).when(failure).then([failed]);
    spec.given([requested()]).when(success).thenThrows('conflict', 'tool_call_not_ready');
    spec.given([requested(), refused]).when(failure).thenThrows('conflict', 'tool_call_not_ready');
    spec.given([requested(), approved, succeeded]).when(success).thenThrows('conflict', 'tool_call_not_ready');
    spec.given([requested(), approved, failed]).when(success).thenThrows('conflict', 'tool_call_not_ready');
  });

  it("answers a missing call, or another tenant's, as not found", () => {
    spec.given([]).when(approve()).thenThrows('not_found', 'tool_call_not_found');
    spec.given([]).when(success).thenThrows('not_found', 'tool_call_not_found');
    spec.given([requested()]).when(approve('t2')).thenThrows('not_found', 'tool_call_not_found');
  });
  it('erases a call once, refusing it first when it still awaits approval; then it accepts nothing more', () => {
    const erasure = { kind: 'system' as const, id: 'conversation_erasure' };
    const erase = (tenant = 't1'): ToolCallCommand => ({ type: 'EraseToolCall', data: { tenant_id: tenant, by: erasure, reason: 'the conversation it was asked in was erased' } });
    const erased: ToolCallEvent = { type: 'ToolCallErased', data: { ...ids, erased_at: at } };
    spec.given([requested(), approved, succeeded]).when(erase()).then([erased]);
    spec.given([requested({ risk: 'read', awaiting_approval: false })]).when(erase()).then([erased]);
    spec.given([requested()]).when(erase()).then([{ type: 'ToolCallRefused', data: { ...ids, refused_by: erasure, reason: 'the conversation it was asked in was erased', refused_at: at } }, erased]);
    spec.given([requested(), approved, succeeded, erased]).when(erase()).thenNothingHappened();

    spec.given([]).when(erase()).thenThrows('not_found', 'tool_call_not_found');
    spec.given([requested()]).when(erase('t2')).thenThrows('not_found', 'tool_call_not_found');
    spec.given([requested({ risk: 'read', awaiting_approval: false }), erased]).when(success).thenThrows('not_found', 'tool_call_not_found');
    spec.given([requested(), refused, erased]).when(approve()).thenThrows('not_found', 'tool_call_not_found');
  });

  describe('a connector tool call (#13)', () => {
    const connectorCall = { risk: 'write' as RiskTier, awaiting_approval: false, connector: { connection_id: 'conn-1', tool: 'order_status' } };
    const ready = requested(connectorCall);
    const dispatch: ToolCallCommand = { type: 'DispatchToolCall', data: { tenant_id: 't1' } };
    const dispatched = (requestId: string, attempt: number): ToolCallEvent => ({ type: 'ToolCallDispatched', data: { ...ids, request_id: requestId, attempt, dispatched_at: at } });
    const challenge: ToolCallCommand = {
      type: 'RecordToolCallChallenge',
      data: { tenant_id: 't1', prompt: 'Enter the code', challenge: { kind: 'otp', message: 'Enter the code' }, resume_token_sealed: 'sealed-resume', latency_ms: 4 },
    };
    const challenged: ToolCallEvent = {
      type: 'ToolCallChallenged',
      data: { ...ids, prompt: 'Enter the code', challenge: { kind: 'otp', message: 'Enter the code' }, resume_token_sealed: 'sealed-resume', latency_ms: 4, challenged_at: at },
    };
    const resume: ToolCallCommand = { type: 'ResumeToolCall', data: { tenant_id: 't1', response_sealed: 'sealed-otp', by: member } };
    const resumed: ToolCallEvent = { type: 'ToolCallResumed', data: { ...ids, response_sealed: 'sealed-otp', resumed_by: member, resumed_at: at } };

    it('records each sending with a request_id derived from the call and its phase, at most twice per phase', () => {
      spec.given([ready]).when(dispatch).then([dispatched('c1:invoke', 1)]);
      spec.given([ready, dispatched('c1:invoke', 1)]).when(dispatch).then([dispatched('c1:invoke', 2)]);
      spec.given([ready, dispatched('c1:invoke', 1), dispatched('c1:invoke', 2)]).when(dispatch).thenThrows('conflict', 'tool_call_interrupted');
      spec.given([ready, dispatched('c1:invoke', 1), challenged, resumed]).when(dispatch).then([dispatched('c1:resume:1', 1)]);
      spec.given([ready, dispatched('c1:invoke', 1), succeeded]).when(dispatch).thenThrows('conflict', 'tool_call_not_ready');
      // An integration's tool call is never dispatched.
      spec.given([requested({ risk: 'read', awaiting_approval: false })]).when(dispatch).thenThrows('conflict', 'tool_call_not_connector');
      spec.given([requested({ ...connectorCall, awaiting_approval: true })]).when(dispatch).thenThrows('conflict', 'tool_call_not_ready');
    });

    it('is challenged, resumed with the answer sealed, and answered; a challenged call has no outcome yet and is resumed once', () => {
      spec.given([ready, dispatched('c1:invoke', 1)]).when(challenge).then([challenged]);
      spec.given([ready, dispatched('c1:invoke', 1), challenged]).when(resume).then([resumed]);
      spec.given([ready, dispatched('c1:invoke', 1), challenged]).when(success).thenThrows('conflict', 'tool_call_not_ready');
      spec.given([ready, dispatched('c1:invoke', 1), challenged, resumed]).when(resume).thenThrows('conflict', 'tool_call_not_challenged');
      spec.given([ready, dispatched('c1:invoke', 1), challenged, resumed, dispatched('c1:resume:1', 1)]).when(success).then([succeeded]);
      spec.given([ready]).when(resume).thenThrows('conflict', 'tool_call_not_challenged');
      spec.given([ready, dispatched('c1:invoke', 1), challenged]).when({ ...resume, data: { ...resume.data, tenant_id: 't2' } } as ToolCallCommand).thenThrows('not_found', 'tool_call_not_found');
    });
  });
});
