// The WhatsApp message aggregate: one message a WhatsApp user sent to a tenant's business
// number, as Meta's webhook delivered it, and what the platform did with it. Stream
// `whatsappMessage-<id>`, the id derived from the tenant and Meta's message id (`wamid...`), so
// every delivery of one message (Meta delivers at least once, and may deliver the same
// payload on several connections at once) lands on the one stream: the first records it, the
// others find it recorded and record nothing.
//
// Outcomes: `answered` (a turn of the sender's conversation, the answer queued as a reply),
// `paused` (the conversation is handed off to a person: the assistant stays quiet),
// `unsupported_type` (not text, nor a voice note or a document the platform could read: a reply
// says only text is understood), `over_quota` (the tenant's message quota is used up: a reply says
// the assistant is unavailable), `assistant_failed` (the model could not answer, or a voice
// note could not be listened to, or a document read: a reply says so), `refused` (a text the conversation refuses,
// such as one of spaces only: no reply), `ignored` (a reaction or a system notice, or the
// channel was turned off meanwhile: no reply), `merged` (a text asked in the turn of an earlier
// message of the same sender, sent in quick succession: that turn's answer is its answer;
// `detail` is `merged_into:<message id>`).
//
// Merging: the first message of a burst records which later ones its turn asks
// (`WhatsAppMessagesMerged`, once), before they are marked `merged`, so that a redelivered
// trigger asks the same messages again whatever arrived since.
//
// Erasure (docs/personal-data.md): the sender's number, profile name, text and a document's
// caption and file name are personal data
// of the subject `whatsappMessage:<id>`, stored sealed under its key; `WhatsAppMessageErased`
// (recorded when the conversation it became a turn of is erased) deletes the key. An erased
// message is handled no more.

import * as t from 'io-ts';
import { type Either, left, right } from 'fp-ts/Either';
import type { Decider } from '../shared/decider';
import { type DomainError, notFound } from '../shared/errors';
import { type EventOf, declareEvent, eventGroup, type GroupEvent } from '../shared/events';
import { toStreamName } from '../shared/stream-names';

export const MESSAGE_OUTCOMES = ['answered', 'paused', 'unsupported_type', 'over_quota', 'assistant_failed', 'refused', 'ignored', 'merged'] as const;
export const MessageOutcome = t.keyof({ answered: null, paused: null, unsupported_type: null, over_quota: null, assistant_failed: null, refused: null, ignored: null, merged: null });
export type MessageOutcome = t.TypeOf<typeof MessageOutcome>;

export const WhatsAppMessageReceived = declareEvent(
  'WhatsAppMessageReceived',
  t.intersection([
    t.type({
      message_id: t.string,
      tenant_id: t.string,
      /** Meta's id of the message (`wamid....`). */
      wamid: t.string,
      /** The business number it was sent to. */
      phone_number_id: t.string,
      /** The sender's WhatsApp id (their phone number, digits). */
      from: t.string,
      /** The sender's profile name as Meta gave it; null when it gave none. */
      profile_name: t.union([t.string, t.null]),
      /** Meta's message type: `text`, `image`, `audio`, `reaction`, ... */
      type: t.string,
      /** The text of a `text` message; null for any other type. */
      text: t.union([t.string, t.null]),
      /** When the sender sent it (Meta's timestamp). */
      sent_at: t.string,
      received_at: t.string,
    }),
    /**
     * An `audio` message's media id at Meta (a voice note), or a `document` message's, to download
     * it with the tenant's token; a document's caption and file name, as the sender's app gave them.
     */
    t.partial({ media_id: t.string, caption: t.string, filename: t.string }),
  ]),
);
export const WhatsAppMessageHandled = declareEvent(
  'WhatsAppMessageHandled',
  t.type({
    message_id: t.string,
    tenant_id: t.string,
    outcome: MessageOutcome,
    /** The sender's conversation the message became a turn of; null when it became none. */
    conversation_id: t.union([t.string, t.null]),
    user_message_id: t.union([t.string, t.null]),
    /** The reply queued for the sender (whatsappReply); null when none is sent. */
    reply_id: t.union([t.string, t.null]),
    /** Why, for an outcome other than `answered`: a code such as `quota_exceeded`. */
    detail: t.union([t.string, t.null]),
    handled_at: t.string,
  }),
);

/** The later messages of the same sender this message's turn asks with it, in the order received. */
export const WhatsAppMessagesMerged = declareEvent('WhatsAppMessagesMerged', t.type({ message_id: t.string, tenant_id: t.string, merged_ids: t.array(t.string), merged_at: t.string }));

/** The sender's number, profile name and text were erased with the conversation the message became a turn of. */
export const WhatsAppMessageErased = declareEvent('WhatsAppMessageErased', t.type({ message_id: t.string, tenant_id: t.string, erased_at: t.string }));

