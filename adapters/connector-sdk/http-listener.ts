// The listening entry point: a node:http server for the connector. It routes and
// size-checks before buffering (steps 1 and 2 of the pipeline in connector.ts) and hands
// the raw body to the connector. The hot path allocates no closures per request: body
// chunks are collected by module-level listeners that find their request's state on the
// request object itself. Each answer is written as soon as it is ready.
import { createServer, type IncomingMessage, type IncomingHttpHeaders, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { ConnectorErrorReporter } from './config';
import { INTERNAL_ERROR, NOT_FOUND, type ConnectorHttpResponse } from './responses';

/** A listening connector (see `Connector.listen`). */
export interface ConnectorServer {
  readonly server: Server;
  readonly port: number;
  /** Endpoint URL, e.g. `http://127.0.0.1:8080/svc`. */
  readonly url: string;
  /** Stops accepting connections and resolves once open requests are answered. */
  close(): Promise<void>;
}

/** What the listener needs from a connector. */
export interface ListenerTarget {
  endpointPath: string;
  maxBodyBytes: number;
  tooLarge: ConnectorHttpResponse;
  onError: ConnectorErrorReporter;
  /** Answers a routed, size-checked request (signature onwards); synchronously when no handler runs. */
  respond(headers: IncomingHttpHeaders, rawBody: Buffer): ConnectorHttpResponse | Promise<ConnectorHttpResponse>;
}

const PENDING = Symbol('svc.connector.pendingBody');

interface PendingBody {
  target: ListenerTarget;
  response: ServerResponse;
  chunks: Buffer[];
  size: number;
  refused: boolean;
}

type CollectingRequest = IncomingMessage & { [PENDING]?: PendingBody };

/** An answer's headers with its content-length. */
interface WireResponse {
  headers: Record<string, string | number>;
}

// Prebuilt answers (pong, the lists, refusals) are frozen and reused, so their headers are
// computed once; the WeakMap lets an answer rebuilt after a registration drop its entry.
const wireCache = new WeakMap<ConnectorHttpResponse, WireResponse>();

function toWire(answer: ConnectorHttpResponse): WireResponse {
  // An explicit content-length keeps Node from switching to chunked encoding.
  return { headers: { ...answer.headers, 'content-length': Buffer.byteLength(answer.body, 'utf8') } };
}

/** Writes an answer at once; one that cannot be written is reported and its connection closed. */
function send(response: ServerResponse, answer: ConnectorHttpResponse, onError: ConnectorErrorReporter): void {
  try {
    write(response, answer);
  } catch (error) {
    onError(error, {});
    response.destroy();
  }
}

function write(response: ServerResponse, answer: ConnectorHttpResponse): void {
  if (response.headersSent || response.destroyed) return;
  let wire = wireCache.get(answer);
  if (wire === undefined) {
    wire = toWire(answer);
    if (Object.isFrozen(answer)) wireCache.set(answer, wire);
  }
  response.writeHead(answer.status, wire.headers);
  // A string body goes out in one write with the headers; a Buffer would be a second one.
  response.end(answer.body, 'utf8');
}

function onData(this: CollectingRequest, chunk: Buffer): void {
  const pending = this[PENDING] as PendingBody;
  if (pending.refused) return;
  pending.size += chunk.length;
  if (pending.size > pending.target.maxBodyBytes) {
    pending.refused = true;
    pending.chunks = [];
    // The rest of the body is read and dropped so the connection stays usable; answering
    // and closing mid-upload would make many clients lose the 413.
    send(pending.response, pending.target.tooLarge, pending.target.onError);
    return;
  }
  pending.chunks.push(chunk);
}

function onEnd(this: CollectingRequest): void {
  const pending = this[PENDING] as PendingBody;
  this[PENDING] = undefined;
  if (pending.refused) return;
  const rawBody = pending.chunks.length === 1 ? pending.chunks[0] : Buffer.concat(pending.chunks, pending.size);
  let answer: ConnectorHttpResponse | Promise<ConnectorHttpResponse>;
  try {
    answer = pending.target.respond(this.headers, rawBody);
  } catch (error) {
    pending.target.onError(error, {});
    answer = INTERNAL_ERROR;
  }
  if (answer instanceof Promise) void sendWhenSettled(pending, answer);
  else send(pending.response, answer, pending.target.onError);
}

async function sendWhenSettled(pending: PendingBody, answer: Promise<ConnectorHttpResponse>): Promise<void> {
  let response: ConnectorHttpResponse;
  try {
    response = await answer;
  } catch (error) {
    pending.target.onError(error, {});
    response = INTERNAL_ERROR;
  }
  send(pending.response, response, pending.target.onError);
}

function pathOf(url: string | undefined): string {
  if (url === undefined) return '';
  const query = url.indexOf('?');
  return query === -1 ? url : url.slice(0, query);
}

/** The node:http request listener of a connector. */
export function createRequestListener(target: ListenerTarget): (request: IncomingMessage, response: ServerResponse) => void {
  // No `error` listener on the request: Node emits an aborted request's error only when
  // someone listens, and a client that goes away mid-request is not an error of ours.
  return (request, response) => {
    if (request.method !== 'POST' || pathOf(request.url) !== target.endpointPath) {
      request.resume();
      send(response, NOT_FOUND, target.onError);
      return;
    }
    const declared = request.headers['content-length'];
    if (declared !== undefined && Number(declared) > target.maxBodyBytes) {
      request.resume();
      send(response, target.tooLarge, target.onError);
      return;
    }
    (request as CollectingRequest)[PENDING] = { target, response, chunks: [], size: 0, refused: false };
    request.on('data', onData);
    request.on('end', onEnd);
  };
}

function urlHost(host: string | undefined): string {
  const shown = host === undefined || host === '' || host === '0.0.0.0' || host === '::' ? 'localhost' : host;
  return shown.includes(':') ? `[${shown}]` : shown;
}

/** Starts a node:http server for a connector on `port` (0 picks a free one) and `host` (default: all interfaces). */
export function startListener(target: ListenerTarget, port: number, host?: string): Promise<ConnectorServer> {
  const server = createServer(createRequestListener(target));
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      const address = server.address() as AddressInfo;
      resolve({
        server,
        port: address.port,
        url: `http://${urlHost(host)}:${address.port}${target.endpointPath}`,
        close: () =>
          new Promise<void>((closed, failed) => {
            server.close((error) => (error ? failed(error) : closed()));
            // Keep-alive connections with no request in flight would otherwise hold close() open.
            server.closeIdleConnections();
          }),
      });
    });
  });
}
