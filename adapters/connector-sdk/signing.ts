// Request signing of spec 5.2, shared by the connector (verifies) and every caller
// (signs): the SDK's own client, the connector doctor and the platform's connector client.
import { createHmac, timingSafeEqual } from 'node:crypto';
import { PROTOCOL_HEADER, SIGNATURE_HEADER, TIMESTAMP_HEADER, TRACE_ID_HEADER } from './headers';
import { PROTOCOL_VERSION } from './version';

// `v1=` and exactly 64 lowercase hex digits: anything else cannot be our HMAC, and a fixed
// length keeps the constant-time comparison length-safe.
const SIGNATURE_PATTERN = /^v1=[0-9a-f]{64}$/;
const SIGNATURE_PREFIX_LENGTH = 'v1='.length;
// Unix seconds, digits only: a sign, a fraction or an exponent would let two spellings of
// one instant carry different signatures.
const TIMESTAMP_PATTERN = /^[0-9]{1,15}$/;

/** Why a signature was refused; each maps to a 401 `invalid_signature` with its own message. */
export type SignatureRefusal =
  | 'missing_signature'
  | 'missing_timestamp'
  | 'malformed_signature'
  | 'malformed_timestamp'
  | 'timestamp_outside_window'
  | 'signature_mismatch';

/** Outcome of a signature check; `secretIndex` says which of the rotation secrets matched. */
export type SignatureCheck = { valid: true; secretIndex: number } | { valid: false; refusal: SignatureRefusal };

/** What `verifySignature` needs: the headers as received, the raw body and the clock. */
export interface SignatureCheckInput {
  /** Every secret currently accepted (the new one and, during rotation, the old ones). */
  secrets: readonly string[];
  /** Value of `x-svc-signature`, undefined when absent. */
  signature: string | undefined;
  /** Value of `x-svc-timestamp`, undefined when absent. */
  timestamp: string | undefined;
  /** The unmodified request body. */
  rawBody: Buffer | string;
  /** Current time in Unix seconds. */
  nowSeconds: number;
  /** Largest accepted difference between `timestamp` and `nowSeconds`, either direction. */
  maxSkewSeconds: number;
}

/** HMAC-SHA256 of the signed string `v1:<timestamp>:<raw body>` (spec 5.2). */
function signedStringDigest(secret: string, timestamp: number | string, rawBody: Buffer | string): Buffer {
  return createHmac('sha256', secret).update(`v1:${timestamp}:`).update(rawBody).digest();
}

/** The `x-svc-signature` value for a body: `v1=` + lowercase hex HMAC-SHA256 (spec 5.2). */
export function signRequest(secret: string, timestamp: number | string, rawBody: Buffer | string): string {
  return `v1=${signedStringDigest(secret, timestamp, rawBody).toString('hex')}`;
}

/** Checks a request's signature and timestamp against every accepted secret, in constant time per secret. */
export function verifySignature(input: SignatureCheckInput): SignatureCheck {
  const { signature, timestamp } = input;
  if (signature === undefined || signature === '') return { valid: false, refusal: 'missing_signature' };
  if (timestamp === undefined || timestamp === '') return { valid: false, refusal: 'missing_timestamp' };
  if (!TIMESTAMP_PATTERN.test(timestamp)) return { valid: false, refusal: 'malformed_timestamp' };
  if (Math.abs(input.nowSeconds - Number(timestamp)) > input.maxSkewSeconds) {
    return { valid: false, refusal: 'timestamp_outside_window' };
  }
  if (!SIGNATURE_PATTERN.test(signature)) return { valid: false, refusal: 'malformed_signature' };
  const presented = Buffer.from(signature.slice(SIGNATURE_PREFIX_LENGTH), 'hex');
  for (let index = 0; index < input.secrets.length; index++) {
    if (timingSafeEqual(presented, signedStringDigest(input.secrets[index], timestamp, input.rawBody))) {
      return { valid: true, secretIndex: index };
    }
  }
  return { valid: false, refusal: 'signature_mismatch' };
}

/** Options of `signedHeaders`. */
export interface SignedHeadersOptions {
  /** Unix seconds to sign at; defaults to now. */
  timestamp?: number;
  /** Forwarded as `x-svc-trace-id`. */
  traceId?: string;
}

/** The request headers a caller sends with a signed body (spec 4.1): signature, timestamp, protocol, content type. */
export function signedHeaders(secret: string, rawBody: Buffer | string, options: SignedHeadersOptions = {}): Record<string, string> {
  const timestamp = String(options.timestamp ?? Math.floor(Date.now() / 1000));
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    [SIGNATURE_HEADER]: signRequest(secret, timestamp, rawBody),
    [TIMESTAMP_HEADER]: timestamp,
    [PROTOCOL_HEADER]: PROTOCOL_VERSION,
  };
  if (options.traceId !== undefined) headers[TRACE_ID_HEADER] = options.traceId;
  return headers;
}
