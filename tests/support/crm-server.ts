// A local server standing where a tenant's CRM is: it records every request exactly as it
// arrived and answers as each CRM's create call does (HubSpot's contact, Salesforce's Lead,
// Pipedrive's person: their status codes and JSON shapes), or with the statuses a test asks for.

import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface CrmRequest {
  method: string;
  path: string;
  headers: Record<string, string>;
  body: Buffer;
}

export interface CrmServer {
  /** `http://127.0.0.1:<port>` */
  url: string;
  requests: CrmRequest[];
  /** Answers for the next requests, in order (a status, and the body to send); the CRM's own answer once they run out. */
  answerWith(...answers: Array<{ status: number; body?: unknown }>): void;
  close(): Promise<void>;
}

/** What each CRM's documented create call answers. */
function createdAnswer(path: string, sequence: number): { status: number; body: unknown } {
  if (path === '/crm/v3/objects/contacts') return { status: 201, body: { id: String(500 + sequence), properties: {}, createdAt: '2026-11-22T10:00:00.000Z', archived: false } };
  if (/^\/services\/data\/v[0-9.]+\/sobjects\/Lead$/.test(path)) return { status: 201, body: { id: `00Q5g00000Lead${sequence}`, success: true, errors: [] } };
  if (path.endsWith('/v1/persons')) return { status: 201, body: { success: true, data: { id: 70 + sequence } } };
  return { status: 200, body: { received: true } };
}

export async function startCrmServer(): Promise<CrmServer> {
  const requests: CrmRequest[] = [];
  const planned: Array<{ status: number; body?: unknown }> = [];
  const server = http.createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const headers: Record<string, string> = {};
      for (const [name, value] of Object.entries(request.headers)) if (typeof value === 'string') headers[name] = value;
      const path = (request.url ?? '').split('?')[0]!;
      requests.push({ method: request.method ?? '', path, headers, body: Buffer.concat(chunks) });
      const answer = planned.shift() ?? createdAnswer(path, requests.length);
      response.writeHead(answer.status, { 'content-type': 'application/json' });
      response.end(JSON.stringify(answer.body ?? {}));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    requests,
    answerWith: (...answers) => planned.push(...answers),
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
