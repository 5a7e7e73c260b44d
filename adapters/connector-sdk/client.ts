// A small caller of connector endpoints: signs a body (spec 5.2) and posts it. Used by the
// connector doctor and by tests; the platform's connector client builds on the same
// signing and adds its own SSRF guard and retries.
import { request as httpRequest, type IncomingHttpHeaders, type OutgoingHttpHeaders } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { randomUUID } from 'node:crypto';
import type { ProtocolRequest } from './protocol';
import { signedHeaders } from './signing';

/** Options of `callConnector`. */
export interface CallConnectorOptions {
  /** Full endpoint URL, path included (e.g. `https://connector.example.com/svc`). */
  url: string;
  /** Signing secret of the SDK Connection. */
  secret: string;
  /** A protocol request, or an exact raw body to sign and send as is. */
  body: ProtocolRequest | string;
  /** Forwarded as `x-svc-trace-id`. */
  traceId?: string;
  /** Abort after this many milliseconds. Default 30 000 (spec 8). */
  timeoutMs?: number;
  /** Unix seconds to sign at; default now. Probes use it to send stale timestamps. */
  timestamp?: number;
  /** HTTP method; default POST. A GET or HEAD sends no body. */
  method?: string;
  /** Extra headers, applied last (they override the signed ones). */
  headers?: Record<string, string>;
  /** Largest response body read; default 10 MiB. */
  maxResponseBytes?: number;
}

/** What a connector answered. */
export interface ConnectorCallResult {
  status: number;
  /** Response headers, names lowercase; repeated headers joined with `, `. */
  headers: Record<string, string>;
  /** The raw response body. */
  text: string;
  /** The body parsed as JSON, or undefined when it is not JSON. */
  json: unknown;
}

/** A fresh request id for a protocol request. */
export function newRequestId(): string {
  return randomUUID();
}

function flattenHeaders(headers: IncomingHttpHeaders): Record<string, string> {
  const flat: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value !== undefined) flat[name] = Array.isArray(value) ? value.join(', ') : value;
  }
  return flat;
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** Signs `body` with `secret` and sends it to the connector at `url`; resolves with whatever HTTP answer comes back. */
export function callConnector(options: CallConnectorOptions): Promise<ConnectorCallResult> {
  const url = new URL(options.url);
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    return Promise.reject(new Error(`Unsupported URL scheme ${url.protocol}; use https (or http for local development)`));
  }
  const method = (options.method ?? 'POST').toUpperCase();
  const withBody = method !== 'GET' && method !== 'HEAD';
  const rawBody = Buffer.from(typeof options.body === 'string' ? options.body : JSON.stringify(options.body), 'utf8');
  const headers: OutgoingHttpHeaders = {
    ...signedHeaders(options.secret, rawBody, { timestamp: options.timestamp, traceId: options.traceId }),
    ...(withBody ? { 'content-length': rawBody.length } : {}),
    ...options.headers,
  };
  if (!withBody) delete headers['content-type'];
  const timeoutMs = options.timeoutMs ?? 30_000;
  const maxResponseBytes = options.maxResponseBytes ?? 10 * 1024 * 1024;
  const send = url.protocol === 'https:' ? httpsRequest : httpRequest;

  return new Promise((resolve, reject) => {
    // Exactly one outcome per call, whichever of answer, error, timeout or overflow comes first.
    let settled = false;
    const fail = (error: Error): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      outgoing.destroy();
      reject(error);
    };
    const outgoing = send(url, { method, headers }, (response) => {
      const chunks: Buffer[] = [];
      let size = 0;
      response.on('data', (chunk: Buffer) => {
        size += chunk.length;
        if (size > maxResponseBytes) fail(new Error(`Connector response exceeds ${maxResponseBytes} bytes`));
        else chunks.push(chunk);
      });
      response.on('end', () => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        const text = Buffer.concat(chunks).toString('utf8');
        resolve({ status: response.statusCode ?? 0, headers: flattenHeaders(response.headers), text, json: parseJson(text) });
      });
      response.on('error', fail);
    });
    const timer = setTimeout(() => fail(new Error(`Connector did not answer within ${timeoutMs} ms`)), timeoutMs);
    outgoing.on('error', fail);
    outgoing.end(withBody ? rawBody : undefined);
  });
}
