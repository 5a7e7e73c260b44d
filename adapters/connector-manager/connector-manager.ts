// The connector-manager's route (spec 4.1 "How the platform reaches the connector", 8):
//
//   POST {prefix}/v1/invoke
//   Authorization: Bearer <CONNECTOR_MANAGER_TOKEN>
//   x-svc-tenant-id, x-svc-workspace-id   (the tenancy of the call; `*` for the whole organization)
//   x-svc-trace-id, X-End-User-Token, X-End-User-Session   (optional, forwarded to the connector)
//   {target_id: 'sdk:{connection_id}', endpoint, signing_secret, request: ProtocolRequest, timeout_ms?}
//
// The connector-manager cannot resolve a connection itself, so the caller sends the endpoint
// and the secret with each call; it signs and posts to `{endpoint}/svc` through the connector
// client (adapters/connector-client), retrying as invoke.ts says, and answers
//   200 {answer, status, latency_ms, attempts}           the connector's answer (an `error`
//                                                          answer of a tool call included)
//   502 {code: <reason>, message, latency_ms, attempts}  no usable answer: `unreachable`,
//       `timeout`, `refused_address`, `invalid_signature`, `protocol_mismatch`, `bad_response`
//   401 without the token (compared in constant time), 400 naming the bad header or field.
//
// `npm run connector-manager` serves it at `/v1/invoke` as its own process (main.ts); the main
// server serves it at `/connector-manager/v1/invoke`, answering 404 there unless
// CONNECTOR_MANAGER_TOKEN is set (the route is always registered, so the routes and the
// OpenAPI document do not depend on the configuration). The secret is never logged or answered.

import { createHash, randomUUID, timingSafeEqual } from 'node:crypto';
import Router from '@koa/router';
import * as t from 'io-ts';
import { ProtocolRequestFields, ProtocolRequestType } from '../connector-sdk/protocol';
import type { ConnectorClient, ConnectorRequest, ConnectorTarget } from '../../application/ports/connector-client';
import { invalid } from '../../domain/shared/errors';
import { decodeBody } from '../http/decode';
import { HttpError } from '../http/errors';
import type { RequestState } from '../http/middleware/request-context';
import { bearerToken } from '../http/request-context';
import { END_USER_SESSION_HEADER, END_USER_TOKEN_HEADER, ORGANIZATION_WIDE } from '../connector-client/connector-client';
import { type RetryPolicy, invokeWithRetries } from './invoke';

/** Where the main server mounts the connector-manager. */
export const MOUNTED_PREFIX = '/connector-manager';

export const INVOKE_PATH = '/v1/invoke';

/** The longest timeout a caller may ask for (the CONNECTOR_TIMEOUT_MS range). */
export const MAX_TIMEOUT_MS = 120_000;

const TENANCY_VALUE = /^[\x21-\x7e]{1,200}$/;

const NonEmpty = t.refinement(t.string, (value) => value.trim().length > 0, 'a non-empty string');
const TargetId = t.refinement(t.string, (value) => /^sdk:[\x21-\x7e]{1,200}$/.test(value), 'sdk:{connection_id}');
const TimeoutMs = t.refinement(t.number, (value) => Number.isInteger(value) && value >= 1 && value <= MAX_TIMEOUT_MS, `an integer from 1 to ${MAX_TIMEOUT_MS}`);

/** The protocol request (spec 2.2) as a caller of the connector-manager sends it: `protocol_version` and `request_id` may be left out. */
export const InvokeRequest = t.intersection(
  [
    t.type({ type: ProtocolRequestType }),
    t.partial({ protocol_version: t.literal('1'), request_id: NonEmpty }),
    ProtocolRequestFields,
  ],
  'ProtocolRequest',
);

export const InvokeBody = t.type(
  {
    target_id: TargetId,
    endpoint: NonEmpty,
    signing_secret: NonEmpty,
    request: InvokeRequest,
    timeout_ms: t.union([TimeoutMs, t.undefined]),
  },
  'InvokeBody',
);

export interface ConnectorManagerDependencies {
  /** Calls connectors directly (never through another connector-manager). */
  client: ConnectorClient;
  /** Null: the connector-manager is not served here (404). */
  token: string | null;
  policy: RetryPolicy;
}

