// A ConnectorClient that sends each call through a connector-manager (CONNECTOR_MANAGER_URL)
// instead of calling the connector itself: `POST {url}/v1/invoke` with the bearer
// CONNECTOR_MANAGER_TOKEN, the tenancy headers and the end user's headers, the target and
// the protocol request in the body. The connector-manager signs, calls, retries (invoke.ts);
// this client checks its `answer` with the same rules as a direct call (answers.ts), so a
// caller cannot tell the two paths apart but by the latency.
//
// The connector-manager's address is the operator's, not a tenant's: the composition root
// hands this client an OutboundHttp that allows private networks (it usually runs beside the
// platform). Its 502 `{code: <reason>, message}` becomes the ConnectorCallError of that
// reason. When the connector-manager itself cannot be used (down, a refused token, an answer
// that is not its own), the call fails `unreachable` with what happened: the connector could
// not be reached by the path the operator chose.
import { performance } from 'node:perf_hooks';
import * as t from 'io-ts';
import {
  ConnectorCallError,
  type ConnectorClient,
  type ConnectorExchange,
  type ConnectorFailureReason,
  type ConnectorRequest,
  type ConnectorTarget,
} from '../../application/ports/connector-client';
import { OutboundCallError, type OutboundHttp, type OutboundResponse } from '../../application/ports/outbound-http';
import { PROTOCOL_VERSION } from '../connector-sdk/version';
import { type AnswerCheck, checkAnswer, decodeFailure, shown } from '../connector-client/answers';
import { ORGANIZATION_WIDE, forwardedHeaders } from '../connector-client/connector-client';
import { INVOKE_PATH } from './connector-manager';

export interface ConnectorManagerClientOptions {
  /** CONNECTOR_MANAGER_URL: the connector-manager's base (`/v1/invoke` is added). */
  url: string;
  /** CONNECTOR_MANAGER_TOKEN. */
  token: string;
  /** The budget of a call when the target names none (CONNECTOR_TIMEOUT_MS); sent as `timeout_ms`. */
  timeoutMs: number;
  /** The largest answer read from the connector-manager (CONNECTOR_MAX_RESPONSE_BYTES, plus its envelope). */
  maxResponseBytes: number;
}

/** Beyond the connector's budget: the connector-manager's own work and the way back. */
const MANAGER_MARGIN_MS = 5_000;
/** The envelope around the connector's answer. */
const ENVELOPE_BYTES = 64 * 1024;

const REASONS = t.keyof({ unreachable: null, timeout: null, refused_address: null, invalid_signature: null, protocol_mismatch: null, bad_response: null });
const Success = t.type({ answer: t.unknown, status: t.number, latency_ms: t.number, attempts: t.number });
const Failure = t.type({ code: REASONS, message: t.string });

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

export class ConnectorManagerClient implements ConnectorClient {
  private readonly invokeUrl: string;

  constructor(
    private readonly outbound: OutboundHttp,
    private readonly options: ConnectorManagerClientOptions,
  ) {
    this.invokeUrl = `${options.url.replace(/\/+$/, '')}${INVOKE_PATH}`;
  }

  async call(target: ConnectorTarget, request: ConnectorRequest): Promise<ConnectorExchange> {
    const started = performance.now();
    const elapsed = (): number => Math.round(performance.now() - started);
    const fail = (reason: ConnectorFailureReason, detail: string, status?: number): never => {
      throw new ConnectorCallError(reason, detail, elapsed(), status);
    };
    const timeoutMs = target.timeoutMs ?? this.options.timeoutMs;
    let response: OutboundResponse;
    try {
      const headers = {
        'content-type': 'application/json',
        accept: 'application/json',
        authorization: `Bearer ${this.options.token}`,
        ...forwardedHeaders({ ...target, tenantId: target.tenantId ?? request.organization_id ?? ORGANIZATION_WIDE }, request.request_id),
      };
      const body = JSON.stringify({
        target_id: `sdk:${target.connectionId ?? 'unnamed'}`,
        endpoint: target.endpoint,
        signing_secret: target.signingSecret,
        request: { ...request, protocol_version: PROTOCOL_VERSION },
        timeout_ms: timeoutMs,
      });
      response = await this.outbound.request({
        method: 'POST',
        url: this.invokeUrl,
        headers,
        body,
        timeoutMs: timeoutMs + MANAGER_MARGIN_MS,
        maxResponseBytes: this.options.maxResponseBytes + ENVELOPE_BYTES,
      });
    } catch (error) {
      const what = error instanceof OutboundCallError ? error.message : error instanceof Error ? error.message : shown(error);
      return fail(error instanceof OutboundCallError && error.reason === 'timeout' ? 'timeout' : 'unreachable', `the connector-manager did not answer: ${what}`);
    }
    const text = response.body.toString('utf8');
    const json = parseJson(text);
    if (response.status === 502) {
      const failure = Failure.decode(json);
      if (failure._tag === 'Right') return fail(failure.right.code, failure.right.message);
    }
    if (response.status !== 200) {
      const message = (json as { message?: unknown } | undefined)?.message;
      return fail('unreachable', `the connector-manager answered ${response.status}${typeof message === 'string' ? `: ${message}` : ''}`, response.status);
    }
    const success = Success.decode(json);
    if (success._tag === 'Left') return fail('unreachable', `the connector-manager's answer is not its own: ${decodeFailure(success.left)}`);
    let checked: AnswerCheck;
    try {
      checked = checkAnswer(request.type, success.right.status, success.right.answer, '');
    } catch (error) {
      checked = { reason: 'bad_response', detail: `the answer could not be checked: ${error instanceof Error ? error.message : shown(error)}` };
    }
    if ('reason' in checked) return fail(checked.reason, checked.detail, success.right.status);
    return { answer: checked.answer, latency_ms: elapsed(), status: success.right.status };
  }
}
