// The events bench's outside world (bench/events.ts forks it: `_events-outside.js <secret>`):
// the example connector an organization runs, and the producer that emits events over HTTP.
// In a deployment neither shares the platform's process, so here neither takes the platform's
// CPU: the platform's process does only the platform's work.
//
// Messages: it sends `{kind: 'listening', url}` once the connector listens; on
// `{kind: 'emit', ...}` it emits `count` events from `concurrency` producers in a closed loop
// and reports each answered emit (`{kind: 'emitted', ids, at}`, wall-clock milliseconds, in
// batches), then `{kind: 'emits_done', started_at}`.

import { performance } from 'node:perf_hooks';
import { createExampleConnector } from '../adapters/connector-sdk/example/connector';

export type OutsideRequest = { kind: 'emit'; base_url: string; token: string; count: number; concurrency: number; prefix: string };
export type OutsideMessage =
  | { kind: 'listening'; url: string }
  | { kind: 'emitted'; events: Array<{ id: string; at: number }> }
  | { kind: 'emits_done'; started_at: number }
  | { kind: 'failed'; message: string };

/** Wall-clock milliseconds with the monotonic clock's resolution: comparable across processes on one machine. */
export const wallClockMs = (): number => performance.timeOrigin + performance.now();

async function emitAll(request: OutsideRequest): Promise<void> {
  let batch: Array<{ id: string; at: number }> = [];
  const flush = (): void => {
    if (batch.length === 0) return;
    process.send!({ kind: 'emitted', events: batch } satisfies OutsideMessage);
    batch = [];
  };
  const timer = setInterval(flush, 5);
  const startedAt = wallClockMs();
  let next = 0;
  const producer = async (): Promise<void> => {
    while (next < request.count) {
      const index = next;
      next += 1;
      const response = await fetch(`${request.base_url}/api/v1/org/events`, {
        method: 'POST',
        headers: { authorization: `Bearer ${request.token}`, 'content-type': 'application/json' },
        body: JSON.stringify({ name: 'shop.order.created', source: 'bench', payload: { order_id: `${request.prefix}-${index}` } }),
      });
      const body = (await response.json()) as { id?: string };
      if (response.status !== 201 || !body.id) throw new Error(`emit answered ${response.status} ${JSON.stringify(body)}`);
      batch.push({ id: body.id, at: wallClockMs() });
    }
  };
  try {
    await Promise.all(Array.from({ length: Math.min(request.concurrency, request.count) }, producer));
  } finally {
    clearInterval(timer);
    flush();
  }
  process.send!({ kind: 'emits_done', started_at: startedAt } satisfies OutsideMessage);
}

async function serve(secret: string): Promise<void> {
  const connector = await createExampleConnector({ signingSecret: secret, otpDelivery: { send: () => undefined } }).listen(0, '127.0.0.1');
  process.on('message', (message: OutsideRequest) => {
    if (message.kind !== 'emit') return;
    emitAll(message).catch((error: unknown) => process.send!({ kind: 'failed', message: error instanceof Error ? error.message : String(error) } satisfies OutsideMessage));
  });
  process.once('disconnect', () => {
    void connector.close().finally(() => process.exit(0));
  });
  process.send!({ kind: 'listening', url: connector.url } satisfies OutsideMessage);
}

if (require.main === module) {
  serve(process.argv[2] ?? '').catch((error: unknown) => {
    console.error(error);
    process.exit(1);
  });
}
