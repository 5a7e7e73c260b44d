// The SDK's small connector client: signs what it sends, forwards the trace id, and gives
// up on slow or oversized answers instead of hanging.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect } from 'chai';
import { callConnector, verifySignature } from '../../adapters/connector-sdk';

interface Received {
  method: string;
  headers: http.IncomingHttpHeaders;
  body: string;
}

describe('callConnector', () => {
  let server: http.Server;
  let base: string;
  const received: Received[] = [];
  let answer: (response: http.ServerResponse) => void = (response) => response.end('{"type":"pong"}');

  before(async () => {
    server = http.createServer((request, response) => {
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.on('end', () => {
        received.push({ method: request.method ?? '', headers: request.headers, body: Buffer.concat(chunks).toString('utf8') });
        answer(response);
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });

  after(async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  beforeEach(() => {
    received.length = 0;
    answer = (response) => response.end('{"type":"pong"}');
  });

  it('posts the body signed as spec 5.2 says, with the protocol and trace headers', async () => {
    const result = await callConnector({
      url: `${base}/svc`,
      secret: 'client-secret',
      body: { protocol_version: '1', request_id: 'r-1', type: 'ping' },
      traceId: 'trace-9',
    });
    expect(result).to.deep.include({ status: 200, json: { type: 'pong' }, text: '{"type":"pong"}' });
    const [request] = received;
    expect(request.method).to.equal('POST');
    expect(request.headers).to.include({ 'x-svc-protocol': '1', 'x-svc-trace-id': 'trace-9', 'content-type': 'application/json' });
    const check = verifySignature({
      secrets: ['client-secret'],
      signature: request.headers['x-svc-signature'] as string,
      timestamp: request.headers['x-svc-timestamp'] as string,
      rawBody: request.body,
      nowSeconds: Math.floor(Date.now() / 1000),
      maxSkewSeconds: 300,
    });
    expect(check.valid).to.equal(true);
  });

  it('sends a raw string body byte for byte', async () => {
    await callConnector({ url: `${base}/svc`, secret: 's', body: '{"a":  1}' });
    expect(received[0].body).to.equal('{"a":  1}');
  });

  it('sends a GET without a body, and lets extra headers override', async () => {
    await callConnector({ url: `${base}/svc`, secret: 's', body: '{}', method: 'get', headers: { 'x-svc-protocol': '7' } });
    expect(received[0]).to.deep.include({ method: 'GET', body: '' });
    expect(received[0].headers['x-svc-protocol']).to.equal('7');
  });

  it('returns non-JSON answers as text', async () => {
    answer = (response) => {
      response.statusCode = 502;
      response.end('<html>bad gateway</html>');
    };
    const result = await callConnector({ url: `${base}/svc`, secret: 's', body: '{}' });
    expect(result).to.deep.include({ status: 502, json: undefined, text: '<html>bad gateway</html>' });
  });

  it('gives up after timeoutMs', async () => {
    answer = () => undefined; // never answers
    let failure: unknown;
    try {
      await callConnector({ url: `${base}/svc`, secret: 's', body: '{}', timeoutMs: 50 });
    } catch (error) {
      failure = error;
    }
    expect(String(failure)).to.include('did not answer within 50 ms');
  });

  it('refuses an answer larger than maxResponseBytes', async () => {
    answer = (response) => response.end('x'.repeat(10_000));
    let failure: unknown;
    try {
      await callConnector({ url: `${base}/svc`, secret: 's', body: '{}', maxResponseBytes: 1000 });
    } catch (error) {
      failure = error;
    }
    expect(String(failure)).to.include('exceeds 1000 bytes');
  });

  it('refuses URL schemes other than http and https', async () => {
    let failure: unknown;
    try {
      await callConnector({ url: 'file:///etc/passwd', secret: 's', body: '{}' });
    } catch (error) {
      failure = error;
    }
    expect(String(failure)).to.include('Unsupported URL scheme');
  });
});
