// Meta's webhook for the WhatsApp channel (spec 4.14): `GET /api/v1/whatsapp/webhook` answers
// the subscription handshake's challenge as text; `POST` takes a signed delivery, read as the
// exact raw bytes its signature covers. No token: the verify token and the signature are the
// credentials. The rules are application/whatsapp/whatsapp-webhook.ts's; the format is
// meta-payload.ts's.

import Router from '@koa/router';
import { type WhatsAppWebhookDependencies, answerSubscription, receiveDelivery, signatureOf } from '../../../application/whatsapp/whatsapp-webhook';
import { rawBody, rawBodyOf } from '../bodies/raw';
import type { RequestState } from '../middleware/request-context';
import { requestContextOf } from '../request-context';
import { decodeDelivery } from './meta-payload';

/** Meta sends JSON. */
export const WHATSAPP_WEBHOOK_TYPES = ['application/json'] as const;
/** A delivery batches at most a few hundred small messages and statuses. */
export const WHATSAPP_WEBHOOK_LIMIT_BYTES = 1024 * 1024;

const single = (value: string | string[] | undefined): string | undefined => (typeof value === 'string' ? value : undefined);

export function whatsappWebhookRouter(deps: WhatsAppWebhookDependencies): Router<RequestState> {
  const router = new Router<RequestState>({ prefix: '/api/v1/whatsapp' });

  router.get('/webhook', async (ctx) => {
    const { query } = ctx;
    const challenge = await answerSubscription(deps, { mode: single(query['hub.mode']), verify_token: single(query['hub.verify_token']), challenge: single(query['hub.challenge']) });
    ctx.type = 'text/plain';
    ctx.body = challenge;
  });

  router.post('/webhook', rawBody({ types: WHATSAPP_WEBHOOK_TYPES, limitBytes: WHATSAPP_WEBHOOK_LIMIT_BYTES }), async (ctx) => {
    // The signature's presence first: without one nothing of the body is read.
    const signature = signatureOf(ctx.get('x-hub-signature-256') || undefined);
    const body = rawBodyOf(ctx);
    ctx.body = await receiveDelivery(deps, { rawBody: body, signature, payload: decodeDelivery(body) }, requestContextOf(ctx));
  });

  return router;
}
