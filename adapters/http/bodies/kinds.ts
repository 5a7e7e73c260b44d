// The body kind is a property of the route. JSON is the default and is parsed for every
// route before routing; a route that reads its body another way (multipart upload, an HTML
// form, raw bytes for a provider signature) declares it with one middleware in its own list, and the
// JSON parser leaves that route's request stream alone. The declaration is found on the
// routers' layers once, when the app is built, so a request pays nothing for it.

import type Router from '@koa/router';
import type { Middleware } from 'koa';

/** `json_in_route`: JSON still, but parsed by the route after its own first middleware (json.ts). */
export type BodyKind = { kind: 'json' } | { kind: 'json_in_route' } | { kind: 'multipart' } | { kind: 'form' } | { kind: 'raw'; types: readonly string[] };

/** The media types parsed as JSON (the check and the parser use this one list). */
export const JSON_TYPES: readonly string[] = ['application/json', 'application/*+json'];

const DECLARED_KIND = Symbol('body kind');

type DeclaringMiddleware = Middleware & { [DECLARED_KIND]?: BodyKind };

/** Marks a route middleware as the one that reads the body, as `kind`. */
export function declaringBodyKind<M extends Middleware>(kind: BodyKind, middleware: M): M {
  (middleware as DeclaringMiddleware)[DECLARED_KIND] = kind;
  return middleware;
}

type Layer = Router['stack'][number];

/** The body kind a route layer declares in its own middleware list; JSON when none. */
export function bodyKindOf(layer: Layer): BodyKind {
  for (const middleware of layer.stack) {
    const declared = (middleware as DeclaringMiddleware)[DECLARED_KIND];
    if (declared) return declared;
  }
  return { kind: 'json' };
}

/**
 * Whether a request goes to a route that reads its own body. Nested routers' routes are
 * on their parent's stack already (with the full path), so the top-level routers suffice.
 */
export function routesReadingTheirOwnBody(routers: readonly Router[]): (method: string, path: string) => boolean {
  const declared = routers.flatMap((router) => router.stack).filter((layer) => layer.methods.length > 0 && bodyKindOf(layer).kind !== 'json');
  if (declared.length === 0) return () => false;
  return (method, path) => declared.some((layer) => layer.methods.includes(method) && layer.match(path));
}

/** Set by the JSON parser: a route declaring another kind finds its stream already read. */
const readAsJson = new WeakSet<object>();

export function markReadAsJson(request: object): void {
  readAsJson.add(request);
}

/**
 * Fails loudly when a route's declared body reader comes after the JSON parser has read the
 * stream: the declaration was not found on the route's own layer (for example, it was
 * wrapped in another middleware).
 */
export function assertStreamUnread(request: object, kind: string): void {
  if (readAsJson.has(request)) throw new Error(`the ${kind} body was already read as JSON: declare the body kind directly in the route's middleware list`);
}
