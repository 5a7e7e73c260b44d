// The email aggregate: the outbox. Every email the platform sends is an event first, its
// body sealed (it may carry a one-time code); the mail saga delivers it and records the
// outcome. A super admin reading the body is recorded too, so no operator reads a code
// silently. Stream `email-<id>`.

import * as t from 'io-ts';
import { type Either, left, right } from 'fp-ts/Either';
import { eventCodec } from '../shared/codecs';
import type { Decider } from '../shared/decider';
import { type DomainError, conflict, notFound } from '../shared/errors';

export const EmailQueued = eventCodec(
  'EmailQueued',
  t.type({ email_id: t.string, to: t.string, subject: t.string, body_sealed: t.string, kind: t.string, queued_at: t.string }),
);
export const EmailSent = eventCodec('EmailSent', t.type({ email_id: t.string, provider: t.string, provider_message_id: t.union([t.string, t.null]), sent_at: t.string }));
export const EmailFailed = eventCodec('EmailFailed', t.type({ email_id: t.string, error: t.string, attempt: t.number, failed_at: t.string }));
/** A super admin opened the body; `codes_shown` says whether its one-time codes were left in. */
export const EmailBodyRead = eventCodec('EmailBodyRead', t.type({ email_id: t.string, admin_id: t.string, codes_shown: t.boolean, read_at: t.string }));
export const EmailEvent = t.union([EmailQueued, EmailSent, EmailFailed, EmailBodyRead]);
export type EmailEvent = t.TypeOf<typeof EmailEvent>;

export type EmailCommand =
  | { type: 'QueueEmail'; data: Omit<t.TypeOf<typeof EmailQueued>['data'], 'queued_at'> }
  | { type: 'RecordEmailSent'; data: { provider: string; provider_message_id: string | null } }
  | { type: 'RecordEmailFailure'; data: { error: string; attempt: number } }
  | { type: 'RecordEmailBodyRead'; data: { admin_id: string; codes_shown: boolean } };

export type EmailState = { status: 'absent' } | { status: 'queued' | 'sent'; email_id: string };

export const emailStream = (emailId: string): string => `email-${emailId}`;

export const emailDecider: Decider<EmailCommand, EmailEvent, EmailState> = {
  initialState: () => ({ status: 'absent' }),
  evolve(state, event) {
    switch (event.type) {
      case 'EmailQueued':
        return { status: 'queued', email_id: event.data.email_id };
      case 'EmailSent':
        return state.status === 'absent' ? state : { ...state, status: 'sent' };
      case 'EmailFailed':
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
    // Every read is recorded, before and after delivery.
    if (command.type === 'RecordEmailBodyRead') {
      return right([{ type: 'EmailBodyRead', data: { email_id: state.email_id, ...command.data, read_at: now.toISOString() } }]);
    }
    if (state.status === 'sent') return right([]);
    switch (command.type) {
      case 'RecordEmailSent':
        return right([{ type: 'EmailSent', data: { email_id: state.email_id, ...command.data, sent_at: now.toISOString() } }]);
      case 'RecordEmailFailure':
        return right([{ type: 'EmailFailed', data: { email_id: state.email_id, ...command.data, failed_at: now.toISOString() } }]);
    }
  },
};
