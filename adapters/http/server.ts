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
 * The area routers nested in one root router. The root answers 405 and 501 with the Allow
 * header of the path's routes; errorResponses gives them a {code, message} body.
 */
function rootRouter(routers: Router[]): Router {
  const root = new Router();
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
  const app = new Koa<RequestState>({ proxy: deps.trustProxy ?? false });
  // Errors are answered by errorResponses; Koa's own handler would only log them again.
  app.silent = true;
  app.use(requestContext(deps.logger, deps.metrics));
  app.use(errorResponses());
  // JSON unless the route declares another body kind (bodies/kinds.ts).
  app.use(jsonBodies(deps.routers, deps.bodyLimitBytes));
  const root = rootRouter(deps.routers);
  // The router's middleware type adds the params it sets itself.
  app.use(root.routes() as unknown as Middleware<RequestState>);
  app.use(root.allowedMethods() as unknown as Middleware<RequestState>);
  return app;
}
