// The WhatsApp reply aggregate: one text message the platform sends a WhatsApp user from a
// tenant's business number (the assistant's answer, a notice such as "only text is
// understood", a person's reply in the conversation, the report after approved tool calls).
// Stream `whatsappReply-<id>`, the id derived from what caused it (the inbound message, the
// agent's reply), so a redelivered trigger queues nothing new.
//
// Every attempt, failure, scheduled retry and the final give-up is an event here (the pattern
// of domain/handoff and domain/email): the stream alone says whether the reply went out through
// the WhatsApp Cloud API (`WhatsAppReplySent`, with Meta's message id), was kept in the
// embedded outbox (`WhatsAppReplyKept`: no access token, or WHATSAPP_OUTBOX=true), waits for
// its next attempt, or was given up. What Meta later reports of a sent reply (its status
// callbacks: sent, delivered, read, failed) is recorded too, each status once.
//
// Erasure (docs/personal-data.md): the recipient's number and the text are personal data of the
// subject `whatsappReply:<id>`, stored sealed under its key; `WhatsAppReplyErased` (recorded
// when the reply's conversation is erased) deletes the key, gives up a reply not sent yet, and
// nothing more is recorded of it.

import * as t from 'io-ts';
import { type Either, left, right } from 'fp-ts/Either';
import type { Decider } from '../shared/decider';
import { type DomainError, conflict, notFound } from '../shared/errors';
import { type EventOf, declareEvent, eventGroup, type GroupEvent } from '../shared/events';
import { toStreamName } from '../shared/stream-names';

export const REPLY_KINDS = ['answer', 'notice', 'agent_reply', 'follow_up'] as const;
export const ReplyKind = t.keyof({ answer: null, notice: null, agent_reply: null, follow_up: null });
export type ReplyKind = t.TypeOf<typeof ReplyKind>;

/** What Meta reports of a message it took: in order of progress, and `failed`. */
export const DELIVERY_STATUSES = ['sent', 'delivered', 'read', 'failed'] as const;
export const DeliveryStatus = t.keyof({ sent: null, delivered: null, read: null, failed: null });
export type DeliveryStatus = t.TypeOf<typeof DeliveryStatus>;

/** WhatsApp's longest text message; a longer reply is cut (with an ellipsis) to fit. */
export const MAX_REPLY_LENGTH = 4096;

export const WhatsAppReplyQueued = declareEvent(
  'WhatsAppReplyQueued',
  t.type({
    reply_id: t.string,
    tenant_id: t.string,
    /** The business number it is sent from. */
    phone_number_id: t.string,
    /** The recipient's WhatsApp id. */
    to: t.string,
    text: t.string,
    kind: ReplyKind,
    conversation_id: t.union([t.string, t.null]),
    /** The inbound message (whatsappMessage) it answers; null for a person's reply or a follow-up. */
    in_reply_to: t.union([t.string, t.null]),
    queued_at: t.string,
  }),
);
/** An attempt is claimed before the messaging port is called: of two deliveries racing, one sends. */
export const WhatsAppReplyAttemptStarted = declareEvent('WhatsAppReplyAttemptStarted', t.type({ reply_id: t.string, attempt: t.number, started_at: t.string }));
export const WhatsAppReplySent = declareEvent(
  'WhatsAppReplySent',
  t.type({ reply_id: t.string, attempt: t.number, transport: t.string, provider_message_id: t.union([t.string, t.null]), status_code: t.number, sent_at: t.string }),
);
/** The embedded outbox took it: kept for the super admin to read, never sent. */
export const WhatsAppReplyKept = declareEvent('WhatsAppReplyKept', t.type({ reply_id: t.string, attempt: t.number, kept_at: t.string }));
/** An attempt failed (no answer, or an answer that may change on retry); the next one is due at `next_attempt_at`. */
export const WhatsAppReplyFailed = declareEvent(
  'WhatsAppReplyFailed',
  t.type({ reply_id: t.string, attempt: t.number, status_code: t.union([t.number, t.null]), error: t.string, failed_at: t.string, next_attempt_at: t.string }),
);
/** The last attempt failed, the Cloud API refused it for good, or the channel was turned off meanwhile: no more attempts. */
export const WhatsAppReplyAbandoned = declareEvent(
  'WhatsAppReplyAbandoned',
  t.type({ reply_id: t.string, attempts: t.number, status_code: t.union([t.number, t.null]), error: t.string, abandoned_at: t.string }),
);
/** Meta's status callback for the sent reply. */
export const WhatsAppReplyStatusReported = declareEvent(
  'WhatsAppReplyStatusReported',
  t.type({
    reply_id: t.string,
    status: DeliveryStatus,
    /** When Meta says it happened. */
    reported_at: t.string,
    /** Meta's first error of a `failed` status; null otherwise. */
    error: t.union([t.type({ code: t.number, title: t.string }), t.null]),
    recorded_at: t.string,
  }),
);

