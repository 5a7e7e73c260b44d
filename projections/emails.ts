// Read model `emails`: the outbox as the super admin lists it (never the sealed body), and
// what the mail delivery saga's due pass looks for: `retrying` emails by `next_attempt_at`,
// `sending` ones by `last_attempt_at`, `queued` ones by `queued_at`. A closed account's emails
// leave it (UserAccountClosed), and an erased invitation's (InvitationErased): their recipient
// was the person's.

import { type EmailEvent, type EmailStatus, emailEvents } from '../domain/email/email';
import { invitationSubject } from '../domain/invitation/invitation';
import { userSubject } from '../domain/user/events';
import { documentProjection } from './document-projection';
import type { EventProjection } from './projection';

type DocumentStatus = Exclude<EmailStatus, 'absent'>;

export interface EmailDocument {
  id: string;
  tenant_id: string | null;
  to: string;
  /** Whose email it is (`user:<id>`, `invitation:<id>`); null for emails queued before it was recorded. */
  data_subject: string | null;
  subject: string;
  kind: string;
  status: DocumentStatus;
  queued_at: string;
  sent_at: string | null;
  provider: string | null;
  last_error: string | null;
  /** Attempts started. */
  attempts: number;
  /** When the latest attempt started. */
  last_attempt_at: string | null;
  /** When the next attempt is due (status `retrying`). */
  next_attempt_at: string | null;
  abandoned_at: string | null;
  body_sealed: string;
  position: number;
  [field: string]: unknown;
}

export const EMAILS = 'emails';

const emailDocuments = documentProjection<EmailEvent['type'], EmailDocument>({
  name: 'emails',
  // 3: `data_subject`, and a closed account's emails dropped.
  version: 3,
  collection: {
    name: EMAILS,
    indexes: [{ field: 'queued_at' }, { field: 'status' }, { field: 'to' }, { field: 'tenant_id' }, { field: 'next_attempt_at' }, { field: 'last_attempt_at' }, { field: 'data_subject' }],
  },
  handles: emailEvents.types,
  documentId: (event) => event.data.email_id,
  evolve(current, event) {
    if (event.type === 'EmailQueued') {
      return {
        id: event.data.email_id,
        tenant_id: event.metadata.tenant_id,
        to: event.data.to,
        data_subject: event.data.data_subject ?? null,
        subject: event.data.subject,
        kind: event.data.kind,
        status: 'queued',
        queued_at: event.data.queued_at,
        sent_at: null,
        provider: null,
        last_error: null,
        attempts: 0,
        last_attempt_at: null,
        next_attempt_at: null,
        abandoned_at: null,
        body_sealed: event.data.body_sealed,
      };
    }
    if (!current) return null;
    switch (event.type) {
      // A read of the body changes nothing the outbox lists; it lives in the event log and the audit log.
      case 'EmailBodyRead':
        return current;
      case 'EmailSendStarted':
        return { ...current, status: 'sending', attempts: event.data.attempt, last_attempt_at: event.data.started_at, next_attempt_at: null };
      case 'EmailSent':
        return {
          ...current,
          status: 'sent',
          sent_at: event.data.sent_at,
          provider: event.data.provider,
          // Emails sent before attempts were recorded count their one attempt here.
          attempts: current.status === 'sending' ? current.attempts : current.attempts + 1,
          next_attempt_at: null,
        };
      case 'EmailKept':
        // Not sent: no transport took it (sent_at stays null).
        return { ...current, status: 'kept', provider: event.data.provider, next_attempt_at: null };
      case 'EmailSendFailed':
        return { ...current, status: 'retrying', last_error: event.data.error, attempts: Math.max(current.attempts, event.data.attempt), next_attempt_at: event.data.next_attempt_at };
      case 'EmailAbandoned':
        return { ...current, status: 'abandoned', last_error: event.data.error, attempts: event.data.attempts, next_attempt_at: null, abandoned_at: event.data.abandoned_at };
      case 'EmailFailed':
        return { ...current, status: 'retrying', last_error: event.data.error, attempts: Math.max(current.attempts, event.data.attempt), next_attempt_at: event.data.failed_at };
    }
  },
});

export const emailsProjection: EventProjection<EmailEvent['type'] | 'UserAccountClosed' | 'InvitationErased'> = {
  ...emailDocuments,
  handles: [...emailDocuments.handles, 'UserAccountClosed', 'InvitationErased'],
  apply(event, view) {
    if (event.type === 'UserAccountClosed') return view.deleteWhere(EMAILS, { data_subject: userSubject(event.data.user_id) });
    if (event.type === 'InvitationErased') return view.deleteWhere(EMAILS, { data_subject: invitationSubject(event.data.invitation_id) });
    return emailDocuments.apply(event, view);
  },
};
