// Connector doctor: probes a running connector endpoint (any implementation, not only this
// SDK) against the rules of spec 4.1, 5.2, 7.2 and 9, and says how to fix what fails. The
// CLI prints these results; the platform can run the same checks for a connection test.
import { callConnector, newRequestId, type CallConnectorOptions, type ConnectorCallResult } from './client';
import { PROTOCOL_HEADER, REQUIRED_RESPONSE_HEADERS } from './headers';
import { CapabilitiesListResponse, ToolsListResponse, firstErrorPath, type ProtocolRequest } from './protocol';
import { PROTOCOL_VERSION } from './version';

/** One doctor check's outcome. */
export interface DoctorCheckResult {
  name: string;
  passed: boolean;
  /** What was observed. */
  detail: string;
  /** How to fix a failure (also present when passed, for reference). */
  hint: string;
}

/** Options of `runConnectorChecks`. */
export interface ConnectorDoctorOptions {
  /** Full endpoint URL, path included. */
  url: string;
  /** The SDK Connection's signing secret. */
  secret: string;
  /** Per-probe timeout; default 10 000 ms. */
  timeoutMs?: number;
  /** How far from now the stale-timestamp probes sign; default 3600 s, well beyond the 300 s default window. */
  staleTimestampSeconds?: number;
  /** Clock in Unix milliseconds. */
  now?: () => number;
  /**
   * How each probe is sent; default `callConnector`. A platform passes its own, so the probes
   * go through its guard against requests to internal addresses.
   */
  send?: (options: CallConnectorOptions) => Promise<ConnectorCallResult>;
}

interface Probe {
  url: string;
  secret: string;
  timeoutMs: number;
  nowSeconds: number;
  staleSeconds: number;
  send: (options: CallConnectorOptions) => Promise<ConnectorCallResult>;
}

type Observation = { passed: boolean; detail: string };

interface Check {
  name: string;
  hint: string;
  /** `ping` is the answer to the first signed ping, or why there was none. */
  run(probe: Probe, ping: ConnectorCallResult | string): Promise<Observation>;
}

function request(type: ProtocolRequest['type'], fields: Partial<ProtocolRequest> = {}): ProtocolRequest {
  return { protocol_version: PROTOCOL_VERSION, request_id: `doctor-${newRequestId()}`, type, ...fields };
}

function send(probe: Probe, body: ProtocolRequest, overrides: { url?: string; secret?: string; timestamp?: number; method?: string; headers?: Record<string, string> } = {}): Promise<ConnectorCallResult> {
  return probe.send({
    url: overrides.url ?? probe.url,
    secret: overrides.secret ?? probe.secret,
    body,
    timeoutMs: probe.timeoutMs,
    timestamp: overrides.timestamp ?? probe.nowSeconds,
    method: overrides.method,
    headers: overrides.headers,
  });
}

function field(json: unknown, name: string): unknown {
  return typeof json === 'object' && json !== null ? (json as Record<string, unknown>)[name] : undefined;
}

function observed(result: ConnectorCallResult): string {
  const body = result.text.length > 200 ? `${result.text.slice(0, 200)}...` : result.text;
  return `HTTP ${result.status} ${body}`.trim();
}

function expectProtocolError(result: ConnectorCallResult, code: string): Observation {
  const passed = result.status === 200 && field(result.json, 'type') === 'error' && field(result.json, 'code') === code;
  return { passed, detail: passed ? `HTTP 200 error ${code}` : `expected HTTP 200 {type:'error', code:'${code}'}, got ${observed(result)}` };
}

function expectSignatureRefused(result: ConnectorCallResult): Observation {
  const passed = result.status === 401 && field(result.json, 'code') === 'invalid_signature';
  return { passed, detail: passed ? 'HTTP 401 invalid_signature' : `expected HTTP 401 invalid_signature, got ${observed(result)}` };
}

function expectNotFound(result: ConnectorCallResult): Observation {
  const passed = result.status === 404 && field(result.json, 'error') === 'not_found';
  return { passed, detail: passed ? "HTTP 404 {error:'not_found'}" : `expected HTTP 404 {error:'not_found'}, got ${observed(result)}` };
}

