// Saga `whatsapp_inbound` (version 1): what the platform does with each WhatsApp message the
// webhook recorded (`WhatsAppMessageReceived`), in the background, so the webhook answers Meta
// at once whatever the model takes.
//
// A sender's messages are handled in the order received: one waits until the sender's earlier
// ones are (afterEarlierMessages), so several messages in a row get their answers in order, each
// turn seeing the ones before with their answers; at most WHATSAPP_ORDER_WAIT_SECONDS.
//
// A text message is a turn of the sender's conversation: channel `whatsapp`, one per tenant and
// sender until it is deleted (a resolved one is opened again by the next message, as any
// conversation is), its id derived from a keyed digest of the sender (deterministic: two
// messages racing find the same conversation; the phone number is in no stream name), asked as
// `publicChannelAsker(tenant, end_user whatsapp:<digest>, 'whatsapp', workspace)` (senderPartyId:
// the number is no id; it is kept sealed as the conversation's `contact`, where replies go): the
// workspace the configuration names, or the tenant's default one. The turn runs under an
// idempotency seed derived from the message, so a redelivery after a crash finds what the
// first attempt recorded and asks the model nothing again. The answer is queued as a reply
// (reply-delivery.ts sends it). A voice note is a turn too where it can be listened to (a speech
// server, and the tenant's access token to fetch it from the Cloud API): its transcript is the
// question (transcriptOf). So is a document (a PDF, a Word file, text...) where it can be
// fetched (the tenant's access token): its caption and its text are the question (documentTextOf).
// Other outcomes (domain/whatsapp-message):
//   - not text (an image, a location, a voice note that cannot be listened to here...): a reply
//     says only text is understood; reactions, system notices and the welcome request get no
//     reply;
//   - a voice note that could not be fetched or transcribed: a reply asks to write instead;
//   - a document that could not be fetched or read: a reply asks to write instead;
//   - the message quota used up: a reply says the assistant is unavailable for now;
//   - the model failed (recorded on the conversation): a reply asks to try again later;
//   - the conversation is handed off to a person: no reply from the assistant;
//   - the channel turned off, the tenant suspended or without the feature meanwhile: nothing.
// Its own events (`WhatsAppMessageHandled`, `WhatsAppReplyQueued`) carry the system actor
// `whatsapp_inbound`; the turn's events carry the sender (end_user) as the actor.

import { MAX_MESSAGE_LENGTH, type Party, conversationStream } from '../../domain/conversation/conversation';
import { DomainError } from '../../domain/shared/errors';
import { storableMultiLineText } from '../../domain/shared/text';
import type { MessageOutcome, WhatsAppMessageReceivedData, WhatsAppMessageState } from '../../domain/whatsapp-message/whatsapp-message';
import { whatsappMessageStream } from '../../domain/whatsapp-message/whatsapp-message';
import { defaultWorkspaceOf } from '../workspace/workspaces';
import { AssistantUnavailableError, type ChatDependencies, chat, publicChannelAsker, titleFrom } from '../chat/chat';
import { handleCommand, loadAggregate } from '../command-handling/handle-command';
import { conversationAggregate } from '../conversation/conversations';
import { QuotaExceededError, requireQuota } from '../entitlement/entitlements';
import type { Secrets } from '../ports/identity';
import type { Saga } from '../sagas/saga';
import { type RequestContext, systemContext } from '../shared/request-context';
import { WHATSAPP_MESSAGES, type WhatsAppMessageDocument } from '../../projections/whatsapp-messages';
import type { RecordedOf } from '../ports/domain-event-store';
import { queueWhatsAppReply } from './reply-delivery';
import type { WhatsAppConfiguration } from '../../domain/whatsapp-config/whatsapp-config';
import { type WhatsAppSettings, configurationOfTenant, whyNotServed } from './whatsapp-config';
import { MessagingError, type MediaSource } from '../ports/messaging';
import { type Speech, SpeechProviderError } from '../ports/speech';
import { sniffAudio } from '../speech/audio-types';
import { type TextExtractor, UnsupportedDocumentError } from '../ports/text-extractor';
import { senderPartyId, whatsappMessageAggregate } from './whatsapp-webhook';

export const WHATSAPP_INBOUND = 'whatsapp_inbound';

