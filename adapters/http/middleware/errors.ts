import type { Middleware } from 'koa';
import { toErrorResponse } from '../errors';
import type { RequestState } from './request-context';

/** Turns whatever a later middleware throws into `{code, message}`; 404 for unmatched routes. */
export function errorResponses(): Middleware<RequestState> {
  return async (ctx, next) => {
    try {
      await next();
      if (ctx.status === 404 && ctx.body === undefined) {
        ctx.status = 404;
        ctx.body = { code: 'not_found', message: `no route for ${ctx.method} ${ctx.path}` };
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
