// One visitor's WebSocket on /ws/chat, after its token and origin passed on upgrade: the
// protocol of docs/widget.md "WebSocket protocol (/ws/chat)". In order:
// - `resume` first, within WIDGET_WS_RESUME_TIMEOUT_MS (4408 otherwise, 4400 for anything
//   else first): who the visitor is (application/widget/widget-access.ts visitorOf: 4401 for a
//   bad verified identity), the conversation to continue (its last messages in `ready`; a
//   conversation that is not the visitor's own is `error` conversation_not_found and a ready
//   without one), and identify()'s end-user token and session for the turns' tool calls;
// - `message`: one turn at a time (`error` turn_in_progress otherwise), the token and the
//   visitor checked again first (a rotated token closes 4401 at once), the visitor's message
//   rate (4429), then the chat use case: the stored user message, the answer streamed as
//   `delta` / `citation` / `tool`, the stored answer, `done`. A refusal of the turn (quota,
//   invalid text) is an `error` with its details and the connection stays open;
// - `feedback` on an answer of the visitor's own conversation (`ack`), `typing`, `ping`.
// Frames are handled in the order they came; a turn runs beside them, so a ping is answered
// while an answer streams.
//
// Backpressure: once the socket's bufferedAmount passes the high-water mark the running turn
// stops pulling its answer (the engine is not asked for more) and the socket stops reading
// the client's frames (nothing the client sends can grow the buffer either); both resume when
// the socket has drained. Over the mark for WIDGET_WS_SLOW_CLIENT_MS closes 1013. A client
// that leaves aborts the turn: answerTurn records it as `client_gone`.

import type { Duplex } from 'node:stream';
import { performance } from 'node:perf_hooks';
import WebSocket, { type RawData } from 'ws';
import { type ChatAnswer, type ChatDependencies, type OpenTurn, answerTurn } from '../../application/chat/chat';
import type { ConversationDependencies } from '../../application/conversation/conversations';
import type { WidgetSocketMetrics } from '../../application/ports/metrics';
import type { RateLimiter } from '../../application/ports/rate-limiter';
import type { RequestContext } from '../../application/shared/request-context';
import { type Visitor, type VisitorClaim, type WidgetAccessDependencies, type WidgetPrincipal, authenticateWidget, requireAllowedOrigin, visitorOf } from '../../application/widget/widget-access';
import { type WidgetMessageView, openWidgetTurn, recentVisitorMessages } from '../../application/widget/widget-chat';
import { giveWidgetFeedback, widgetMessage } from '../../application/widget/widget-conversations';
import { DomainError } from '../../domain/shared/errors';
import { type EventClientIp, recordedIpOf } from '../http/client-ip';
import { decodeBody } from '../http/decode';
import { CLIENT_FRAMES, CLOSE, type FeedbackFrame, type MessageFrame, type ResumeFrame, type ServerFrame, closeReason, isClientFrameType } from './protocol';

export type WidgetChatSocketDependencies = ChatDependencies &
  WidgetAccessDependencies &
  ConversationDependencies & {
    /** The visitor's message rate (WIDGET_WS_MESSAGES_PER_MINUTE). */
    limiter: RateLimiter;
    socketMetrics: WidgetSocketMetrics;
  };

export interface WidgetChatSocketOptions {
  /** PUBLIC_URL: its origin is the platform's own; null: the origin the request was addressed to. */
  publicUrl: string | null;
  /** TRUST_PROXY_HOPS: where the client's address is read (adapters/http/client-ip.ts). */
  trustProxyHops: number;
  /** EVENT_CLIENT_IP: how much of it events record. */
  eventClientIp: EventClientIp;
  /** WIDGET_WS_HEARTBEAT_MS: a ping every period; a socket that missed the last pong is terminated. */
  heartbeatMs: number;
  /** WIDGET_WS_RESUME_TIMEOUT_MS: how long a new socket may wait before its `resume` (4408). */
  resumeTimeoutMs: number;
  /** WIDGET_WS_MAX_CONNECTIONS_PER_VISITOR (per process): one more is closed 4429. */
  maxConnectionsPerVisitor: number;
  /** WIDGET_WS_MESSAGES_PER_MINUTE: a visitor's `message` frames (a burst of as many allowed); more closes 4429. */
  messagesPerMinute: number;
  /** WIDGET_WS_HIGH_WATER_BYTES: the buffer over which a turn stops pulling its answer (256 KiB). */
  highWaterBytes: number;
  /** WIDGET_WS_SLOW_CLIENT_MS: how long a socket may stay over the high-water mark before it is closed 1013 (30 s). */
  slowClientMs: number;
}