export type InboundDependencies = ChatDependencies & {
  secrets: Pick<Secrets, 'seal' | 'open' | 'digest'>;
  /** Where voice notes are fetched from (the Cloud API, with the tenant's token). */
  media: MediaSource;
  /** What voice notes are transcribed with; null: the deployment has no speech server, and they are not listened to. */
  speech: Speech | null;
  /** What documents are read with (the knowledge base's extractor: PDF, DOCX, HTML, Markdown, text, CSV). */
  textExtractor: TextExtractor;
  whatsapp: WhatsAppSettings;
};

/** What the sender is told when their message is not text. */
export const ONLY_TEXT_NOTICE = 'Sorry, I can only read text messages. Please write your question as text.';
/** What the sender is told when the tenant's message quota is used up. */
export const UNAVAILABLE_NOTICE = 'Sorry, the assistant is not available right now. Please try again later.';
/** What the sender is told when their voice note could not be listened to. */
export const VOICE_NOT_HEARD_NOTICE = 'Sorry, I could not listen to your voice message. Please write your question as text.';
/** What the sender is told when their document could not be read. */
export const DOCUMENT_NOT_READ_NOTICE = 'Sorry, I could not read the document you sent. Please write your question as text.';
/** What the sender is told when the model could not answer. */
export const FAILED_NOTICE = 'Sorry, I could not answer just now. Please try again in a moment.';

/** Message types that are no question and get no reply: a reaction to a message, a system notice, WhatsApp's welcome request. */
const SILENT_TYPES = new Set(['reaction', 'system', 'request_welcome']);

/** Conversations of one sender a scan looks through for one that is not deleted. */
const MAX_GENERATIONS = 1000;

/** A sender's conversation, and the party they are in it. */
export interface SenderConversation {
  conversation_id: string;
  party: Party;
}

/**
 * The sender's conversation: the first of its numbered generations that is not deleted,
 * started when it does not exist yet (two messages racing start it once), with their number
 * and profile name kept sealed as its `contact` and `contact_name`.
 */
export async function senderConversation(
  deps: InboundDependencies,
  tenantId: string,
  sender: { wa_id: string; name: string | null },
  workspaceId: string,
  title: string,
  context: Omit<RequestContext, 'actor'>,
): Promise<SenderConversation> {
  // Keyed as when the party id was `whatsapp:<number>`, so the conversations of then go on.
  const senderKey = deps.secrets.digest(`whatsapp-sender\u0000${tenantId}\u0000whatsapp:${sender.wa_id}`);
  const party: Party = { kind: 'end_user', id: senderPartyId(deps.secrets, tenantId, sender.wa_id) };
  for (let generation = 0; generation < MAX_GENERATIONS; generation += 1) {
    const conversationId = deps.ids.fromKey(`whatsappConversation:${senderKey}:${generation}`);
    const { state } = await loadAggregate(deps, conversationAggregate, conversationStream(conversationId));
    if (state.status === 'deleted') continue;
    // One started before party ids were digests goes on with the party it has.
    if (state.status !== 'absent') return { conversation_id: conversationId, party: state.started_by };
    try {
      await handleCommand(
        deps,
        conversationAggregate,
        conversationStream(conversationId),
        {
          type: 'StartConversation',
          data: { conversation_id: conversationId, tenant_id: tenantId, workspace_id: workspaceId, channel: 'whatsapp', title, started_by: party, contact: sender.wa_id, ...(sender.name ? { contact_name: sender.name } : {}) },
        },
        { ...context, actor: party },
      );
    } catch (error) {
      if (!(error instanceof DomainError && error.code === 'conversation_exists')) throw error;
    }
    return { conversation_id: conversationId, party };
  }
  throw new Error(`the sender has ${MAX_GENERATIONS} deleted WhatsApp conversations`);
}

/** The workspace the configuration names, or the tenant's default one. */
async function workspaceOf(deps: InboundDependencies, tenantId: string, configured: string | null): Promise<string | null> {
  return configured ?? defaultWorkspaceOf(deps, tenantId);
}

interface Handling {
  outcome: MessageOutcome;
  conversation_id: string | null;
  user_message_id: string | null;
  reply: { text: string; kind: 'answer' | 'notice' } | null;
  detail: string | null;
}

const handling = (outcome: MessageOutcome, detail: string | null, reply: Handling['reply'] = null): Handling => ({ outcome, conversation_id: null, user_message_id: null, reply, detail });