/** The reply's recipient and text were erased with its conversation: its key is deleted. */
export const WhatsAppReplyErased = declareEvent('WhatsAppReplyErased', t.type({ reply_id: t.string, tenant_id: t.string, erased_at: t.string }));

/** The data subject of a reply's recipient and text. */
export const whatsappReplySubject = (replyId: string): string => `whatsappReply:${replyId}`;

/** Why a reply not yet sent is given up when its conversation is erased. */
export const REPLY_ERASED_ERROR = 'the conversation was erased';

export const whatsappReplyEvents = eventGroup(
  'whatsappReply',
  [WhatsAppReplyQueued, WhatsAppReplyAttemptStarted, WhatsAppReplySent, WhatsAppReplyKept, WhatsAppReplyFailed, WhatsAppReplyAbandoned, WhatsAppReplyStatusReported, WhatsAppReplyErased],
  { subject: (data) => whatsappReplySubject(String(data.reply_id)), fields: { WhatsAppReplyQueued: ['to', 'text'] }, erasedBy: 'WhatsAppReplyErased' },
);
export type WhatsAppReplyEvent = GroupEvent<typeof whatsappReplyEvents>;
export type WhatsAppReplyQueuedData = EventOf<typeof WhatsAppReplyQueued>['data'];

export type WhatsAppReplyCommand =
  | { type: 'QueueWhatsAppReply'; data: Omit<WhatsAppReplyQueuedData, 'queued_at'> }
  | { type: 'StartWhatsAppReplyAttempt'; data: { attempt: number } }
  | { type: 'RecordWhatsAppReplySent'; data: { attempt: number; transport: string; provider_message_id: string | null; status_code: number } }
  | { type: 'RecordWhatsAppReplyKept'; data: { attempt: number } }
  | { type: 'RecordWhatsAppReplyFailure'; data: { attempt: number; status_code: number | null; error: string; next_attempt_at: string } }
  | { type: 'AbandonWhatsAppReply'; data: { attempt: number; status_code: number | null; error: string } }
  | { type: 'RecordWhatsAppReplyStatus'; data: { status: DeliveryStatus; reported_at: string; error: { code: number; title: string } | null } }
  | { type: 'EraseWhatsAppReply'; data: { tenant_id: string } };

interface Delivery {
  reply: WhatsAppReplyQueuedData;
  /** Attempts started so far. */
  attempts: number;
  last_error: string | null;
  /** Meta's statuses recorded so far. */
  reported: readonly DeliveryStatus[];
  /** Its recipient and text were erased: nothing more is sent or recorded. */
  erased: boolean;
}

export type WhatsAppReplyState =
  | { status: 'absent' }
  | ({ status: 'queued' } & Delivery)
  | ({ status: 'sending'; started_at: string } & Delivery)
  | ({ status: 'retrying'; next_attempt_at: string } & Delivery)
  | ({ status: 'sent'; provider_message_id: string | null } & Delivery)
  | ({ status: 'kept' } & Delivery)
  | ({ status: 'abandoned' } & Delivery);

export type WhatsAppReplyStatus = WhatsAppReplyState['status'];

export const whatsappReplyStream = (replyId: string): string => toStreamName(whatsappReplyEvents.category, replyId);

/** The text as it can be sent: at most MAX_REPLY_LENGTH characters, a longer one cut with an ellipsis. */
export function sendableText(text: string): string {
  const characters = [...text];
  return characters.length <= MAX_REPLY_LENGTH ? text : `${characters.slice(0, MAX_REPLY_LENGTH - 1).join('').trimEnd()}…`;
}

const deliveryOf = ({ reply, attempts, last_error, reported, erased }: Delivery): Delivery => ({ reply, attempts, last_error, reported, erased });