/** What a connection needs of the server it belongs to. */
export interface ConnectionHost {
  readonly deps: WidgetChatSocketDependencies;
  readonly options: WidgetChatSocketOptions;
  readonly stopping: boolean;
  /** Counts the connection for the visitor; false when the visitor already has as many as allowed. */
  admit(connection: WidgetChatConnection, visitorKey: string): boolean;
  /** The connection ended. */
  forget(connection: WidgetChatConnection): void;
}

/** Client frames waiting to be handled, at most: a client that sends faster than it is answered is closed 4429. */
const MAX_PENDING_FRAMES = 64;

interface Access {
  token: string;
  origin: string | null;
  platformOrigin: string;
  ip: string | null;
}

/** Where an error the use cases name by their own field is, in the protocol's frames. */
const FRAME_FIELDS: Record<string, string> = { message: 'text', 'X-End-User-Token': 'identity.token', 'X-End-User-Session': 'identity.session' };

const errorFrame = (error: DomainError, extra: Record<string, unknown> = {}): ServerFrame => ({
  type: 'error',
  code: error.code,
  message: error.message,
  ...(error.field ? { field: FRAME_FIELDS[error.field] ?? error.field } : {}),
  ...error.details(),
  ...extra,
});

/** The close code of a refusal: 4401 for a credential, 4403 for a denial, 4400 for a bad field, 4429 for a limit. */
export function closeCodeOf(error: DomainError): number {
  switch (error.kind) {
    case 'unauthorized':
      return CLOSE.unauthorized;
    case 'forbidden':
      return CLOSE.forbidden;
    case 'invalid':
      return CLOSE.protocolError;
    case 'rate_limited':
      return CLOSE.tooMany;
    default:
      return CLOSE.internalError;
  }
}

export class WidgetChatConnection {
  readonly id: string;
  /** Heartbeat: a pong (or any frame) came since the last ping. */
  alive = true;
  /** Over the high-water mark: the turn waits, reading is paused. */
  backpressured = false;
  visitorKey: string | null = null;
  private visitor: Visitor | null = null;
  private claim: VisitorClaim | null = null;
  private conversationId: string | null = null;
  private endUser: { token: string | null; session: string | null } = { token: null, session: null };
  private turn: { abort: AbortController; ended: Promise<void> } | null = null;
  private frames: Promise<void> = Promise.resolve();
  private pendingFrames = 0;
  private resumeTimer: NodeJS.Timeout | null;
  private slowTimer: NodeJS.Timeout | null = null;
  private drainWaiters: Array<() => void> = [];
  private closing = false;
  /** The code this side closed with (1006 when terminated); null unless this side closed. */
  private closeCode: number | null = null;

  constructor(
    private readonly host: ConnectionHost,
    private readonly ws: WebSocket,
    socket: Duplex,
    private widget: WidgetPrincipal,
    private readonly access: Access,
  ) {
    this.id = host.deps.ids.newId();
    ws.on('message', (data, isBinary) => this.receive(data, isBinary));
    ws.on('pong', () => {
      this.alive = true;
    });
    // An error on the socket is followed by `close`.
    ws.on('error', () => undefined);
    ws.on('close', (code) => this.ended(code));
    // ws writes to the upgraded socket itself: its `drain` is when the buffer has emptied.
    socket.on('drain', () => this.drained());
    this.resumeTimer = setTimeout(() => {
      const message = `send resume first, within ${host.options.resumeTimeoutMs} ms of connecting`;
      this.close(CLOSE.resumeTimeout, 'resume_timeout', { type: 'error', code: 'resume_timeout', message });
    }, host.options.resumeTimeoutMs);
  }

