// The node:http server of the platform's Koa app. Node's own server and response, with
// nothing in between: `end()` finishes the response when it is called, as Node documents
// (`writableEnded` is true at once, and a status or header set afterwards changes nothing
// that was sent), and each response leaves as soon as it is ready.

import http from 'node:http';
import type Koa from 'koa';

/** Node's default: the time a kept-alive connection may stay idle. */
export const DEFAULT_KEEP_ALIVE_TIMEOUT_MS = 5000;

/**
 * The platform's HTTP server for a Koa app (or anything with Koa's `callback()`). An idle
 * kept-alive connection is closed after `keepAliveTimeoutMs` (HTTP_KEEP_ALIVE_TIMEOUT_MS):
 * behind a load balancer it must outlast the balancer's own idle timeout, or the balancer
 * sends a request on a connection the server is closing and answers its client 502. The
 * headers of a request must arrive within a minute, and always a second after the idle time,
 * as Node asks.
 */
export function createHttpServer(app: Pick<Koa, 'callback'>, keepAliveTimeoutMs = DEFAULT_KEEP_ALIVE_TIMEOUT_MS): http.Server {
  const server = http.createServer(app.callback());
  server.keepAliveTimeout = keepAliveTimeoutMs;
  server.headersTimeout = Math.max(60_000, keepAliveTimeoutMs + 1000);
  return server;
}