/** The endpoint URL with a sibling path (`/svc` -> `/svc-doctor-probe`), to probe path matching. */
export function wrongPathUrl(endpointUrl: string): string {
  const url = new URL(endpointUrl);
  const path = url.pathname.replace(/\/+$/, '');
  url.pathname = path === '' ? '/doctor-probe' : `${path}-doctor-probe`;
  return url.toString();
}

const CHECKS: readonly Check[] = [
  {
    name: 'signed ping answered by pong',
    hint: "Check the URL (it must include the endpoint path, default /svc), that the server is reachable, and that the secret is the SDK Connection's signing secret.",
    run: async (_probe, ping) => {
      if (typeof ping === 'string') return { passed: false, detail: ping };
      const passed = ping.status === 200 && field(ping.json, 'type') === 'pong';
      return { passed, detail: passed ? 'HTTP 200 pong' : `expected HTTP 200 {type:'pong'}, got ${observed(ping)}` };
    },
  },
  {
    name: 'response headers',
    hint: 'Send X-Svc-Protocol: 1, X-Svc-Protocol-Version: 1, X-Svc-SDK and X-Svc-Version on every response (spec 4.1 rule 8).',
    run: async (_probe, ping) => {
      if (typeof ping === 'string') return { passed: false, detail: ping };
      const expected: Record<string, string | undefined> = {
        [REQUIRED_RESPONSE_HEADERS[0]]: PROTOCOL_VERSION,
        [REQUIRED_RESPONSE_HEADERS[1]]: PROTOCOL_VERSION,
        [REQUIRED_RESPONSE_HEADERS[2]]: undefined,
        [REQUIRED_RESPONSE_HEADERS[3]]: undefined,
      };
      const problems: string[] = [];
      for (const [name, value] of Object.entries(expected)) {
        const actual = ping.headers[name];
        if (actual === undefined || actual === '') problems.push(`${name} missing`);
        else if (value !== undefined && actual !== value) problems.push(`${name} is '${actual}', expected '${value}'`);
      }
      return problems.length === 0
        ? { passed: true, detail: REQUIRED_RESPONSE_HEADERS.map((name) => `${name}: ${ping.headers[name]}`).join(', ') }
        : { passed: false, detail: problems.join('; ') };
    },
  },
  {
    name: 'capabilities.list shape',
    hint: "Answer capabilities.list with {type:'capabilities.list', tools:[...], flows:[...]}; each tool has a name (and description, auth, chat, input_schema).",
    run: async (probe) => {
      const result = await send(probe, request('capabilities.list'));
      const decoded = CapabilitiesListResponse.decode(result.json);
      if (result.status === 200 && decoded._tag === 'Right') {
        return { passed: true, detail: `${decoded.right.tools.length} tools, ${decoded.right.flows.length} flows` };
      }
      const where = decoded._tag === 'Left' ? ` (field ${firstErrorPath(decoded.left) || 'body'})` : '';
      return { passed: false, detail: `unexpected answer${where}: ${observed(result)}` };
    },
  },
  {
    name: 'tools.list shape',
    hint: "Answer tools.list with {type:'tools.list', tools:[...]} (tools only).",
    run: async (probe) => {
      const result = await send(probe, request('tools.list'));
      const decoded = ToolsListResponse.decode(result.json);
      if (result.status === 200 && decoded._tag === 'Right') return { passed: true, detail: `${decoded.right.tools.length} tools` };
      const where = decoded._tag === 'Left' ? ` (field ${firstErrorPath(decoded.left) || 'body'})` : '';
      return { passed: false, detail: `unexpected answer${where}: ${observed(result)}` };
    },
  },
  {
    name: 'wrong secret refused with 401',
    hint: 'Verify x-svc-signature (v1= + hex HMAC-SHA256 of v1:<timestamp>:<raw body>) against the signing secret; answer a mismatch 401 invalid_signature.',
    run: async (probe) => expectSignatureRefused(await send(probe, request('ping'), { secret: `${probe.secret}-wrong` })),
  },
  {
    name: 'stale timestamp (past) refused with 401',
    hint: 'Refuse x-svc-timestamp values older than maxTimestampSkewSeconds (default 300) with 401 invalid_signature; this stops replays.',
    run: async (probe) => expectSignatureRefused(await send(probe, request('ping'), { timestamp: probe.nowSeconds - probe.staleSeconds })),
  },
  {
    name: 'stale timestamp (future) refused with 401',
    hint: 'The replay window applies in both directions: refuse timestamps ahead of now by more than maxTimestampSkewSeconds with 401 invalid_signature.',
    run: async (probe) => expectSignatureRefused(await send(probe, request('ping'), { timestamp: probe.nowSeconds + probe.staleSeconds })),
  },
  {
    name: 'wrong method answered 404',
    hint: "Bind only POST on the endpoint path; answer every other method 404 with body {error:'not_found'} (not 405).",
    run: async (probe) => expectNotFound(await send(probe, request('ping'), { method: 'GET' })),
  },
  {
    name: 'wrong path answered 404',
    hint: "Answer every other path 404 with body {error:'not_found'}; match the endpoint path exactly, not as a prefix.",
    run: async (probe) => expectNotFound(await send(probe, request('ping'), { url: wrongPathUrl(probe.url) })),
  },
  {
    name: 'protocol header mismatch answered 400',
    hint: "When x-svc-protocol is present and not '1', answer HTTP 400 (code protocol_mismatch).",
    run: async (probe) => {
      const result = await send(probe, request('ping'), { headers: { [PROTOCOL_HEADER]: '999' } });
      const passed = result.status === 400;
      return { passed, detail: passed ? `HTTP 400 ${String(field(result.json, 'code') ?? '')}`.trim() : `expected HTTP 400, got ${observed(result)}` };
    },
  },
  {
    name: 'body protocol_version mismatch answered protocol_mismatch',
    hint: "When the body's protocol_version is not '1', answer HTTP 200 {type:'error', code:'protocol_mismatch'}.",
    run: async (probe) => expectProtocolError(await send(probe, { ...request('ping'), protocol_version: '999' }), 'protocol_mismatch'),
  },
  {
    name: 'unknown tool answered not_found',
    hint: "Answer tool.invoke of an unregistered tool with HTTP 200 {type:'error', code:'not_found'}.",
    run: async (probe) => expectProtocolError(await send(probe, request('tool.invoke', { tool: 'svc_doctor_no_such_tool', parameters: {} })), 'not_found'),
  },
  {
    name: 'tool.invoke without tool answered invalid_request',
    hint: "Answer tool.invoke without a tool field with HTTP 200 {type:'error', code:'invalid_request'}.",
    run: async (probe) => expectProtocolError(await send(probe, request('tool.invoke', { parameters: {} })), 'invalid_request'),
  },
];

function describeFailure(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  const code = (error as { code?: unknown })?.code;
  return `request failed: ${typeof code === 'string' && !message.includes(code) ? `${code} ` : ''}${message}`;
}

/** Runs every doctor check against a connector endpoint, in order; never throws for connector failures. */
export async function runConnectorChecks(options: ConnectorDoctorOptions): Promise<DoctorCheckResult[]> {
  const probe: Probe = {
    url: new URL(options.url).toString(),
    secret: options.secret,
    timeoutMs: options.timeoutMs ?? 10_000,
    nowSeconds: Math.floor((options.now ?? Date.now)() / 1000),
    staleSeconds: options.staleTimestampSeconds ?? 3600,
    send: options.send ?? callConnector,
  };
  let ping: ConnectorCallResult | string;
  try {
    ping = await send(probe, request('ping'));
  } catch (error) {
    ping = describeFailure(error);
  }
  const results: DoctorCheckResult[] = [];
  for (const check of CHECKS) {
    let observation: Observation;
    try {
      observation = await check.run(probe, ping);
    } catch (error) {
      observation = { passed: false, detail: describeFailure(error) };
    }
    results.push({ name: check.name, passed: observation.passed, detail: observation.detail, hint: check.hint });
  }
  return results;
}
