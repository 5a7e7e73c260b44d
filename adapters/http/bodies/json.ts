// The default body kind: JSON (spec 4.18), parsed before routing for every route that does not
// read its own body (bodies/kinds.ts). Any `application/json` or `application/*+json` body is
// parsed (a merge patch is JSON too); another content type is 415, broken JSON 400, an
// oversized body 413 (from Content-Length before reading, and while reading otherwise).

import type Router from '@koa/router';
import type { Middleware } from 'koa';
import { HttpMethodEnum, koaBody } from 'koa-body';
import { HttpError } from '../errors';
import { JSON_TYPES, assertStreamUnread, declaringBodyKind, markReadAsJson, routesReadingTheirOwnBody } from './kinds';

const METHODS_WITH_BODY = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/** The checks and the parser for one request's JSON body (415, 413, 400). */
function jsonParser(limitBytes: number): Middleware {
  const parse = koaBody({
    json: true,
    jsonTypes: [...JSON_TYPES],
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
  return (ctx, next) => {
    const declared = Number(ctx.get('content-length') || 0);
    if (declared > 0 || ctx.get('transfer-encoding') !== '') {
      if (!ctx.is(...JSON_TYPES)) throw new HttpError(415, 'unsupported_media_type', 'send the body as application/json');
      if (declared > limitBytes) throw new HttpError(413, 'payload_too_large', `the request body is larger than ${limitBytes} bytes`);
      markReadAsJson(ctx.req);
    }
    return parse(ctx, next);
  };
}

export function jsonBodies(routers: readonly Router[], limitBytes: number): Middleware {
  const parse = jsonParser(limitBytes);
  const readsOwnBody = routesReadingTheirOwnBody(routers);
  return (ctx, next) => {
    // Reads carry no body: they skip the checks and the parser altogether.
    if (!METHODS_WITH_BODY.has(ctx.method) || readsOwnBody(ctx.method, ctx.path)) return next();
    return parse(ctx, next);
  };
}

/**
 * A JSON body read where this middleware stands in the route's list rather than before
 * routing: for a route that must answer before its body is read. The widget's routes check
 * the token and the origin first, and only then is a browser allowed to read the answer
 * (Access-Control-Allow-Origin), so a 400 or 415 about the body comes after them.
 */
export function jsonBodyInRoute(limitBytes: number): Middleware {
  const parse = jsonParser(limitBytes);
  return declaringBodyKind({ kind: 'json_in_route' }, (ctx, next) => {
    assertStreamUnread(ctx.req, 'JSON');
    return parse(ctx, next);
  });
}
