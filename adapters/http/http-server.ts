// The node:http server of the platform's Koa app. Node's own server and response, with
// nothing in between: `end()` finishes the response when it is called, as Node documents
// (`writableEnded` is true at once, and a status or header set afterwards changes nothing
// that was sent), and each response leaves as soon as it is ready.

import http from 'node:http';
import type Koa from 'koa';

/** The platform's HTTP server for a Koa app (or anything with Koa's `callback()`). */
export function createHttpServer(app: Pick<Koa, 'callback'>): http.Server {
  return http.createServer(app.callback());
}