/** The data subject of what an inbound message holds. */
export const whatsappMessageSubject = (messageId: string): string => `whatsappMessage:${messageId}`;

export const whatsappMessageEvents = eventGroup('whatsappMessage', [WhatsAppMessageReceived, WhatsAppMessageHandled, WhatsAppMessagesMerged, WhatsAppMessageErased], {
  subject: (data) => whatsappMessageSubject(String(data.message_id)),
  fields: { WhatsAppMessageReceived: ['from', 'profile_name', 'text', 'caption', 'filename'] },
  erasedBy: 'WhatsAppMessageErased',
});
export type WhatsAppMessageEvent = GroupEvent<typeof whatsappMessageEvents>;
export type WhatsAppMessageReceivedData = EventOf<typeof WhatsAppMessageReceived>['data'];
export type WhatsAppMessageHandledData = EventOf<typeof WhatsAppMessageHandled>['data'];

export type WhatsAppMessageCommand =
  | { type: 'ReceiveWhatsAppMessage'; data: Omit<WhatsAppMessageReceivedData, 'received_at'> }
  | { type: 'RecordWhatsAppMessageHandled'; data: Omit<WhatsAppMessageHandledData, 'handled_at' | 'message_id' | 'tenant_id'> }
  | { type: 'MergeWhatsAppMessages'; data: { merged_ids: string[] } }
  | { type: 'EraseWhatsAppMessage'; data: { tenant_id: string } };

export type WhatsAppMessageState =
  | { status: 'absent' }
  | { status: 'received'; message: WhatsAppMessageReceivedData; erased: boolean; merged: string[] | null }
  | { status: 'handled'; message: WhatsAppMessageReceivedData; handled: WhatsAppMessageHandledData; erased: boolean; merged: string[] | null };

export const whatsappMessageStream = (messageId: string): string => toStreamName(whatsappMessageEvents.category, messageId);

export const whatsappMessageDecider: Decider<WhatsAppMessageCommand, WhatsAppMessageEvent, WhatsAppMessageState> = {
  initialState: () => ({ status: 'absent' }),
  evolve(state, event) {
    switch (event.type) {
      case 'WhatsAppMessageReceived':
        return { status: 'received', message: event.data, erased: false, merged: null };
      case 'WhatsAppMessageHandled':
        return state.status === 'absent' ? state : { status: 'handled', message: state.message, handled: event.data, erased: state.erased, merged: state.merged };
      case 'WhatsAppMessagesMerged':
        return state.status === 'absent' ? state : { ...state, merged: event.data.merged_ids };
      case 'WhatsAppMessageErased':
        return state.status === 'absent' ? state : { ...state, erased: true };
    }
  },
  decide(command, state, { now }): Either<DomainError, WhatsAppMessageEvent[]> {
    switch (command.type) {
      case 'ReceiveWhatsAppMessage':
        // A delivery of a message already received (a retry, a parallel delivery) records nothing.
        if (state.status !== 'absent') return right([]);
        return right([{ type: 'WhatsAppMessageReceived', data: { ...command.data, received_at: now.toISOString() } }]);
      case 'RecordWhatsAppMessageHandled': {
        if (state.status === 'absent') return left(notFound('whatsapp_message_not_found', 'no such WhatsApp message'));
        // One outcome per message: a redelivered trigger records nothing; nor does one of an erased message.
        if (state.status === 'handled' || state.erased) return right([]);
        const { message_id, tenant_id } = state.message;
        return right([{ type: 'WhatsAppMessageHandled', data: { message_id, tenant_id, ...command.data, handled_at: now.toISOString() } }]);
      }
      case 'MergeWhatsAppMessages': {
        if (state.status === 'absent') return left(notFound('whatsapp_message_not_found', 'no such WhatsApp message'));
        // Recorded once, before its turn: a redelivered trigger asks the same messages.
        if (state.status === 'handled' || state.erased || state.merged !== null || command.data.merged_ids.length === 0) return right([]);
        const { message_id, tenant_id } = state.message;
        return right([{ type: 'WhatsAppMessagesMerged', data: { message_id, tenant_id, merged_ids: command.data.merged_ids, merged_at: now.toISOString() } }]);
      }
      case 'EraseWhatsAppMessage':
        if (state.status === 'absent' || state.message.tenant_id !== command.data.tenant_id) return left(notFound('whatsapp_message_not_found', 'no such WhatsApp message'));
        if (state.erased) return right([]);
        return right([{ type: 'WhatsAppMessageErased', data: { message_id: state.message.message_id, tenant_id: state.message.tenant_id, erased_at: now.toISOString() } }]);
    }
  },
};
