// Errors answered as `{code, message}`: called by the request context (request-context.ts),
// which wraps every request, so the access log and metrics see the status the client gets.

import type { Context } from 'koa';
import type { Logger } from '../../../application/ports/logger';
import { toErrorResponse } from '../errors';

// Answered by the router without a body (405 and 501 come with their Allow header).
const ROUTING_ERRORS: Record<number, { code: string; message: (method: string, path: string) => string }> = {
  404: { code: 'not_found', message: (method, path) => `no route for ${method} ${path}` },
  405: { code: 'method_not_allowed', message: (method, path) => `${path} does not accept ${method}; see the Allow header` },
  501: { code: 'not_implemented', message: (method) => `the method ${method} is not implemented` },
};

type ErrorContext = Pick<Context, 'body' | 'status' | 'method' | 'path' | 'set'> & { state: { logger?: Logger } };

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
