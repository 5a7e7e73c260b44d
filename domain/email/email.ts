// The email aggregate: the outbox. Every email the platform sends is an event first, its
// body sealed (it may carry a one-time code); the mail delivery saga sends it and records
// every attempt here, so the stream alone says whether an email went out, is being sent,
// waits for a scheduled retry, or was given up. A super admin reading the body is recorded
// too, so no operator reads a code silently. The recipient's address is sealed under the key of
// whose email it is (`data_subject`). Stream `email-<id>`.

import * as t from 'io-ts';
import { type Either, left, right } from 'fp-ts/Either';
import { type EventOf, declareEvent, eventGroup, type GroupEvent } from '../shared/events';
import type { Decider } from '../shared/decider';
import { type DomainError, conflict, notFound } from '../shared/errors';
import { toStreamName } from '../shared/stream-names';

/**
 * `data_subject` is whose email it is (`user:<id>` for an account's, `invitation:<id>` for an
 * invitee's): the recipient's address is sealed under that subject's key, so erasing the
 * subject (closing the account) erases it. Emails queued before it was recorded have their
 * address in clear. `unsubscribe_url_sealed`: see application/notification/unsubscribe-links.ts.
 */
export const EmailQueued = declareEvent(
  'EmailQueued',
  t.intersection([
    t.type({ email_id: t.string, to: t.string, subject: t.string, body_sealed: t.string, kind: t.string, queued_at: t.string }),
    // The one-click unsubscribe link of an email a person may do without (List-Unsubscribe),
    // sealed like the body: whoever holds it turns that person's email off.
    t.partial({ data_subject: t.string, unsubscribe_url_sealed: t.string }),
  ]),
);
/** An attempt is claimed before the mailer is called: of two deliveries racing, one sends. */
export const EmailSendStarted = declareEvent('EmailSendStarted', t.type({ email_id: t.string, attempt: t.number, started_at: t.string }));
export const EmailSent = declareEvent('EmailSent', t.type({ email_id: t.string, provider: t.string, provider_message_id: t.union([t.string, t.null]), sent_at: t.string }));
/** An attempt failed; the next one is due at `next_attempt_at`. */
export const EmailSendFailed = declareEvent(
  'EmailSendFailed',
  t.type({ email_id: t.string, attempt: t.number, error: t.string, failed_at: t.string, next_attempt_at: t.string }),
);
/**
 * The mailer hands emails to no transport (no SMTP_URL: development, or production with
 * MAIL_OUTBOX_ONLY=true): the email is kept in the outbox, readable by the super admin, and
 * never counted as sent.
 */
export const EmailKept = declareEvent('EmailKept', t.type({ email_id: t.string, provider: t.string, kept_at: t.string }));
/** The last attempt failed: no more attempts. */
export const EmailAbandoned = declareEvent('EmailAbandoned', t.type({ email_id: t.string, attempts: t.number, error: t.string, abandoned_at: t.string }));
/**
 * Recorded before retries were events (infrastructure redelivery retried the email). Read
 * as EmailSendFailed with `next_attempt_at = failed_at` (a retry due at once), so such an
 * email is finished under the current rules; with the event registry, an upcaster.
 */
export const EmailFailed = declareEvent('EmailFailed', t.type({ email_id: t.string, error: t.string, attempt: t.number, failed_at: t.string }));
/** A super admin opened the body; `codes_shown` says whether its one-time codes were left in. */
export const EmailBodyRead = declareEvent('EmailBodyRead', t.type({ email_id: t.string, admin_id: t.string, codes_shown: t.boolean, read_at: t.string }));
export const emailEvents = eventGroup('email', [EmailQueued, EmailSendStarted, EmailSent, EmailKept, EmailSendFailed, EmailAbandoned, EmailFailed, EmailBodyRead], {
  // Erased with its subject (the user group's UserAccountClosed); an email naming none is its own.
  subject: (data) => (typeof data.data_subject === 'string' ? data.data_subject : `email:${String(data.email_id)}`),
  fields: { EmailQueued: ['to'] },
});
export type EmailEvent = GroupEvent<typeof emailEvents>;
export type EmailQueuedEvent = EventOf<typeof EmailQueued>;

export type EmailCommand =
  | { type: 'QueueEmail'; data: Omit<EventOf<typeof EmailQueued>['data'], 'queued_at'> }
  | { type: 'StartEmailAttempt'; data: { attempt: number } }
  | { type: 'RecordEmailSent'; data: { provider: string; provider_message_id: string | null } }
  | { type: 'RecordEmailKept'; data: { provider: string } }
  | { type: 'RecordEmailFailure'; data: { attempt: number; error: string; next_attempt_at: string } }
  | { type: 'AbandonEmail'; data: { attempt: number; error: string } }
  | { type: 'RecordEmailBodyRead'; data: { admin_id: string; codes_shown: boolean } };

