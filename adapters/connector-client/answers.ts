// What a connector's answer must be for the request it answers, checked with the SDK's io-ts
// codecs (adapters/connector-sdk/protocol.ts): `ping` -> `pong`, `tools.list` -> `tools.list`,
// `capabilities.list` -> `capabilities.list`, `tool.invoke` / `tool.resume` -> `result`,
// `challenge` or `error`. Shared by the connector client and the connector-manager's remote
// client, so both paths accept exactly the same answers.
//
// An `error` answer is the connector's word on a tool call (`denied`, `customer_not_found`, ...
// of spec 7.2, whatever the HTTP status: the SDK answers 500 `internal_error` for a handler
// that threw), so it is an answer there. For a health check or a listing there is no such
// thing as a useful error answer: it is `bad_response` naming the code, except the two codes
// that say why no request can work, `invalid_signature` and `protocol_mismatch`.
import * as t from 'io-ts';
import {
  CapabilitiesListResponse,
  ChallengeResponse,
  ErrorResponse,
  PongResponse,
  ResultResponse,
  ToolsListResponse,
  firstErrorPath,
} from '../connector-sdk/protocol';
import { PROTOCOL_VERSION } from '../connector-sdk/version';
import type { ConnectorAnswer, ConnectorFailureReason, ConnectorRequestType } from '../../application/ports/connector-client';

export type AnswerCheck = { answer: ConnectorAnswer } | { reason: ConnectorFailureReason; detail: string };

/** The answer types each request may get besides `error`. */
const EXPECTED: Record<ConnectorRequestType, Record<string, t.Mixed>> = {
  ping: { pong: PongResponse },
  'tools.list': { 'tools.list': ToolsListResponse },
  'capabilities.list': { 'capabilities.list': CapabilitiesListResponse },
  'tool.invoke': { result: ResultResponse, challenge: ChallengeResponse },
  'tool.resume': { result: ResultResponse, challenge: ChallengeResponse },
};

const TOOL_CALLS: ReadonlySet<ConnectorRequestType> = new Set(['tool.invoke', 'tool.resume']);

/** At most this much of a foreign value goes into a detail: enough to recognise it, not a dump. */
const SHOWN_CHARACTERS = 60;

/** A short, printable rendering of a value found where another was expected. */
export function shown(value: unknown): string {
  if (value === undefined) return 'nothing';
  let text: string;
  try {
    text = typeof value === 'string' ? JSON.stringify(value) : (JSON.stringify(value) ?? String(value));
  } catch {
    text = String(value);
  }
  // eslint-disable-next-line no-control-regex
  text = text.replace(/[\x00-\x1f\x7f]+/g, ' ');
  return text.length > SHOWN_CHARACTERS ? `${text.slice(0, SHOWN_CHARACTERS)}...` : text;
}

/** `tools[0].name: expected string, got 42`, from the first error of an io-ts decode. */
export function decodeFailure(errors: t.Errors): string {
  const first = errors[0];
  if (first === undefined) return 'the answer does not decode';
  const path = firstErrorPath(errors) || '(body)';
  const expected = first.context[first.context.length - 1]?.type.name ?? 'another value';
  return `${path}: expected ${expected}, got ${shown(first.value)}`;
}

/** What `codec` finds wrong with a value it does not accept. */
function whatIsWrong(codec: t.Mixed, value: unknown): string {
  const decoded = codec.decode(value);
  return decoded._tag === 'Left' ? decodeFailure(decoded.left) : 'the answer does not decode';
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function expectedTypes(requestType: ConnectorRequestType): string {
  const types = Object.keys(EXPECTED[requestType]);
  if (TOOL_CALLS.has(requestType)) types.push('error');
  return types.length === 1 ? types[0] : `${types.slice(0, -1).join(', ')} or ${types[types.length - 1]}`;
}

/**
 * Checks a connector's answer (its HTTP status and body parsed as JSON, undefined when it is
 * not JSON) against the request it answers.
 */
export function checkAnswer(requestType: ConnectorRequestType, status: number, json: unknown, rawText: string): AnswerCheck {
  const http = `HTTP ${status}`;
  // Whatever the body says, 401 is the connector refusing our signature (spec 7.2).
  if (status === 401) {
    const message = ErrorResponse.is(json) ? json.message : 'the connector refused the request';
    return { reason: 'invalid_signature', detail: `${http}: ${message}` };
  }
  if (json === undefined) return { reason: 'bad_response', detail: `${http}: the answer is not JSON${rawText === '' ? ' (empty body)' : ` (${shown(rawText)})`}` };
  if (!isObject(json)) return { reason: 'bad_response', detail: `${http}: the answer is not a JSON object (${shown(json)})` };
  if (json.type === 'error') {
    const decoded = ErrorResponse.decode(json);
    if (decoded._tag === 'Left') return { reason: 'bad_response', detail: `${http}: an error answer with ${decodeFailure(decoded.left)}` };
    const { code, message } = decoded.right;
    if (code === 'invalid_signature') return { reason: 'invalid_signature', detail: `${http}: ${message}` };
    if (code === 'protocol_mismatch') return { reason: 'protocol_mismatch', detail: `${http}: ${message}` };
    if (TOOL_CALLS.has(requestType)) return { answer: decoded.right };
    return { reason: 'bad_response', detail: `${http}: expected a ${expectedTypes(requestType)} answer, got error ${code}: ${shown(message)}` };
  }
  if (!('type' in json)) {
    // The SDK's 404 for a wrong method or path (spec 4.1 rule 1) has `error`, not `type`.
    const hint = status === 404 ? ' (nothing answers the connector protocol at this URL: check the endpoint path)' : '';
    return { reason: 'bad_response', detail: `${http}: type: expected ${expectedTypes(requestType)}, got nothing${hint}` };
  }
  // Own keys only: a `type` of "constructor" must not find Object's.
  const expected = EXPECTED[requestType];
  const codec = typeof json.type === 'string' && Object.hasOwn(expected, json.type) ? expected[json.type] : undefined;
  if (codec === undefined) return { reason: 'bad_response', detail: `${http}: type: expected ${expectedTypes(requestType)}, got ${shown(json.type)}` };
  if (status < 200 || status > 299) return { reason: 'bad_response', detail: `${http}: a ${String(json.type)} answer with a failure status` };
  // The codecs transform nothing, so an answer that `is` one is its own decoding: `is` spares
  // the copies `decode` makes of intersections; `decode` runs only to say what is wrong.
  if (!codec.is(json)) return { reason: 'bad_response', detail: `${http}: ${whatIsWrong(codec, json)}` };
  const answer = json as ConnectorAnswer;
  // Only the listings and pong carry a version; any other than ours means the rest cannot be trusted.
  const version = (answer as { protocol_version?: string }).protocol_version;
  if (version !== undefined && version !== PROTOCOL_VERSION) {
    return { reason: 'protocol_mismatch', detail: `${http}: the connector speaks protocol ${shown(version)}, the platform ${PROTOCOL_VERSION}` };
  }
  return { answer };
}
