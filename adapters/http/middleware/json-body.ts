// Bodies are JSON (spec 4.18) except multipart uploads, which their own routes parse.
// A body with another content type is 415, broken JSON 400, an oversized one 413.

import type { Middleware } from 'koa';
import { HttpMethodEnum, koaBody } from 'koa-body';
import { HttpError } from '../errors';

const METHODS_WITH_BODY = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

export function jsonBody(limitBytes: number): Middleware {
  const parse = koaBody({
    json: true,
    multipart: false,
    urlencoded: false,
    text: false,
    jsonStrict: true,
    jsonLimit: limitBytes,
    parsedMethods: [HttpMethodEnum.POST, HttpMethodEnum.PUT, HttpMethodEnum.PATCH, HttpMethodEnum.DELETE],
    onError: (error: Error) => {
      throw error;
    },
  });
  // Reads carry no body: they skip the checks and the parser altogether.
  const writesOnly: Middleware = (ctx, next) => {
    if (!METHODS_WITH_BODY.has(ctx.method)) return next();
    const declared = Number(ctx.get('content-length') || 0);
    if (declared > 0 || ctx.get('transfer-encoding') !== '') {
      if (!ctx.is('application/json', 'application/*+json')) throw new HttpError(415, 'unsupported_media_type', 'send the body as application/json');
      if (declared > limitBytes) throw new HttpError(413, 'payload_too_large', `the request body is larger than ${limitBytes} bytes`);
    }
    return parse(ctx, next);
  };
  return writesOnly;
}
