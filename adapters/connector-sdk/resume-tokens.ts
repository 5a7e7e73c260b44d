// Resume tokens carry a challenged tool call's state to its `tool.resume`, so any replica
// of a connector can continue the call without shared memory:
// - sealed: AES-256-GCM under a key derived (HKDF-SHA256) from the signing secret, so the
//   caller can neither read nor forge the state, and a token minted under one secret does
//   not open under another;
// - expiring: the expiry is inside the sealed payload;
// - single-use: each token has an id that is marked used before the resume handler runs.
//
// Single-use across replicas is the one property sealing cannot give without shared state.
// The SDK always keeps an in-process set of used ids (until their expiry), which stops reuse
// on the same replica; a replayed token sent to a different replica within its lifetime is
// accepted there unless a shared `ResumeTokenLedger` is configured (e.g. Redis `SET id 1 NX
// PXAT expiry`, or an insert into a table with a unique key). Without one, keep the TTL short
// or route a conversation to one replica.
import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto';
import * as t from 'io-ts';

/** Shared record of used resume token ids, for single-use enforcement across replicas. */
export interface ResumeTokenLedger {
  /** Records a token id as used; resolves true the first time, false when it was already used. */
  markUsed(tokenId: string, expiresAt: Date): Promise<boolean>;
}

/** In-process ledger: used ids are kept until their token expires, then swept. */
export class InProcessResumeTokenLedger implements ResumeTokenLedger {
  private readonly used = new Map<string, number>();
  private nextSweepAt = 0;

  constructor(
    private readonly now: () => number = Date.now,
    private readonly sweepIntervalMs = 60_000,
  ) {}

  /** Synchronous form of `markUsed`, so the connector needs no await on its own set. */
  markUsedNow(tokenId: string, expiresAtMs: number): boolean {
    const now = this.now();
    if (now >= this.nextSweepAt) this.sweep(now);
    if (this.used.has(tokenId)) return false;
    this.used.set(tokenId, expiresAtMs);
    return true;
  }

  /** Records a token id as used; true the first time. */
  markUsed(tokenId: string, expiresAt: Date): Promise<boolean> {
    return Promise.resolve(this.markUsedNow(tokenId, expiresAt.getTime()));
  }

  /** Number of ids currently remembered (for tests and metrics). */
  get size(): number {
    return this.used.size;
  }

  private sweep(now: number): void {
    this.nextSweepAt = now + this.sweepIntervalMs;
    // An expired token is refused by its expiry alone, so its id need not be remembered.
    for (const [tokenId, expiresAtMs] of this.used) {
      if (expiresAtMs < now) this.used.delete(tokenId);
    }
  }
}

const TOKEN_VERSION = 1;
const IV_BYTES = 12;
const TAG_BYTES = 16;
const KEY_SALT = Buffer.from('svc-connector-sdk/resume-token');
const KEY_INFO = Buffer.from('v1 aes-256-gcm');
// Binds the ciphertext to this token format, so a blob sealed for another purpose under
// the same key is not a valid token.
const ASSOCIATED_DATA = Buffer.from('svc-resume-token-v1');

/** What a resume token carries. */
export const ResumeTokenPayload = t.intersection([
  t.type({
    id: t.string,
    tool: t.string,
    /** Expiry, Unix milliseconds. */
    exp: t.number,
    state: t.unknown,
  }),
  t.partial({ org: t.string }),
]);
export type ResumeTokenPayload = t.TypeOf<typeof ResumeTokenPayload>;

/** Result of opening a token: its payload, or why it cannot be used. */
export type OpenedResumeToken =
  | { status: 'valid'; payload: ResumeTokenPayload }
  | { status: 'unknown' }
  | { status: 'expired'; payload: ResumeTokenPayload };

/** Derives the 256-bit token key from a signing secret (HKDF-SHA256). */
export function deriveResumeTokenKey(signingSecret: string): Buffer {
  return Buffer.from(hkdfSync('sha256', signingSecret, KEY_SALT, KEY_INFO, 32));
}

/** Seals and opens resume tokens under keys derived from the connector's signing secrets. */
export class ResumeTokenSealer {
  private readonly keys: Buffer[];

  /** `secrets[0]` seals; every secret opens, so tokens survive a rotation's grace period. */
  constructor(
    secrets: readonly string[],
    private readonly ttlMs: number,
    private readonly now: () => number,
  ) {
    this.keys = secrets.map(deriveResumeTokenKey);
  }

  /** Seals a new token for `tool` carrying `state`; returns the token and its payload. */
  seal(tool: string, state: unknown, organizationId: string | undefined): { token: string; payload: ResumeTokenPayload } {
    const payload: ResumeTokenPayload = {
      id: randomBytes(16).toString('base64url'),
      tool,
      exp: this.now() + this.ttlMs,
      state: state ?? null,
    };
    if (organizationId !== undefined) payload.org = organizationId;
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv('aes-256-gcm', this.keys[0], iv);
    cipher.setAAD(ASSOCIATED_DATA);
    const sealed = Buffer.concat([cipher.update(JSON.stringify(payload), 'utf8'), cipher.final()]);
    const token = Buffer.concat([Buffer.from([TOKEN_VERSION]), iv, sealed, cipher.getAuthTag()]);
    return { token: token.toString('base64url'), payload };
  }

  /** Opens a token: `unknown` when it was not sealed by any of our secrets or is malformed. */
  open(token: string): OpenedResumeToken {
    const bytes = Buffer.from(token, 'base64url');
    if (bytes.length < 1 + IV_BYTES + TAG_BYTES + 1 || bytes[0] !== TOKEN_VERSION) return { status: 'unknown' };
    const iv = bytes.subarray(1, 1 + IV_BYTES);
    const sealed = bytes.subarray(1 + IV_BYTES, bytes.length - TAG_BYTES);
    const tag = bytes.subarray(bytes.length - TAG_BYTES);
    for (const key of this.keys) {
      const plaintext = decrypt(key, iv, sealed, tag);
      if (plaintext === undefined) continue;
      const decoded = ResumeTokenPayload.decode(parseJson(plaintext));
      if (decoded._tag === 'Left') return { status: 'unknown' };
      const payload = decoded.right;
      return payload.exp < this.now() ? { status: 'expired', payload } : { status: 'valid', payload };
    }
    return { status: 'unknown' };
  }
}

function decrypt(key: Buffer, iv: Buffer, sealed: Buffer, tag: Buffer): string | undefined {
  try {
    const decipher = createDecipheriv('aes-256-gcm', key, iv, { authTagLength: TAG_BYTES });
    decipher.setAAD(ASSOCIATED_DATA);
    decipher.setAuthTag(tag);
    return Buffer.concat([decipher.update(sealed), decipher.final()]).toString('utf8');
  } catch {
    // Authentication failed: not sealed under this key (or tampered with).
    return undefined;
  }
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
