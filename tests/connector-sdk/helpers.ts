// Test helpers for the connector SDK: a controllable clock, signed request builders and
// two transports (the raw `handle()` entry point and real HTTP to `listen()`), so the same
// conformance table runs over both.
import http from 'node:http';
import { expect } from 'chai';
import { signRequest, type Connector, type ConnectorServer } from '../../adapters/connector-sdk';

/** 2026-11-22T12:00:00Z, a whole second so skew arithmetic is exact. */
export const START_MS = Date.UTC(2026, 10, 22, 12, 0, 0);

/** A clock tests move by hand. */
export class TestClock {
  ms = START_MS;
  readonly now = (): number => this.ms;
  get seconds(): number {
    return Math.floor(this.ms / 1000);
  }
  advanceSeconds(seconds: number): void {
    this.ms += seconds * 1000;
  }
}

/** A request as a test sends it, before it reaches a transport. */
export interface TestRequest {
  method?: string;
  path?: string;
  headers: Record<string, string>;
  body: string | Buffer;
}

/** What came back, with header names lowercase. */
export interface Exchange {
  status: number;
  headers: Record<string, string>;
  text: string;
  json: unknown;
}

/** Sends a test request to a connector through one entry point. */
export interface Transport {
  readonly name: string;
  send(request: TestRequest): Promise<Exchange>;
}

let requestCounter = 0;

/** A protocol request body with a fresh request_id. */
export function protocolBody(type: string, fields: Record<string, unknown> = {}): Record<string, unknown> {
  requestCounter += 1;
  return { protocol_version: '1', request_id: `req-${requestCounter}`, type, ...fields };
}

/** Options of `signed`. */
export interface SignOptions {
  secret: string;
  /** Unix seconds; default the clock's now. */
  timestamp?: number;
  clock?: TestClock;
  /** Headers added or replacing the signed ones. */
  headers?: Record<string, string>;
  /** Header names to leave out. */
  omit?: readonly string[];
  method?: string;
  path?: string;
}

/** A request whose body is signed as spec 5.2 says. */
export function signed(body: Record<string, unknown> | string | Buffer, options: SignOptions): TestRequest {
  const raw = typeof body === 'string' || Buffer.isBuffer(body) ? body : JSON.stringify(body);
  const timestamp = String(options.timestamp ?? options.clock?.seconds ?? Math.floor(Date.now() / 1000));
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    'x-svc-signature': signRequest(options.secret, timestamp, raw),
    'x-svc-timestamp': timestamp,
    'x-svc-protocol': '1',
    ...options.headers,
  };
  for (const name of options.omit ?? []) delete headers[name];
  return { method: options.method, path: options.path, headers, body: raw };
}

function parse(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** The raw-request entry point: `connector.handle()`. */
export function handleTransport(connector: () => Connector, endpointPath = '/svc'): Transport {
  return {
    name: 'handle()',
    async send(request) {
      const response = await connector().handle({
        method: request.method ?? 'POST',
        path: request.path ?? endpointPath,
        headers: request.headers,
        rawBody: request.body,
      });
      return { status: response.status, headers: { ...response.headers }, text: response.body, json: parse(response.body) };
    },
  };
}

const agent = new http.Agent({ keepAlive: false });

/** Sends a raw HTTP request to 127.0.0.1:port. */
export function httpExchange(port: number, request: TestRequest & { chunked?: boolean }): Promise<Exchange> {
  const body = Buffer.isBuffer(request.body) ? request.body : Buffer.from(request.body, 'utf8');
  const headers: Record<string, string | number> = { ...request.headers };
  if (!request.chunked && request.method !== 'GET' && request.method !== 'HEAD') headers['content-length'] = body.length;
  return new Promise((resolve, reject) => {
    const outgoing = http.request(
      { host: '127.0.0.1', port, method: request.method ?? 'POST', path: request.path ?? '/svc', headers, agent },
      (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          const flat: Record<string, string> = {};
          for (const [name, value] of Object.entries(response.headers)) {
            if (value !== undefined) flat[name] = Array.isArray(value) ? value.join(', ') : value;
          }
          resolve({ status: response.statusCode ?? 0, headers: flat, text, json: parse(text) });
        });
        response.on('error', reject);
      },
    );
    outgoing.on('error', reject);
    if (request.method === 'GET' || request.method === 'HEAD') outgoing.end();
    else if (request.chunked) {
      // Two writes without content-length: Node sends transfer-encoding chunked.
      outgoing.write(body.subarray(0, Math.floor(body.length / 2)));
      outgoing.end(body.subarray(Math.floor(body.length / 2)));
    } else outgoing.end(body);
  });
}

/** The listening entry point: real HTTP to `connector.listen(0, '127.0.0.1')`. */
export function httpTransport(server: () => ConnectorServer): Transport {
  return { name: 'listen() over HTTP', send: (request) => httpExchange(server().port, request) };
}

/** Asserts the four response headers of spec 4.1 rule 8. */
export function expectConnectorHeaders(exchange: Exchange): void {
  expect(exchange.headers['x-svc-protocol'], 'x-svc-protocol').to.equal('1');
  expect(exchange.headers['x-svc-protocol-version'], 'x-svc-protocol-version').to.equal('1');
  expect(exchange.headers['x-svc-sdk'], 'x-svc-sdk').to.be.a('string').and.not.equal('');
  expect(exchange.headers['x-svc-version'], 'x-svc-version').to.be.a('string').and.not.equal('');
}

/** Asserts a `{type:'error', code}` body with a status. */
export function expectProtocolError(exchange: Exchange, status: number, code: string): void {
  expect(exchange.status, exchange.text).to.equal(status);
  expect(exchange.json).to.include({ type: 'error', code });
  expect((exchange.json as { message?: unknown }).message).to.be.a('string');
}
