import type { Middleware } from 'koa';
import { toErrorResponse } from '../errors';
import type { RequestState } from './request-context';

// Answered by the router without a body (405 and 501 come with their Allow header).
const ROUTING_ERRORS: Record<number, string> = { 404: 'not_found', 405: 'method_not_allowed', 501: 'not_implemented' };
const ROUTING_MESSAGES: Record<number, (method: string, path: string) => string> = {
  404: (method, path) => `no route for ${method} ${path}`,
  405: (method, path) => `${path} does not accept ${method}; see the Allow header`,
  501: (method) => `the method ${method} is not implemented`,
};

/** Turns whatever a later middleware throws into `{code, message}`; 404, 405 and 501 from routing too. */
export function errorResponses(): Middleware<RequestState> {
  return async (ctx, next) => {
    try {
      await next();
      if (ctx.body === undefined && ctx.status in ROUTING_ERRORS) {
        const status = ctx.status;
        ctx.body = { code: ROUTING_ERRORS[status], message: ROUTING_MESSAGES[status](ctx.method, ctx.path) };
        ctx.status = status;
      }
    } catch (error) {
      const response = toErrorResponse(error);
      if (response.unexpected) ctx.state.logger?.error({ err: error }, 'unexpected error');
      ctx.status = response.status;
      ctx.set(response.headers);
      ctx.body = response.body;
    }
  };
}