/** Equal tokens, in time that depends on neither's content nor length. */
function sameToken(offered: string, expected: string): boolean {
  const digest = (value: string): Buffer => createHash('sha256').update(value).digest();
  return timingSafeEqual(digest(offered), digest(expected));
}

function tenancyHeader(value: string, name: string): string {
  const trimmed = value.trim();
  if (!TENANCY_VALUE.test(trimmed)) throw invalid('invalid_request', `${name}: expected 1 to 200 printable characters`, name);
  return trimmed;
}

/** The connector-manager's router, its route at `{prefix}/v1/invoke`. */
export function connectorManagerRouter(deps: ConnectorManagerDependencies, prefix = ''): Router<RequestState> {
  const router = new Router<RequestState>(prefix ? { prefix } : undefined);

  router.post(INVOKE_PATH, async (ctx) => {
    if (deps.token === null) throw new HttpError(404, 'not_found', 'the connector-manager is not served here: set CONNECTOR_MANAGER_TOKEN to enable it');
    const offered = bearerToken(ctx);
    if (offered === null || !sameToken(offered, deps.token)) {
      throw new HttpError(401, 'unauthorized', 'the connector-manager needs Authorization: Bearer <CONNECTOR_MANAGER_TOKEN>', { 'www-authenticate': 'Bearer' });
    }
    const tenantId = tenancyHeader(ctx.get('x-svc-tenant-id'), 'x-svc-tenant-id');
    const workspaceId = tenancyHeader(ctx.get('x-svc-workspace-id'), 'x-svc-workspace-id');
    const body = decodeBody(InvokeBody, ctx.request.body);
    const { protocol_version: _version, request_id: givenRequestId, ...fields } = body.request;
    const isToolCall = fields.type === 'tool.invoke' || fields.type === 'tool.resume';
    if (isToolCall && (typeof fields.tool !== 'string' || fields.tool === '')) {
      throw invalid('invalid_request', `request.tool: required for ${fields.type}`, 'request.tool');
    }
    const request: ConnectorRequest = { ...fields, request_id: givenRequestId ?? randomUUID() };
    const traceId = ctx.get('x-svc-trace-id');
    const endUserToken = ctx.get(END_USER_TOKEN_HEADER);
    const endUserSession = ctx.get(END_USER_SESSION_HEADER);
    const target: ConnectorTarget = {
      endpoint: body.endpoint,
      signingSecret: body.signing_secret,
      timeoutMs: body.timeout_ms,
      traceId: traceId || undefined,
      endUser: endUserToken || endUserSession ? { token: endUserToken || null, session: endUserSession || null } : undefined,
      connectionId: body.target_id.slice('sdk:'.length),
      tenantId,
      workspaceId: workspaceId === ORGANIZATION_WIDE ? null : workspaceId,
    };
    const outcome = await invokeWithRetries(deps.client, target, request, { callerGaveRequestId: givenRequestId !== undefined, policy: deps.policy });
    const logged = { target_id: body.target_id, tenant_id: tenantId, workspace_id: workspaceId, type: request.type, tool: request.tool ?? undefined, request_id: request.request_id, attempts: outcome.attempts, latency_ms: outcome.latency_ms };
    if (outcome.ok) {
      ctx.state.logger.info({ ...logged, status: outcome.exchange.status, answer: outcome.exchange.answer.type }, 'connector invoked');
      ctx.body = { answer: outcome.exchange.answer, status: outcome.exchange.status, latency_ms: outcome.latency_ms, attempts: outcome.attempts };
      return;
    }
    ctx.state.logger.warn({ ...logged, reason: outcome.error.reason, detail: outcome.error.detail }, 'connector call failed');
    ctx.status = 502;
    ctx.body = { code: outcome.error.reason, message: outcome.error.detail, latency_ms: outcome.latency_ms, attempts: outcome.attempts };
  });

  return router;
}

/** `GET /health` of the connector-manager's own process (the main server has its own). */
export function connectorManagerHealthRouter(startedAt: Date): Router<RequestState> {
  const router = new Router<RequestState>();
  router.get('/health', (ctx) => {
    ctx.body = { status: 'ok', uptime_seconds: Math.round((Date.now() - startedAt.getTime()) / 1000) };
  });
  return router;
}
