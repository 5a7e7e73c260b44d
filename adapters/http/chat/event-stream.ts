// A Server-Sent Events response on Node's own response object: `event:` / `data:` frames, a
// keep-alive comment every `heartbeatMs` (so proxies and browsers do not drop a connection that
// waits for a slow model), and `gone`, a signal that aborts when the client leaves before the
// stream ends. Writes after that are dropped: nobody reads them.

import { once } from 'node:events';
import type http from 'node:http';

export const KEEP_ALIVE_COMMENT = ': keep-alive\n\n';

export class EventStream {
  private readonly leaving = new AbortController();
  private readonly heartbeat: NodeJS.Timeout;
  private finished = false;

  constructor(
    private readonly res: http.ServerResponse,
    heartbeatMs: number,
  ) {
    res.writeHead(200, {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-cache, no-transform',
      connection: 'keep-alive',
      // nginx and others buffer responses unless told not to; a stream must not wait there.
      'x-accel-buffering': 'no',
    });
    res.flushHeaders();
    res.on('close', () => {
      clearInterval(this.heartbeat);
      if (!this.finished) this.leaving.abort();
    });
    this.heartbeat = setInterval(() => void this.write(KEEP_ALIVE_COMMENT), heartbeatMs);
  }

  /** Aborts when the client leaves before the stream is ended. */
  get gone(): AbortSignal {
    return this.leaving.signal;
  }

  /** One event; `data` as one line of JSON (JSON never holds a raw line break). */
  send(event: string, data: unknown): Promise<void> {
    return this.write(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
  }

  end(): void {
    clearInterval(this.heartbeat);
    if (this.finished) return;
    this.finished = true;
    if (!this.leaving.signal.aborted) this.res.end();
  }

  private async write(frame: string): Promise<void> {
    if (this.finished || this.leaving.signal.aborted || this.res.destroyed) return;
    if (this.res.write(frame)) return;
    // A slow reader: wait until it has taken what is buffered, or has gone (an error on the
    // socket is a client gone too: `close` follows it).
    await Promise.race([once(this.res, 'drain'), once(this.res, 'close')]).catch(() => undefined);
  }
}
