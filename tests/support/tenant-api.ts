// A tenant's own API on a local port, as business tools call it: it records every request as
// it arrived and echoes it back (so an answer holds whatever credential came with it, as a
// careless API's might), and serves an OAuth2 token endpoint (client credentials, HTTP Basic
// client authentication) whose tokens its `/protected` paths require.
//
//   POST /oauth/token     client credentials grant; 401 {error: invalid_client} for a wrong client
//   /protected/...        the echo, with a live token from /oauth/token (401 otherwise)
//   /fail                 500 with a JSON body
//   /text                 200 text/plain
//   /big                  200 with `bigBytes` bytes of JSON
//   /slow                 never answers
//   anything else         200: {method, url, headers, body} as received

import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ReceivedRequest {
  method: string;
  /** Path and query as sent. */
  url: string;
  headers: Record<string, string>;
  body: string;
}

export interface TenantApi {
  /** `http://127.0.0.1:<port>` */
  url: string;
  /** Requests to the API (the token endpoint's are apart). */
  received: ReceivedRequest[];
  tokenRequests: ReceivedRequest[];
  /** Access tokens issued, oldest first. */
  issued: string[];
  /** Every token issued so far answers 401 from now on (as if revoked). */
  revokeTokens(): void;
  close(): Promise<void>;
}

export async function startTenantApi(options: { clientId: string; clientSecret: string; bigBytes?: number }): Promise<TenantApi> {
  const received: ReceivedRequest[] = [];
  const tokenRequests: ReceivedRequest[] = [];
  const issued: string[] = [];
  const revoked = new Set<string>();
  // RFC 6749 section 2.3.1: each part form-encoded, then the pair as HTTP Basic.
  const formEncoded = (value: string): string => new URLSearchParams({ v: value }).toString().slice(2);
  const expectedClient = `Basic ${Buffer.from(`${formEncoded(options.clientId)}:${formEncoded(options.clientSecret)}`).toString('base64')}`;
  const json = (response: http.ServerResponse, status: number, body: unknown): void => {
    response.writeHead(status, { 'content-type': 'application/json' });
    response.end(JSON.stringify(body));
  };
  const server = http.createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const headers: Record<string, string> = {};
      for (const [name, value] of Object.entries(request.headers)) if (typeof value === 'string') headers[name] = value;
      const seen: ReceivedRequest = { method: request.method ?? '', url: request.url ?? '', headers, body: Buffer.concat(chunks).toString('utf8') };
      const path = seen.url.split('?')[0];
      if (path === '/oauth/token') {
        tokenRequests.push(seen);
        if (seen.headers.authorization !== expectedClient) return json(response, 401, { error: 'invalid_client' });
        const token = `access-${issued.length + 1}-${Math.random().toString(36).slice(2)}`;
        issued.push(token);
        return json(response, 200, { access_token: token, token_type: 'Bearer', expires_in: 3600 });
      }
      received.push(seen);
      if (path === '/slow') return;
      if (path.startsWith('/protected')) {
        const token = /^Bearer (.+)$/.exec(seen.headers.authorization ?? '')?.[1];
        if (!token || !issued.includes(token) || revoked.has(token)) return json(response, 401, { error: 'invalid_token' });
      }
      if (path === '/fail') return json(response, 500, { error: 'the pet store is closed', echo: seen });
      if (path === '/text') {
        response.writeHead(200, { 'content-type': 'text/plain' });
        return response.end('plain words');
      }
      if (path === '/big') {
        response.writeHead(200, { 'content-type': 'application/json' });
        return response.end(JSON.stringify({ filler: 'x'.repeat(options.bigBytes ?? 2 * 1024 * 1024) }));
      }
      json(response, 200, seen);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    received,
    tokenRequests,
    issued,
    revokeTokens: () => issued.forEach((token) => revoked.add(token)),
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