  /** The turn running now, to wait for at shutdown; null when none. */
  get runningTurn(): Promise<void> | null {
    return this.turn?.ended ?? null;
  }

  get bufferedAmount(): number {
    return this.ws.bufferedAmount;
  }

  /** Heartbeat: terminates a socket that missed the last ping, pings the others. A socket waiting on backpressure is the slow-client timer's. */
  beat(): void {
    if (this.closing || this.backpressured) return;
    if (!this.alive) {
      this.host.deps.logger.debug({ connection_id: this.id }, 'widget socket missed its pong: terminated');
      this.terminate();
      return;
    }
    this.alive = false;
    this.ws.ping();
  }

  /** Closes with `code` (an `error` frame first, when given), aborting the running turn. */
  close(code: number, reason: string, error?: ServerFrame): void {
    if (this.closing) return;
    this.closing = true;
    if (error) this.send(error);
    this.closeCode = code;
    this.host.deps.socketMetrics.closed(code);
    this.stopTimers();
    this.turn?.abort.abort();
    // The client's close frame must be read for the handshake to finish.
    if (this.ws.isPaused) this.ws.resume();
    this.ws.close(code, closeReason(reason));
  }

  terminate(): void {
    this.closing = true;
    if (this.closeCode === null) {
      this.closeCode = 1006;
      this.host.deps.socketMetrics.closed(1006);
    }
    this.turn?.abort.abort();
    this.ws.terminate();
  }

  private receive(data: RawData, isBinary: boolean): void {
    this.alive = true;
    if (this.closing) return;
    if (this.pendingFrames >= MAX_PENDING_FRAMES) {
      this.close(CLOSE.tooMany, 'too_many_frames', { type: 'error', code: 'too_many_frames', message: `at most ${MAX_PENDING_FRAMES} frames may wait for an answer; wait for the answers` });
      return;
    }
    this.pendingFrames += 1;
    const receivedAt = performance.now();
    this.frames = this.frames
      .then(() => (this.closing ? undefined : this.handle(data, isBinary, receivedAt)))
      .catch((error: unknown) => this.failed(error))
      .finally(() => {
        this.pendingFrames -= 1;
      });
  }

  private protocolError(field: string, message: string): void {
    this.close(CLOSE.protocolError, message, { type: 'error', code: 'invalid_frame', message, field });
  }

  private async handle(data: RawData, isBinary: boolean, receivedAt: number): Promise<void> {
    const metrics = this.host.deps.socketMetrics;
    if (isBinary) {
      metrics.received('invalid');
      return this.protocolError('frame', 'frame: expected a JSON text frame, not binary');
    }
    let parsed: unknown;
    try {
      parsed = JSON.parse(data.toString());
    } catch {
      metrics.received('invalid');
      return this.protocolError('frame', 'frame: expected JSON');
    }
    const type = parsed !== null && typeof parsed === 'object' ? (parsed as { type?: unknown }).type : undefined;
    if (!isClientFrameType(type)) {
      metrics.received('invalid');
      return this.protocolError('type', `type: expected one of ${Object.keys(CLIENT_FRAMES).join(', ')}`);
    }
    metrics.received(type);
    if (this.visitor === null && type !== 'resume') return this.protocolError('type', 'type: the first frame must be resume');
    let frame: unknown;
    try {
      frame = decodeBody(CLIENT_FRAMES[type] as never, parsed);
    } catch (error) {
      if (!(error instanceof DomainError)) throw error;
      return this.protocolError(error.field ?? 'frame', error.message);
    }
    switch (type) {
      case 'resume':
        return this.resume(frame as ResumeFrame);
      case 'message':
        return this.message(frame as MessageFrame, receivedAt);
      case 'feedback':
        return this.feedback(frame as FeedbackFrame);
      case 'ping':
        return this.send({ type: 'pong' });
      case 'typing':
        // Accepted and recorded nowhere: reserved for live agents.
        return;
    }
  }

