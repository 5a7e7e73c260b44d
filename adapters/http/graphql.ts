// POST /graphql executes the console schema; GET /graphql serves a playground only when
// ENABLE_GRAPHQL_PLAYGROUND=true; GET /graphql/schema.graphql serves the schema as SDL wherever
// introspection is on. Errors carry `extensions.code` (and `field` for bad input);
// an unexpected failure says nothing more than `internal_error`.
//
// The HTTP status says what REST's would: 400 for a request that cannot run (syntax,
// validation, a query over its depth, field or cost limit, introspection when it is off), 401
// when a credential was missing or refused (so a console logs in again), 403 when the tenant
// is suspended or deleted or sign-up is closed, 429 when rate limited; otherwise 200, with
// domain errors inside the GraphQL answer.

import Router from '@koa/router';
import { type DocumentNode, GraphQLError, Kind, type GraphQLFormattedError, type ValidationRule, execute, parse, printSchema, specifiedRules, validate } from 'graphql';
import { type AbuseLimits, RateLimitedError, guardAttempt, loginFailureBudget } from '../../application/user/abuse-controls';
import type { UseCaseDependencies } from '../../application/shared/dependencies';
import type { Principal } from '../../application/session/sessions';
import { authenticateTenantToken } from '../../application/session/authentication';
import type { RateLimiter } from '../../application/ports/rate-limiter';
import { DomainError } from '../../domain/shared/errors';
import type { GraphqlContext } from '../graphql/context';
import { type QueryLimits, introspectionDisabledRule, queryCostProblem, queryShapeProblem } from '../graphql/limits';
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
      extensions: { code: original.code, status: STATUS_OF_KIND[original.kind], ...(original.field ? { field: original.field } : {}), ...original.details() },
    };
  }
  if (original instanceof HttpError) return { message: original.message, path: error.path, extensions: { code: original.code, status: original.status } };
  if (!original || original instanceof GraphQLError) {
    // Syntax, validation and variable-coercion errors: the client's request is wrong. Our own
    // refusals (limits, introspection) name themselves in `extensions.code`.
    const extensions = typeof error.extensions.code === 'string' ? error.extensions : { code: 'invalid_request', status: 400 };
    return { message: error.message, locations: error.locations, path: error.path, extensions };
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
  /** Depth, field and cost limits of a query (GRAPHQL_MAX_DEPTH, GRAPHQL_MAX_FIELDS, GRAPHQL_MAX_COST). */
  queryLimits: QueryLimits;
  /** Whether `__schema` / `__type` are answered (GRAPHQL_INTROSPECTION; off in production by default). */
  introspection: boolean;
}

// Parsing stops here: a real console query is a few hundred tokens, and the field limit is
// checked on the parsed document, so a larger one only costs parse time.
const MAX_TOKENS = 20_000;

/** The document, or the errors that make the request unrunnable (each answered as 400). */
function preparedDocument(
  source: string,
  request: { variables?: Record<string, unknown>; operationName?: string },
  options: GraphqlOptions,
): { document: DocumentNode } | { errors: readonly GraphQLError[] } {
  let document: DocumentNode;
  try {
    document = parse(source, { maxTokens: MAX_TOKENS });
  } catch (error) {
    if (error instanceof GraphQLError) return { errors: [error] };
    throw error;
  }
  // The schema has no subscriptions; execute() would answer 200 with an error inside.
  const subscription = document.definitions.find((definition) => definition.kind === Kind.OPERATION_DEFINITION && definition.operation === 'subscription');
  if (subscription) {
    return { errors: [new GraphQLError('subscriptions are not served: send a query or a mutation', { nodes: subscription, extensions: { code: 'invalid_request', status: 400 } })] };
  }
  const shape = queryShapeProblem(document, options.queryLimits);
  if (shape) return { errors: [shape] };
  const schema = graphqlSchema();
  const rules: readonly ValidationRule[] = options.introspection ? specifiedRules : [...specifiedRules, introspectionDisabledRule];
  const invalid = validate(schema, document, rules);
  if (invalid.length > 0) return { errors: invalid };
  const cost = queryCostProblem(schema, document, request, options.queryLimits.maxCost);
  return cost ? { errors: [cost] } : { document };
}

const REFUSED_AS_403: ReadonlySet<string> = new Set(['tenant_suspended', 'tenant_deleted', 'signup_closed']);

/** The HTTP status of an executed request's errors (see the header). */
function statusOf(errors: readonly GraphQLFormattedError[] | undefined, executed: boolean): number {
  if (!errors) return 200;
  if (errors.some((error) => error.extensions?.code === 'rate_limited')) return 429;
  if (errors.some((error) => error.extensions?.status === 401)) return 401;
  // A suspended or deleted tenant's credential or login, and a sign-up while it is closed: refused as REST refuses them.
  if (errors.some((error) => REFUSED_AS_403.has(String(error.extensions?.code)))) return 403;
  if (!executed && errors.some((error) => error.extensions?.status === 400)) return 400;
  return 200;
}

export function graphqlRouter(identity: UseCaseDependencies, options: GraphqlOptions): Router<RequestState> {
  const router = new Router<RequestState>();
  router.post('/graphql', async (ctx) => {
    const body = (ctx.request as unknown as { body?: unknown }).body as { query?: unknown; variables?: unknown; operationName?: unknown } | undefined;
    if (!body || typeof body !== 'object' || typeof body.query !== 'string' || body.query.trim() === '') {
      throw new HttpError(400, 'invalid_request', 'send {"query": "...", "variables": {...}} as JSON');
    }
    if (body.variables !== undefined && body.variables !== null && (typeof body.variables !== 'object' || Array.isArray(body.variables))) {
      throw new HttpError(400, 'invalid_request', 'variables must be an object');
    }
    const variableValues = (body.variables ?? undefined) as Record<string, unknown> | undefined;
    const operationName = typeof body.operationName === 'string' ? body.operationName : undefined;
    // A request that cannot run is refused before any credential or resolver is spent on it.
    const prepared = preparedDocument(body.query, { variables: variableValues, operationName }, options);
    if ('errors' in prepared) {
      ctx.status = 400;
      ctx.body = { data: null, errors: prepared.errors.map((error) => formatError(error, () => undefined)) };
      return;
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
      loginFailures: (email) => loginFailureBudget(options.limiter, options.limits, email),
      passwordGuard: { limiter: options.limiter, failures: options.limits.perEmail },
      logger: ctx.state.logger,
    };
    const result = await execute({ schema: graphqlSchema(), document: prepared.document, variableValues, operationName, contextValue });
    const errors = result.errors?.map((error) => formatError(error, (err) => ctx.state.logger.error({ err }, 'graphql resolver failed')));
    // No data at all means nothing ran (variables that do not coerce, no such operation).
    ctx.status = statusOf(errors, result.data !== undefined);
    const limited = errors?.find((error) => error.extensions?.code === 'rate_limited');
    // The HTTP status tells proxies and clients to back off, as REST's 429 does.
    if (limited) ctx.set('retry-after', String(limited.extensions?.retry_after_seconds ?? 1));
    ctx.body = errors ? { data: result.data ?? null, errors } : { data: result.data };
  });
  // The SDL documents the console API as the OpenAPI document does the REST one, wherever
  // introspection would tell the same (off in production unless GRAPHQL_INTROSPECTION=true).
  let sdl: string | null = null;
  router.get('/graphql/schema.graphql', (ctx) => {
    if (!options.introspection) throw new HttpError(404, 'not_found', 'the schema is not published here (GRAPHQL_INTROSPECTION=true publishes it)');
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
