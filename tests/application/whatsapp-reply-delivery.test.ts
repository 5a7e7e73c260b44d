// The WhatsApp reply delivery process manager (given/when/then): a redelivered trigger sends
// nothing twice; a failure a retry may get past is retried on an exponential schedule recorded
// as events; a permanent refusal, the last failure, or a channel turned off gives the reply up.
// tests/api/whatsapp.test.ts runs the saga against a local Cloud API server and the outbox.

import { type ReplyDeliveryInput, type ReplyDeliveryOutput, whatsappReplyDelivery } from '../../application/whatsapp/reply-delivery';
import { FIXED_NOW } from '../support/decider-spec';
import { processManagerSpec } from '../support/process-manager-spec';
import { failed, kept, queued, sent, started } from '../support/whatsapp-reply-events';

const plus = (ms: number): Date => new Date(FIXED_NOW.getTime() + ms);

describe('WhatsApp reply delivery (process manager)', () => {
  const spec = processManagerSpec(whatsappReplyDelivery({ maxAttempts: 3, backoffMs: (attempt) => 1000 * 2 ** (attempt - 1), outcomeTimeoutMs: 60_000 }));
  const send = (attempt: number): ReplyDeliveryOutput => ({ type: 'SendWhatsAppReply', data: { reply_id: 'r1', attempt } });
  const trigger: ReplyDeliveryInput = { type: 'WhatsAppReplyQueued', data: { reply_id: 'r1' } };
  const due: ReplyDeliveryInput = { type: 'WhatsAppReplyDue', data: { reply_id: 'r1' } };
  const refused = (attempt: number, permanent = false): ReplyDeliveryInput => ({ type: 'MessagingFailed', data: { reply_id: 'r1', attempt, status_code: permanent ? 400 : 503, error: 'no', permanent } });

  it('asks to send a queued reply, and nothing when the trigger comes again', () => {
    spec.given([queued]).when(trigger).then([send(1)]);
    spec.given([queued, started(1)]).when(trigger).thenNothingHappened();
    spec.given([queued, started(1), sent]).when(trigger).thenNothingHappened();
    spec.given([queued, started(1), kept]).when(trigger).thenNothingHappened();
  });

  it('records what the transport did, once', () => {
    spec.given([queued, started(1)]).when({ type: 'MessagingKept', data: { reply_id: 'r1', attempt: 1 } }).then([{ type: 'RecordWhatsAppReplyKept', data: { attempt: 1 } }]);
    const accepted: ReplyDeliveryInput = { type: 'MessagingAccepted', data: { reply_id: 'r1', attempt: 1, transport: 'cloud_api', provider_message_id: 'wamid.OUT-1', status_code: 200 } };
    spec.given([queued, started(1)]).when(accepted).then([{ type: 'RecordWhatsAppReplySent', data: { attempt: 1, transport: 'cloud_api', provider_message_id: 'wamid.OUT-1', status_code: 200 } }]);
    spec.given([queued, started(1), sent]).when(accepted).thenNothingHappened();
  });

  it('retries with exponential back-off, gives up after the last attempt, and at once on a permanent refusal', () => {
    spec.given([queued, started(1)]).when(refused(1)).then([{ type: 'RecordWhatsAppReplyFailure', data: { attempt: 1, status_code: 503, error: 'no', next_attempt_at: plus(1000).toISOString() } }]);
    spec.given([queued, started(1), failed(1), started(2)]).when(refused(2)).then([{ type: 'RecordWhatsAppReplyFailure', data: { attempt: 2, status_code: 503, error: 'no', next_attempt_at: plus(2000).toISOString() } }]);
    spec.given([queued, started(1), failed(1), started(2), failed(2), started(3)]).when(refused(3)).then([{ type: 'AbandonWhatsAppReply', data: { attempt: 3, status_code: 503, error: 'no' } }]);
    spec.given([queued, started(1)]).when(refused(1, true)).then([{ type: 'AbandonWhatsAppReply', data: { attempt: 1, status_code: 400, error: 'no' } }]);
    spec.given([queued, started(1)]).when(refused(2)).thenNothingHappened();
  });

  it('sends a retry when it is due, not before, and takes an attempt without outcome as lost once overdue', () => {
    spec.given([queued, started(1), failed(1, plus(1000).toISOString())]).when(due).thenNothingHappened();
    spec.given([queued, started(1), failed(1, plus(1000).toISOString())]).when(due, plus(1000)).then([send(2)]);
    spec.given([queued, started(1)]).when(due, plus(59_999)).thenNothingHappened();
    spec.given([queued, started(1)]).when(due, plus(60_000)).then([
      { type: 'RecordWhatsAppReplyFailure', data: { attempt: 1, status_code: null, error: "no outcome recorded within 60000 ms of the attempt's start", next_attempt_at: plus(61_000).toISOString() } },
    ]);
    spec.given([queued]).when(due, plus(60_000)).then([send(1)]);
  });

  it('gives the reply up when the channel was turned off before its next attempt', () => {
    const withdrawn = (attempts: number): ReplyDeliveryInput => ({ type: 'WhatsAppReplyWithdrawn', data: { reply_id: 'r1', attempts, error: 'off' } });
    spec.given([queued]).when(withdrawn(0)).then([{ type: 'AbandonWhatsAppReply', data: { attempt: 0, status_code: null, error: 'off' } }]);
    spec.given([queued, started(1), failed(1)]).when(withdrawn(1)).then([{ type: 'AbandonWhatsAppReply', data: { attempt: 1, status_code: null, error: 'off' } }]);
    spec.given([queued, started(1)]).when(withdrawn(0)).thenNothingHappened();
  });
});
