// GET /ws/chat?token=<widget token> (spec 4.4, 5.1): the widget's realtime chat over
// WebSocket (the `ws` library), on the platform's own HTTP server (its `upgrade` event).
//
// On upgrade the token and the browser's Origin are checked (application/widget/
// widget-access.ts: the tenant's allowed origins, the platform's own origin always). A refusal
// is answered by accepting the socket and closing it at once with a code (4401 token, 4403
// origin / suspended or deleted tenant / widget off, 1011 unexpected), an `error` frame first:
// a browser's WebSocket cannot read the status of a refused handshake, but it can read a close
// code. Any other path is 404.
//
// What each socket does is widget-chat-connection.ts. Here: the heartbeat (a WS ping every
// WIDGET_WS_HEARTBEAT_MS; a socket that missed the previous pong is terminated), the
// per-visitor connection count (per process), the metrics, and the shutdown: no new turn, the
// running ones finish within a grace period, then every socket is closed 1001 (reconnect).

import type http from 'node:http';
import type { Duplex } from 'node:stream';
import type { TLSSocket } from 'node:tls';
import WebSocket, { WebSocketServer } from 'ws';
import { authenticateWidget, requireAllowedOrigin, type WidgetPrincipal } from '../../application/widget/widget-access';
import { DomainError } from '../../domain/shared/errors';
import { clientIpOf } from '../http/client-ip';
import { CLOSE, MAX_PAYLOAD_BYTES, type ServerFrame, closeReason } from './protocol';
import { type ConnectionHost, WidgetChatConnection, type WidgetChatSocketDependencies, type WidgetChatSocketOptions, closeCodeOf } from './widget-chat-connection';

export type { WidgetChatSocketDependencies, WidgetChatSocketOptions } from './widget-chat-connection';

export const WIDGET_CHAT_PATH = '/ws/chat';

/** How long the shutdown waits for the clients' close frames before it terminates the rest. */
const CLOSE_HANDSHAKE_MS = 2_000;

const delay = (ms: number): { done: Promise<void>; cancel(): void } => {
  let timer: NodeJS.Timeout;
  const done = new Promise<void>((resolve) => {
    timer = setTimeout(resolve, ms);
  });
  return { done, cancel: () => clearTimeout(timer) };
};

/** An HTTP answer on a socket that asked to upgrade elsewhere (no WebSocket there). */
function answerHttp(socket: Duplex, status: number, text: string): void {
  socket.end(`HTTP/1.1 ${status} ${text}\r\nConnection: close\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(text)}\r\n\r\n${text}`);
}

/** The widget's WebSockets of one platform process, on every server they are attached to. */
export class WidgetChatSockets implements ConnectionHost {
  private readonly server = new WebSocketServer({ noServer: true, maxPayload: MAX_PAYLOAD_BYTES, clientTracking: false, perMessageDeflate: false });
  private readonly connections = new Set<WidgetChatConnection>();
  /** Every accepted socket, refused ones included, until it closes: the shutdown ends them all. */
  private readonly sockets = new Set<WebSocket>();
  private readonly perVisitor = new Map<string, number>();
  private heartbeat: NodeJS.Timeout | null = null;
  private closed: Promise<void> | null = null;
  stopping = false;

  constructor(
    readonly deps: WidgetChatSocketDependencies,
    readonly options: WidgetChatSocketOptions,
  ) {
    deps.socketMetrics.observe(() => {
      let waiting = 0;
      let maxBuffered = 0;
      for (const connection of this.connections) {
        if (connection.backpressured) waiting += 1;
        maxBuffered = Math.max(maxBuffered, connection.bufferedAmount);
      }
      return { open: this.sockets.size, waiting, max_buffered_bytes: maxBuffered };
    });
  }

  /** Serves /ws/chat on `server`'s upgrade requests (any other path is 404). */
  attach(server: http.Server): void {
    server.on('upgrade', (request: http.IncomingMessage, socket: Duplex, head: Buffer) => {
      this.upgrade(request, socket, head).catch((error: unknown) => {
        this.deps.logger.error({ err: error }, 'widget socket upgrade failed');
        socket.destroy();
      });
    });
    if (this.heartbeat === null && !this.stopping) {
      this.heartbeat = setInterval(() => {
        for (const connection of this.connections) connection.beat();
      }, this.options.heartbeatMs);
      this.heartbeat.unref();
    }
  }

  admit(connection: WidgetChatConnection, visitorKey: string): boolean {
    if (connection.visitorKey === visitorKey) return true;
    const count = this.perVisitor.get(visitorKey) ?? 0;
    if (count >= this.options.maxConnectionsPerVisitor) return false;
    this.release(connection);
    this.perVisitor.set(visitorKey, count + 1);
    connection.visitorKey = visitorKey;
    return true;
  }

