// The handoff delivery process manager (given/when/then): a redelivered trigger posts nothing
// twice, failures are retried on an exponential schedule recorded as events, and the last
// failure gives the handoff up. tests/api/handoff-delivery.test.ts runs the saga against a
// local webhook.

import { type HandoffDeliveryInput, type HandoffDeliveryOutput, handoffDelivery } from '../../application/handoff/handoff-delivery';
import { FIXED_NOW } from '../support/decider-spec';
import { processManagerSpec } from '../support/process-manager-spec';
import { delivered, failed, plus, requested, started } from '../support/handoff-events';

describe('handoff delivery (process manager)', () => {
  const spec = processManagerSpec(handoffDelivery({ maxAttempts: 3, backoffMs: (attempt) => 1000 * 2 ** (attempt - 1), outcomeTimeoutMs: 60_000 }));
  const post = (attempt: number): HandoffDeliveryOutput => ({ type: 'PostHandoff', data: { handoff_id: 'h1', attempt } });
  const trigger: HandoffDeliveryInput = { type: 'HandoffRequested', data: { handoff_id: 'h1' } };
  const due: HandoffDeliveryInput = { type: 'HandoffDeliveryDue', data: { handoff_id: 'h1' } };
  const refused = (attempt: number): HandoffDeliveryInput => ({ type: 'WebhookFailed', data: { handoff_id: 'h1', attempt, status_code: 500, error: 'the webhook answered HTTP 500' } });
  const accepted = (attempt: number): HandoffDeliveryInput => ({ type: 'WebhookAccepted', data: { handoff_id: 'h1', attempt, status_code: 204 } });

  it('asks to post a requested handoff, and nothing when the trigger comes again', () => {
    spec.given([requested]).when(trigger).then([post(1)]);
    spec.given([requested, started(1)]).when(trigger).thenNothingHappened();
    spec.given([requested, started(1), delivered]).when(trigger).thenNothingHappened();
    spec.given([requested, started(1), failed(1, plus(1000))]).when(trigger).thenNothingHappened();
  });

  it('records the webhook accepting it, once', () => {
    spec.given([requested, started(1)]).when(accepted(1)).then([{ type: 'RecordHandoffDelivered', data: { attempt: 1, status_code: 204 } }]);
    spec.given([requested, started(1), delivered]).when(accepted(1)).thenNothingHappened();
  });

  it('schedules the next attempt with exponential back-off, and gives up after the last', () => {
    spec.given([requested, started(1)]).when(refused(1)).then([
      { type: 'RecordHandoffFailure', data: { attempt: 1, status_code: 500, error: 'the webhook answered HTTP 500', next_attempt_at: plus(1000).toISOString() } },
    ]);
    spec.given([requested, started(1), failed(1, FIXED_NOW), started(2)]).when(refused(2)).then([
      { type: 'RecordHandoffFailure', data: { attempt: 2, status_code: 500, error: 'the webhook answered HTTP 500', next_attempt_at: plus(2000).toISOString() } },
    ]);
    spec
      .given([requested, started(1), failed(1, FIXED_NOW), started(2), failed(2, FIXED_NOW), started(3)])
      .when(refused(3))
      .then([{ type: 'AbandonHandoff', data: { attempt: 3, status_code: 500, error: 'the webhook answered HTTP 500', reason: 'attempts_exhausted' } }]);
  });

  it('posts a retry when it is due, not before', () => {
    spec.given([requested, started(1), failed(1, plus(1000))]).when(due).thenNothingHappened();
    spec.given([requested, started(1), failed(1, plus(1000))]).when(due, plus(1000)).then([post(2)]);
  });

  it('takes an attempt without outcome, or a request nobody picked up, as lost once overdue', () => {
    spec.given([requested, started(1)]).when(due, plus(59_999)).thenNothingHappened();
    spec.given([requested, started(1)]).when(due, plus(60_000)).then([
      { type: 'RecordHandoffFailure', data: { attempt: 1, status_code: null, error: "no outcome recorded within 60000 ms of the attempt's start", next_attempt_at: plus(61_000).toISOString() } },
    ]);
    spec.given([requested]).when(due).thenNothingHappened();
    spec.given([requested]).when(due, plus(30_000)).then([post(1)]);
  });

  it('gives the handoff up when handoffs were turned off before its next attempt', () => {
    const withdrawn = (attempts: number): HandoffDeliveryInput => ({ type: 'HandoffWithdrawn', data: { handoff_id: 'h1', attempts, error: 'off' } });
    spec.given([requested]).when(withdrawn(0)).then([{ type: 'AbandonHandoff', data: { attempt: 0, status_code: null, error: 'off', reason: 'withdrawn' } }]);
    spec.given([requested, started(1), failed(1, FIXED_NOW)]).when(withdrawn(1)).then([{ type: 'AbandonHandoff', data: { attempt: 1, status_code: null, error: 'off', reason: 'withdrawn' } }]);
    spec.given([requested, started(1)]).when(withdrawn(0)).thenNothingHappened();
  });
});
