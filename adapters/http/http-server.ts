// The node:http server of the platform's Koa app. Responses are finished together at the
// end of each event-loop turn (the idea of Netty's flush consolidation): the requests
// answered in one turn leave in one burst. Finished one by one as each is ready, every
// response can wake its client on its own; when the client shares the machine (a local
// proxy, a sidecar, a load generator) such a wake-up costs more than a request's own work.
// Writes before `end()` are not held back, so streamed bodies flow as before; only the
// final write waits, at most for the rest of the current turn.

import http from 'node:http';
import type Koa from 'koa';

let pendingEnds: Array<() => void> = [];

function finishPending(): void {
  const batch = pendingEnds;
  pendingEnds = [];
  for (const finish of batch) finish();
}

/** A response whose `end()` takes effect at the end of the event-loop turn. */
export class CoalescingServerResponse<Request extends http.IncomingMessage = http.IncomingMessage> extends http.ServerResponse<Request> {
  override end(...args: unknown[]): this {
    if (pendingEnds.push(() => this.finishNow(args)) === 1) setImmediate(finishPending);
    return this;
  }

  private finishNow(args: unknown[]): void {
    try {
      // end() has three overloads; the arguments go through exactly as they came.
      (super.end as (...forwarded: unknown[]) => this)(...args);
    } catch (error) {
      // One response that cannot be finished must not keep the others of the turn waiting.
      this.destroy(error instanceof Error ? error : new Error(String(error)));
    }
  }
}

/** The platform's HTTP server for a Koa app (or anything with Koa's `callback()`). */
export function createHttpServer(app: Pick<Koa, 'callback'>): http.Server {
  return http.createServer({ ServerResponse: CoalescingServerResponse }, app.callback());
}
