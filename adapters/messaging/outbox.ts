// The Messaging adapter of the embedded outbox: it sends nothing. A reply it takes is recorded
// as kept (`WhatsAppReplyKept`), and the super admin reads it in GET /admin/whatsapp/outbox:
// what the platform would have sent, to whom, from which number. It stands in for the Cloud
// API while a tenant has no access token, and for every tenant with WHATSAPP_OUTBOX=true
// (development, demonstrations, tests).

import type { Messaging, MessagingReceipt } from '../../application/ports/messaging';

export const OUTBOX_TRANSPORT = 'outbox';

export class OutboxMessaging implements Messaging {
  readonly transport = OUTBOX_TRANSPORT;

  async sendText(): Promise<MessagingReceipt> {
    return { outcome: 'kept', transport: OUTBOX_TRANSPORT };
  }
}
