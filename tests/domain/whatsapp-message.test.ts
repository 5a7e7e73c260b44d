// The WhatsApp message aggregate (given/when/then): a message is received once however often
// Meta delivers it, and handled once.

import type { WhatsAppMessageEvent, WhatsAppMessageReceivedData } from '../../domain/whatsapp-message/whatsapp-message';
import { whatsappMessageDecider } from '../../domain/whatsapp-message/whatsapp-message';
import { FIXED_NOW, deciderSpec } from '../support/decider-spec';

describe('WhatsApp message (decider)', () => {
  const spec = deciderSpec(whatsappMessageDecider);
  const { received_at: _at, ...message }: WhatsAppMessageReceivedData = {
    message_id: 'm1',
    tenant_id: 't1',
    wamid: 'wamid.HBgL1',
    phone_number_id: '106540352242922',
    from: '16505551234',
    profile_name: 'Sheena Nelson',
    type: 'text',
    text: 'Does it come in another color?',
    sent_at: '2026-11-22T09:59:58.000Z',
    received_at: FIXED_NOW.toISOString(),
  };
  const received: WhatsAppMessageEvent = { type: 'WhatsAppMessageReceived', data: { ...message, received_at: FIXED_NOW.toISOString() } };
  const outcome = { outcome: 'answered' as const, conversation_id: 'c1', user_message_id: 'u1', reply_id: 'r1', detail: null };
  const handled: WhatsAppMessageEvent = { type: 'WhatsAppMessageHandled', data: { message_id: 'm1', tenant_id: 't1', ...outcome, handled_at: FIXED_NOW.toISOString() } };

  it('is received once: a delivery of a message already received records nothing', () => {
    spec.given([]).when({ type: 'ReceiveWhatsAppMessage', data: message }).then([received]);
    spec.given([received]).when({ type: 'ReceiveWhatsAppMessage', data: message }).thenNothingHappened();
    spec.given([received, handled]).when({ type: 'ReceiveWhatsAppMessage', data: message }).thenNothingHappened();
  });

  it('is handled once, and only once received', () => {
    spec.given([received]).when({ type: 'RecordWhatsAppMessageHandled', data: outcome }).then([handled]);
    spec.given([received, handled]).when({ type: 'RecordWhatsAppMessageHandled', data: { ...outcome, outcome: 'ignored' } }).thenNothingHappened();
    spec.given([]).when({ type: 'RecordWhatsAppMessageHandled', data: outcome }).thenThrows('not_found', 'whatsapp_message_not_found');
  });

  it('records once, before its turn, the later messages its turn asks; not once handled or erased, nor an empty set', () => {
    const merge = (merged_ids: string[]) => ({ type: 'MergeWhatsAppMessages' as const, data: { merged_ids } });
    const merged: WhatsAppMessageEvent = { type: 'WhatsAppMessagesMerged', data: { message_id: 'm1', tenant_id: 't1', merged_ids: ['m2', 'm3'], merged_at: FIXED_NOW.toISOString() } };
    spec.given([received]).when(merge(['m2', 'm3'])).then([merged]);
    spec.given([received, merged]).when(merge(['m2', 'm3', 'm4'])).thenNothingHappened();
    spec.given([received]).when(merge([])).thenNothingHappened();
    spec.given([received, handled]).when(merge(['m2'])).thenNothingHappened();
    spec.given([received, { type: 'WhatsAppMessageErased', data: { message_id: 'm1', tenant_id: 't1', erased_at: FIXED_NOW.toISOString() } }]).when(merge(['m2'])).thenNothingHappened();
    spec.given([]).when(merge(['m2'])).thenThrows('not_found', 'whatsapp_message_not_found');
    // A later message asked in it is handled as merged, once.
    const intoM1 = { outcome: 'merged' as const, conversation_id: null, user_message_id: null, reply_id: null, detail: 'merged_into:m1' };
    spec.given([received]).when({ type: 'RecordWhatsAppMessageHandled', data: intoM1 }).then([{ type: 'WhatsAppMessageHandled', data: { message_id: 'm1', tenant_id: 't1', ...intoM1, handled_at: FIXED_NOW.toISOString() } }]);
  });

  it('is erased once with its conversation, handled or not; an erased message is handled no more', () => {
    const erase = (tenant_id = 't1') => ({ type: 'EraseWhatsAppMessage' as const, data: { tenant_id } });
    const erased: WhatsAppMessageEvent = { type: 'WhatsAppMessageErased', data: { message_id: 'm1', tenant_id: 't1', erased_at: FIXED_NOW.toISOString() } };
    spec.given([received, handled]).when(erase()).then([erased]);
    spec.given([received]).when(erase()).then([erased]);
    spec.given([received, handled, erased]).when(erase()).thenNothingHappened();
    spec.given([received]).when(erase('t2')).thenThrows('not_found', 'whatsapp_message_not_found');
    spec.given([]).when(erase()).thenThrows('not_found', 'whatsapp_message_not_found');
    spec.given([received, erased]).when({ type: 'RecordWhatsAppMessageHandled', data: outcome }).thenNothingHappened();
  });
});
