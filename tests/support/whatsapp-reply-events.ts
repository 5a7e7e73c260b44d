// WhatsApp reply events of one reply (`r1` of conversation `c1`), for the decider and process
// manager specs.

import type { WhatsAppReplyEvent, WhatsAppReplyQueuedData } from '../../domain/whatsapp-reply/whatsapp-reply';
import { FIXED_NOW } from './decider-spec';

export const reply: WhatsAppReplyQueuedData = {
  reply_id: 'r1',
  tenant_id: 't1',
  phone_number_id: '106540352242922',
  to: '16505551234',
  text: 'It comes in blue and green.',
  kind: 'answer',
  conversation_id: 'c1',
  in_reply_to: 'm1',
  queued_at: FIXED_NOW.toISOString(),
};
const at = FIXED_NOW.toISOString();
export const queued: WhatsAppReplyEvent = { type: 'WhatsAppReplyQueued', data: reply };
export const started = (attempt: number): WhatsAppReplyEvent => ({ type: 'WhatsAppReplyAttemptStarted', data: { reply_id: 'r1', attempt, started_at: at } });
export const failed = (attempt: number, next: string = at): WhatsAppReplyEvent => ({
  type: 'WhatsAppReplyFailed',
  data: { reply_id: 'r1', attempt, status_code: 503, error: 'the WhatsApp Cloud API answered HTTP 503', failed_at: at, next_attempt_at: next },
});
export const sent: WhatsAppReplyEvent = { type: 'WhatsAppReplySent', data: { reply_id: 'r1', attempt: 1, transport: 'cloud_api', provider_message_id: 'wamid.OUT-1', status_code: 200, sent_at: at } };
export const kept: WhatsAppReplyEvent = { type: 'WhatsAppReplyKept', data: { reply_id: 'r1', attempt: 1, kept_at: at } };
