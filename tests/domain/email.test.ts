import type { EmailEvent } from '../../domain/email/email';
import { emailDecider } from '../../domain/email/email';
import { FIXED_NOW, deciderSpec } from '../support/decider-spec';

const spec = deciderSpec(emailDecider);
const at = FIXED_NOW.toISOString();
const queued: EmailEvent = {
  type: 'EmailQueued',
  data: { email_id: 'e1', to: 'ada@example.com', subject: 'Verify your email', body_sealed: 'sealed', kind: 'email_verification', queued_at: '2026-11-22T09:00:00.000Z' },
};
const started = (attempt: number): EmailEvent => ({ type: 'EmailSendStarted', data: { email_id: 'e1', attempt, started_at: at } });
const failed = (attempt: number, next: string): EmailEvent => ({ type: 'EmailSendFailed', data: { email_id: 'e1', attempt, error: 'refused', failed_at: at, next_attempt_at: next } });
const sent: EmailEvent = { type: 'EmailSent', data: { email_id: 'e1', provider: 'log', provider_message_id: null, sent_at: at } };

describe('email decider (the outbox)', () => {
  it('queues once', () => {
    spec.given([]).when({ type: 'QueueEmail', data: { email_id: 'e1', to: 'ada@example.com', subject: 'Verify your email', body_sealed: 'sealed', kind: 'email_verification' } }).then([
      { ...queued, data: { ...queued.data, queued_at: at } },
    ]);
    spec.given([queued]).when({ type: 'QueueEmail', data: { email_id: 'e1', to: 'x@example.com', subject: 's', body_sealed: 'b', kind: 'k' } }).thenThrows('conflict', 'email_exists');
  });

  describe('claiming an attempt before the mailer is called', () => {
    it('claims the next attempt only', () => {
      spec.given([queued]).when({ type: 'StartEmailAttempt', data: { attempt: 1 } }).then([started(1)]);
      spec.given([queued, started(1), failed(1, at)]).when({ type: 'StartEmailAttempt', data: { attempt: 2 } }).then([started(2)]);
    });

    it('records nothing for an attempt already claimed, a skipped one, or a sent email', () => {
      spec.given([queued, started(1)]).when({ type: 'StartEmailAttempt', data: { attempt: 1 } }).thenNothingHappened();
      spec.given([queued]).when({ type: 'StartEmailAttempt', data: { attempt: 2 } }).thenNothingHappened();
      spec.given([queued, started(1), sent]).when({ type: 'StartEmailAttempt', data: { attempt: 2 } }).thenNothingHappened();
    });

    it('is not found for an email never queued', () => {
      spec.given([]).when({ type: 'StartEmailAttempt', data: { attempt: 1 } }).thenThrows('not_found', 'email_not_found');
    });
  });

  describe('outcomes', () => {
    it('records a failure of the attempt in flight with its next attempt, and nothing for an attempt already settled', () => {
      const next = '2026-11-22T10:00:01.000Z';
      spec.given([queued, started(1)]).when({ type: 'RecordEmailFailure', data: { attempt: 1, error: 'refused', next_attempt_at: next } }).then([failed(1, next)]);
      spec.given([queued, started(1), failed(1, next)]).when({ type: 'RecordEmailFailure', data: { attempt: 1, error: 'refused', next_attempt_at: next } }).thenNothingHappened();
      spec.given([queued, started(1), failed(1, next), started(2)]).when({ type: 'RecordEmailFailure', data: { attempt: 1, error: 'late', next_attempt_at: next } }).thenNothingHappened();
    });

    it('abandons after the attempt in flight only', () => {
      spec.given([queued, started(3)]).when({ type: 'AbandonEmail', data: { attempt: 3, error: 'refused' } }).then([
        { type: 'EmailAbandoned', data: { email_id: 'e1', attempts: 3, error: 'refused', abandoned_at: at } },
      ]);
      spec.given([queued, started(3), sent]).when({ type: 'AbandonEmail', data: { attempt: 3, error: 'refused' } }).thenNothingHappened();
    });

    it('records a success once, even one that arrives after the attempt was given up', () => {
      const command = { type: 'RecordEmailSent' as const, data: { provider: 'log', provider_message_id: null } };
      spec.given([queued, started(1)]).when(command).then([sent]);
      spec.given([queued, started(1), sent]).when(command).thenNothingHappened();
      spec.given([queued, started(1), { type: 'EmailAbandoned', data: { email_id: 'e1', attempts: 1, error: 'x', abandoned_at: at } }]).when(command).then([sent]);
    });
  });

  const sentBySmtp: EmailEvent = { type: 'EmailSent', data: { email_id: 'e1', provider: 'smtp', provider_message_id: null, sent_at: at } };

  describe('an admin reading the body', () => {
    it('is recorded whether the email is queued or already sent, with whether codes were shown', () => {
      spec.given([queued]).when({ type: 'RecordEmailBodyRead', data: { admin_id: 'a1', codes_shown: true } }).then([
        { type: 'EmailBodyRead', data: { email_id: 'e1', admin_id: 'a1', codes_shown: true, read_at: at } },
      ]);
      spec.given([queued, sentBySmtp]).when({ type: 'RecordEmailBodyRead', data: { admin_id: 'a1', codes_shown: false } }).then([
        { type: 'EmailBodyRead', data: { email_id: 'e1', admin_id: 'a1', codes_shown: false, read_at: at } },
      ]);
    });

    it('is recorded again on every read, and does not change delivery', () => {
      const read: EmailEvent = { type: 'EmailBodyRead', data: { email_id: 'e1', admin_id: 'a1', codes_shown: true, read_at: at } };
      spec.given([queued, read]).when({ type: 'RecordEmailBodyRead', data: { admin_id: 'a2', codes_shown: true } }).then([
        { type: 'EmailBodyRead', data: { email_id: 'e1', admin_id: 'a2', codes_shown: true, read_at: at } },
      ]);
      spec.given([queued, read]).when({ type: 'RecordEmailSent', data: { provider: 'smtp', provider_message_id: null } }).then([sentBySmtp]);
    });

    it('refuses an email that does not exist', () => {
      spec.given([]).when({ type: 'RecordEmailBodyRead', data: { admin_id: 'a1', codes_shown: true } }).thenThrows('not_found', 'email_not_found');
    });
  });
});