/** Whether voice notes can be listened to for this tenant: a speech server, and the Cloud API with the tenant's token to fetch them. */
const hearsVoiceNotes = (deps: InboundDependencies, configuration: WhatsAppConfiguration): boolean =>
  deps.speech !== null && !deps.whatsapp.outboxOnly && configuration.access_token_sealed !== null;

/**
 * What a voice note says: its audio fetched from the Cloud API (at most `maxAudioBytes`),
 * transcribed by the speech server. Any failure (Meta, the audio's type, the speech server, an
 * empty transcript) is a notice to the sender rather than a retry: they may simply write.
 */
async function transcriptOf(deps: InboundDependencies, message: WhatsAppMessageReceivedData, configuration: WhatsAppConfiguration, maxAudioBytes: number): Promise<{ text: string } | { failure: string }> {
  if (message.media_id === undefined || deps.speech === null || configuration.access_token_sealed === null) return { failure: 'voice_not_available' };
  try {
    const from = { phone_number_id: configuration.phone_number_id, access_token: deps.secrets.open(configuration.access_token_sealed), api_version: configuration.graph_api_version };
    const media = await deps.media.downloadMedia(from, message.media_id, maxAudioBytes);
    const type = sniffAudio(media.bytes);
    if (type === null) return { failure: 'unsupported_audio_type' };
    const text = (await deps.speech.transcribe(media.bytes, type.mime)).trim();
    return text === '' ? { failure: 'nothing_heard' } : { text };
  } catch (error) {
    if (!(error instanceof MessagingError || error instanceof SpeechProviderError)) throw error;
    deps.logger.warn({ tenant_id: message.tenant_id, message_id: message.message_id, reason: error.message }, 'a WhatsApp voice note could not be listened to');
    return { failure: error instanceof MessagingError ? 'voice_not_fetched' : 'voice_not_transcribed' };
  }
}

/** Whether documents can be read for this tenant: the Cloud API with the tenant's token to fetch them. */
const readsDocuments = (deps: InboundDependencies, configuration: WhatsAppConfiguration): boolean => !deps.whatsapp.outboxOnly && configuration.access_token_sealed !== null;

/**
 * The question a document asks: its caption, then its name and text, fetched from the Cloud API
 * (at most `maxBytes`) and read by the knowledge base's extractor, the whole cut to what a
 * message may hold. Any failure (Meta, a type not read, an unreadable file, no text) is a notice
 * to the sender rather than a retry: they may simply write.
 */
async function documentTextOf(deps: InboundDependencies, message: WhatsAppMessageReceivedData, configuration: WhatsAppConfiguration, maxBytes: number): Promise<{ text: string } | { failure: string }> {
  if (message.media_id === undefined || configuration.access_token_sealed === null) return { failure: 'document_not_available' };
  try {
    const from = { phone_number_id: configuration.phone_number_id, access_token: deps.secrets.open(configuration.access_token_sealed), api_version: configuration.graph_api_version };
    const media = await deps.media.downloadMedia(from, message.media_id, maxBytes);
    const type = deps.textExtractor.sniff(media.bytes, message.filename ?? null);
    if (type === null) return { failure: 'unsupported_document_type' };
    const body = (await deps.textExtractor.extract(media.bytes, type)).trim();
    if (body === '') return { failure: 'nothing_read' };
    const caption = message.caption?.trim() ?? '';
    const heading = `[Document${message.filename ? ` "${message.filename}"` : ''}]`;
    // Cut to what a message holds; the characters a message may not hold (a PDF's form feeds) are spaces.
    return { text: storableMultiLineText(`${caption === '' ? '' : `${caption}\n\n`}${heading}\n${body}`.slice(0, MAX_MESSAGE_LENGTH)).trimEnd() };
  } catch (error) {
    if (!(error instanceof MessagingError || error instanceof UnsupportedDocumentError)) throw error;
    deps.logger.warn({ tenant_id: message.tenant_id, message_id: message.message_id, reason: error.message }, 'a WhatsApp document could not be read');
    return { failure: error instanceof MessagingError ? 'document_not_fetched' : 'document_not_read' };
  }
}

