// The Koa application: small middleware composed in order, then the routes of every area.

import Koa from 'koa';
import Router from '@koa/router';
import type { Logger } from '../../application/ports/logger';
import type { HttpMetrics } from '../../application/ports/metrics';
import { errorResponses } from './middleware/errors';
import { jsonBody } from './middleware/json-body';
import { type RequestState, requestContext } from './middleware/request-context';

export interface HttpAppDependencies {
  logger: Logger;
  metrics: HttpMetrics;
  bodyLimitBytes: number;
  routers: Router[];
  /** Behind a proxy, trust X-Forwarded-For for the client IP recorded in events. */
  trustProxy?: boolean;
}

export function createHttpApp(deps: HttpAppDependencies): Koa<RequestState> {
  const app = new Koa<RequestState>({ proxy: deps.trustProxy ?? false });
  // Errors are answered by errorResponses; Koa's own handler would only log them again.
  app.silent = true;
  app.use(requestContext(deps.logger, deps.metrics));
  app.use(errorResponses());
  app.use(jsonBody(deps.bodyLimitBytes));
  // One routing table: every area's routes are copied into a single router, so a request is
  // matched once and 405 is answered the same way everywhere.
  const root = new Router();
  for (const router of deps.routers) root.use(router.routes());
  app.use(root.routes());
  // 405 and 501 with their Allow header; errorResponses gives them a {code, message} body.
  app.use(root.allowedMethods());
  return app;
}
