// Meta's WhatsApp webhook wire format for tests: a delivery's body and its signature.

import { createHmac } from 'node:crypto';

/** A message as a WhatsApp user sends it. */
export interface Sent {
  from: string;
  id: string;
  text?: string;
  type?: string;
  name?: string;
  /** An `audio` message's media id (a voice note), or a `document` message's. */
  media_id?: string;
  /** A `document` message's caption and file name. */
  caption?: string;
  filename?: string;
}

/** The business number a delivery is for. */
export interface BusinessNumber {
  phone_number_id: string;
  display: string;
}

/** A delivery as Meta sends it: one entry, one `messages` change of the number, its messages and statuses. */
export function metaPayload(number: BusinessNumber, messages: Sent[], statuses: unknown[] = []): Record<string, unknown> {
  const value: Record<string, unknown> = { messaging_product: 'whatsapp', metadata: { display_phone_number: number.display, phone_number_id: number.phone_number_id } };
  if (messages.length > 0) {
    value.contacts = messages.map((message) => ({ profile: { name: message.name ?? 'Sheena Nelson' }, wa_id: message.from }));
    value.messages = messages.map((message) => {
      const type = message.type ?? 'text';
      const base = { from: message.from, id: message.id, timestamp: '1795860000', type };
      if (type === 'text') return { ...base, text: { body: message.text ?? 'Hello' } };
      if (type === 'image') return { ...base, image: { caption: 'a photo', mime_type: 'image/jpeg', sha256: 'abc', id: '1003383421387256' } };
      if (type === 'reaction') return { ...base, reaction: { message_id: 'wamid.OUT-1', emoji: '👍' } };
      if (type === 'audio') return { ...base, audio: { id: message.media_id ?? '1003383421387257', mime_type: 'audio/ogg; codecs=opus', sha256: 'abc', voice: true } };
      if (type === 'document') {
        const document = { id: message.media_id ?? '1003383421387258', mime_type: 'application/pdf', sha256: 'abc', ...(message.filename ? { filename: message.filename } : {}), ...(message.caption ? { caption: message.caption } : {}) };
        return { ...base, document };
      }
      return base;
    });
  }
  if (statuses.length > 0) value.statuses = statuses;
  return { object: 'whatsapp_business_account', entry: [{ id: '102290129340398', changes: [{ value, field: 'messages' }] }] };
}

/** `X-Hub-Signature-256` of a raw body under the Meta app's secret. */
export const signed = (secret: string, body: string): string => `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;
