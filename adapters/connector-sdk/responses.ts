// The HTTP answers of the connector's listening path (spec 4.1, 7.2). Answers that never
// change are built once; every answer shares one frozen header object.
import {
  RESPONSE_PROTOCOL_HEADER,
  RESPONSE_PROTOCOL_VERSION_HEADER,
  RESPONSE_SDK_HEADER,
  RESPONSE_SDK_VERSION_HEADER,
} from './headers';
import type { ConnectorErrorCode } from './errors';
import type { SignatureRefusal } from './signing';
import { PROTOCOL_VERSION, SDK_NAME, SDK_VERSION } from './version';

/** What the connector answers: status, headers and a JSON body, ready for any HTTP framework. */
export interface ConnectorHttpResponse {
  readonly status: number;
  readonly headers: Readonly<Record<string, string>>;
  /** Serialized JSON. */
  readonly body: string;
}

/** Headers on every answer, including 404 and 413 (spec 4.1 rule 8). */
export const RESPONSE_HEADERS: Readonly<Record<string, string>> = Object.freeze({
  'content-type': 'application/json; charset=utf-8',
  [RESPONSE_PROTOCOL_HEADER]: PROTOCOL_VERSION,
  [RESPONSE_PROTOCOL_VERSION_HEADER]: PROTOCOL_VERSION,
  [RESPONSE_SDK_HEADER]: SDK_NAME,
  [RESPONSE_SDK_VERSION_HEADER]: SDK_VERSION,
});

/** An answer with the standard headers. */
export function jsonResponse(status: number, body: unknown): ConnectorHttpResponse {
  return { status, headers: RESPONSE_HEADERS, body: JSON.stringify(body) };
}

/** A 200 `{type:'error', code, message}` (handler-level and protocol-level failures). */
export function errorResponse(code: ConnectorErrorCode, message: string, status = 200): ConnectorHttpResponse {
  return jsonResponse(status, { type: 'error', code, message });
}

function frozen(response: ConnectorHttpResponse): ConnectorHttpResponse {
  return Object.freeze(response);
}

/** 404 for any method other than POST or any path other than the endpoint path; key `error`, not `type`. */
export const NOT_FOUND = frozen(jsonResponse(404, { error: 'not_found' }));

/** 413 for a body above `maxBodyBytes`. */
export function payloadTooLarge(maxBodyBytes: number): ConnectorHttpResponse {
  return frozen(errorResponse('invalid_request', `Request body exceeds ${maxBodyBytes} bytes`, 413));
}

/** 400 for an `x-svc-protocol` header that is present but not ours. */
export const PROTOCOL_HEADER_MISMATCH = frozen(
  errorResponse('protocol_mismatch', `Unsupported x-svc-protocol header; this connector speaks protocol ${PROTOCOL_VERSION}`, 400),
);

/** 400 for a signed body that is not JSON. */
export const BROKEN_JSON = frozen(errorResponse('invalid_request', 'Request body is not valid JSON', 400));

/** 500 for an uncaught failure: a fixed message, so nothing of the error leaks. */
export const INTERNAL_ERROR = frozen(errorResponse('internal_error', 'Internal error', 500));

const REFUSAL_MESSAGES: Record<SignatureRefusal, string> = {
  missing_signature: 'Missing x-svc-signature header',
  missing_timestamp: 'Missing x-svc-timestamp header',
  malformed_signature: 'Malformed x-svc-signature header (expected v1= followed by 64 lowercase hex digits)',
  malformed_timestamp: 'Malformed x-svc-timestamp header (expected Unix seconds)',
  timestamp_outside_window: 'Timestamp outside the allowed window (check the clocks of both sides)',
  signature_mismatch: 'Signature does not match (check the signing secret and that the raw body is unmodified)',
};

/** 401 `invalid_signature`, one prebuilt answer per reason. */
export const SIGNATURE_REFUSED: Readonly<Record<SignatureRefusal, ConnectorHttpResponse>> = Object.freeze(
  Object.fromEntries(
    Object.entries(REFUSAL_MESSAGES).map(([refusal, message]) => [refusal, frozen(errorResponse('invalid_signature', message, 401))]),
  ) as Record<SignatureRefusal, ConnectorHttpResponse>,
);
