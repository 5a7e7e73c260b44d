// The email aggregate: the outbox. Every email the platform sends is an event first, its
// body sealed (it may carry a one-time code); the mail saga delivers it and records the
// outcome. Stream `email-<id>`.

import * as t from 'io-ts';
import { type Either, left, right } from 'fp-ts/Either';
import { type EventOf, declareEvent, eventGroup, type GroupEvent } from '../shared/events';
import type { Decider } from '../shared/decider';
import { type DomainError, conflict, notFound } from '../shared/errors';
import { toStreamName } from '../shared/stream-names';

export const EmailQueued = declareEvent(
  'EmailQueued',
  t.type({ email_id: t.string, to: t.string, subject: t.string, body_sealed: t.string, kind: t.string, queued_at: t.string }),
);
export const EmailSent = declareEvent('EmailSent', t.type({ email_id: t.string, provider: t.string, provider_message_id: t.union([t.string, t.null]), sent_at: t.string }));
export const EmailFailed = declareEvent('EmailFailed', t.type({ email_id: t.string, error: t.string, attempt: t.number, failed_at: t.string }));
export const emailEvents = eventGroup('email', [EmailQueued, EmailSent, EmailFailed]);
export type EmailEvent = GroupEvent<typeof emailEvents>;

export type EmailCommand =
  | { type: 'QueueEmail'; data: Omit<EventOf<typeof EmailQueued>['data'], 'queued_at'> }
  | { type: 'RecordEmailSent'; data: { provider: string; provider_message_id: string | null } }
  | { type: 'RecordEmailFailure'; data: { error: string; attempt: number } };

export type EmailState = { status: 'absent' } | { status: 'queued' | 'sent'; email_id: string };

export const emailStream = (emailId: string): string => toStreamName(emailEvents.category, emailId);

export const emailDecider: Decider<EmailCommand, EmailEvent, EmailState> = {
  initialState: () => ({ status: 'absent' }),
  evolve(state, event) {
    switch (event.type) {
      case 'EmailQueued':
        return { status: 'queued', email_id: event.data.email_id };
      case 'EmailSent':
        return state.status === 'absent' ? state : { ...state, status: 'sent' };
      case 'EmailFailed':
        return state;
    }
  },
  decide(command, state, { now }): Either<DomainError, EmailEvent[]> {
    if (command.type === 'QueueEmail') {
      if (state.status !== 'absent') return left(conflict('email_exists', 'the email is already queued'));
      return right([{ type: 'EmailQueued', data: { ...command.data, queued_at: now.toISOString() } }]);
    }
    if (state.status === 'absent') return left(notFound('email_not_found', 'no such email'));
    if (state.status === 'sent') return right([]);
    switch (command.type) {
      case 'RecordEmailSent':
        return right([{ type: 'EmailSent', data: { email_id: state.email_id, ...command.data, sent_at: now.toISOString() } }]);
      case 'RecordEmailFailure':
        return right([{ type: 'EmailFailed', data: { email_id: state.email_id, ...command.data, failed_at: now.toISOString() } }]);
    }
  },
};
