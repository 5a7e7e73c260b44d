// The widget's WebSocket to /ws/chat: opens, sends `resume` first (the visitor, the
// conversation to continue, the identity the host page gave), and is `ready` when the platform
// answers `ready`. A lost socket is reopened with exponential back-off (1 s, 2 s, 4 s ... 30 s,
// jittered so that a platform restart is not met by every visitor at once); the close codes
// 4401 (bad or rotated token) and 4403 (origin, tenant or widget refused) are final. After two
// failed tries in a row without reaching `ready` the socket counts as blocked (a proxy or a
// firewall that refuses WebSocket), and the widget talks HTTP until a later try gets through.

import { type ClientFrame, FINAL_CLOSE_CODES, type ServerFrame } from './protocol';

export interface ConnectionListener {
  frame(frame: ServerFrame): void;
  /** The socket was lost; another try is scheduled. */
  lost(): void;
  /** The platform refused the widget for good (close code 4401 / 4403). */
  refused(code: number, reason: string): void;
}

type State = 'idle' | 'connecting' | 'ready' | 'waiting' | 'refused' | 'stopped';

const FIRST_DELAY_MS = 1_000;
const LONGEST_DELAY_MS = 30_000;
/** A visitor over the platform's rate limit waits at least this long. */
const RATE_LIMITED_DELAY_MS = 10_000;
const BLOCKED_AFTER_FAILURES = 2;

export class ChatConnection {
  private socket: WebSocket | null = null;
  private state: State = 'idle';
  /** Tries in a row that ended before `ready`. */
  private failures = 0;
  private timer: ReturnType<typeof setTimeout> | null = null;
  private settled: Array<(ready: boolean) => void> = [];

  constructor(
    private readonly url: string,
    private readonly resume: () => ClientFrame,
    private readonly listener: ConnectionListener,
  ) {
    addEventListener('online', () => {
      if (this.state === 'waiting') this.open();
    });
  }

  get ready(): boolean {
    return this.state === 'ready';
  }

  /** WebSocket is missing, refused, or failed twice in a row: use HTTP meanwhile. */
  get blocked(): boolean {
    return typeof WebSocket !== 'function' || this.state === 'refused' || this.failures >= BLOCKED_AFTER_FAILURES;
  }

  start(): void {
    if (this.state === 'idle' || this.state === 'stopped') this.open();
  }

  /** Reopens now, so that `resume` carries what changed (the identity): also after a refusal, which the new identity may answer. */
  restart(): void {
    if (this.state === 'idle') return;
    this.failures = 0;
    this.drop();
    this.open();
  }

  stop(): void {
    this.drop();
    this.state = 'stopped';
    this.settle(false);
  }

  /** Sends a frame when ready; false otherwise (the caller falls back to HTTP). */
  send(frame: ClientFrame): boolean {
    if (this.state !== 'ready' || !this.socket) return false;
    this.socket.send(JSON.stringify(frame));
    return true;
  }

  private settle(ready: boolean): void {
    const waiting = this.settled;
    this.settled = [];
    for (const resolve of waiting) resolve(ready);
  }

  /** Resolves true once ready, false when the try under way fails or `timeoutMs` passes first. */
  whenReady(timeoutMs: number): Promise<boolean> {
    if (this.state === 'ready') return Promise.resolve(true);
    if (this.state !== 'connecting') return Promise.resolve(false);
    return new Promise((resolve) => {
      const timer = setTimeout(() => resolve(false), timeoutMs);
      this.settled.push((ready) => {
        clearTimeout(timer);
        resolve(ready);
      });
    });
  }

  private open(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    let socket: WebSocket;
    try {
      socket = new WebSocket(this.url);
    } catch {
      // A page that replaced or forbade WebSocket: as a failed try.
      this.failed(1006, '');
      return;
    }
    this.socket = socket;
    this.state = 'connecting';
    socket.onopen = () => socket.send(JSON.stringify(this.resume()));
    socket.onmessage = (event) => {
      let frame: ServerFrame;
      try {
        frame = JSON.parse(String(event.data)) as ServerFrame;
      } catch {
        return;
      }
      if (frame.type === 'ready') {
        this.state = 'ready';
        this.failures = 0;
        this.settle(true);
      }
      this.listener.frame(frame);
    };
    socket.onclose = (event) => {
      if (this.socket !== socket) return;
      this.socket = null;
      this.failed(event.code, event.reason);
    };
  }

  private failed(code: number, reason: string): void {
    const wasReady = this.state === 'ready';
    if (!wasReady) this.failures += 1;
    this.settle(false);
    if (FINAL_CLOSE_CODES.has(code)) {
      this.state = 'refused';
      this.listener.refused(code, reason);
      return;
    }
    this.state = 'waiting';
    const attempt = wasReady ? 0 : this.failures - 1;
    const delay = Math.min(LONGEST_DELAY_MS, FIRST_DELAY_MS * 2 ** attempt);
    const jittered = Math.max(code === 4429 ? RATE_LIMITED_DELAY_MS : 0, delay * (0.5 + Math.random() / 2));
    this.timer = setTimeout(() => this.open(), jittered);
    this.listener.lost();
  }

  private drop(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    const socket = this.socket;
    this.socket = null;
    if (socket) {
      socket.onclose = null;
      socket.onmessage = null;
      socket.close(1000);
    }
  }
}
