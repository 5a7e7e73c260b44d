// Read model `emails`: the outbox as the super admin lists it (never the sealed body).

import { EmailEvent } from '../domain/email/email';
import type { Projection } from './projection';

export interface EmailDocument {
  id: string;
  tenant_id: string | null;
  to: string;
  subject: string;
  kind: string;
  status: 'queued' | 'sent' | 'failed';
  queued_at: string;
  sent_at: string | null;
  provider: string | null;
  last_error: string | null;
  attempts: number;
  body_sealed: string;
  position: number;
  [field: string]: unknown;
}

export const EMAILS = 'emails';

export const emailsProjection: Projection = {
  name: 'emails',
  version: 1,
  collections: [{ name: EMAILS, indexes: [{ field: 'queued_at' }, { field: 'status' }, { field: 'to' }, { field: 'tenant_id' }] }],
  handles: EmailEvent.types.map((codec) => codec.props.type.value),
  async apply(recorded, view) {
    const event = { type: recorded.type, data: recorded.data } as EmailEvent;
    if (event.type === 'EmailQueued') {
      const doc: EmailDocument = {
        id: event.data.email_id,
        tenant_id: recorded.metadata.tenant_id,
        to: event.data.to,
        subject: event.data.subject,
        kind: event.data.kind,
        status: 'queued',
        queued_at: event.data.queued_at,
        sent_at: null,
        provider: null,
        last_error: null,
        attempts: 0,
        body_sealed: event.data.body_sealed,
        position: recorded.position,
      };
      view.put(EMAILS, doc);
      return;
    }
    // A read of the body changes nothing the outbox lists; it lives in the event log and the audit log.
    if (event.type === 'EmailBodyRead') return;
    const current = await view.get<EmailDocument>(EMAILS, event.data.email_id);
    if (!current) return;
    if (event.type === 'EmailSent') {
      view.patch(EMAILS, current.id, { status: 'sent', sent_at: event.data.sent_at, provider: event.data.provider, attempts: current.attempts + 1, position: recorded.position });
    } else {
      view.patch(EMAILS, current.id, { status: 'failed', last_error: event.data.error, attempts: event.data.attempt, position: recorded.position });
    }
  },
};
