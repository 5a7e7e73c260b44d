// The pieces of a chat turn's tool steps (application/chat/tool-steps.ts): what the model is
// given back, how the model's arguments are read, the words of a turn that waits for an
// approval, and what the conversation and the tool-call events say about a turn's steps.
// tests/api/chat-tools.test.ts runs them in real turns.

import { expect } from 'chai';
import {
  MAX_TOOL_RESULT_CHARACTERS,
  argumentsOf,
  awaitingApprovalNote,
  settledOutcomeOf,
  recordedStepsOf,
  resultForModel,
  stepFor,
  unmadeCall,
} from '../../application/chat/tool-steps';
import type { ConversationEvent } from '../../domain/conversation/conversation';
import type { RecordedExchange, ToolCallEvent } from '../../domain/tool-call/tool-call';

const AT = '2026-11-22T10:00:00.000Z';
const identity = { tenant_id: 't1', workspace_id: 'w1', tool_call_id: 'tc1', tool_id: 'tool-1' };
const requested: ToolCallEvent = {
  type: 'ToolCallRequested',
  data: {
    ...identity,
    tool_name: 'cancel_order',
    risk: 'approval_required',
    arguments: { order_number: 'A-17' },
    caller: { kind: 'user', id: 'u1' },
    origin: { kind: 'chat', conversation_id: 'c1', reply_to: 'm1', call_id: 'call_a' },
    awaiting_approval: true,
    end_user_token_sealed: null,
    end_user_session_sealed: null,
    requested_at: AT,
  },
};
const approved: ToolCallEvent = { type: 'ToolCallApproved', data: { ...identity, approved_by: { kind: 'user', id: 'admin-1' }, approved_at: AT } };
const exchange = (body: string, status = 200): RecordedExchange => ({
  request: { method: 'POST', url: 'https://shop.example/orders/A-17/cancel', headers: {}, body: null },
  response: { status, headers: {}, body, truncated: false },
});

