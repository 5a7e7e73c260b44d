// The Koa application: small middleware composed in order, then the routes of every area.

import Koa, { type Middleware } from 'koa';
import Router from '@koa/router';
import type { Logger } from '../../application/ports/logger';
import type { HttpMetrics } from '../../application/ports/metrics';
import { jsonBodies } from './bodies/json';
import { errorResponses } from './middleware/errors';
import { type RequestState, requestContext } from './middleware/request-context';

export interface HttpAppDependencies {
  logger: Logger;
  metrics: HttpMetrics;
  bodyLimitBytes: number;
  routers: Router[];
  /** Behind a proxy, trust X-Forwarded-For for the client IP recorded in events. */
  trustProxy?: boolean;
}

/**
 * Hands each request to the one area router whose prefix starts its path (the routers
 * without a prefix share a last one), so a request is matched against its area's routes
 * only. Each area answers 405 and 501 with its Allow header; errorResponses gives them a
 * {code, message} body.
 */
function routeByPrefix(routers: Router[]): Middleware {
  const dispatchOf = (router: Router): Middleware => {
    // The router's middleware type adds the params it sets itself.
    const routes = router.routes() as unknown as Middleware;
    const allowedMethods = router.allowedMethods() as unknown as Middleware;
    return (ctx, next) => routes(ctx, () => allowedMethods(ctx, next));
  };
  const prefixed = routers.filter((router) => router.opts.prefix);
  const unprefixed = routers.filter((router) => !router.opts.prefix);
  const startsArea = (path: string, prefix: string): boolean => path.startsWith(prefix) && (path.length === prefix.length || path[prefix.length] === '/');
  // Longest prefix first, so a nested area would win over the one that contains it.
  const areas = prefixed
    .map((router) => ({ prefix: router.opts.prefix as string, dispatch: dispatchOf(router) }))
    .sort((a, b) => b.prefix.length - a.prefix.length);
  // A route another router could never reach is a wiring mistake: refuse to start with it.
  for (const [index, area] of areas.entries()) {
    if (areas.findIndex((other) => other.prefix === area.prefix) !== index) throw new Error(`two routers share the prefix ${area.prefix}`);
    for (const router of unprefixed) {
      const hidden = router.stack.find((layer) => typeof layer.path === 'string' && startsArea(layer.path, area.prefix));
      if (hidden) throw new Error(`the route ${String(hidden.path)} lies under the prefix ${area.prefix} of another router`);
    }
  }
  const rest = new Router();
  for (const router of unprefixed) rest.use(router.routes());
  const dispatchRest = dispatchOf(rest);
  return (ctx, next) => {
    const path = ctx.path;
    for (const area of areas) if (startsArea(path, area.prefix)) return area.dispatch(ctx, next);
    return dispatchRest(ctx, next);
  };
}

export function createHttpApp(deps: HttpAppDependencies): Koa<RequestState> {
  const app = new Koa<RequestState>({ proxy: deps.trustProxy ?? false });
  // Errors are answered by errorResponses; Koa's own handler would only log them again.
  app.silent = true;
  app.use(requestContext(deps.logger, deps.metrics));
  app.use(errorResponses());
  // JSON unless the route declares another body kind (bodies/kinds.ts).
  app.use(jsonBodies(deps.routers, deps.bodyLimitBytes));
  app.use(routeByPrefix(deps.routers));
  return app;
}
