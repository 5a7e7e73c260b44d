// `Idempotency-Key` on creating routes: a client that retries a POST (a timeout, a dropped
// connection) with the same key and the same request gets the first answer again, marked
// `Idempotent-Replayed: true`, and nothing is created twice.
//
// - The key is 1 to 255 printable ASCII characters (400 `invalid_request` naming the header
//   otherwise), unique per tenant, caller, method and route; bound for
//   IDEMPOTENCY_KEY_TTL_SECONDS after its answer.
// - The same key with another request (path, query or body) is 422 `idempotency_key_reused`;
//   while the first request still runs, a retry is 409 `idempotency_key_in_use` with
//   Retry-After (the client retries and then gets the answer).
// - Only a 2xx answer is kept; any other answer frees the key, so the client may retry.
// - The handler gets a seed (`idempotencySeedOf(ctx)`) from which the use case derives the ids
//   of what it creates.
// - A handler whose answer holds a data subject's personal data (a chat turn, an agent's reply,
//   a tool test) names the subject (`answerHoldsPersonalDataOf`): the answer is kept under its
//   key, and a retry after the subject was erased is 410 `personal_data_erased`
//   (docs/personal-data.md).

import type { Middleware, ParameterizedContext } from 'koa';
import { type IdempotencyDependencies, type IdempotentAnswer, finishIdempotentRequest, startIdempotentRequest } from '../../../application/idempotency-key/idempotent-requests';
import { DomainError, invalid } from '../../../domain/shared/errors';
import { HttpError } from '../errors';
import { requestContextOf } from '../request-context';
import { actingContext } from '../../../application/session/sessions';
import type { RequestContext } from '../../../application/shared/request-context';
import type { AuthenticatedState } from './authenticate';
import type { RequestState } from './request-context';

export const IDEMPOTENCY_KEY_HEADER = 'Idempotency-Key';
export const REPLAYED_HEADER = 'Idempotent-Replayed';

const KEY = /^[\x20-\x7e]{1,255}$/;
/** Headers of the first answer worth giving again; the rest belong to each response. */
const REPLAYED_HEADERS = ['location', 'etag'];

interface IdempotentState extends RequestState {
  idempotencyKey?: string;
  answerSubject?: string;
}

const describedBodies = new WeakMap<object, unknown>();

/**
 * For a route whose body is not parsed JSON (an upload): what of its body a retry must send
 * again, compared in its place (for example the fields and each file's name and digest). Set
 * by a middleware before idempotentCreation's.
 */
export function describeRequestBody(ctx: { request: object }, description: unknown): void {
  describedBodies.set(ctx.request, description);
}

/** The seed of the ids a creating request makes, when it carries an Idempotency-Key. */
export const idempotencySeedOf = (ctx: { state: RequestState }): string | undefined => (ctx.state as IdempotentState).idempotencyKey;

/** Names the data subject whose personal data the answer holds (`conversation:<id>`), so its kept copy is erased with it. */
export const answerHoldsPersonalDataOf = (ctx: { state: RequestState }, subject: string): void => {
  (ctx.state as IdempotentState).answerSubject = subject;
};

/** Whose key it is (the scope keys are unique in, besides method and route) and the context its bookkeeping is written with. */
export interface IdempotencyCaller {
  scope: readonly string[];
  context: RequestContext;
}

/** A tenant user's key: unique per tenant and user. */
const userCaller = (ctx: ParameterizedContext<AuthenticatedState>): IdempotencyCaller => {
  const { principal } = ctx.state;
  return { scope: [principal.tenant_id, principal.user_id], context: actingContext(principal, requestContextOf(ctx)) };
};

const honouring = new WeakSet<object>();

/** Whether a route middleware is the one that honours Idempotency-Key (for the route inventory test). */
export const honoursIdempotencyKey = (middleware: unknown): boolean => typeof middleware === 'function' && honouring.has(middleware);

/**
 * Honours Idempotency-Key on a creating route; goes after authentication. `callerOf` names
 * whose key it is: by default the tenant user the request authenticated.
 */
export function idempotentCreation(deps: IdempotencyDependencies): Middleware<AuthenticatedState>;
export function idempotentCreation<State extends RequestState>(deps: IdempotencyDependencies, callerOf: (ctx: ParameterizedContext<State>) => IdempotencyCaller): Middleware<State>;
export function idempotentCreation(deps: IdempotencyDependencies, callerOf: (ctx: ParameterizedContext<AuthenticatedState>) => IdempotencyCaller = userCaller): Middleware<AuthenticatedState> {
  const middleware: Middleware<AuthenticatedState> = async (ctx, next) => {
    const header = ctx.headers[IDEMPOTENCY_KEY_HEADER.toLowerCase()];
    if (header === undefined) return next();
    const key = Array.isArray(header) ? null : header;
    if (key === null || !KEY.test(key)) throw invalid('invalid_request', `${IDEMPOTENCY_KEY_HEADER}: expected 1 to 255 printable ASCII characters, sent once`, IDEMPOTENCY_KEY_HEADER);
    const { scope, context } = callerOf(ctx);
    const route = (ctx as { routerPath?: string }).routerPath ?? ctx.path;
    const body = describedBodies.has(ctx.request) ? describedBodies.get(ctx.request) : (ctx.request.body ?? null);
    const request = { scope: [...scope, ctx.method, route], key, request: { path: ctx.path, query: ctx.querystring, body } };
    const start = await startIdempotentRequest(deps, request, context).catch((error: unknown) => {
      if (error instanceof DomainError && error.code === 'idempotency_key_in_use') throw new HttpError(409, error.code, error.message, { 'retry-after': '1' });
      throw error;
    });
    if (start.kind === 'replay') {
      ctx.status = start.answer.status;
      ctx.set(start.answer.headers);
      ctx.set(REPLAYED_HEADER, 'true');
      ctx.body = start.answer.body;
      return;
    }
    (ctx.state as IdempotentState).idempotencyKey = start.seed;
    let answer: IdempotentAnswer | null = null;
    try {
      await next();
      if (ctx.status >= 200 && ctx.status < 300) {
        const headers = Object.fromEntries(REPLAYED_HEADERS.flatMap((name) => (ctx.response.get(name) ? [[name, ctx.response.get(name)]] : [])));
        const subject = (ctx.state as IdempotentState).answerSubject;
        answer = { status: ctx.status, headers, body: ctx.body ?? null, ...(subject === undefined ? {} : { subject }) };
      }
    } finally {
      // The answer stands even if it cannot be kept: the claim then lapses, and a retry runs
      // again with the same seed, which finds what this request created.
      await finishIdempotentRequest(deps, start.claim, answer, context).catch((error: unknown) => ctx.state.logger.warn({ err: error }, 'idempotency key not finished'));
    }
  };
  honouring.add(middleware);
  return middleware;
}
