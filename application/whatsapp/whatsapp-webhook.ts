// Meta's webhook for the WhatsApp channel (spec 4.14).
//
// GET: the subscription handshake. Meta sends `hub.mode=subscribe`, the verify token the
// super admin gave both sides, and a challenge; the challenge is answered (as text) when the
// token is one tenant's, 403 `verification_failed` otherwise.
//
// POST: a delivery, signed: `X-Hub-Signature-256: sha256=<hex HMAC-SHA256 of the raw body
// under the Meta app's secret>`. In this order:
//   1. no signature, or not of that form: 401 `invalid_signature` (before anything is read);
//   2. the body decoded as Meta's format (the HTTP adapter: 400 naming the field);
//   3. each change of field `messages` names its business number
//      (`value.metadata.phone_number_id`); a number no tenant configured is acknowledged and
//      dropped with a warning in the log (an error would make Meta retry it for a week, for
//      nobody); changes of other fields (account updates, template reviews) are dropped;
//   4. the signature is checked, timing-safe, under the app secret of every tenant the
//      delivery names: one mismatch is 401 `invalid_signature`, and nothing is recorded;
//   5. a tenant whose channel is off, that is suspended or deleted, or whose plan lacks the
//      `whatsapp` feature: its changes are acknowledged (200, so Meta stops delivering them)
//      and dropped, recording nothing, with a line in the log;
//   6. each message is recorded once (`WhatsAppMessageReceived`, stream by tenant and Meta's
//      message id: of several deliveries of one message, in turn or at once, one records it);
//      the assistant's turn runs in the background (inbound-messages.ts), so Meta gets its
//      200 at once;
//   7. each status (sent, delivered, read, failed) of a reply the platform sent is recorded on
//      the reply (`WhatsAppReplyStatusReported`, each status once); statuses of messages the
//      platform does not know are dropped.
// The answer is 200 with counts Meta ignores and an operator can read.

import { createHmac, timingSafeEqual } from 'node:crypto';
import { DomainError, forbidden, invalid } from '../../domain/shared/errors';
import { type WhatsAppMessageCommand, type WhatsAppMessageEvent, type WhatsAppMessageState, whatsappMessageDecider, whatsappMessageEvents, whatsappMessageStream } from '../../domain/whatsapp-message/whatsapp-message';
import { DELIVERY_STATUSES, type DeliveryStatus, whatsappReplyStream } from '../../domain/whatsapp-reply/whatsapp-reply';
import { WHATSAPP_REPLIES, type WhatsAppReplyDocument } from '../../projections/whatsapp-replies';
import { type Aggregate, type CommandDependencies, type StreamCommand, handleCommand, handleCommands, streamCommand } from '../command-handling/handle-command';
import type { Secrets } from '../ports/identity';
import type { Logger } from '../ports/logger';
import type { ReadModelDependencies } from '../shared/read-models';
import type { RequestContext } from '../shared/request-context';
import { type NumberConfiguration, configurationOfNumber, configurationOfVerifyToken, whyNotServed } from './whatsapp-config';
import { whatsappReplyAggregate } from './reply-delivery';

export const whatsappMessageAggregate: Aggregate<WhatsAppMessageCommand, WhatsAppMessageEvent, WhatsAppMessageState> = { decider: whatsappMessageDecider, events: whatsappMessageEvents };

export type WhatsAppWebhookDependencies = CommandDependencies & ReadModelDependencies & { secrets: Pick<Secrets, 'digest' | 'open'>; logger: Logger };

/** The actor of what Meta reports by itself (statuses). */
export const CLOUD_API_ACTOR = { kind: 'system' as const, id: 'whatsapp_cloud_api' };

/**
 * How a WhatsApp user appears in conversations, tool calls, event metadata and the audit log:
 * `whatsapp:` and a keyed digest of the tenant and their number, never the number itself (it
 * is personal data: sealed where it is kept, erased with the conversation; docs/personal-data.md).
 * The same number is the same party within a tenant, and an unrelated one across tenants.
 */
export const senderPartyId = (secrets: Pick<Secrets, 'digest'>, tenantId: string, waId: string): string =>
  `whatsapp:${secrets.digest(`whatsapp-party\u0000${tenantId}\u0000${waId}`).slice(0, 32)}`;

// ------------------------------------------------------------------ the subscription handshake

export interface SubscriptionQuery {
  mode: string | undefined;
  verify_token: string | undefined;
  challenge: string | undefined;
}

const CHALLENGE = /^[\x21-\x7e]{1,200}$/;

