// Request id (accepted from `x-request-id` when it looks like one, made otherwise), echoed in
// the response, bound to a child logger, and timed for the access log and metrics.

import { randomUUID } from 'node:crypto';
import type { Middleware } from 'koa';
import type { Logger } from '../../../application/ports/logger';
import type { HttpMetrics } from '../../../application/ports/metrics';

const ACCEPTABLE_REQUEST_ID = /^[A-Za-z0-9._:-]{8,128}$/;

export interface RequestState {
  requestId: string;
  logger: Logger;
}

export function requestContext(logger: Logger, metrics: HttpMetrics): Middleware<RequestState> {
  return async (ctx, next) => {
    const started = process.hrtime.bigint();
    const offered = ctx.get('x-request-id');
    const requestId = ACCEPTABLE_REQUEST_ID.test(offered) ? offered : randomUUID();
    ctx.state.requestId = requestId;
    // Made on first use: most requests never log beyond the access line below.
    let requestLogger: Logger | null = null;
    Object.defineProperty(ctx.state, 'logger', {
      configurable: true,
      enumerable: true,
      get: () => (requestLogger ??= logger.child({ request_id: requestId })),
      set: (value: Logger) => {
        requestLogger = value;
      },
    });
    ctx.set('x-request-id', requestId);
    try {
      await next();
    } finally {
      const seconds = Number(process.hrtime.bigint() - started) / 1e9;
      const route = (ctx as unknown as { _matchedRoute?: string })._matchedRoute ?? 'unmatched';
      metrics.observeRequest(ctx.method, String(route), ctx.status, seconds);
      if (logger.isLevelEnabled('info')) {
        const principal = (ctx.state as { principal?: { user_id: string; tenant_id: string } }).principal;
        ctx.state.logger.info(
          { method: ctx.method, route, path: ctx.path, status: ctx.status, ms: Math.round(seconds * 1e4) / 10, ip: ctx.ip, user_id: principal?.user_id, tenant_id: principal?.tenant_id },
          'request',
        );
      }
    }
  };
}