  /** The token and origin checked again (a rotated token, a suspended tenant, an origin removed): false after closing. */
  private async recheckWidget(): Promise<boolean> {
    try {
      const widget = await authenticateWidget(this.host.deps, this.access.token);
      requireAllowedOrigin(widget, this.access.origin, this.access.platformOrigin);
      this.widget = widget;
      return true;
    } catch (error) {
      if (!(error instanceof DomainError)) throw error;
      this.close(closeCodeOf(error), error.code, errorFrame(error));
      return false;
    }
  }

  /** The visitor a claim stands for under the widget's settings now; null after closing (4400 bad visitor id, 4401 bad identity). */
  private visitorFrom(claim: VisitorClaim): Visitor | null {
    try {
      return visitorOf(this.host.deps, this.widget, claim);
    } catch (error) {
      if (!(error instanceof DomainError)) throw error;
      const field = error.field === undefined ? {} : { field: `${error.field === 'visitor_id' ? '' : 'identity.'}${error.field}` };
      this.close(closeCodeOf(error), error.kind === 'invalid' ? error.message : error.code, { ...errorFrame(error), ...field });
      return null;
    }
  }

  private async resume(frame: ResumeFrame): Promise<void> {
    if (this.turn) return this.send({ type: 'error', code: 'turn_in_progress', message: 'resume after the running turn is done' });
    if (this.visitor !== null && !(await this.recheckWidget())) return;
    const claim: VisitorClaim = { visitor_id: frame.visitor_id, user_id: frame.identity?.user_id ?? null, user_hash: frame.identity?.user_hash ?? null };
    const visitor = this.visitorFrom(claim);
    if (visitor === null) return;
    if (!this.host.admit(this, `${this.widget.tenant_id}:${visitor.party.id}`)) {
      const message = `at most ${this.host.options.maxConnectionsPerVisitor} connections per visitor; close another tab's first`;
      return this.close(CLOSE.tooMany, 'too_many_connections', { type: 'error', code: 'too_many_connections', message });
    }
    if (this.resumeTimer) clearTimeout(this.resumeTimer);
    this.resumeTimer = null;
    this.visitor = visitor;
    this.claim = claim;
    this.endUser = { token: frame.identity?.token ?? null, session: frame.identity?.session ?? null };
    let conversationId = frame.conversation_id ?? null;
    let messages: WidgetMessageView[] = [];
    if (conversationId !== null) {
      try {
        messages = await recentVisitorMessages(this.host.deps, this.widget, visitor, conversationId);
      } catch (error) {
        if (!(error instanceof DomainError) || error.kind !== 'not_found') throw error;
        this.send(errorFrame(error, { conversation_id: conversationId }));
        conversationId = null;
      }
    }
    this.conversationId = conversationId;
    this.send({ type: 'ready', conversation_id: conversationId, messages });
  }

  private message(frame: MessageFrame, receivedAt: number): void {
    const echo = frame.client_message_id === undefined ? {} : { client_message_id: frame.client_message_id };
    if (this.turn) return this.send({ type: 'error', code: 'turn_in_progress', message: 'one message at a time: wait for done', ...echo });
    if (this.host.stopping) return this.close(CLOSE.goingAway, 'server_shutting_down', { type: 'error', code: 'server_shutting_down', message: 'the server is restarting: reconnect' });
    const abort = new AbortController();
    const ended = this.runTurn(frame.text, echo, receivedAt, abort.signal)
      .catch((error: unknown) => {
        this.host.deps.logger.error({ err: error, connection_id: this.id }, 'widget socket turn failed');
        this.send({ type: 'error', code: 'internal_error', message: 'Internal server error', ...echo });
      })
      .finally(() => {
        this.turn = null;
      });
    this.turn = { abort, ended };
  }

