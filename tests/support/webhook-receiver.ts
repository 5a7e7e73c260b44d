// A local HTTP receiver standing where the platform's webhook route will be: it records every
// POST exactly as it arrived (headers and raw bytes) and answers the statuses a test asks for.
// GET requests are pages a browser lands on (a checkout's success or cancel URL): answered with
// a small HTML page and recorded too.

import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ReceivedWebhook {
  path: string;
  headers: Record<string, string>;
  body: Buffer;
}

export interface WebhookReceiver {
  /** `http://127.0.0.1:<port>` */
  url: string;
  deliveries: ReceivedWebhook[];
  /** Paths of the pages browsers opened. */
  visits: string[];
  /** Statuses for the next deliveries, in order; 200 once they run out. */
  answerWith(...statuses: number[]): void;
  close(): Promise<void>;
}

export async function startWebhookReceiver(): Promise<WebhookReceiver> {
  const deliveries: ReceivedWebhook[] = [];
  const visits: string[] = [];
  const planned: number[] = [];
  const server = http.createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      if (request.method === 'GET') {
        visits.push(request.url ?? '');
        response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
        response.end('<!doctype html><title>Back at the platform</title><h1 id="landed">Back at the platform</h1>');
        return;
      }
      const headers: Record<string, string> = {};
      for (const [name, value] of Object.entries(request.headers)) if (typeof value === 'string') headers[name] = value;
      deliveries.push({ path: request.url ?? '', headers, body: Buffer.concat(chunks) });
      response.writeHead(planned.shift() ?? 200, { 'content-type': 'application/json' });
      response.end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    deliveries,
    visits,
    answerWith: (...statuses) => planned.push(...statuses),
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** An address nothing listens on: a receiver started and closed again. */
export async function deadAddress(): Promise<string> {
  const receiver = await startWebhookReceiver();
  await receiver.close();
  return receiver.url;
}