/** What the message calls for: a turn and its answer, a notice, or nothing. */
async function handlingOf(deps: InboundDependencies, message: WhatsAppMessageReceivedData, turnContext: Omit<RequestContext, 'actor'>, settings: Pick<InboundSettings, 'maxAudioBytes' | 'maxDocumentBytes'>): Promise<Handling> {
  const { tenant_id, message_id } = message;
  const configuration = await configurationOfTenant(deps, tenant_id);
  if (configuration === null || configuration.phone_number_id !== message.phone_number_id) return handling('ignored', 'number_not_configured');
  const refusal = await whyNotServed(deps, tenant_id, configuration.enabled);
  if (refusal !== null) return handling('ignored', refusal);
  const voiceNote = message.type === 'audio' && hearsVoiceNotes(deps, configuration);
  const document = message.type === 'document' && readsDocuments(deps, configuration);
  if ((message.type !== 'text' || message.text === null) && !voiceNote && !document) {
    return SILENT_TYPES.has(message.type) ? handling('ignored', `type_${message.type}`) : handling('unsupported_type', `type_${message.type}`, { text: ONLY_TEXT_NOTICE, kind: 'notice' });
  }
  const workspaceId = await workspaceOf(deps, tenant_id, configuration.workspace_id);
  if (workspaceId === null) return handling('refused', 'no_workspace');
  try {
    let text = message.text ?? '';
    if (voiceNote) {
      // The quota first: a message past it is not worth listening to.
      await requireQuota(deps, tenant_id, 'messages_per_month');
      const heard = await transcriptOf(deps, message, configuration, settings.maxAudioBytes);
      if ('failure' in heard) return handling('assistant_failed', heard.failure, { text: VOICE_NOT_HEARD_NOTICE, kind: 'notice' });
      text = heard.text;
    }
    if (document) {
      // The quota first, as for a voice note.
      await requireQuota(deps, tenant_id, 'messages_per_month');
      const read = await documentTextOf(deps, message, configuration, settings.maxDocumentBytes);
      if ('failure' in read) return handling('assistant_failed', read.failure, { text: DOCUMENT_NOT_READ_NOTICE, kind: 'notice' });
      text = read.text;
    }
    const { conversation_id: conversationId, party } = await senderConversation(deps, tenant_id, { wa_id: message.from, name: message.profile_name }, workspaceId, titleFrom(text) || 'WhatsApp', turnContext);
    const asker = publicChannelAsker(tenant_id, party, 'whatsapp', workspaceId);
    const result = await chat(deps, asker, { message: text, conversation_id: conversationId }, { ...turnContext, actor: party }, { idempotencyKey: `${WHATSAPP_INBOUND}:${message_id}` });
    const turn = { conversation_id: result.conversation_id, user_message_id: result.user_message_id };
    if (result.paused || result.answer === null) return { ...turn, outcome: 'paused', reply: null, detail: 'handed_off' };
    return { ...turn, outcome: 'answered', reply: { text: result.answer.text, kind: 'answer' }, detail: null };
  } catch (error) {
    if (error instanceof QuotaExceededError) return handling('over_quota', error.code, { text: UNAVAILABLE_NOTICE, kind: 'notice' });
    if (error instanceof AssistantUnavailableError) return handling('assistant_failed', error.code, { text: FAILED_NOTICE, kind: 'notice' });
    // A text the conversation refuses (spaces only, characters it does not store): nothing to answer.
    if (error instanceof DomainError) return handling('refused', error.code);
    throw error;
  }
}

export interface InboundSettings {
  /** How long a message waits for the sender's earlier ones to be handled before its turn goes on anyway (WHATSAPP_ORDER_WAIT_SECONDS). */
  orderWaitMs: number;
  /** A text's turn also asks the sender's texts received up to this long after it and still waiting (WHATSAPP_MERGE_SECONDS); 0: never. */
  mergeWindowMs: number;
  /** A text is answered once its sender has written nothing for this long, within the merge window (WHATSAPP_PAUSE_SECONDS); 0: at once. */
  pauseMs: number;
  /** The largest voice note listened to (SPEECH_MAX_AUDIO_BYTES). */
  maxAudioBytes: number;
  /** The largest document read (DOCUMENT_MAX_BYTES). */
  maxDocumentBytes: number;
}

/** Between two looks at whether the sender's earlier messages are handled. */
const ORDER_POLL_MS = 100;

/**
 * Waits until the sender's messages received before this one (its position) are handled, so
 * that a sender who writes several messages in a row gets their answers in order, each turn
 * seeing the ones before with their answers. One received longer ago than the wait is not
 * waited for (its handling keeps failing: the sender is not held up by it for ever); past the
 * wait the turn goes on anyway, with a line in the log.
 */