  forget(connection: WidgetChatConnection): void {
    this.release(connection);
    this.connections.delete(connection);
  }

  private release(connection: WidgetChatConnection): void {
    if (connection.visitorKey === null) return;
    const left = (this.perVisitor.get(connection.visitorKey) ?? 1) - 1;
    if (left > 0) this.perVisitor.set(connection.visitorKey, left);
    else this.perVisitor.delete(connection.visitorKey);
    connection.visitorKey = null;
  }

  /**
   * Stops: new sockets are closed 1001 at once, a `message` closes its socket 1001, turns
   * running now get `graceMs` to finish; then every socket is closed 1001 (a turn still
   * running is aborted and recorded as the client gone), and those whose clients do not
   * answer the close within 2 s are terminated. Resolves once every socket and turn ended.
   */
  close(graceMs = 0): Promise<void> {
    this.closed ??= this.shutDown(graceMs);
    return this.closed;
  }

  private async shutDown(graceMs: number): Promise<void> {
    this.stopping = true;
    if (this.heartbeat) clearInterval(this.heartbeat);
    this.heartbeat = null;
    const running = (): Promise<void>[] => [...this.connections].flatMap((connection) => (connection.runningTurn ? [connection.runningTurn] : []));
    if (graceMs > 0 && running().length > 0) {
      const grace = delay(graceMs);
      await Promise.race([Promise.all(running()), grace.done]);
      grace.cancel();
    }
    const closing = [...this.sockets].map((socket) => new Promise<void>((resolve) => (socket.readyState === WebSocket.CLOSED ? resolve() : socket.once('close', () => resolve()))));
    const aborted = running();
    for (const connection of this.connections) connection.close(CLOSE.goingAway, 'server_shutting_down', { type: 'error', code: 'server_shutting_down', message: 'the server is restarting: reconnect' });
    const handshake = delay(CLOSE_HANDSHAKE_MS);
    await Promise.race([Promise.all(closing), handshake.done]);
    handshake.cancel();
    for (const socket of this.sockets) socket.terminate();
    // An aborted turn records the client as gone before the stores close.
    await Promise.all(aborted);
  }

  /** The platform's own origin: PUBLIC_URL's, or the one this request was addressed to. */
  private platformOrigin(request: http.IncomingMessage, socket: Duplex): string {
    if (this.options.publicUrl) return new URL(this.options.publicUrl).origin;
    return `${(socket as TLSSocket).encrypted ? 'https' : 'http'}://${request.headers.host ?? ''}`;
  }

  private async upgrade(request: http.IncomingMessage, socket: Duplex, head: Buffer): Promise<void> {
    // Until ws takes the socket over, an error on it (a reset) only ends it.
    socket.on('error', () => socket.destroy());
    const url = new URL(request.url ?? '/', 'http://upgrade.invalid');
    if (url.pathname !== WIDGET_CHAT_PATH) return answerHttp(socket, 404, 'Not Found');
    const origin = typeof request.headers.origin === 'string' && request.headers.origin !== '' ? request.headers.origin : null;
    const platformOrigin = this.platformOrigin(request, socket);
    const token = url.searchParams.get('token');
    let widget: WidgetPrincipal | null = null;
    let refusal: { code: number; reason: string; frame: ServerFrame } | null = null;
    if (this.stopping) {
      refusal = { code: CLOSE.goingAway, reason: 'server_shutting_down', frame: { type: 'error', code: 'server_shutting_down', message: 'the server is restarting: reconnect' } };
    } else {
      try {
        widget = await authenticateWidget(this.deps, token);
        requireAllowedOrigin(widget, origin, platformOrigin);
      } catch (error) {
        if (!(error instanceof DomainError)) {
          this.deps.logger.error({ err: error }, 'widget socket authentication failed');
          refusal = { code: CLOSE.internalError, reason: 'internal_error', frame: { type: 'error', code: 'internal_error', message: 'Internal server error' } };
        } else {
          refusal = { code: closeCodeOf(error), reason: error.code, frame: { type: 'error', code: error.code, message: error.message } };
        }
      }
    }
    this.server.handleUpgrade(request, socket, head, (ws) => {
      this.deps.socketMetrics.opened();
      this.sockets.add(ws);
      ws.once('close', () => this.sockets.delete(ws));
      if (refusal !== null || widget === null) {
        const { code, reason, frame } = refusal!;
        ws.on('error', () => undefined);
        this.deps.socketMetrics.closed(code);
        ws.send(JSON.stringify(frame));
        this.deps.socketMetrics.sent('error');
        ws.close(code, closeReason(reason));
        return;
      }
      const connection = new WidgetChatConnection(this, ws, socket, widget, { token: token!, origin, platformOrigin, ip: clientIpOf(request, this.options.trustProxyHops) });
      this.connections.add(connection);
    });
  }
}
