// Request id (accepted from `x-request-id` when it looks like one, made otherwise), echoed in
// the response, bound to a child logger, and timed for the access log and metrics. Errors are
// answered here too (middleware/errors.ts), inside the timing, so the access log and the
// metrics see the status the client gets: one middleware rather than two, since every
// request passes through it.

import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import type { Middleware } from 'koa';
import type { Logger } from '../../../application/ports/logger';
import type { HttpMetrics } from '../../../application/ports/metrics';
import type { EventClientIp } from '../client-ip';
import { answerError, answerRoutingError } from './errors';

const ACCEPTABLE_REQUEST_ID = /^[A-Za-z0-9._:-]{8,128}$/;

export interface RequestState {
  requestId: string;
  logger: Logger;
  /** How much of the client's address events record (EVENT_CLIENT_IP; whole when absent). */
  eventClientIp?: EventClientIp;
}

/** The request's child logger, made on first use: most requests never log beyond the access line. */
class RequestLogger implements Logger {
  private bound: Logger | null = null;

  constructor(
    private readonly parent: Logger,
    private readonly requestId: string,
  ) {}

  private get logger(): Logger {
    return (this.bound ??= this.parent.child({ request_id: this.requestId }));
  }

  debug(fields: object, message?: string): void {
    this.logger.debug(fields, message);
  }

  info(fields: object, message?: string): void {
    this.logger.info(fields, message);
  }

  warn(fields: object, message?: string): void {
    this.logger.warn(fields, message);
  }

  error(fields: object, message?: string): void {
    this.logger.error(fields, message);
  }

  child(bindings: object): Logger {
    return this.logger.child(bindings);
  }

  isLevelEnabled(level: 'debug' | 'info' | 'warn' | 'error'): boolean {
    return this.parent.isLevelEnabled(level);
  }
}

export function requestContext(logger: Logger, metrics: HttpMetrics, eventClientIp: EventClientIp = 'full'): Middleware<RequestState> {
  return async (ctx, next) => {
    if (eventClientIp !== 'full') ctx.state.eventClientIp = eventClientIp;
    // A float in milliseconds: no BigInt made twice per request.
    const started = performance.now();
    const offered = ctx.req.headers['x-request-id'];
    const requestId = typeof offered === 'string' && ACCEPTABLE_REQUEST_ID.test(offered) ? offered : randomUUID();
    ctx.state.requestId = requestId;
    ctx.state.logger = new RequestLogger(logger, requestId);
    ctx.set('x-request-id', requestId);
    try {
      await next();
      answerRoutingError(ctx);
    } catch (error) {
      answerError(ctx, error);
    } finally {
      const seconds = (performance.now() - started) / 1e3;
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
