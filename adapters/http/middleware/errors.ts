import type { Context, Middleware } from 'koa';
import { toErrorResponse } from '../errors';
import type { RequestState } from './request-context';

// Answered by the router without a body (405 and 501 come with their Allow header).
const ROUTING_ERRORS: Record<number, { code: string; message: (method: string, path: string) => string }> = {
  404: { code: 'not_found', message: (method, path) => `no route for ${method} ${path}` },
  405: { code: 'method_not_allowed', message: (method, path) => `${path} does not accept ${method}; see the Allow header` },
  501: { code: 'not_implemented', message: (method) => `the method ${method} is not implemented` },
};

type ErrorContext = Pick<Context, 'body' | 'status' | 'method' | 'path' | 'set'> & { state: Partial<RequestState> };

/** Gives a routing answer without a body (404, 405, 501) its `{code, message}`. */
export function answerRoutingError(ctx: ErrorContext): void {
  if (ctx.body !== undefined || !(ctx.status in ROUTING_ERRORS)) return;
  const status = ctx.status;
  const { code, message } = ROUTING_ERRORS[status];
  ctx.body = { code, message: message(ctx.method, ctx.path) };
  ctx.status = status;
}

/** Answers what a middleware threw as `{code, message}`; an unexpected error is logged. */
export function answerError(ctx: ErrorContext, error: unknown): void {
  const response = toErrorResponse(error);
  if (response.unexpected) ctx.state.logger?.error({ err: error }, 'unexpected error');
  ctx.status = response.status;
  ctx.set(response.headers);
  ctx.body = response.body;
}

/**
 * Turns whatever a later middleware throws into `{code, message}`; 404, 405 and 501 from
 * routing too. The server does this inside requestContext (one middleware fewer on every
 * request); this is the same on its own, for an app without a request context.
 */
export function errorResponses(): Middleware<RequestState> {
  return async (ctx, next) => {
    try {
      await next();
      answerRoutingError(ctx);
    } catch (error) {
      answerError(ctx, error);
    }
  };
}