async function afterEarlierMessages(deps: InboundDependencies, event: RecordedOf<'WhatsAppMessageReceived'>, waitMs: number): Promise<void> {
  const messages = deps.readStore.collection<WhatsAppMessageDocument>(WHATSAPP_MESSAGES);
  const { tenant_id } = event.data;
  const sender = event.metadata.actor.id;
  const deadline = Date.now() + waitMs;
  // The earlier messages are in the read model once it has this one (a burst comes in one append).
  await deps.readYourWrites(event.position);
  for (;;) {
    const since = new Date(deps.clock.now().getTime() - waitMs).toISOString();
    const { items } = await messages.find({ where: { waiting_sender: sender }, index: 'waiting_sender', limit: 100 });
    const earlier = items.filter((doc) => doc.tenant_id === tenant_id && doc.received_position < event.position && doc.received_at >= since);
    if (earlier.length === 0) return;
    if (Date.now() >= deadline) {
      deps.logger.warn({ tenant_id, message_id: event.data.message_id, waiting_for: earlier.map((doc) => doc.id) }, 'a WhatsApp message goes on before the sender\'s earlier ones were handled');
      return;
    }
    await new Promise((resolve) => setTimeout(resolve, ORDER_POLL_MS));
  }
}

/** Between two looks at whether the sender has paused. */
const PAUSE_POLL_MS = 100;

/**
 * For a text: waits until its sender has paused, nothing of theirs received in the last
 * `pauseMs` (by the received times) within the merge window from this text, so that "Hi", "my
 * order 1234", "hasn't arrived", written a second or two apart, are one turn even when the first
 * would be handled at once. Never past the window (a sender who goes on writing is answered
 * with what came until then), nor longer than it in this process's own time.
 */
async function untilSenderPauses(deps: InboundDependencies, event: RecordedOf<'WhatsAppMessageReceived'>, pauseMs: number, windowMs: number): Promise<void> {
  const message = event.data;
  if (pauseMs === 0 || windowMs === 0 || message.type !== 'text') return;
  const messages = deps.readStore.collection<WhatsAppMessageDocument>(WHATSAPP_MESSAGES);
  const windowEnds = Date.parse(message.received_at) + windowMs;
  const deadline = Date.now() + windowMs;
  for (;;) {
    // What the webhook stored until now is in the read model.
    await deps.readYourWrites(await deps.eventStore.headPosition());
    const { items } = await messages.find({ where: { waiting_sender: event.metadata.actor.id }, index: 'waiting_sender', limit: 100 });
    const latest = items
      .filter((doc) => doc.tenant_id === message.tenant_id && doc.received_position > event.position && Date.parse(doc.received_at) <= windowEnds)
      .reduce((newest, doc) => Math.max(newest, Date.parse(doc.received_at)), Date.parse(message.received_at));
    const pausedAt = Math.min(latest + pauseMs, windowEnds);
    const now = deps.clock.now().getTime();
    if (now >= pausedAt || Date.now() >= deadline) return;
    await new Promise((resolve) => setTimeout(resolve, Math.min(PAUSE_POLL_MS, pausedAt - now)));
  }
}

/** Later messages asked in one turn with the first, at most. */
const MAX_MERGED = 9;

type ReceivedState = Extract<WhatsAppMessageState, { status: 'received' }>;

/**
 * The sender's later texts this text's turn asks with it, in the order received: those still
 * waiting for their turn, received at most `windowMs` after it, in a row (the first message that
 * is not such a text ends the run: it keeps its place in the order), as many as the question
 * holds. Recorded on the message once, before each is marked `merged` (their own turns then
 * do nothing): a redelivered trigger asks the same ones again.
 */
