// Ports of the identity use cases: sealing and hashing secrets, passwords, signed tokens.

/** Sealed secrets (AES-256-GCM) and keyed digests (HMAC-SHA256) under the platform's keys. */
export interface Secrets {
  seal(plaintext: string): string;
  /** Throws when the sealed text was tampered with or sealed under another key. */
  open(sealed: string): string;
  /** A keyed hash for lookups and comparisons of codes and tokens; hex. */
  digest(value: string): string;
  /** `bytes` of randomness, base64url. */
  randomToken(bytes?: number): string;
  /** A numeric one-time code of `length` digits. */
  randomDigits(length: number): string;
}

export interface PasswordHasher {
  hash(password: string): Promise<string>;
  /** Constant-time; false for a malformed hash. */
  verify(password: string, hash: string): Promise<boolean>;
}

export type TokenAudience = 'tenant' | 'admin';

export interface TokenClaims {
  user_id: string;
  tenant_id: string | null;
  role: string | null;
  jti: string;
  audience: TokenAudience;
  issued_at: string;
  expires_at: string;
}

export interface TokenService {
  sign(claims: TokenClaims): Promise<string>;
  /** The claims of a valid, unexpired token of this audience; null otherwise. */
  verify(token: string, audience: TokenAudience): Promise<TokenClaims | null>;
}
