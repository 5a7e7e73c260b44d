// A local server speaking the WhatsApp Cloud API's wire format for sending messages
// (POST /<version>/<phone_number_id>/messages), standing where graph.facebook.com is
// (WHATSAPP_GRAPH_BASE_URL): it records every request as it arrived and answers as Meta does,
// `{"messaging_product": "whatsapp", "contacts": [...], "messages": [{"id": "wamid...."}]}`, or
// with the error a test asks for (Meta's `{"error": {...}}` shape). Media of inbound messages
// (voice notes) are served as Meta serves them: `GET /<version>/<media id>` answers their url and
// type, and a GET of that url (here `/media/<media id>`) their bytes: those the test gave the id,
// or 404 with Meta's error body for an id it did not.

import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface GraphRequest {
  method: string;
  path: string;
  headers: Record<string, string>;
  body: Buffer;
}

export interface GraphApiServer {
  /** `http://127.0.0.1:<port>` */
  url: string;
  requests: GraphRequest[];
  /** The ids of the messages taken, in order (`wamid.OUT-1`, ...). */
  sent: string[];
  /** Statuses for the next requests, in order; 200 once they run out. */
  answerWith(...statuses: number[]): void;
  /** Serves `bytes` as the media `id` (a voice note a user sent). */
  serveMedia(id: string, bytes: Buffer, mimeType: string): void;
  close(): Promise<void>;
}

export async function startGraphApi(): Promise<GraphApiServer> {
  const requests: GraphRequest[] = [];
  const sent: string[] = [];
  const planned: number[] = [];
  const media = new Map<string, { bytes: Buffer; mime_type: string }>();
  let base = '';
  const server = http.createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const headers: Record<string, string> = {};
      for (const [name, value] of Object.entries(request.headers)) if (typeof value === 'string') headers[name] = value;
      const body = Buffer.concat(chunks);
      requests.push({ method: request.method ?? '', path: request.url ?? '', headers, body });
      if (request.method === 'GET') {
        const path = request.url ?? '';
        const file = /^\/media\/([^/?]+)$/.exec(path);
        const about = /^\/v[0-9.]+\/([^/?]+)$/.exec(path);
        const id = decodeURIComponent((file ?? about)?.[1] ?? '');
        const served = media.get(id);
        if (!served) {
          response.writeHead(404, { 'content-type': 'application/json' });
          response.end(JSON.stringify({ error: { message: 'Unsupported get request.', type: 'GraphMethodException', code: 100, fbtrace_id: 'A1b2C3' } }));
          return;
        }
        if (file) {
          response.writeHead(200, { 'content-type': served.mime_type });
          response.end(served.bytes);
          return;
        }
        response.writeHead(200, { 'content-type': 'application/json' });
        response.end(JSON.stringify({ messaging_product: 'whatsapp', url: `${base}/media/${encodeURIComponent(id)}`, mime_type: served.mime_type, sha256: 'abc', file_size: served.bytes.length, id }));
        return;
      }
      const status = planned.shift() ?? 200;
      response.writeHead(status, { 'content-type': 'application/json' });
      if (status !== 200) {
        const error = status === 400
          ? { message: '(#131030) Recipient phone number not in allowed list', type: 'OAuthException', code: 131030, fbtrace_id: 'A1b2C3' }
          : { message: 'Service temporarily unavailable', type: 'OAuthException', code: 2, fbtrace_id: 'A1b2C3' };
        response.end(JSON.stringify({ error }));
        return;
      }
      const to = (JSON.parse(body.toString('utf8')) as { to: string }).to;
      const id = `wamid.OUT-${sent.length + 1}`;
      sent.push(id);
      response.end(JSON.stringify({ messaging_product: 'whatsapp', contacts: [{ input: to, wa_id: to }], messages: [{ id }] }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url: base,
    requests,
    sent,
    answerWith: (...statuses) => planned.push(...statuses),
    serveMedia: (id, bytes, mimeType) => void media.set(id, { bytes, mime_type: mimeType }),
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
