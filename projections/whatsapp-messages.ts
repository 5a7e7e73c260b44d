// Read model `whatsapp_messages`: which conversation each inbound WhatsApp message became a turn
// of, and how it was handled: what a conversation's erasure looks its messages up by
// (`conversation_id`), and those of its sender that became no turn (`sender`, the party id the
// webhook recorded the message as: a keyed digest of the number); and which of a sender's
// messages still wait to be handled (`waiting_sender`, set only until then), so that the next
// one waits for them (the inbound saga answers a sender's messages in order). It holds no
// personal data: neither the sender's number nor the text.

import type { MessageOutcome, WhatsAppMessageEvent } from '../domain/whatsapp-message/whatsapp-message';
import { whatsappMessageEvents } from '../domain/whatsapp-message/whatsapp-message';
import { documentProjection } from './document-projection';

export interface WhatsAppMessageDocument {
  id: string;
  tenant_id: string;
  received_at: string;
  /** The commit position of WhatsAppMessageReceived: whether it came before an erasure, exactly. */
  received_position: number;
  /** The sender as a party id (`whatsapp:<digest>`): the actor of WhatsAppMessageReceived. */
  sender: string;
  /** `sender` until the message is handled (or erased), then null: the sender's messages still waiting. */
  waiting_sender: string | null;
  /** The conversation it became a turn of; null before it was handled, or when it became none. */
  conversation_id: string | null;
  /** How it was handled; null before. */
  outcome: MessageOutcome | null;
  /** When what it held was erased; null otherwise. */
  erased_at: string | null;
  position: number;
  [field: string]: unknown;
}

export const WHATSAPP_MESSAGES = 'whatsapp_messages';

export const whatsappMessagesProjection = documentProjection<WhatsAppMessageEvent['type'], WhatsAppMessageDocument>({
  name: 'whatsapp_messages',
  // 2: the sender, the position it was received at, whether it waits.
  version: 2,
  collection: { name: WHATSAPP_MESSAGES, indexes: [{ field: 'tenant_id' }, { field: 'conversation_id' }, { field: 'sender' }, { field: 'waiting_sender', sparse: true }] },
  handles: whatsappMessageEvents.types,
  documentId: (event) => event.data.message_id,
  evolve(current, event) {
    if (event.type === 'WhatsAppMessageReceived') {
      if (current) return current;
      const { message_id, tenant_id, received_at } = event.data;
      const sender = event.metadata.actor.id;
      return { id: message_id, tenant_id, received_at, received_position: event.position, sender, waiting_sender: sender, conversation_id: null, outcome: null, erased_at: null };
    }
    if (!current) return null;
    switch (event.type) {
      case 'WhatsAppMessageHandled':
        return { ...current, conversation_id: event.data.conversation_id, outcome: event.data.outcome, waiting_sender: null };
      case 'WhatsAppMessagesMerged':
        return current;
      case 'WhatsAppMessageErased':
        // One erased before it was handled never will be: nothing waits for it.
        return { ...current, erased_at: event.data.erased_at, waiting_sender: null };
    }
  },
});