async function mergedMessages(deps: InboundDependencies, event: RecordedOf<'WhatsAppMessageReceived'>, state: ReceivedState, windowMs: number, context: RequestContext): Promise<WhatsAppMessageReceivedData[]> {
  const message = state.message;
  let ids = state.merged;
  if (ids === null) {
    if (windowMs === 0 || message.type !== 'text' || message.text === null) return [];
    const until = new Date(Date.parse(message.received_at) + windowMs).toISOString();
    // Messages delivered with this one (one webhook call) are in the read model once it has what is stored now.
    await deps.readYourWrites(await deps.eventStore.headPosition());
    const { items } = await deps.readStore.collection<WhatsAppMessageDocument>(WHATSAPP_MESSAGES).find({ where: { waiting_sender: event.metadata.actor.id }, index: 'waiting_sender', limit: 100 });
    const later = items.filter((doc) => doc.tenant_id === message.tenant_id && doc.received_position > event.position && doc.received_at <= until).sort((a, b) => a.received_position - b.received_position);
    ids = [];
    let length = message.text.length;
    for (const doc of later.slice(0, MAX_MERGED)) {
      const { state: next } = await loadAggregate(deps, whatsappMessageAggregate, whatsappMessageStream(doc.id));
      if (next.status !== 'received' || next.erased || next.message.type !== 'text' || next.message.text === null) break;
      length += 1 + next.message.text.length;
      if (length > MAX_MESSAGE_LENGTH) break;
      ids.push(doc.id);
    }
    if (ids.length === 0) return [];
    await handleCommand(deps, whatsappMessageAggregate, whatsappMessageStream(message.message_id), { type: 'MergeWhatsAppMessages', data: { merged_ids: ids } }, context);
  }
  const merged: WhatsAppMessageReceivedData[] = [];
  for (const id of ids) {
    const stream = whatsappMessageStream(id);
    const outcome = { outcome: 'merged' as const, conversation_id: null, user_message_id: null, reply_id: null, detail: `merged_into:${message.message_id}` };
    await handleCommand(deps, whatsappMessageAggregate, stream, { type: 'RecordWhatsAppMessageHandled', data: outcome }, context);
    const { state: after } = await loadAggregate(deps, whatsappMessageAggregate, stream);
    // Erased since (with the sender's conversation): its words are asked no more.
    if (after.status !== 'absent' && !after.erased && after.message.text !== null) merged.push(after.message);
  }
  return merged;
}

export function whatsappInboundSaga(deps: InboundDependencies, settings: InboundSettings): Saga<'WhatsAppMessageReceived'> {
  return {
    name: WHATSAPP_INBOUND,
    version: 1,
    filter: { kind: 'event_type', types: ['WhatsAppMessageReceived'] },
    async handle(event) {
      const message = event.data;
      const stream = whatsappMessageStream(message.message_id);
      const { state } = await loadAggregate(deps, whatsappMessageAggregate, stream);
      // Handled already, or erased (with its conversation) before it was: nothing to do.
      if (state.status !== 'received' || state.erased) return;
      const correlationId = event.metadata.correlation_id;
      // The turn's events carry the sender as their actor (the party of their conversation).
      const turnContext: Omit<RequestContext, 'actor'> = {
        tenant_id: message.tenant_id,
        request_id: null,
        correlation_id: correlationId,
        causation_id: event.id,
        ip: null,
      };
      const sagaContext: RequestContext = { ...systemContext(correlationId, WHATSAPP_INBOUND, event.id), tenant_id: message.tenant_id };
      await afterEarlierMessages(deps, event, settings.orderWaitMs);
      await untilSenderPauses(deps, event, settings.pauseMs, settings.mergeWindowMs);
      // Asked in an earlier message's turn while it waited (merged), or erased: nothing more to do.
      const { state: current } = await loadAggregate(deps, whatsappMessageAggregate, stream);
      if (current.status !== 'received' || current.erased) return;
      const merged = await mergedMessages(deps, event, current, settings.mergeWindowMs, sagaContext);
      const question = merged.length === 0 ? message : { ...message, text: [message.text, ...merged.map((later) => later.text)].join('\n') };
      const handled = await handlingOf(deps, question, turnContext, settings);
      const replyId = handled.reply === null ? null : deps.ids.fromKey(`whatsappReply:${message.message_id}`);
      // The reply first: a crash before the outcome is recorded redelivers the trigger, which
      // finds the turn recorded (its seed) and the reply queued (its id), and records the outcome.
      if (handled.reply !== null && replyId !== null) {
        await queueWhatsAppReply(
          deps,
          {
            reply_id: replyId,
            tenant_id: message.tenant_id,
            phone_number_id: message.phone_number_id,
            to: message.from,
            text: handled.reply.text,
            kind: handled.reply.kind,
            conversation_id: handled.conversation_id,
            in_reply_to: message.message_id,
          },
          sagaContext,
        );
      }
      await handleCommand(
        deps,
        whatsappMessageAggregate,
        stream,
        {
          type: 'RecordWhatsAppMessageHandled',
          data: { outcome: handled.outcome, conversation_id: handled.conversation_id, user_message_id: handled.user_message_id, reply_id: replyId, detail: handled.detail },
        },
        sagaContext,
      );
    },
  };
}
