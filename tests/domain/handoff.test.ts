// The handoff aggregate: one delivery of a handed-off conversation, every attempt and its
// outcome an event (given/when/then).

import { type HandoffEvent, type HandoffRequestedData, handoffDecider } from '../../domain/handoff/handoff';
import { FIXED_NOW, deciderSpec } from '../support/decider-spec';

const plus = (ms: number): Date => new Date(FIXED_NOW.getTime() + ms);
const request: HandoffRequestedData = {
  handoff_id: 'h1',
  tenant_id: 't1',
  conversation_id: 'c1',
  conversation_revision: 4,
  handed_off_by: { kind: 'user', id: 'u1' },
  handed_off_at: plus(-60_000).toISOString(),
  url: 'https://desk.example.com/hook',
  requested_at: plus(-30_000).toISOString(),
};
const requested: HandoffEvent = { type: 'HandoffRequested', data: request };
const started = (attempt: number, at = FIXED_NOW): HandoffEvent => ({ type: 'HandoffAttemptStarted', data: { handoff_id: 'h1', attempt, url: request.url, started_at: at.toISOString() } });
const failed = (attempt: number, next: Date): HandoffEvent => ({
  type: 'HandoffDeliveryFailed',
  data: { handoff_id: 'h1', attempt, status_code: 500, error: 'the webhook answered HTTP 500', failed_at: FIXED_NOW.toISOString(), next_attempt_at: next.toISOString() },
});
const delivered: HandoffEvent = { type: 'HandoffDelivered', data: { handoff_id: 'h1', attempt: 1, status_code: 204, delivered_at: FIXED_NOW.toISOString() } };

describe('handoff (decider)', () => {
  const spec = deciderSpec(handoffDecider);

  it('is requested once', () => {
    const { requested_at: _at, ...data } = request;
    spec.given([]).when({ type: 'RequestHandoff', data }).then([{ type: 'HandoffRequested', data: { ...data, requested_at: FIXED_NOW.toISOString() } }]);
    spec.given([requested]).when({ type: 'RequestHandoff', data }).thenThrows('conflict', 'handoff_exists');
  });

  it('claims the next attempt only: of two racing deliveries one posts', () => {
    spec.given([requested]).when({ type: 'StartHandoffAttempt', data: { attempt: 1, url: request.url } }).then([started(1)]);
    spec.given([requested, started(1)]).when({ type: 'StartHandoffAttempt', data: { attempt: 1, url: request.url } }).thenNothingHappened();
    spec.given([requested, started(1), failed(1, FIXED_NOW)]).when({ type: 'StartHandoffAttempt', data: { attempt: 2, url: request.url } }).then([started(2)]);
    spec.given([requested, started(1), delivered]).when({ type: 'StartHandoffAttempt', data: { attempt: 2, url: request.url } }).thenNothingHappened();
  });

  it('records an outcome for the attempt under way only; a late success still counts', () => {
    spec.given([requested, started(1)]).when({ type: 'RecordHandoffFailure', data: { attempt: 2, status_code: 500, error: 'x', next_attempt_at: FIXED_NOW.toISOString() } }).thenNothingHappened();
    spec.given([requested, started(1), failed(1, FIXED_NOW)]).when({ type: 'RecordHandoffDelivered', data: { attempt: 1, status_code: 200 } }).then([
      { type: 'HandoffDelivered', data: { handoff_id: 'h1', attempt: 1, status_code: 200, delivered_at: FIXED_NOW.toISOString() } },
    ]);
  });

  it('gives up after the attempt that failed, or before the next one when handoffs were turned off', () => {
    spec.given([requested, started(1)]).when({ type: 'AbandonHandoff', data: { attempt: 1, status_code: 500, error: 'x' } }).then([
      { type: 'HandoffAbandoned', data: { handoff_id: 'h1', attempts: 1, status_code: 500, error: 'x', abandoned_at: FIXED_NOW.toISOString() } },
    ]);
    spec.given([requested]).when({ type: 'AbandonHandoff', data: { attempt: 0, status_code: null, error: 'off' } }).then([
      { type: 'HandoffAbandoned', data: { handoff_id: 'h1', attempts: 0, status_code: null, error: 'off', abandoned_at: FIXED_NOW.toISOString() } },
    ]);
    spec.given([requested, started(1), delivered]).when({ type: 'AbandonHandoff', data: { attempt: 1, status_code: null, error: 'x' } }).thenNothingHappened();
  });
});
