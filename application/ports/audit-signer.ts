// Signs audit checkpoints with the platform's key, so that a checkpoint in the event log can
// be told from one written by someone with only write access to the store. Verifying needs
// only the public key, which an offline verifier gets from `publicKey()` (and, to trust it,
// from the operator).

export interface AuditSigningKey {
  key_id: string;
  algorithm: 'Ed25519';
  /** The raw 32-byte public key, base64url (a JWK's `x`). */
  public_key: string;
}

export interface AuditSigner {
  /** Names the key that signs now; stored with each signature. */
  readonly keyId: string;
  /** The signature of the bytes, base64url. */
  sign(bytes: Uint8Array): string;
  /** Whether `signature` is this platform's signature of the bytes under `keyId`; false for an unknown key or a malformed signature. */
  verify(bytes: Uint8Array, signature: string, keyId: string): boolean;
  /** The public half of the signing key. */
  publicKey(): AuditSigningKey;
  /** Every key that verifies: the signing key first, then earlier ones still trusted for what they signed. */
  publicKeys(): AuditSigningKey[];
}