/** The challenge to answer; 400 for a missing or odd challenge, 403 `verification_failed` unless the token is a tenant's. */
export async function answerSubscription(deps: ReadModelDependencies & { secrets: Pick<Secrets, 'digest'> }, query: SubscriptionQuery): Promise<string> {
  if (typeof query.challenge !== 'string' || !CHALLENGE.test(query.challenge)) {
    throw invalid('invalid_request', 'hub.challenge: expected the challenge Meta sends (1 to 200 printable characters)', 'hub.challenge');
  }
  const refused = (): DomainError => forbidden('verification_failed', 'hub.verify_token is not the verify token of a WhatsApp configuration, or hub.mode is not subscribe');
  if (query.mode !== 'subscribe' || typeof query.verify_token !== 'string' || query.verify_token.length === 0 || query.verify_token.length > 200) throw refused();
  if ((await configurationOfVerifyToken(deps, query.verify_token)) === null) throw refused();
  return query.challenge;
}

// ----------------------------------------------------------------------------- deliveries

/** One message of a delivery, as the HTTP adapter decoded Meta's format. */
export interface InboundMessage {
  /** Meta's id, `wamid....`. */
  wamid: string;
  /** The sender's WhatsApp id. */
  from: string;
  /** Unix seconds, as Meta sends them. */
  timestamp: string;
  type: string;
  /** The body of a `text` message; null for other types. */
  text: string | null;
  /** An `audio` message's media id (a voice note), or a `document` message's; null for other types. */
  media_id: string | null;
  /** A `document` message's caption and file name, when the sender's app gave them; null otherwise. */
  caption: string | null;
  filename: string | null;
  profile_name: string | null;
}

/** One status callback: what became of a message the business number sent. */
export interface StatusCallback {
  /** Meta's id of the sent message. */
  wamid: string;
  status: string;
  timestamp: string;
  error: { code: number; title: string } | null;
}

/** The messages and statuses of one business number in a delivery. */
export interface NumberChange {
  phone_number_id: string;
  messages: InboundMessage[];
  statuses: StatusCallback[];
}

export interface WhatsAppDelivery {
  changes: NumberChange[];
  /** Changes of fields other than `messages`: acknowledged, not acted on. */
  other_changes: number;
}

/** What the webhook answers Meta (which reads only the status). */
export interface DeliveryReceipt {
  received: true;
  /** Messages recorded by this delivery. */
  messages: number;
  /** Messages an earlier (or parallel) delivery recorded. */
  duplicates: number;
  /** Statuses recorded on replies. */
  statuses: number;
  /** Messages, statuses and changes dropped: unknown numbers, tenants without the channel, unknown messages, other fields. */
  ignored: number;
}

const SIGNATURE = /^sha256=([0-9a-fA-F]{64})$/;

const invalidSignature = (message: string): DomainError => new DomainError('unauthorized', 'invalid_signature', message);

/** The digest an `X-Hub-Signature-256` header carries; 401 `invalid_signature` when it is missing or malformed. */
export function signatureOf(header: string | undefined): Buffer {
  const matched = SIGNATURE.exec(header ?? '');
  if (!matched) throw invalidSignature('X-Hub-Signature-256: expected sha256=<hex HMAC-SHA256 of the body under the app secret>');
  return Buffer.from(matched[1], 'hex');
}

/** Whether `signature` is the HMAC-SHA256 of the body under `appSecret`, compared in constant time. */
export function signatureMatches(appSecret: string, rawBody: Buffer, signature: Buffer): boolean {
  const expected = createHmac('sha256', appSecret).update(rawBody).digest();
  return expected.length === signature.length && timingSafeEqual(expected, signature);
}

/** Meta's Unix seconds as an ISO instant; the platform's clock when they are no instant. */
function instantOf(seconds: string, now: Date): string {
  const at = Number(seconds) * 1000;
  return Number.isSafeInteger(at) && at > 0 && at < 8.64e15 ? new Date(at).toISOString() : now.toISOString();
}

