// The handoff aggregate: one delivery of a handed-off conversation, every attempt and its
// outcome an event (given/when/then).

import { handoffDecider } from '../../domain/handoff/handoff';
import { FIXED_NOW, deciderSpec } from '../support/decider-spec';
import { delivered, failed, request, requested, started } from '../support/handoff-events';

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
    spec.given([requested, started(1)]).when({ type: 'AbandonHandoff', data: { attempt: 1, status_code: 500, error: 'x', reason: 'attempts_exhausted' } }).then([
      { type: 'HandoffAbandoned', data: { handoff_id: 'h1', attempts: 1, status_code: 500, error: 'x', reason: 'attempts_exhausted', abandoned_at: FIXED_NOW.toISOString() } },
    ]);
    spec.given([requested]).when({ type: 'AbandonHandoff', data: { attempt: 0, status_code: null, error: 'off', reason: 'withdrawn' } }).then([
      { type: 'HandoffAbandoned', data: { handoff_id: 'h1', attempts: 0, status_code: null, error: 'off', reason: 'withdrawn', abandoned_at: FIXED_NOW.toISOString() } },
    ]);
    spec.given([requested, started(1), delivered]).when({ type: 'AbandonHandoff', data: { attempt: 1, status_code: null, error: 'x', reason: 'withdrawn' } }).thenNothingHappened();
  });
});
