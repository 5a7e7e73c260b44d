// Request signing of spec 5.2, shared by the connector (verifies) and every caller
// (signs): the SDK's own client, the connector doctor and the platform's connector client.
import { hash, timingSafeEqual } from 'node:crypto';
import { PROTOCOL_HEADER, SIGNATURE_HEADER, TIMESTAMP_HEADER, TRACE_ID_HEADER } from './headers';
import { PROTOCOL_VERSION } from './version';

const SIGNATURE_PREFIX = 'v1=';
const DIGEST_BYTES = 32;
// `v1=` and exactly 64 lowercase hex digits: anything else cannot be our HMAC, and a fixed
// length keeps the constant-time comparison length-safe.
const SIGNATURE_LENGTH = SIGNATURE_PREFIX.length + 2 * DIGEST_BYTES;
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
  /**
   * Every secret currently accepted (the new one and, during rotation, the old ones); a
   * long-lived verifier passes prepared `HmacSha256` keys to skip the key schedule.
   */
  secrets: readonly (string | HmacSha256)[];
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

const SHA256_BLOCK_BYTES = 64;

// Fixed-size scratch buffers for the signing hot path. Safe to share: verification is
// synchronous and `crypto.hash` reads its input before returning, so no two uses overlap.
const OUTER_SCRATCH = Buffer.alloc(SHA256_BLOCK_BYTES + DIGEST_BYTES);
const PRESENTED_SCRATCH = Buffer.alloc(DIGEST_BYTES);

/**
 * HMAC-SHA256 (RFC 2104) under one secret, with the key schedule done once. Same output as
 * `createHmac('sha256', secret)`, but computed with two one-shot `crypto.hash` calls over
 * `(key XOR ipad) || message` and `(key XOR opad) || inner`. On a signed ping, calls into
 * native code dominate the SDK's cost; `createHmac` makes six of them (key preparation,
 * algorithm lookup, a native object, updates, digest), this makes two.
 */
export class HmacSha256 {
  private readonly innerPad: Buffer;
  private readonly outerPad: Buffer;

  constructor(secret: string | Buffer) {
    let key = typeof secret === 'string' ? Buffer.from(secret, 'utf8') : secret;
    if (key.length > SHA256_BLOCK_BYTES) key = hash('sha256', key, 'buffer');
    this.innerPad = Buffer.alloc(SHA256_BLOCK_BYTES, 0x36);
    this.outerPad = Buffer.alloc(SHA256_BLOCK_BYTES, 0x5c);
    for (let index = 0; index < key.length; index++) {
      this.innerPad[index] ^= key[index];
      this.outerPad[index] ^= key[index];
    }
  }

  /** HMAC of `message`, as raw bytes. */
  digest(message: Buffer | string): Buffer {
    const bytes = typeof message === 'string' ? Buffer.from(message, 'utf8') : message;
    const inner = Buffer.allocUnsafe(SHA256_BLOCK_BYTES + bytes.length);
    inner.set(this.innerPad, 0);
    inner.set(bytes, SHA256_BLOCK_BYTES);
    return this.finish(inner);
  }

  /**
   * HMAC of the signed string `v1:<timestamp>:<raw body>` (spec 5.2), assembled without
   * encoding calls. `timestamp` must be ASCII digits, as `verifySignature` checks first.
   */
  signedStringDigest(timestamp: string, rawBody: Buffer): Buffer {
    const inner = Buffer.allocUnsafe(SHA256_BLOCK_BYTES + timestamp.length + 4 + rawBody.length);
    inner.set(this.innerPad, 0);
    let offset = SHA256_BLOCK_BYTES;
    inner[offset++] = 0x76; // v
    inner[offset++] = 0x31; // 1
    inner[offset++] = 0x3a; // :
    for (let index = 0; index < timestamp.length; index++) inner[offset++] = timestamp.charCodeAt(index);
    inner[offset++] = 0x3a; // :
    inner.set(rawBody, offset);
    return this.finish(inner);
  }

  /** Hashes the filled inner block, then the outer one. */
  private finish(inner: Buffer): Buffer {
    const outer = OUTER_SCRATCH;
    outer.set(this.outerPad, 0);
    outer.set(hash('sha256', inner, 'buffer'), SHA256_BLOCK_BYTES);
    return hash('sha256', outer, 'buffer');
  }
}

// Hex digit values by character code; -1 for anything that is not a lowercase hex digit.
const HEX_VALUES = new Int8Array(128).fill(-1);
for (let digit = 0; digit < 16; digit++) HEX_VALUES['0123456789abcdef'.charCodeAt(digit)] = digit;

/** Decodes `v1=<64 lowercase hex>` into `into`; false when the header has any other form. */
function decodeSignature(signature: string, into: Buffer): boolean {
  if (signature.length !== SIGNATURE_LENGTH || !signature.startsWith(SIGNATURE_PREFIX)) return false;
  for (let index = 0; index < DIGEST_BYTES; index++) {
    const high = signature.charCodeAt(SIGNATURE_PREFIX.length + 2 * index);
    const low = signature.charCodeAt(SIGNATURE_PREFIX.length + 2 * index + 1);
    const highValue = high < 128 ? HEX_VALUES[high] : -1;
    const lowValue = low < 128 ? HEX_VALUES[low] : -1;
    if (highValue < 0 || lowValue < 0) return false;
    into[index] = (highValue << 4) | lowValue;
  }
  return true;
}

/** The `x-svc-signature` value for a body: `v1=` + lowercase hex HMAC-SHA256 (spec 5.2). */
export function signRequest(secret: string | HmacSha256, timestamp: number | string, rawBody: Buffer | string): string {
  const key = typeof secret === 'string' ? new HmacSha256(secret) : secret;
  const body = typeof rawBody === 'string' ? Buffer.from(rawBody, 'utf8') : rawBody;
  return SIGNATURE_PREFIX + key.digest(Buffer.concat([Buffer.from(`v1:${timestamp}:`, 'utf8'), body])).toString('hex');
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
  const presented = PRESENTED_SCRATCH;
  if (!decodeSignature(signature, presented)) return { valid: false, refusal: 'malformed_signature' };
  const rawBody = typeof input.rawBody === 'string' ? Buffer.from(input.rawBody, 'utf8') : input.rawBody;
  for (let index = 0; index < input.secrets.length; index++) {
    const secret = input.secrets[index];
    const key = typeof secret === 'string' ? new HmacSha256(secret) : secret;
    if (timingSafeEqual(presented, key.signedStringDigest(timestamp, rawBody))) {
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
