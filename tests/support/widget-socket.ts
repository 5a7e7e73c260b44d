// A widget's WebSocket to /ws/chat through the `ws` client, as widget.js speaks it: frames
// kept in arrival order and awaited by type, the close code and reason, the pings seen.

import { randomBytes } from 'node:crypto';
import WebSocket, { type ClientOptions } from 'ws';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type Frame = any;

/** A random visitor id, as the widget makes one (22 characters of base64url: 128 bits). */
export const newVisitorId = (): string => randomBytes(16).toString('base64url');

export interface Closed {
  code: number;
  reason: string;
}

export class WidgetSocket {
  readonly frames: Frame[] = [];
  pings = 0;
  closedWith: Closed | null = null;
  readonly closed: Promise<Closed>;
  /** Frames before this index were taken by `next`. */
  private cursor = 0;
  private waiters: Array<() => void> = [];

  private constructor(readonly ws: WebSocket) {
    ws.on('message', (data) => {
      this.frames.push(JSON.parse(data.toString()));
      this.wake();
    });
    ws.on('ping', () => {
      this.pings += 1;
      this.wake();
    });
    this.closed = new Promise((resolve) => {
      ws.on('close', (code, reason) => {
        this.closedWith = { code, reason: reason.toString() };
        this.wake();
        resolve(this.closedWith);
      });
    });
    ws.on('error', () => undefined);
  }

  /** Opens `/ws/chat` with the token (none when null); resolves once the handshake is done. */
  static async open(baseUrl: string, token: string | null, options: ClientOptions = {}): Promise<WidgetSocket> {
    const query = token === null ? '' : `?token=${encodeURIComponent(token)}`;
    const ws = new WebSocket(`${baseUrl.replace(/^http/, 'ws')}/ws/chat${query}`, options);
    const socket = new WidgetSocket(ws);
    await new Promise<void>((resolve, reject) => {
      ws.once('open', () => resolve());
      ws.once('error', reject);
    });
    return socket;
  }

  send(frame: unknown): void {
    this.ws.send(typeof frame === 'string' ? frame : JSON.stringify(frame));
  }

  /** Resolves once `check` holds (checked on every frame, ping and close). */
  async until(check: () => boolean): Promise<void> {
    while (!check()) await new Promise<void>((resolve) => this.waiters.push(resolve));
  }

  /** The next frame not yet taken that `match`es (by type when a string); fails if the socket closes first. */
  async next(match: string | ((frame: Frame) => boolean)): Promise<Frame> {
    const matches = typeof match === 'string' ? (frame: Frame) => frame.type === match : match;
    for (;;) {
      const index = this.frames.findIndex((frame, at) => at >= this.cursor && matches(frame));
      if (index >= 0) {
        this.cursor = index + 1;
        return this.frames[index];
      }
      if (this.closedWith) throw new Error(`closed ${this.closedWith.code} ${this.closedWith.reason} before ${String(match)}; frames: ${JSON.stringify(this.frames.slice(this.cursor)).slice(0, 500)}`);
      await new Promise<void>((resolve) => this.waiters.push(resolve));
    }
  }

  /** Sends `resume` and answers the `ready` frame. */
  async resume(visitorId: string, extra: Record<string, unknown> = {}): Promise<Frame> {
    this.send({ type: 'resume', visitor_id: visitorId, ...extra });
    return this.next('ready');
  }

  /** Sends a message and answers the frames of its turn, up to its `done` (included). */
  async ask(text: string, extra: Record<string, unknown> = {}): Promise<Frame[]> {
    const from = this.frames.length;
    this.send({ type: 'message', text, ...extra });
    const done = await this.next('done');
    return this.frames.slice(from, this.frames.indexOf(done) + 1);
  }

  close(): Promise<Closed> {
    this.ws.close();
    return this.closed;
  }

  private wake(): void {
    for (const resolve of this.waiters.splice(0)) resolve();
  }
}
