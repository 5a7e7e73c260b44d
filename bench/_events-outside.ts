// The events bench's outside world (bench/events.ts forks it: `_events-outside.js <secret>`):
// the example connector an organization runs, and the producer that emits events over HTTP.
// In a deployment neither shares the platform's process, so here neither takes the platform's
// CPU: the platform's process does only the platform's work.
//
// Messages: it sends `{kind: 'listening', url}` once the connector listens; on
// `{kind: 'emit', ...}` it emits `count` events from `concurrency` producers and reports each
// answered emit (`{kind: 'emitted', ids, at}`, wall-clock milliseconds, in batches), then
// `{kind: 'emits_done', started_at}`. Without `rate` the producers run in a closed loop (each
// sends its next emit when its last is answered); with `rate` the emits are paced, event i
// sent at started_at + i / rate seconds whatever the answers do, and `at` is that scheduled
// time: a latency measured from it counts a platform falling behind (no coordinated omission).

import http from 'node:http';
import { createExampleConnector } from '../adapters/connector-sdk/example/connector';
import { wallClockMs } from './_events-clock';

export type OutsideRequest = {
  kind: 'emit';
  base_url: string;
  token: string;
  count: number;
  /** Producers: in a closed loop, the emits in flight; paced, the most in flight before sends wait. */
  concurrency: number;
  prefix: string;
  /** Emits per second, paced; absent: a closed loop. */
  rate?: number;
};
export type OutsideMessage =
  | { kind: 'listening'; url: string }
  | { kind: 'emitted'; events: Array<{ id: string; at: number }> }
  | { kind: 'emits_done'; started_at: number; cpu_ms: number }
  | { kind: 'failed'; message: string };

/** POSTs JSON on a keep-alive connection of `agent`: node:http, which costs the producer far less CPU than fetch. */
function postJson(agent: http.Agent, url: URL, token: string, body: string): Promise<{ status: number; json: { id?: string } }> {
  return new Promise((resolve, reject) => {
    const request = http.request(
      { agent, hostname: url.hostname, port: url.port, path: url.pathname, method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } },
      (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('end', () => {
          try {
            resolve({ status: response.statusCode ?? 0, json: JSON.parse(Buffer.concat(chunks).toString('utf8')) as { id?: string } });
          } catch (error) {
            reject(error);
          }
        });
        response.on('error', reject);
      },
    );
    request.on('error', reject);
    request.end(body);
  });
}

async function emitAll(request: OutsideRequest): Promise<void> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: request.concurrency });
  const url = new URL(`${request.base_url}/api/v1/org/events`);
  const cpu = process.cpuUsage();
  let batch: Array<{ id: string; at: number }> = [];
  const flush = (): void => {
    if (batch.length === 0) return;
    process.send!({ kind: 'emitted', events: batch } satisfies OutsideMessage);
    batch = [];
  };
  const timer = setInterval(flush, 5);
  const startedAt = wallClockMs();
  const scheduledAt = (index: number): number | null => (request.rate === undefined ? null : startedAt + (index * 1000) / request.rate);
  let next = 0;
  const producer = async (): Promise<void> => {
    while (next < request.count) {
      const index = next;
      next += 1;
      const due = scheduledAt(index);
      if (due !== null && due > wallClockMs()) await new Promise((resolve) => setTimeout(resolve, due - wallClockMs()));
      const response = await postJson(agent, url, request.token, JSON.stringify({ name: 'shop.order.created', source: 'bench', payload: { order_id: `${request.prefix}-${index}` } }));
      if (response.status !== 201 || !response.json.id) throw new Error(`emit answered ${response.status} ${JSON.stringify(response.json)}`);
      batch.push({ id: response.json.id, at: due ?? wallClockMs() });
    }
  };
  try {
    await Promise.all(Array.from({ length: Math.min(request.concurrency, request.count) }, producer));
  } finally {
    clearInterval(timer);
    flush();
    agent.destroy();
  }
  const used = process.cpuUsage(cpu);
  process.send!({ kind: 'emits_done', started_at: startedAt, cpu_ms: (used.user + used.system) / 1000 } satisfies OutsideMessage);
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