describe('chat tool steps', () => {
  describe('what the model is given back', () => {
    it('says how each outcome went, with the API’s answer where there is one', () => {
      expect(JSON.parse(resultForModel({ status: 'succeeded', tool_call_id: 'tc1', http_status: 200, latency_ms: 4, result: { state: 'shipped' } }))).to.deep.equal({
        status: 'succeeded',
        http_status: 200,
        result: { state: 'shipped' },
      });
      expect(JSON.parse(resultForModel({ status: 'failed', tool_call_id: 'tc1', code: 'http_error', message: 'the API answered HTTP 404', http_status: 404, latency_ms: 4, result: { error: 'no such order' } }))).to.deep.equal({
        status: 'failed',
        error: { code: 'http_error', message: 'the API answered HTTP 404' },
        http_status: 404,
        result: { error: 'no such order' },
      });
      expect(JSON.parse(resultForModel(unmadeCall('unknown_tool', 'no tool named "x" is offered')))).to.deep.equal({
        status: 'failed',
        error: { code: 'unknown_tool', message: 'no tool named "x" is offered' },
        http_status: null,
        result: null,
      });
      expect(JSON.parse(resultForModel({ status: 'awaiting_approval', tool_call_id: 'tc1' }))).to.deep.equal({
        status: 'awaiting_approval',
        message: 'An owner or admin of the organization must approve this call before it runs: it has not run yet.',
      });
      expect(JSON.parse(resultForModel({ status: 'refused', tool_call_id: 'tc1', reason: 'already shipped' }))).to.deep.equal({ status: 'refused', reason: 'already shipped' });
    });

    it('cuts a result longer than MAX_TOOL_RESULT_CHARACTERS, saying so', () => {
      const long = 'x'.repeat(MAX_TOOL_RESULT_CHARACTERS * 2);
      const given = resultForModel({ status: 'succeeded', tool_call_id: 'tc1', http_status: 200, latency_ms: 4, result: long });
      const parsed = JSON.parse(given);
      expect(parsed).to.include({ status: 'succeeded', truncated: true });
      expect(parsed.result_text).to.have.length(MAX_TOOL_RESULT_CHARACTERS);
      expect(given.length).to.be.below(MAX_TOOL_RESULT_CHARACTERS + 100);
    });
  });

  it('reads the model’s arguments as a JSON object only (empty is no arguments)', () => {
    expect(argumentsOf('{"order_number":"A-17"}')).to.deep.equal({ order_number: 'A-17' });
    expect(argumentsOf('')).to.deep.equal({});
    expect(argumentsOf('  ')).to.deep.equal({});
    for (const bad of ['{"order_number": A-', '[1, 2]', 'null', '"A-17"', '17']) expect(argumentsOf(bad), bad).to.equal(null);
  });

  it('says plainly which actions await approval', () => {
    expect(awaitingApprovalNote(['cancel_order'])).to.equal(
      'The action “cancel_order” awaits approval by an owner or admin of the organization: it has not run yet. Its result will be reported here once it has.',
    );
    expect(awaitingApprovalNote(['cancel_order', 'refund_order', 'cancel_order', 'block_card'])).to.equal(
      'The actions “cancel_order”, “refund_order” and “block_card” await approval by an owner or admin of the organization: they have not run yet. Their results will be reported here once they have.',
    );
  });

  describe('a recorded call’s outcome', () => {
    it('is none while the call waits or runs', () => {
      expect(settledOutcomeOf([requested])).to.equal(null);
      expect(settledOutcomeOf([requested, approved])).to.equal(null);
    });

    it('is the API’s answer as JSON, its text when it is not JSON, null when empty (as callTool answers it)', () => {
      const succeeded = (body: string): ToolCallEvent => ({ type: 'ToolCallSucceeded', data: { ...identity, status: 200, latency_ms: 12, exchange: exchange(body), finished_at: AT } });
      expect(settledOutcomeOf([requested, approved, succeeded('{"cancelled":true}')])).to.deep.equal({ status: 'succeeded', tool_call_id: 'tc1', http_status: 200, latency_ms: 12, result: { cancelled: true } });
      expect(settledOutcomeOf([requested, approved, succeeded('cancelled')])).to.deep.include({ result: 'cancelled' });
      expect(settledOutcomeOf([requested, approved, succeeded('')])).to.deep.include({ result: null });
    });

    it('is a failure with its code, and the answer when the API gave one; or a refusal with its reason', () => {
      const failed = (withExchange: boolean): ToolCallEvent => ({
        type: 'ToolCallFailed',
        data: { ...identity, code: withExchange ? 'http_error' : 'timeout', message: 'm', status: withExchange ? 409 : null, latency_ms: 30, exchange: withExchange ? exchange('{"error":"shipped"}', 409) : null, finished_at: AT },
      });
      expect(settledOutcomeOf([requested, approved, failed(true)])).to.deep.equal({ status: 'failed', tool_call_id: 'tc1', code: 'http_error', message: 'm', http_status: 409, latency_ms: 30, result: { error: 'shipped' } });
      expect(settledOutcomeOf([requested, approved, failed(false)])).to.deep.equal({ status: 'failed', tool_call_id: 'tc1', code: 'timeout', message: 'm', http_status: null, latency_ms: 30, result: null });
      const refused: ToolCallEvent = { type: 'ToolCallRefused', data: { ...identity, refused_by: { kind: 'user', id: 'admin-1' }, reason: 'no', refused_at: AT } };
      expect(settledOutcomeOf([requested, refused])).to.deep.equal({ status: 'refused', tool_call_id: 'tc1', reason: 'no' });
    });
  });

  it('reads each turn’s steps from the conversation at their last status, in the order first recorded', () => {
    const step = (reply_to: string, step_id: string, status: 'succeeded' | 'awaiting_approval' | 'failed', tool_call_id: string | null): ConversationEvent => ({
      type: 'AssistantToolStepRecorded',
      data: { conversation_id: 'c1', tenant_id: 't1', reply_to, step_id, call_id: step_id.split(':')[1], tool_name: 'cancel_order', tool_id: 'tool-1', tool_call_id, status, error: null, recorded_at: AT },
    });
    const steps = recordedStepsOf([
      step('m1', '0:call_a', 'awaiting_approval', 'tc1'),
      step('m1', '0:call_b', 'failed', null),
      step('m2', '0:call_a', 'succeeded', 'tc9'),
      step('m1', '0:call_a', 'succeeded', 'tc1'),
    ]);
    expect(steps.get('m1')!.map((view) => [view.step_id, view.status])).to.deep.equal([
      ['0:call_a', 'succeeded'],
      ['0:call_b', 'failed'],
    ]);
    expect(steps.get('m2')!.map((view) => view.tool_call_id)).to.deep.equal(['tc9']);
    expect(steps.has('m3')).to.equal(false);
    // Given to the model again, a step carries its recorded arguments (none when no call was made).
    const [made, unmade] = steps.get('m1')!;
    expect(stepFor(made, { order_number: 'A-17' }, { status: 'refused', tool_call_id: 'tc1', reason: 'no' }).call).to.deep.equal({ id: 'call_a', name: 'cancel_order', arguments: '{"order_number":"A-17"}' });
    expect(stepFor(unmade, null, unmadeCall('invalid_arguments_json', 'x')).call.arguments).to.equal('{}');
  });
});
