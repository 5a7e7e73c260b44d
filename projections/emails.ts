// Read model `emails`: the outbox as the super admin lists it (never the sealed body), and
// what the mail delivery saga's due pass looks for: `retrying` emails by `next_attempt_at`,
// `sending` ones by `last_attempt_at`, `queued` ones by `queued_at`.

import { type EmailEvent, type EmailStatus, emailEvents } from '../domain/email/email';
import type { EventProjection } from './projection';

type DocumentStatus = Exclude<EmailStatus, 'absent'>;

export interface EmailDocument {
  id: string;
  tenant_id: string | null;
  to: string;
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

export const emailsProjection: EventProjection<EmailEvent['type']> = {
  name: 'emails',
  version: 2,
  collections: [
    {
      name: EMAILS,
      indexes: [{ field: 'queued_at' }, { field: 'status' }, { field: 'to' }, { field: 'tenant_id' }, { field: 'next_attempt_at' }, { field: 'last_attempt_at' }],
    },
  ],
  handles: emailEvents.types,
  async apply(event, view) {
    if (event.type === 'EmailQueued') {
      const doc: EmailDocument = {
        id: event.data.email_id,
        tenant_id: event.metadata.tenant_id,
        to: event.data.to,
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
        position: event.position,
      };
      view.put(EMAILS, doc);
      return;
    }
    // A read of the body changes nothing the outbox lists; it lives in the event log and the audit log.
    if (event.type === 'EmailBodyRead') return;
    const current = await view.get<EmailDocument>(EMAILS, event.data.email_id);
    if (!current || current.position >= event.position) return;
    const position = event.position;
    switch (event.type) {
      case 'EmailSendStarted':
        view.patch(EMAILS, current.id, { status: 'sending', attempts: event.data.attempt, last_attempt_at: event.data.started_at, next_attempt_at: null, position });
        return;
      case 'EmailSent':
        view.patch(EMAILS, current.id, {
          status: 'sent',
          sent_at: event.data.sent_at,
          provider: event.data.provider,
          // Emails sent before attempts were recorded count their one attempt here.
          attempts: current.status === 'sending' ? current.attempts : current.attempts + 1,
          next_attempt_at: null,
          position,
        });
        return;
      case 'EmailKept':
        // Not sent: no transport took it (sent_at stays null).
        view.patch(EMAILS, current.id, { status: 'kept', provider: event.data.provider, next_attempt_at: null, position });
        return;
      case 'EmailSendFailed':
        view.patch(EMAILS, current.id, {
          status: 'retrying',
          last_error: event.data.error,
          attempts: Math.max(current.attempts, event.data.attempt),
          next_attempt_at: event.data.next_attempt_at,
          position,
        });
        return;
      case 'EmailAbandoned':
        view.patch(EMAILS, current.id, { status: 'abandoned', last_error: event.data.error, attempts: event.data.attempts, next_attempt_at: null, abandoned_at: event.data.abandoned_at, position });
        return;
      case 'EmailFailed':
        view.patch(EMAILS, current.id, {
          status: 'retrying',
          last_error: event.data.error,
          attempts: Math.max(current.attempts, event.data.attempt),
          next_attempt_at: event.data.failed_at,
          position,
        });
        return;
    }
  },
};