interface Outbox {
  email_id: string;
  queued_at: string;
  /** Attempts started so far. */
  attempts: number;
  last_error: string | null;
}

export type EmailState =
  | { status: 'absent' }
  | ({ status: 'queued' } & Outbox)
  | ({ status: 'sending'; started_at: string } & Outbox)
  | ({ status: 'retrying'; next_attempt_at: string } & Outbox)
  | ({ status: 'sent' } & Outbox)
  | ({ status: 'kept' } & Outbox)
  | ({ status: 'abandoned' } & Outbox);

export type EmailStatus = EmailState['status'];

export const emailStream = (emailId: string): string => toStreamName(emailEvents.category, emailId);

const outboxOf = ({ email_id, queued_at, attempts, last_error }: Outbox): Outbox => ({ email_id, queued_at, attempts, last_error });

export const emailDecider: Decider<EmailCommand, EmailEvent, EmailState> = {
  initialState: () => ({ status: 'absent' }),
  evolve(state, event) {
    if (event.type === 'EmailQueued') return { status: 'queued', email_id: event.data.email_id, queued_at: event.data.queued_at, attempts: 0, last_error: null };
    if (state.status === 'absent') return state;
    const outbox = outboxOf(state);
    switch (event.type) {
      case 'EmailSendStarted':
        return { ...outbox, status: 'sending', attempts: event.data.attempt, started_at: event.data.started_at };
      case 'EmailSent':
        return { ...outbox, status: 'sent' };
      case 'EmailKept':
        return { ...outbox, status: 'kept' };
      case 'EmailSendFailed':
        return { ...outbox, status: 'retrying', attempts: Math.max(outbox.attempts, event.data.attempt), last_error: event.data.error, next_attempt_at: event.data.next_attempt_at };
      case 'EmailAbandoned':
        return { ...outbox, status: 'abandoned', last_error: event.data.error };
      case 'EmailFailed':
        // Exactly an EmailSendFailed due at once (the old decider recorded nothing after EmailSent).
        return { ...outbox, status: 'retrying', attempts: Math.max(outbox.attempts, event.data.attempt), last_error: event.data.error, next_attempt_at: event.data.failed_at };
      case 'EmailBodyRead':
        return state;
    }
  },
  decide(command, state, { now }): Either<DomainError, EmailEvent[]> {
    if (command.type === 'QueueEmail') {
      if (state.status !== 'absent') return left(conflict('email_exists', 'the email is already queued'));
      return right([{ type: 'EmailQueued', data: { ...command.data, queued_at: now.toISOString() } }]);
    }
    if (state.status === 'absent') return left(notFound('email_not_found', 'no such email'));
    const { email_id } = state;
    // Every read of the body is recorded, whatever the delivery's state.
    if (command.type === 'RecordEmailBodyRead') {
      return right([{ type: 'EmailBodyRead', data: { email_id, ...command.data, read_at: now.toISOString() } }]);
    }
    // Outcomes and claims that no longer fit the state (another delivery settled the attempt
    // first) record nothing: the stream already says what happened.
    switch (command.type) {
      case 'StartEmailAttempt': {
        const next = state.status === 'queued' || state.status === 'retrying' ? state.attempts + 1 : null;
        return right(command.data.attempt === next ? [{ type: 'EmailSendStarted', data: { email_id, attempt: next, started_at: now.toISOString() } }] : []);
      }
      case 'RecordEmailSent':
        // A late success is still the truth, whatever was decided meanwhile.
        return right(state.status === 'sent' ? [] : [{ type: 'EmailSent', data: { email_id, ...command.data, sent_at: now.toISOString() } }]);
      case 'RecordEmailKept':
        return right(state.status === 'sent' || state.status === 'kept' ? [] : [{ type: 'EmailKept', data: { email_id, ...command.data, kept_at: now.toISOString() } }]);
      case 'RecordEmailFailure':
        if (state.status !== 'sending' || state.attempts !== command.data.attempt) return right([]);
        return right([{ type: 'EmailSendFailed', data: { email_id, ...command.data, failed_at: now.toISOString() } }]);
      case 'AbandonEmail':
        if (state.status !== 'sending' || state.attempts !== command.data.attempt) return right([]);
        return right([{ type: 'EmailAbandoned', data: { email_id, attempts: command.data.attempt, error: command.data.error, abandoned_at: now.toISOString() } }]);
    }
  },
};
