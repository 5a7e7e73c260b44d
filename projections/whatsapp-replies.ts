// Read model `whatsapp_replies`: every message the platform sends WhatsApp users, with how its
// delivery stands: the super admin's outbox (GET /admin/whatsapp/outbox), the reply saga's due
// pass (`retrying` ones by `next_attempt_at`, `sending` ones by `last_attempt_at` and `queued`
// ones by `queued_at`: a process that stopped mid-attempt, or before the first), and the
// webhook's lookup of a status callback's reply by Meta's message id (`provider_message_id`),
// and a conversation's erasure looking for its replies (`conversation_id`).

import { type DeliveryStatus, type ReplyKind, type WhatsAppReplyEvent, type WhatsAppReplyStatus, whatsappReplyEvents } from '../domain/whatsapp-reply/whatsapp-reply';
import { ERASED_PERSONAL_DATA } from '../domain/shared/events';
import { abandonedPatch, retryingPatch } from './delivery-attempts';
import { documentProjection } from './document-projection';

export type WhatsAppReplyDeliveryStatus = Exclude<WhatsAppReplyStatus, 'absent'>;

export interface WhatsAppReplyDocument {
  id: string;
  tenant_id: string;
  phone_number_id: string;
  to: string;
  text: string;
  kind: ReplyKind;
  conversation_id: string | null;
  in_reply_to: string | null;
  status: WhatsAppReplyDeliveryStatus;
  /** `cloud_api` once sent, `outbox` once kept; null before. */
  transport: string | null;
  /** Meta's id of the sent message (`wamid....`); null until sent. */
  provider_message_id: string | null;
  /** Meta's latest status of the sent message (its callbacks); null before any. */
  delivery_status: DeliveryStatus | null;
  delivery_status_at: string | null;
  attempts: number;
  last_status_code: number | null;
  last_error: string | null;
  queued_at: string;
  last_attempt_at: string | null;
  next_attempt_at: string | null;
  /** When it was sent, kept, or given up. */
  settled_at: string | null;
  position: number;
  [field: string]: unknown;
}

export const WHATSAPP_REPLIES = 'whatsapp_replies';

/** Meta's statuses in order of progress: a late `delivered` after `read` does not move it back. */
const PROGRESS: Record<DeliveryStatus, number> = { sent: 1, delivered: 2, read: 3, failed: 4 };

export const whatsappRepliesProjection = documentProjection<WhatsAppReplyEvent['type'], WhatsAppReplyDocument>({
  name: 'whatsapp_replies',
  // 2: indexed by conversation, for a conversation's erasure to find its replies.
  version: 2,
  collection: {
    name: WHATSAPP_REPLIES,
    indexes: [{ field: 'tenant_id' }, { field: 'status' }, { field: 'queued_at' }, { field: 'next_attempt_at' }, { field: 'last_attempt_at' }, { field: 'provider_message_id' }, { field: 'conversation_id' }],
  },
  handles: whatsappReplyEvents.types,
  documentId: (event) => event.data.reply_id,
  evolve(current, event) {
    if (event.type === 'WhatsAppReplyQueued') {
      const { reply_id, tenant_id, phone_number_id, to, text, kind, conversation_id, in_reply_to, queued_at } = event.data;
      return {
        id: reply_id,
        tenant_id,
        phone_number_id,
        to,
        text,
        kind,
        conversation_id,
        in_reply_to,
        status: 'queued',
        transport: null,
        provider_message_id: null,
        delivery_status: null,
        delivery_status_at: null,
        attempts: 0,
        last_status_code: null,
        last_error: null,
        queued_at,
        last_attempt_at: null,
        next_attempt_at: null,
        settled_at: null,
      };
    }
    if (!current) return null;
    switch (event.type) {
      case 'WhatsAppReplyAttemptStarted':
        return { ...current, status: 'sending', attempts: event.data.attempt, last_attempt_at: event.data.started_at, next_attempt_at: null };
      case 'WhatsAppReplySent':
        return {
          ...current,
          status: 'sent',
          transport: event.data.transport,
          provider_message_id: event.data.provider_message_id,
          last_status_code: event.data.status_code,
          last_error: null,
          next_attempt_at: null,
          settled_at: event.data.sent_at,
        };
      case 'WhatsAppReplyKept':
        return { ...current, status: 'kept', transport: 'outbox', last_error: null, next_attempt_at: null, settled_at: event.data.kept_at };
      case 'WhatsAppReplyFailed':
        return { ...current, ...retryingPatch(current.attempts, event.data) };
      case 'WhatsAppReplyAbandoned':
        return { ...current, ...abandonedPatch(event.data), settled_at: event.data.abandoned_at };
      case 'WhatsAppReplyStatusReported': {
        const { status, reported_at, error } = event.data;
        // A report arriving after a later one (read before delivered) keeps the later status.
        const ahead = current.delivery_status === null || PROGRESS[status] > PROGRESS[current.delivery_status];
        return {
          ...current,
          ...(ahead ? { delivery_status: status, delivery_status_at: reported_at } : {}),
          ...(error ? { last_error: `${error.title} (${error.code})` } : {}),
        };
      }
      case 'WhatsAppReplyErased':
        // As a rebuild reads them once the key is gone; how its delivery went stays.
        return { ...current, to: ERASED_PERSONAL_DATA, text: ERASED_PERSONAL_DATA };
    }
  },
});
