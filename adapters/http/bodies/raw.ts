// The raw body kind: the exact bytes as sent, for a route that verifies a provider's
// signature over them (a payment or messaging webhook). Nothing is decoded: a body with a
// Content-Encoding is 415, as is a content type the route did not declare; a body over the
// route's limit is 413 (from Content-Length before reading, and while reading otherwise).
//
//   router.post('/webhook', rawBody({ types: ['application/json'], limitBytes: 256 * 1024 }), async (ctx) => {
//     verifySignature(rawBodyOf(ctx), ctx.get('x-provider-signature'));
//   });

import type { IncomingMessage } from 'node:http';
import type { Context, Middleware } from 'koa';
import { HttpError } from '../errors';
import { assertStreamUnread, declaringBodyKind } from './kinds';

export interface RawBodyOptions {
  /** Media types the route accepts (`ctx.is` patterns, e.g. `application/json`). */
  types: readonly string[];
  /** Largest body in bytes. */
  limitBytes: number;
}

const rawBodies = new WeakMap<object, Buffer>();

/** The request's body bytes, exactly as sent (empty when there was none). */
export function rawBodyOf(ctx: Context): Buffer {
  const body = rawBodies.get(ctx.request);
  if (!body) throw new Error('rawBodyOf: the route does not declare rawBody(...) before its handler');
  return body;
}

const tooLarge = (limitBytes: number): HttpError => new HttpError(413, 'payload_too_large', `the request body is larger than ${limitBytes} bytes`);

/** Reads the whole body, failing with 413 past `limitBytes` and 400 when it breaks off (the form kind reads the same way). */
export function readBytes(request: IncomingMessage, limitBytes: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let received = 0;
    const stop = (): void => {
      request.off('data', onData).off('end', onEnd).off('error', onError).off('close', onClose);
    };
    const onData = (chunk: Buffer): void => {
      received += chunk.length;
      if (received > limitBytes) {
        stop();
        // The rest is read and dropped (what node:http does with an unread body), so the
        // client finishes sending and reads the 413 on a connection that stays usable.
        chunks.length = 0;
        request.resume();
        reject(tooLarge(limitBytes));
        return;
      }
      chunks.push(chunk);
    };
    const onEnd = (): void => {
      stop();
      resolve(Buffer.concat(chunks, received));
    };
    const onError = (): void => {
      stop();
      reject(new HttpError(400, 'request_aborted', 'the request body was not received completely'));
    };
    const onClose = (): void => {
      if (!request.complete) onError();
    };
    request.on('data', onData).on('end', onEnd).on('error', onError).on('close', onClose);
  });
}

/** Declares the raw body kind for a route: its handler reads `rawBodyOf(ctx)`. */
export function rawBody(options: RawBodyOptions): Middleware {
  const types = [...options.types];
  return declaringBodyKind({ kind: 'raw', types }, async (ctx, next) => {
    assertStreamUnread(ctx.req, 'raw');
    const declared = ctx.get('content-length');
    const hasBody = (declared !== '' && Number(declared) > 0) || ctx.get('transfer-encoding') !== '';
    if (hasBody) {
      if (!ctx.is(...types)) throw new HttpError(415, 'unsupported_media_type', `send the body as ${types.join(' or ')}`);
      const encoding = ctx.get('content-encoding').toLowerCase();
      if (encoding !== '' && encoding !== 'identity') throw new HttpError(415, 'unsupported_media_type', 'send the body without Content-Encoding: its signature covers the bytes as sent');
      if (Number(declared) > options.limitBytes) throw tooLarge(options.limitBytes);
    }
    rawBodies.set(ctx.request, hasBody ? await readBytes(ctx.req, options.limitBytes) : Buffer.alloc(0));
    await next();
  });
}