/** Verifies, deduplicates and records one delivery; see the header for the order. */
export async function receiveDelivery(
  deps: WhatsAppWebhookDependencies,
  delivery: { rawBody: Buffer; signature: Buffer; payload: WhatsAppDelivery },
  context: RequestContext,
): Promise<DeliveryReceipt> {
  const receipt: DeliveryReceipt = { received: true, messages: 0, duplicates: 0, statuses: 0, ignored: delivery.payload.other_changes };
  const numbers = new Map<string, NumberConfiguration | null>();
  for (const change of delivery.payload.changes) {
    if (!numbers.has(change.phone_number_id)) numbers.set(change.phone_number_id, await configurationOfNumber(deps, change.phone_number_id));
  }
  // Every tenant the delivery names must have signed it: one app secret that does not match refuses it whole.
  const secrets = new Set([...numbers.values()].flatMap((found) => (found ? [found.configuration.app_secret_sealed] : [])));
  for (const sealed of secrets) {
    if (!signatureMatches(deps.secrets.open(sealed), delivery.rawBody, delivery.signature)) {
      throw invalidSignature('X-Hub-Signature-256 does not match the body under the app secret of the WhatsApp configuration');
    }
  }
  const refusals = new Map<string, string | null>();
  for (const change of delivery.payload.changes) {
    const count = change.messages.length + change.statuses.length;
    const found = numbers.get(change.phone_number_id)!;
    if (!found) {
      deps.logger.warn({ phone_number_id: change.phone_number_id, dropped: count }, 'a WhatsApp delivery for a number no organization configured was dropped');
      receipt.ignored += count;
      continue;
    }
    const tenantId = found.tenant_id;
    if (!refusals.has(tenantId)) refusals.set(tenantId, await whyNotServed(deps, tenantId, found.configuration.enabled));
    const refusal = refusals.get(tenantId)!;
    if (refusal !== null) {
      deps.logger.info({ tenant_id: tenantId, phone_number_id: change.phone_number_id, reason: refusal, dropped: count }, 'a WhatsApp delivery was acknowledged and dropped');
      receipt.ignored += count;
      continue;
    }
    const recorded = await recordMessages(deps, tenantId, change.phone_number_id, change.messages, context);
    receipt.messages += recorded;
    receipt.duplicates += change.messages.length - recorded;
    for (const status of change.statuses) {
      if (await recordStatus(deps, tenantId, status, context)) receipt.statuses += 1;
      else receipt.ignored += 1;
    }
  }
  return receipt;
}

/** The stream id of a message: one per tenant and Meta's message id. */
export const inboundMessageId = (deps: Pick<CommandDependencies, 'ids'>, tenantId: string, wamid: string): string => deps.ids.fromKey(`whatsappMessage:${tenantId}:${wamid}`);

/**
 * Records the messages of one delivery in one append, each unless a delivery before (or beside)
 * this one did; answers how many this one recorded. Together, so that the inbound saga sees a
 * burst whole (a sender's texts in quick succession are asked in one turn) rather than one
 * message while the next is still being written.
 */
async function recordMessages(deps: WhatsAppWebhookDependencies, tenantId: string, phoneNumberId: string, messages: readonly InboundMessage[], context: RequestContext): Promise<number> {
  // A message twice in one delivery is one command: two on one stream would conflict in the append.
  const once = [...new Map(messages.map((message) => [message.wamid, message])).values()];
  if (once.length === 0) return 0;
  const results = await handleCommands(
    deps,
    once.map((message) => receiveCommand(deps, tenantId, phoneNumberId, message, context)),
  );
  return results.filter((result) => result.events.length > 0).length;
}

function receiveCommand(deps: WhatsAppWebhookDependencies, tenantId: string, phoneNumberId: string, message: InboundMessage, context: RequestContext): StreamCommand {
  const messageId = inboundMessageId(deps, tenantId, message.wamid);
  return streamCommand(
    whatsappMessageAggregate,
    whatsappMessageStream(messageId),
    {
      type: 'ReceiveWhatsAppMessage',
      data: {
        message_id: messageId,
        tenant_id: tenantId,
        wamid: message.wamid,
        phone_number_id: phoneNumberId,
        from: message.from,
        profile_name: message.profile_name,
        type: message.type,
        text: message.type === 'text' ? message.text : null,
        ...(message.media_id === null ? {} : { media_id: message.media_id }),
        ...(message.caption === null ? {} : { caption: message.caption }),
        ...(message.filename === null ? {} : { filename: message.filename }),
        sent_at: instantOf(message.timestamp, deps.clock.now()),
      },
    },
    // Meta delivers it on the sender's behalf.
    { ...context, tenant_id: tenantId, actor: { kind: 'end_user', id: senderPartyId(deps.secrets, tenantId, message.from) } },
  );
}

/** Records a status on the reply Meta names; false when the platform sent no such message (or the status is one it does not know). */
async function recordStatus(deps: WhatsAppWebhookDependencies, tenantId: string, status: StatusCallback, context: RequestContext): Promise<boolean> {
  if (!DELIVERY_STATUSES.some((known) => known === status.status)) return false;
  const { items } = await deps.readStore.collection<WhatsAppReplyDocument>(WHATSAPP_REPLIES).find({ where: { tenant_id: tenantId, provider_message_id: status.wamid }, limit: 1 });
  const reply = items[0];
  if (!reply) return false;
  const result = await handleCommand(
    deps,
    whatsappReplyAggregate,
    whatsappReplyStream(reply.id),
    { type: 'RecordWhatsAppReplyStatus', data: { status: status.status as DeliveryStatus, reported_at: instantOf(status.timestamp, deps.clock.now()), error: status.error } },
    { ...context, tenant_id: tenantId, actor: CLOUD_API_ACTOR },
  );
  return result.events.length > 0;
}
