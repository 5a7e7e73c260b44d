// The platform's connector client (spec 4.1, 5.2, 7.2, 8; issue #13): one signed protocol
// request to the connector server of an SDK connection, its answer decoded and checked.
//
// - The body is the protocol request with `protocol_version: '1'`, serialized once: those
//   exact bytes are signed (`v1:<timestamp>:<body>`, HMAC-SHA256, the SDK's `signedHeaders`)
//   and sent. Headers: `x-svc-protocol`, `x-svc-timestamp` (the platform's clock),
//   `x-svc-signature`, `x-svc-trace-id` (the target's trace id, else the request id), the
//   end user's `X-End-User-Token` / `X-End-User-Session` when the turn carried them, and the
//   tenancy `x-svc-tenant-id` / `x-svc-workspace-id` when the target names it.
// - Where: `{endpoint}/svc`, the endpoint being the connection's `webhook_url` (see
//   `connectorEndpointUrl` for trailing slashes and endpoints that already end in `/svc`).
// - How: through the platform's outbound guard (OutboundHttp.request): https only and no
//   private, loopback, link-local or metadata address unless the operator allows them
//   (OUTBOUND_ALLOW_INSECURE, OUTBOUND_ALLOW_PRIVATE_NETWORKS), redirects not followed, at
//   most the timeout (CONNECTOR_TIMEOUT_MS, 30 s) for the whole answer and at most
//   CONNECTOR_MAX_RESPONSE_BYTES of it.
// - What comes back is checked by answers.ts; anything that is not the expected answer
//   rejects with a ConnectorCallError and its reason. Nothing else ever escapes: an
//   unexpected failure of our own is reported as `unreachable` with what it was.
import { performance } from 'node:perf_hooks';
import { signedHeaders } from '../connector-sdk/signing';
import { PROTOCOL_VERSION } from '../connector-sdk/version';
import {
  ConnectorCallError,
  type ConnectorClient,
  type ConnectorExchange,
  type ConnectorFailureReason,
  type ConnectorRequest,
  type ConnectorTarget,
  connectorEndpointUrl,
} from '../../application/ports/connector-client';
import { OutboundCallError, type OutboundHttp, type OutboundResponse } from '../../application/ports/outbound-http';
import type { Clock } from '../../application/ports/clock';
import { type AnswerCheck, checkAnswer, shown } from './answers';

/** The path the platform posts to under a connection's endpoint (spec 4.1), and the URL it posts to: one definition, on the port. */
export { CONNECTOR_PATH as ENDPOINT_PATH, connectorEndpointUrl } from '../../application/ports/connector-client';

/** Sent as `x-svc-workspace-id` for a call made for the whole organization. */
export const ORGANIZATION_WIDE = '*';

export const END_USER_TOKEN_HEADER = 'x-end-user-token';
export const END_USER_SESSION_HEADER = 'x-end-user-session';

export interface ConnectorClientOptions {
  /** The wait for a whole answer when the target names none (CONNECTOR_TIMEOUT_MS). */
  timeoutMs: number;
  /** A larger answer is abandoned as `bad_response` (CONNECTOR_MAX_RESPONSE_BYTES). */
  maxResponseBytes: number;
  /** Makes `x-svc-timestamp`. */
  clock: Clock;
}

/** The headers of a call besides the signature's: trace id, end user, tenancy. */
export function forwardedHeaders(target: ConnectorTarget, requestId: string): Record<string, string> {
  const headers: Record<string, string> = {};
  if (target.endUser?.token) headers[END_USER_TOKEN_HEADER] = target.endUser.token;
  if (target.endUser?.session) headers[END_USER_SESSION_HEADER] = target.endUser.session;
  if (target.tenantId !== undefined) {
    headers['x-svc-tenant-id'] = target.tenantId;
    headers['x-svc-workspace-id'] = target.workspaceId ?? ORGANIZATION_WIDE;
  }
  headers['x-svc-trace-id'] = target.traceId ?? requestId;
  return headers;
}

/** Why the outbound port got no answer, as a reason of the connector port. */
function reasonOf(error: OutboundCallError): ConnectorFailureReason {
  switch (error.reason) {
    case 'invalid_url':
    case 'insecure_url':
    case 'private_address':
      return 'refused_address';
    case 'timeout':
      return 'timeout';
    case 'response_too_large':
      return 'bad_response';
    case 'unresolvable_host':
    case 'network':
      return 'unreachable';
  }
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

export class SignedConnectorClient implements ConnectorClient {
  constructor(
    private readonly outbound: OutboundHttp,
    private readonly options: ConnectorClientOptions,
  ) {}

  async call(target: ConnectorTarget, request: ConnectorRequest): Promise<ConnectorExchange> {
    const started = performance.now();
    const elapsed = (): number => Math.round(performance.now() - started);
    let response: OutboundResponse;
    try {
      const body = JSON.stringify({ ...request, protocol_version: PROTOCOL_VERSION });
      const timestamp = Math.floor(this.options.clock.now().getTime() / 1000);
      const headers = {
        accept: 'application/json',
        ...forwardedHeaders(target, request.request_id),
        ...signedHeaders(target.signingSecret, body, { timestamp }),
      };
      response = await this.outbound.request({
        method: 'POST',
        url: connectorEndpointUrl(target.endpoint),
        headers,
        body,
        timeoutMs: target.timeoutMs ?? this.options.timeoutMs,
        maxResponseBytes: this.options.maxResponseBytes,
      });
    } catch (error) {
      if (error instanceof OutboundCallError) throw new ConnectorCallError(reasonOf(error), error.message, elapsed());
      throw new ConnectorCallError('unreachable', `the call failed: ${error instanceof Error ? error.message : shown(error)}`, elapsed());
    }
    let checked: AnswerCheck;
    try {
      const text = response.body.toString('utf8');
      checked = checkAnswer(request.type, response.status, parseJson(text), text);
    } catch (error) {
      // A check that throws is a bug of ours; the caller still gets a reason, never a crash.
      checked = { reason: 'bad_response', detail: `the answer could not be checked: ${error instanceof Error ? error.message : shown(error)}` };
    }
    if ('reason' in checked) throw new ConnectorCallError(checked.reason, checked.detail, elapsed(), response.status);
    return { answer: checked.answer, latency_ms: elapsed(), status: response.status };
  }
}
