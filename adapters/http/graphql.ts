// POST /graphql executes the console schema; GET /graphql serves a playground only when
// ENABLE_GRAPHQL_PLAYGROUND=true; GET /graphql/schema.graphql serves the schema as SDL.
// Errors carry `extensions.code` (and `field` for bad input); an unexpected failure says
// nothing more than `internal_error`.

import Router from '@koa/router';
import { GraphQLError, type GraphQLFormattedError, graphql, printSchema } from 'graphql';
import { type AbuseLimits, RateLimitedError, guardAttempt } from '../../application/identity/abuse-controls';
import { type IdentityDependencies, type Principal, authenticateTenantToken } from '../../application/identity/identity';
import type { RateLimiter } from '../../application/ports/rate-limiter';
import { DomainError } from '../../domain/shared/errors';
import type { GraphqlContext } from '../graphql/context';
import { graphqlSchema } from '../graphql/schema';
import { HttpError, STATUS_OF_KIND } from './errors';
import type { RequestState } from './middleware/request-context';
import { bearerToken, requestContextOf } from './request-context';


function formatError(error: GraphQLError, log: (error: unknown) => void): GraphQLFormattedError {
  const original = error.originalError;
  if (original instanceof RateLimitedError) {
    return { message: original.message, path: error.path, extensions: { code: original.code, status: 429, retry_after_seconds: original.retryAfterSeconds } };
  }
  if (original instanceof DomainError) {
    return {
      message: original.message,
      path: error.path,
      extensions: { code: original.code, status: STATUS_OF_KIND[original.kind], ...(original.field ? { field: original.field } : {}) },
    };
  }
  if (original instanceof HttpError) return { message: original.message, path: error.path, extensions: { code: original.code, status: original.status } };
  if (!original || original instanceof GraphQLError) {
    // Syntax, validation and variable-coercion errors: the client's request is wrong.
    return { message: error.message, locations: error.locations, path: error.path, extensions: { code: 'invalid_request', status: 400 } };
  }
  log(original);
  return { message: 'Internal server error', path: error.path, extensions: { code: 'internal_error', status: 500 } };
}

const PLAYGROUND = `<!doctype html>
<html><head><meta charset="utf-8"><title>svc GraphQL</title>
<link rel="stylesheet" href="https://unpkg.com/graphiql@3/graphiql.min.css"></head>
<body style="margin:0"><div id="graphiql" style="height:100vh"></div>
<script src="https://unpkg.com/react@18/umd/react.production.min.js"></script>
<script src="https://unpkg.com/react-dom@18/umd/react-dom.production.min.js"></script>
<script src="https://unpkg.com/graphiql@3/graphiql.min.js"></script>
<script>ReactDOM.createRoot(document.getElementById('graphiql')).render(React.createElement(GraphiQL, { fetcher: GraphiQL.createFetcher({ url: '/graphql' }) }));</script>
</body></html>`;

export interface GraphqlOptions {
  playground: boolean;
  limiter: RateLimiter;
  limits: AbuseLimits;
}

export function graphqlRouter(identity: IdentityDependencies, options: GraphqlOptions): Router<RequestState> {
  const router = new Router<RequestState>();
  router.post('/graphql', async (ctx) => {
    const body = (ctx.request as unknown as { body?: unknown }).body as { query?: unknown; variables?: unknown; operationName?: unknown } | undefined;
    if (!body || typeof body !== 'object' || typeof body.query !== 'string' || body.query.trim() === '') {
      throw new HttpError(400, 'invalid_request', 'send {"query": "...", "variables": {...}} as JSON');
    }
    if (body.variables !== undefined && body.variables !== null && (typeof body.variables !== 'object' || Array.isArray(body.variables))) {
      throw new HttpError(400, 'invalid_request', 'variables must be an object');
    }
    let principal: Principal | null = null;
    let authError: Error | null = null;
    const token = bearerToken(ctx);
    if (token) {
      try {
        principal = await authenticateTenantToken(identity, token);
      } catch (error) {
        authError = error as Error;
      }
    }
    const request = requestContextOf(ctx);
    const contextValue: GraphqlContext = {
      principal,
      authError,
      request,
      identity,
      guard: (action, email) => guardAttempt(options.limiter, options.limits, action, request.ip, email),
    };
    const result = await graphql({
      schema: graphqlSchema(),
      source: body.query,
      variableValues: (body.variables ?? undefined) as Record<string, unknown> | undefined,
      operationName: typeof body.operationName === 'string' ? body.operationName : undefined,
      contextValue,
    });
    const errors = result.errors?.map((error) => formatError(error, (err) => ctx.state.logger.error({ err }, 'graphql resolver failed')));
    const limited = errors?.find((error) => error.extensions?.code === 'rate_limited');
    if (limited) {
      // The HTTP status tells proxies and clients to back off, as REST's 429 does.
      ctx.status = 429;
      ctx.set('retry-after', String(limited.extensions?.retry_after_seconds ?? 1));
    } else {
      ctx.status = result.data === undefined && errors?.some((error) => error.extensions?.code === 'invalid_request') ? 400 : 200;
    }
    ctx.body = errors ? { data: result.data ?? null, errors } : { data: result.data };
  });
  // The SDL documents the console API as the OpenAPI document does the REST one: public.
  let sdl: string | null = null;
  router.get('/graphql/schema.graphql', (ctx) => {
    sdl ??= `${printSchema(graphqlSchema())}\n`;
    ctx.type = 'text/plain; charset=utf-8';
    ctx.body = sdl;
  });
  router.get('/graphql', (ctx) => {
    if (!options.playground) throw new HttpError(404, 'not_found', 'the GraphQL playground is disabled (ENABLE_GRAPHQL_PLAYGROUND=true enables it)');
    ctx.type = 'html';
    ctx.body = PLAYGROUND;
  });
  return router;
}