  private async runTurn(text: string, echo: { client_message_id?: string }, receivedAt: number, signal: AbortSignal): Promise<void> {
    const { deps, options } = this.host;
    if (!(await this.recheckWidget())) return;
    const visitor = this.visitorFrom(this.claim!);
    if (visitor === null) return;
    const rate = await deps.limiter.consume(`widget_ws_messages:${this.widget.tenant_id}:${visitor.party.id}`, { limit: options.messagesPerMinute, windowSeconds: 60 });
    if (!rate.allowed) {
      const message = `at most ${options.messagesPerMinute} messages a minute; try again in ${rate.retryAfterSeconds} s`;
      return this.close(CLOSE.tooMany, 'too_many_messages', { type: 'error', code: 'rate_limited', message, retry_after_seconds: rate.retryAfterSeconds, ...echo });
    }
    let turn: OpenTurn;
    try {
      turn = await openWidgetTurn(deps, this.widget, visitor, { message: text, conversation_id: this.conversationId, end_user: this.endUser }, this.context());
    } catch (error) {
      if (!(error instanceof DomainError)) throw error;
      // The conversation was deleted meanwhile: the next message starts a new one.
      if (error.code === 'conversation_not_found') this.conversationId = null;
      return this.send(errorFrame(error, echo));
    }
    this.conversationId = turn.conversation_id;
    const ids = { conversation_id: turn.conversation_id, user_message_id: turn.user_message_id };
    const messageId = turn.answer_message_id;
    this.send({ type: 'message', conversation_id: turn.conversation_id, message: userMessageView(turn), ...echo });
    let answer: ChatAnswer | null = null;
    let failure: { code: string } | null = null;
    let first = true;
    try {
      for await (const step of answerTurn(deps, turn, signal)) {
        // After an abort nothing is sent; answerTurn is still pulled, so that it records the client as gone.
        if (signal.aborted) continue;
        if (step.kind === 'delta') {
          if (first) deps.socketMetrics.firstDelta((performance.now() - receivedAt) / 1000);
          first = false;
          this.send({ type: 'delta', message_id: messageId, text: step.text });
        } else if (step.kind === 'citation') {
          this.send({ type: 'citation', message_id: messageId, citation: step.citation });
        } else if (step.kind === 'tool') {
          this.send({ type: 'tool', message_id: messageId, step: step.step });
        } else if (step.kind === 'answered') {
          answer = step.answer;
        } else {
          failure = step;
        }
        await this.writable(signal);
      }
    } catch (error) {
      // answerTurn recorded the failure; the client learns the turn is over.
      deps.logger.error({ err: error, connection_id: this.id, conversation_id: turn.conversation_id }, 'widget socket answer failed');
      this.send({ type: 'error', code: 'internal_error', message: 'Internal server error', ...ids, ...echo });
      return this.send({ type: 'done', ...ids, message_id: null, paused: turn.paused });
    }
    if (signal.aborted) return;
    if (failure !== null) {
      this.send({ type: 'error', code: 'assistant_unavailable', message: `the assistant could not answer (${failure.code}); try again`, ...ids, ...echo });
    } else if (answer !== null) {
      // The answer's own record (answerTurn waited until the read models show it).
      const stored = await widgetMessage(deps, turn.conversation_id, answer.message_id);
      this.send({ type: 'message', conversation_id: turn.conversation_id, message: stored ?? answerView(answer, deps.clock.now().toISOString()) });
    }
    this.send({ type: 'done', ...ids, message_id: answer?.message_id ?? null, paused: turn.paused });
  }

  private async feedback(frame: FeedbackFrame): Promise<void> {
    if (!(await this.recheckWidget())) return;
    const visitor = this.visitorFrom(this.claim!);
    if (visitor === null) return;
    try {
      await giveWidgetFeedback(this.host.deps, this.widget, visitor, frame.message_id, { rating: frame.rating, comment: frame.comment }, this.context());
      this.send({ type: 'ack', of: 'feedback', message_id: frame.message_id });
    } catch (error) {
      if (!(error instanceof DomainError)) throw error;
      this.send(errorFrame(error, { message_id: frame.message_id }));
    }
  }

