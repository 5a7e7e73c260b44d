// The AuditSigner over the platform's Ed25519 key (the PASETO v4 token key of keys.ts), with
// node:crypto. Checkpoint bytes start with their own context line, so a checkpoint signature
// is never a valid token signature or the other way round. The key id is derived from the
// public key, so a rotated key is told apart; the public halves of earlier keys
// (TOKEN_PREVIOUS_PUBLIC_KEYS) verify the checkpoints they signed.

import { type KeyObject, createHash, sign, verify } from 'node:crypto';
import type { AuditSigner, AuditSigningKey } from '../../application/ports/audit-signer';

function signingKeyOf(publicKey: KeyObject): AuditSigningKey {
  if (publicKey.asymmetricKeyType !== 'ed25519') throw new Error('an audit signing key must be Ed25519');
  const raw = (publicKey.export({ format: 'jwk' }) as { x: string }).x;
  return { key_id: createHash('sha256').update(Buffer.from(raw, 'base64url')).digest('hex').slice(0, 16), algorithm: 'Ed25519', public_key: raw };
}

export class Ed25519AuditSigner implements AuditSigner {
  readonly keyId: string;
  private readonly current: AuditSigningKey;
  /** Every key that verifies, by id: the current one and the earlier ones. */
  private readonly verifying = new Map<string, { key: KeyObject; signingKey: AuditSigningKey }>();

  constructor(
    private readonly privateKey: KeyObject,
    publicKey: KeyObject,
    previousPublicKeys: readonly KeyObject[] = [],
  ) {
    if (privateKey.asymmetricKeyType !== 'ed25519') throw new Error('the audit signing key must be Ed25519');
    this.current = signingKeyOf(publicKey);
    this.keyId = this.current.key_id;
    for (const key of [publicKey, ...previousPublicKeys]) {
      const signingKey = signingKeyOf(key);
      if (!this.verifying.has(signingKey.key_id)) this.verifying.set(signingKey.key_id, { key, signingKey });
    }
  }

  sign(bytes: Uint8Array): string {
    return sign(null, bytes, this.privateKey).toString('base64url');
  }

  verify(bytes: Uint8Array, signature: string, keyId: string): boolean {
    const known = this.verifying.get(keyId);
    if (!known || !/^[A-Za-z0-9_-]{86}$/.test(signature)) return false;
    try {
      return verify(null, bytes, known.key, Buffer.from(signature, 'base64url'));
    } catch {
      return false;
    }
  }

  publicKey(): AuditSigningKey {
    return this.current;
  }

  publicKeys(): AuditSigningKey[] {
    return [...this.verifying.values()].map((known) => known.signingKey);
  }
}
