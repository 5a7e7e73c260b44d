// OpenAPI description of Meta's WhatsApp webhook (whatsapp/webhook.ts).

import { type ApiArea, integer, object, ref } from '../openapi/describe';
import { WHATSAPP_WEBHOOK_TYPES } from './webhook';

export const whatsappWebhookApi: ApiArea = {
  tag: 'whatsapp',
  description: 'Meta’s webhook of the WhatsApp channel (spec 4.14): the subscription handshake and signed deliveries of messages and statuses. docs/whatsapp.md sets it up.',
  schemas: {
    WhatsAppWebhookReceipt: object(
      {
        received: { const: true },
        messages: integer('messages this delivery recorded'),
        duplicates: integer('messages an earlier or parallel delivery recorded'),
        statuses: integer('status callbacks recorded on replies'),
        ignored: integer('dropped: numbers no organization configured, organizations without the channel, statuses of unknown messages, other fields'),
      },
      'the webhook’s acknowledgement (Meta reads only the status)',
    ),
  },
  routes: {
    '/api/v1/whatsapp/webhook': {
      get: {
        summary: 'Meta’s subscription handshake',
        description: 'Answers `hub.challenge` as text when `hub.mode` is `subscribe` and `hub.verify_token` is the verify token of an organization’s WhatsApp configuration; 403 `verification_failed` otherwise, 400 for a missing challenge.',
        access: 'public',
        query: [
          { name: 'hub.mode', description: '`subscribe`', schema: { type: 'string' } },
          { name: 'hub.verify_token', description: 'the verify token set in Meta’s app and in the configuration', schema: { type: 'string' } },
          { name: 'hub.challenge', description: 'what to answer', required: true, schema: { type: 'string' } },
        ],
        success: { status: 200, description: 'the challenge', content: { type: 'text/plain', schema: { type: 'string' } } },
        errors: [403],
      },
      post: {
        summary: 'Meta’s deliveries of messages and statuses',
        description:
          'Authenticated by `X-Hub-Signature-256: sha256=<hex HMAC-SHA256 of the exact body under the app secret>` of every organization the delivery names: missing or wrong, 401 `invalid_signature` and nothing is recorded. 400 naming the field for a body that is not Meta’s format. Each message is recorded once however often it is delivered, and answered in the background; organizations without the channel (off, suspended, or a plan without `whatsapp`) and numbers no organization configured are acknowledged and dropped.',
        access: 'public',
        headers: [{ name: 'X-Hub-Signature-256', description: '`sha256=` and the hex HMAC-SHA256 of the body under the Meta app’s secret', required: true, schema: { type: 'string' } }],
        body: { raw: WHATSAPP_WEBHOOK_TYPES },
        success: { status: 200, description: 'received', json: ref('WhatsAppWebhookReceipt') },
        errors: [400, 401],
      },
    },
  },
};