export const whatsappReplyDecider: Decider<WhatsAppReplyCommand, WhatsAppReplyEvent, WhatsAppReplyState> = {
  initialState: () => ({ status: 'absent' }),
  evolve(state, event) {
    if (event.type === 'WhatsAppReplyQueued') return { status: 'queued', reply: event.data, attempts: 0, last_error: null, reported: [], erased: false };
    if (state.status === 'absent') return state;
    const delivery = deliveryOf(state);
    switch (event.type) {
      case 'WhatsAppReplyAttemptStarted':
        return { ...delivery, status: 'sending', attempts: event.data.attempt, started_at: event.data.started_at };
      case 'WhatsAppReplySent':
        return { ...delivery, status: 'sent', provider_message_id: event.data.provider_message_id };
      case 'WhatsAppReplyKept':
        return { ...delivery, status: 'kept' };
      case 'WhatsAppReplyFailed':
        return { ...delivery, status: 'retrying', attempts: Math.max(delivery.attempts, event.data.attempt), last_error: event.data.error, next_attempt_at: event.data.next_attempt_at };
      case 'WhatsAppReplyAbandoned':
        return { ...delivery, status: 'abandoned', last_error: event.data.error };
      case 'WhatsAppReplyStatusReported':
        return { ...state, reported: [...state.reported, event.data.status] };
      case 'WhatsAppReplyErased':
        return { ...state, erased: true };
    }
  },
  decide(command, state, { now }): Either<DomainError, WhatsAppReplyEvent[]> {
    const at = now.toISOString();
    if (command.type === 'QueueWhatsAppReply') {
      if (state.status !== 'absent') return left(conflict('whatsapp_reply_exists', 'this reply was already queued'));
      return right([{ type: 'WhatsAppReplyQueued', data: { ...command.data, text: sendableText(command.data.text), queued_at: at } }]);
    }
    if (state.status === 'absent') return left(notFound('whatsapp_reply_not_found', 'no such WhatsApp reply'));
    const reply_id = state.reply.reply_id;
    if (command.type === 'EraseWhatsAppReply') {
      if (state.reply.tenant_id !== command.data.tenant_id) return left(notFound('whatsapp_reply_not_found', 'no such WhatsApp reply'));
      if (state.erased) return right([]);
      const erased: WhatsAppReplyEvent = { type: 'WhatsAppReplyErased', data: { reply_id, tenant_id: state.reply.tenant_id, erased_at: at } };
      // Not sent yet: it never will be.
      if (state.status !== 'queued' && state.status !== 'sending' && state.status !== 'retrying') return right([erased]);
      return right([{ type: 'WhatsAppReplyAbandoned', data: { reply_id, attempts: state.attempts, status_code: null, error: REPLY_ERASED_ERROR, abandoned_at: at } }, erased]);
    }
    // An erased reply is sent no more, and what Meta reports of it is not recorded.
    if (state.erased) return right([]);
    // Claims and outcomes that no longer fit the state (another delivery settled the attempt
    // first) record nothing: the stream already says what happened.
    switch (command.type) {
      case 'StartWhatsAppReplyAttempt': {
        const next = state.status === 'queued' || state.status === 'retrying' ? state.attempts + 1 : null;
        return right(command.data.attempt === next ? [{ type: 'WhatsAppReplyAttemptStarted', data: { reply_id, attempt: next, started_at: at } }] : []);
      }
      case 'RecordWhatsAppReplySent':
        // A late success is still the truth, whatever was decided meanwhile.
        return right(state.status === 'sent' || state.status === 'kept' ? [] : [{ type: 'WhatsAppReplySent', data: { reply_id, ...command.data, sent_at: at } }]);
      case 'RecordWhatsAppReplyKept':
        return right(state.status === 'sent' || state.status === 'kept' ? [] : [{ type: 'WhatsAppReplyKept', data: { reply_id, attempt: command.data.attempt, kept_at: at } }]);
      case 'RecordWhatsAppReplyFailure':
        if (state.status !== 'sending' || state.attempts !== command.data.attempt) return right([]);
        return right([{ type: 'WhatsAppReplyFailed', data: { reply_id, ...command.data, failed_at: at } }]);
      case 'AbandonWhatsAppReply': {
        // After the attempt that failed last; or, waiting for an attempt (the channel was turned
        // off meanwhile), after the attempts made so far.
        const settles = state.status === 'sending' || state.status === 'queued' || state.status === 'retrying';
        if (!settles || state.attempts !== command.data.attempt) return right([]);
        const { attempt, status_code, error } = command.data;
        return right([{ type: 'WhatsAppReplyAbandoned', data: { reply_id, attempts: attempt, status_code, error, abandoned_at: at } }]);
      }
      case 'RecordWhatsAppReplyStatus':
        // Only a reply Meta took has statuses; each is recorded once, in whatever order Meta sends them.
        if (state.status !== 'sent' || state.reported.includes(command.data.status)) return right([]);
        return right([{ type: 'WhatsAppReplyStatusReported', data: { reply_id, ...command.data, recorded_at: at } }]);
    }
  },
};
