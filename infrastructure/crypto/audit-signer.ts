// The AuditSigner over the platform's Ed25519 key (the PASETO v4 token key of keys.ts), with
// node:crypto. Checkpoint bytes start with their own context line, so a checkpoint signature
// is never a valid token signature or the other way round. The key id is derived from the
// public key, so a rotated key is told apart; verifying checkpoints signed with an older key
// needs that key's public half (not kept yet: see docs/decisions.md).

import { type KeyObject, createHash, sign, verify } from 'node:crypto';
import type { AuditSigner, AuditSigningKey } from '../../application/ports/audit-signer';

export class Ed25519AuditSigner implements AuditSigner {
  readonly keyId: string;
  private readonly rawPublicKey: string;

  constructor(
    private readonly privateKey: KeyObject,
    private readonly publicKeyObject: KeyObject,
  ) {
    if (privateKey.asymmetricKeyType !== 'ed25519' || publicKeyObject.asymmetricKeyType !== 'ed25519') throw new Error('the audit signing key must be Ed25519');
    this.rawPublicKey = (publicKeyObject.export({ format: 'jwk' }) as { x: string }).x;
    this.keyId = createHash('sha256').update(Buffer.from(this.rawPublicKey, 'base64url')).digest('hex').slice(0, 16);
  }

  sign(bytes: Uint8Array): string {
    return sign(null, bytes, this.privateKey).toString('base64url');
  }

  verify(bytes: Uint8Array, signature: string, keyId: string): boolean {
    if (keyId !== this.keyId || !/^[A-Za-z0-9_-]{86}$/.test(signature)) return false;
    try {
      return verify(null, bytes, this.publicKeyObject, Buffer.from(signature, 'base64url'));
    } catch {
      return false;
    }
  }

  publicKey(): AuditSigningKey {
    return { key_id: this.keyId, algorithm: 'Ed25519', public_key: this.rawPublicKey };
  }
}
