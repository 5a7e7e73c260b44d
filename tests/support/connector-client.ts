// A ConnectorClient for the suites while the platform's own (adapters/connector-client, branch
// connector-client) is not in main: the same protocol as the port describes it, built on the
// connector SDK's signing and wire codecs. A request signed at the platform's clock is posted
// to `{endpoint}/svc` through the platform's outbound guard (so the guard's refusals and the
// time limit are the deployment's), and the answer is checked against the request type; every
// other outcome rejects with a ConnectorCallError and its reason, never anything else.

import { performance } from 'node:perf_hooks';
import * as t from 'io-ts';
import { CapabilitiesListResponse, ChallengeResponse, ErrorResponse, PongResponse, ResultResponse, ToolsListResponse, firstErrorPath } from '../../adapters/connector-sdk/protocol';
import { signedHeaders } from '../../adapters/connector-sdk/signing';
import type { Clock } from '../../application/ports/clock';
import {
  type ConnectorAnswer,
  ConnectorCallError,
  type ConnectorClient,
  type ConnectorExchange,
  type ConnectorFailureReason,
  type ConnectorRequest,
  type ConnectorRequestType,
  type ConnectorTarget,
  connectorEndpointUrl,
} from '../../application/ports/connector-client';
import { OutboundCallError, type OutboundHttp } from '../../application/ports/outbound-http';

const EXPECTED: Record<ConnectorRequestType, Record<string, t.Mixed>> = {
  ping: { pong: PongResponse },
  'tools.list': { 'tools.list': ToolsListResponse },
  'capabilities.list': { 'capabilities.list': CapabilitiesListResponse },
  'tool.invoke': { result: ResultResponse, challenge: ChallengeResponse },
  'tool.resume': { result: ResultResponse, challenge: ChallengeResponse },
};

const TOOL_CALLS = new Set<ConnectorRequestType>(['tool.invoke', 'tool.resume']);

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
    default:
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

/** The answer, or why it is none, for a request of this type. */
function checkAnswer(type: ConnectorRequestType, status: number, json: unknown): { answer: ConnectorAnswer } | { reason: ConnectorFailureReason; detail: string } {
  const http = `HTTP ${status}`;
  if (status === 401) return { reason: 'invalid_signature', detail: `${http}: ${ErrorResponse.is(json) ? json.message : 'refused'}` };
  if (typeof json !== 'object' || json === null || Array.isArray(json)) return { reason: 'bad_response', detail: `${http}: the answer is not a JSON object` };
  const body = json as Record<string, unknown>;
  if (body.type === 'error' && ErrorResponse.is(body)) {
    if (body.code === 'invalid_signature') return { reason: 'invalid_signature', detail: `${http}: ${body.message}` };
    if (body.code === 'protocol_mismatch') return { reason: 'protocol_mismatch', detail: `${http}: ${body.message}` };
    if (TOOL_CALLS.has(type)) return { answer: body };
    return { reason: 'bad_response', detail: `${http}: expected ${Object.keys(EXPECTED[type]).join(' or ')}, got error ${body.code}` };
  }
  const codec = typeof body.type === 'string' ? EXPECTED[type][body.type] : undefined;
  if (codec === undefined) return { reason: 'bad_response', detail: `${http}: type: expected ${Object.keys(EXPECTED[type]).join(' or ')}, got ${String(body.type ?? 'nothing')}` };
  if (status < 200 || status > 299) return { reason: 'bad_response', detail: `${http}: a ${String(body.type)} answer with a failure status` };
  const decoded = codec.decode(body);
  if (decoded._tag === 'Left') return { reason: 'bad_response', detail: `${http}: ${firstErrorPath(decoded.left) || '(body)'} is not as the protocol says` };
  const answer = decoded.right as ConnectorAnswer;
  const version = (answer as { protocol_version?: string }).protocol_version;
  if (version !== undefined && version !== '1') return { reason: 'protocol_mismatch', detail: `${http}: the connector speaks protocol ${version}` };
  return { answer };
}

export class SdkProtocolConnectorClient implements ConnectorClient {
  /** Every request sent, in order, as the connector received it (for tests that look at what was signed with which secret). */
  readonly sent: Array<{ url: string; secret: string; request: ConnectorRequest }> = [];

  constructor(private readonly options: { outbound: OutboundHttp; clock: Clock; timeoutMs: number }) {}

  async call(target: ConnectorTarget, request: ConnectorRequest): Promise<ConnectorExchange> {
    const started = performance.now();
    const elapsed = (): number => Math.round(performance.now() - started);
    const url = connectorEndpointUrl(target.endpoint);
    const body = JSON.stringify({ ...request, protocol_version: '1' });
    const timestamp = Math.floor(this.options.clock.now().getTime() / 1000);
    this.sent.push({ url, secret: target.signingSecret, request });
    let response;
    try {
      response = await this.options.outbound.request({
        method: 'POST',
        url,
        headers: { accept: 'application/json', ...signedHeaders(target.signingSecret, body, { timestamp, traceId: target.traceId ?? request.request_id }) },
        body,
        timeoutMs: target.timeoutMs ?? this.options.timeoutMs,
        maxResponseBytes: 1024 * 1024,
      });
    } catch (error) {
      if (error instanceof OutboundCallError) throw new ConnectorCallError(reasonOf(error), error.message, elapsed());
      throw new ConnectorCallError('unreachable', String(error), elapsed());
    }
    const declared = response.headers['content-length'];
    if (declared !== undefined && response.body.length < Number(declared)) {
      throw new ConnectorCallError('unreachable', `the connection closed after ${response.body.length} of ${declared} bytes`, elapsed());
    }
    const checked = checkAnswer(request.type, response.status, parseJson(response.body.toString('utf8')));
    if ('reason' in checked) throw new ConnectorCallError(checked.reason, checked.detail, elapsed());
    return { answer: checked.answer, latency_ms: elapsed(), status: response.status };
  }
}