  /** Each frame's own request id; the connection's id correlates them. */
  private context(): RequestContext {
    const { ip } = this.access;
    const policy = this.host.options.eventClientIp;
    return {
      tenant_id: null,
      actor: { kind: 'end_user', id: 'anonymous' },
      request_id: this.host.deps.ids.newId(),
      correlation_id: this.id,
      causation_id: null,
      ip,
      ...(policy === 'full' ? {} : { recorded_ip: recordedIpOf(ip, policy) }),
    };
  }

  private send(frame: ServerFrame): void {
    if (this.ws.readyState !== WebSocket.OPEN) return;
    this.ws.send(JSON.stringify(frame));
    this.host.deps.socketMetrics.sent(frame.type);
    if (!this.backpressured && this.ws.bufferedAmount > this.host.options.highWaterBytes) this.overHighWater();
  }

  private overHighWater(): void {
    this.backpressured = true;
    // Nothing the client sends is read while it does not read what it was sent.
    this.ws.pause();
    this.slowTimer = setTimeout(() => {
      const message = `the client read nothing for ${this.host.options.slowClientMs} ms with ${this.ws.bufferedAmount} bytes waiting`;
      this.close(CLOSE.tryAgainLater, 'too_slow', { type: 'error', code: 'too_slow', message });
    }, this.host.options.slowClientMs);
  }

  private drained(): void {
    if (!this.backpressured || this.ws.bufferedAmount > this.host.options.highWaterBytes) return;
    this.backpressured = false;
    if (this.slowTimer) clearTimeout(this.slowTimer);
    this.slowTimer = null;
    if (!this.closing) this.ws.resume();
    this.wake();
  }

  /** Resolves once the socket is under the high-water mark, or the turn is aborted. */
  private writable(signal: AbortSignal): Promise<void> {
    if (!this.backpressured || signal.aborted) return Promise.resolve();
    this.host.deps.socketMetrics.backpressured();
    return new Promise((resolve) => {
      this.drainWaiters.push(resolve);
      signal.addEventListener('abort', () => resolve(), { once: true });
    });
  }

  private wake(): void {
    const waiters = this.drainWaiters;
    this.drainWaiters = [];
    for (const resolve of waiters) resolve();
  }

  private stopTimers(): void {
    if (this.resumeTimer) clearTimeout(this.resumeTimer);
    if (this.slowTimer) clearTimeout(this.slowTimer);
    this.resumeTimer = null;
    this.slowTimer = null;
  }

  private ended(code: number): void {
    this.closing = true;
    this.stopTimers();
    this.turn?.abort.abort();
    this.backpressured = false;
    this.wake();
    // A close this side started was counted when it started (its client may take long to answer it).
    if (this.closeCode === null) this.host.deps.socketMetrics.closed(code);
    this.host.forget(this);
  }

  /** A frame's handling failed unexpectedly: 1011. */
  private failed(error: unknown): void {
    this.host.deps.logger.error({ err: error, connection_id: this.id }, 'widget socket frame failed');
    this.close(CLOSE.internalError, 'internal_error', { type: 'error', code: 'internal_error', message: 'Internal server error' });
  }
}

/** The user's message as stored at the turn's start. */
const userMessageView = (turn: OpenTurn): WidgetMessageView => ({
  id: turn.user_message_id,
  role: 'user',
  text: turn.user_message.text,
  citations: [],
  created_at: turn.user_message.created_at,
  failed: false,
  feedback_rating: null,
});

/** The answer as streamed, when its record is not in the read models yet (their wait timed out). */
const answerView = (answer: ChatAnswer, now: string): WidgetMessageView => ({
  id: answer.message_id,
  role: 'assistant',
  text: answer.text,
  citations: answer.citations,
  created_at: now,
  failed: false,
  feedback_rating: null,
});
