// The WhatsApp reply aggregate (given/when/then): queued once (cut to WhatsApp's length),
// attempts claimed one at a time, an outcome for the attempt under way only, and Meta's
// statuses of a sent reply each recorded once.

import { expect } from 'chai';
import { MAX_REPLY_LENGTH, type WhatsAppReplyEvent, sendableText, whatsappReplyDecider } from '../../domain/whatsapp-reply/whatsapp-reply';
import { FIXED_NOW, deciderSpec } from '../support/decider-spec';
import { failed, kept, queued, reply, sent, started } from '../support/whatsapp-reply-events';

const at = FIXED_NOW.toISOString();

describe('WhatsApp reply (decider)', () => {
  const spec = deciderSpec(whatsappReplyDecider);

  it('is queued once, its text cut to what WhatsApp takes', () => {
    const { queued_at: _at, ...data } = reply;
    spec.given([]).when({ type: 'QueueWhatsAppReply', data }).then([queued]);
    spec.given([queued]).when({ type: 'QueueWhatsAppReply', data }).thenThrows('conflict', 'whatsapp_reply_exists');
    const long = 'x'.repeat(MAX_REPLY_LENGTH + 10);
    expect([...sendableText(long)]).to.have.length(MAX_REPLY_LENGTH);
    expect(sendableText(long).endsWith('…')).to.equal(true);
    expect(sendableText('short')).to.equal('short');
  });

  it('claims the next attempt only: of two racing deliveries one sends', () => {
    spec.given([queued]).when({ type: 'StartWhatsAppReplyAttempt', data: { attempt: 1 } }).then([started(1)]);
    spec.given([queued, started(1)]).when({ type: 'StartWhatsAppReplyAttempt', data: { attempt: 1 } }).thenNothingHappened();
    spec.given([queued, started(1), failed(1)]).when({ type: 'StartWhatsAppReplyAttempt', data: { attempt: 2 } }).then([started(2)]);
    spec.given([queued, started(1), kept]).when({ type: 'StartWhatsAppReplyAttempt', data: { attempt: 2 } }).thenNothingHappened();
  });

  it('records an outcome for the attempt under way only; a late success still counts', () => {
    const failure = { attempt: 2, status_code: 503, error: 'x', next_attempt_at: at };
    spec.given([queued, started(1)]).when({ type: 'RecordWhatsAppReplyFailure', data: failure }).thenNothingHappened();
    spec.given([queued, started(1), failed(1)]).when({ type: 'RecordWhatsAppReplySent', data: { attempt: 1, transport: 'cloud_api', provider_message_id: 'wamid.OUT-1', status_code: 200 } }).then([sent]);
    spec.given([queued, started(1), sent]).when({ type: 'RecordWhatsAppReplyKept', data: { attempt: 1 } }).thenNothingHappened();
    spec.given([queued, started(1)]).when({ type: 'AbandonWhatsAppReply', data: { attempt: 1, status_code: 400, error: 'refused' } }).then([
      { type: 'WhatsAppReplyAbandoned', data: { reply_id: 'r1', attempts: 1, status_code: 400, error: 'refused', abandoned_at: at } },
    ]);
  });

  it('records each of Meta’s statuses of a sent reply once, in whatever order they come', () => {
    const status = (name: 'sent' | 'delivered' | 'read' | 'failed') => ({ type: 'RecordWhatsAppReplyStatus' as const, data: { status: name, reported_at: at, error: null } });
    const reported = (name: 'sent' | 'delivered' | 'read' | 'failed'): WhatsAppReplyEvent => ({ type: 'WhatsAppReplyStatusReported', data: { reply_id: 'r1', status: name, reported_at: at, error: null, recorded_at: at } });
    spec.given([queued, started(1), sent]).when(status('read')).then([reported('read')]);
    spec.given([queued, started(1), sent, reported('read')]).when(status('delivered')).then([reported('delivered')]);
    spec.given([queued, started(1), sent, reported('read')]).when(status('read')).thenNothingHappened();
    spec.given([queued, started(1), kept]).when(status('delivered')).thenNothingHappened();
    spec.given([queued, started(1)]).when(status('sent')).thenNothingHappened();
  });

  it('is erased once with its conversation: a reply not sent yet is given up and never sent; nothing more is recorded of it', () => {
    const erase = (tenant_id = 't1') => ({ type: 'EraseWhatsAppReply' as const, data: { tenant_id } });
    const erased: WhatsAppReplyEvent = { type: 'WhatsAppReplyErased', data: { reply_id: 'r1', tenant_id: 't1', erased_at: at } };
    const givenUp = (attempts: number): WhatsAppReplyEvent => ({ type: 'WhatsAppReplyAbandoned', data: { reply_id: 'r1', attempts, status_code: null, error: 'the conversation was erased', abandoned_at: at } });
    spec.given([queued, started(1), kept]).when(erase()).then([erased]);
    spec.given([queued]).when(erase()).then([givenUp(0), erased]);
    spec.given([queued, started(1), failed(1)]).when(erase()).then([givenUp(1), erased]);
    spec.given([queued, started(1), kept, erased]).when(erase()).thenNothingHappened();
    spec.given([queued]).when(erase('t2')).thenThrows('not_found', 'whatsapp_reply_not_found');
    spec.given([]).when(erase()).thenThrows('not_found', 'whatsapp_reply_not_found');
    spec.given([queued, givenUp(0), erased]).when({ type: 'StartWhatsAppReplyAttempt', data: { attempt: 1 } }).thenNothingHappened();
    spec.given([queued, started(1), sent, erased]).when({ type: 'RecordWhatsAppReplyStatus', data: { status: 'read', reported_at: at, error: null } }).thenNothingHappened();
  });
});
