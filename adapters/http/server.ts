// The Koa application: small middleware composed in order, then the routes of every area.

import Koa, { type Middleware } from 'koa';
import Router, { type MatchResult } from '@koa/router';
import { LRUCache } from 'lru-cache';
import type { Logger } from '../../application/ports/logger';
import type { HttpMetrics } from '../../application/ports/metrics';
import { jsonBodies } from './bodies/json';
import { type RequestState, requestContext } from './middleware/request-context';
import type { EventClientIp } from './client-ip';

export interface HttpAppDependencies {
  logger: Logger;
  metrics: HttpMetrics;
  bodyLimitBytes: number;
  routers: Router[];
  /**
   * TRUST_PROXY_HOPS: behind that many reverse proxies, the client's address (rate limits,
   * sessions, events) is the X-Forwarded-For entry the outermost one appended; 0 (the default):
   * the connection's own address, X-Forwarded-For ignored.
   */
  trustProxyHops?: number;
  /** EVENT_CLIENT_IP: how much of the client's address events record (whole by default). */
  eventClientIp?: EventClientIp;
}

/** Paths of static routes remembered (case and trailing-slash variants count apart). */
const REMEMBERED_MATCHES = 1_000;

/**
 * A router that remembers which layers match a request to a static route: matching tests
 * every route's pattern in turn (about 1.4 µs a request with 48 routes here), and most
 * requests go to a few static paths. A path with parameters is matched anew every time, so
 * the ids of requests never fill the cache; the routes never change once the app is built.
 */
class RememberingRouter extends Router {
  private readonly remembered = new LRUCache<string, MatchResult>({ max: REMEMBERED_MATCHES });

  override match(path: string, method: string): MatchResult {
    const key = `${method} ${path}`;
    const known = this.remembered.get(key);
    // Fresh arrays: the router pushes onto ctx.matched, which may be one of them.
    if (known) return { path: [...known.path], pathAndMethod: [...known.pathAndMethod], route: known.route };
    const found = super.match(path, method);
    if (found.route && found.pathAndMethod.every((layer) => layer.paramNames.length === 0)) {
      this.remembered.set(key, { path: [...found.path], pathAndMethod: [...found.pathAndMethod], route: found.route });
    }
    return found;
  }
}

/**
 * The area routers nested in one root router. The root answers 405 and 501 with the Allow
 * header of the path's routes; requestContext gives them a {code, message} body.
 */
function rootRouter(routers: Router[]): Router {
  const root = new RememberingRouter();
  for (const router of routers) root.use(router.routes());
  // A second route for the same method and path could never answer: a wiring mistake.
  const seen = new Set<string>();
  for (const layer of root.stack) {
    if (typeof layer.path !== 'string') continue;
    for (const method of layer.methods) {
      const route = `${method} ${layer.path}`;
      if (seen.has(route)) throw new Error(`two routes answer ${route}`);
      seen.add(route);
    }
  }
  return root;
}

export function createHttpApp(deps: HttpAppDependencies): Koa<RequestState> {
  const hops = deps.trustProxyHops ?? 0;
  const app = new Koa<RequestState>({ proxy: hops > 0, maxIpsCount: hops });
  // Errors are answered by requestContext (middleware/errors.ts); Koa's own handler would
  // only log them again.
  app.silent = true;
  app.use(requestContext(deps.logger, deps.metrics, deps.eventClientIp));
  // JSON unless the route declares another body kind (bodies/kinds.ts).
  app.use(jsonBodies(deps.routers, deps.bodyLimitBytes));
  const root = rootRouter(deps.routers);
  // The router's middleware type adds the params it sets itself.
  app.use(root.routes() as unknown as Middleware<RequestState>);
  app.use(root.allowedMethods() as unknown as Middleware<RequestState>);
  return app;
}
