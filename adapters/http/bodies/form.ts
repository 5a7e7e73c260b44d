// The form body kind: `application/x-www-form-urlencoded`, what an HTML form posts (the
// sandbox's hosted checkout page). The body is read whole under the route's limit and
// decoded as UTF-8 by the WHATWG rules (URLSearchParams); another content type or a
// Content-Encoding is 415, a body over the limit 413, more fields than allowed 413.
//
//   router.post('/pay', formBody({ limitBytes: 16 * 1024 }), async (ctx) => {
//     const cardNumber = formField(formOf(ctx), 'card_number');
//   });

import type { Context, Middleware } from 'koa';
import { HttpError } from '../errors';
import { assertStreamUnread, declaringBodyKind } from './kinds';
import { readBytes } from './raw';

export const FORM_TYPE = 'application/x-www-form-urlencoded';

export interface FormBodyOptions {
  /** Largest body in bytes. */
  limitBytes: number;
  /** Most fields (default 50). */
  maxFields?: number;
}

/** The fields: a string, or the strings of a repeated field in order. */
export type FormFields = Readonly<Record<string, string | readonly string[]>>;

const forms = new WeakMap<object, FormFields>();

/** The request's form fields (none when there was no body). */
export function formOf(ctx: Context): FormFields {
  const form = forms.get(ctx.request);
  if (!form) throw new Error('formOf: the route does not declare formBody(...) before its handler');
  return form;
}

/** One field's value: '' when absent; the first when repeated (a form sends each of its fields once). */
export function formField(form: FormFields, name: string): string {
  const value = Object.prototype.hasOwnProperty.call(form, name) ? form[name] : undefined;
  if (value === undefined) return '';
  return typeof value === 'string' ? value : (value[0] ?? '');
}

function fieldsOf(body: Buffer, maxFields: number): FormFields {
  // No prototype: a field named `__proto__` or `constructor` is just a field.
  const fields: Record<string, string | string[]> = Object.create(null);
  let count = 0;
  for (const [name, value] of new URLSearchParams(body.toString('utf8'))) {
    count += 1;
    if (count > maxFields) throw new HttpError(413, 'too_many_fields', `send at most ${maxFields} fields`);
    const known = fields[name];
    fields[name] = known === undefined ? value : Array.isArray(known) ? [...known, value] : [known, value];
  }
  return fields;
}

/** Declares the form body kind for a route: its handler reads `formOf(ctx)`. */
export function formBody(options: FormBodyOptions): Middleware {
  const maxFields = options.maxFields ?? 50;
  return declaringBodyKind({ kind: 'form' }, async (ctx, next) => {
    assertStreamUnread(ctx.req, 'form');
    const declared = ctx.get('content-length');
    const hasBody = (declared !== '' && Number(declared) > 0) || ctx.get('transfer-encoding') !== '';
    if (!hasBody) {
      forms.set(ctx.request, Object.create(null));
      return next();
    }
    if (!ctx.is(FORM_TYPE)) throw new HttpError(415, 'unsupported_media_type', `send the body as ${FORM_TYPE}`);
    const encoding = ctx.get('content-encoding').toLowerCase();
    if (encoding !== '' && encoding !== 'identity') throw new HttpError(415, 'unsupported_media_type', 'send the form without Content-Encoding');
    if (Number(declared) > options.limitBytes) throw new HttpError(413, 'payload_too_large', `the request body is larger than ${options.limitBytes} bytes`);
    forms.set(ctx.request, fieldsOf(await readBytes(ctx.req, options.limitBytes), maxFields));
    await next();
  });
}
