// The /ws/chat protocol (docs/widget.md "WebSocket protocol (/ws/chat)"): JSON text frames,
// the client's decoded with io-ts (a bad one closes 4400, the reason naming the field), the
// server's typed here. The widget (widget.js) speaks exactly this.

import * as t from 'io-ts';
import type { Citation } from '../../domain/conversation/conversation';
import type { ToolStepView } from '../../application/chat/tool-steps';
import type { WidgetMessageView } from '../../application/widget/widget-chat';
import { NonEmptyTrimmed } from '../../domain/shared/codecs';

/** Close codes (RFC 6455 4000-4999 are the application's; 1001, 1009, 1011, 1013 are the standard's). */
export const CLOSE = {
  /** The server is shutting down: reconnect (to another instance). */
  goingAway: 1001,
  /** A frame over WIDGET_WS_MAX_PAYLOAD (64 KiB); sent by the ws library itself. */
  tooBig: 1009,
  internalError: 1011,
  /** The client did not read for WIDGET_WS_SLOW_CLIENT_MS with the buffer over the high-water mark. */
  tryAgainLater: 1013,
  /** Not JSON, not text, an unknown type, a bad field, or anything before `resume`. */
  protocolError: 4400,
  /** A missing, unknown or rotated widget token; a bad or missing verified identity. */
  unauthorized: 4401,
  /** Origin not allowed, tenant suspended or deleted, widget disabled. */
  forbidden: 4403,
  /** No `resume` within WIDGET_WS_RESUME_TIMEOUT_MS. */
  resumeTimeout: 4408,
  /** Too many connections or messages from one visitor. */
  tooMany: 4429,
} as const;

/** The largest client frame (ws maxPayload): a message is at most 8,000 characters, 32 KiB of UTF-8 at worst, with room for the rest. */
export const MAX_PAYLOAD_BYTES = 64 * 1024;

/** An id the client chose for its message, echoed back: printable, at most 100 characters. */
const ClientMessageId = t.refinement(t.string, (value) => /^[\x20-\x7e]{1,100}$/.test(value), 'ClientMessageId');
const Nullable = <C extends t.Mixed>(codec: C) => t.union([codec, t.null]);

export const ResumeFrame = t.intersection(
  [
    t.type({ type: t.literal('resume'), visitor_id: t.string }),
    t.partial({
      conversation_id: Nullable(NonEmptyTrimmed),
      identity: Nullable(t.partial({ user_id: Nullable(t.string), user_hash: Nullable(t.string), token: Nullable(t.string), session: Nullable(t.string) })),
    }),
  ],
  'ResumeFrame',
);
export const MessageFrame = t.intersection([t.type({ type: t.literal('message'), text: t.string }), t.partial({ client_message_id: ClientMessageId })], 'MessageFrame');
export const TypingFrame = t.type({ type: t.literal('typing'), typing: t.boolean }, 'TypingFrame');
export const FeedbackFrame = t.intersection(
  [t.type({ type: t.literal('feedback'), message_id: NonEmptyTrimmed, rating: t.keyof({ up: null, down: null }) }), t.partial({ comment: t.string })],
  'FeedbackFrame',
);
export const PingFrame = t.type({ type: t.literal('ping') }, 'PingFrame');

export type ResumeFrame = t.TypeOf<typeof ResumeFrame>;
export type MessageFrame = t.TypeOf<typeof MessageFrame>;
export type FeedbackFrame = t.TypeOf<typeof FeedbackFrame>;

/** Each client frame type and its codec. */
export const CLIENT_FRAMES = { resume: ResumeFrame, message: MessageFrame, typing: TypingFrame, feedback: FeedbackFrame, ping: PingFrame } as const;
export type ClientFrameType = keyof typeof CLIENT_FRAMES;
export const isClientFrameType = (type: unknown): type is ClientFrameType => typeof type === 'string' && Object.prototype.hasOwnProperty.call(CLIENT_FRAMES, type);

/** Frames the server sends. */
export type ServerFrame =
  | { type: 'ready'; conversation_id: string | null; messages: WidgetMessageView[] }
  | { type: 'message'; conversation_id: string; message: WidgetMessageView; client_message_id?: string }
  | { type: 'delta'; message_id: string; text: string }
  | { type: 'citation'; message_id: string; citation: Citation }
  | { type: 'tool'; message_id: string; step: ToolStepView }
  | { type: 'done'; conversation_id: string; user_message_id: string; message_id: string | null; paused: boolean }
  | { type: 'error'; code: string; message: string; [detail: string]: unknown }
  | { type: 'ack'; of: 'feedback'; message_id: string }
  | { type: 'pong' };

/** A close reason is at most 123 bytes of UTF-8 (RFC 6455 5.5): cut on a character boundary. */
export function closeReason(reason: string): string {
  let cut = [...reason].slice(0, 123).join('');
  while (Buffer.byteLength(cut, 'utf8') > 123) cut = [...cut].slice(0, -1).join('');
  return cut;
}
