// The AuditSigner contract: what verifying a checkpoint relies on, for every signer.

import { expect } from 'chai';
import type { AuditSigner } from '../../application/ports/audit-signer';

export function auditSignerContract(create: () => AuditSigner, createAnother: () => AuditSigner): void {
  const bytes = new TextEncoder().encode('svc.audit-checkpoint.v1\n["t1",5,"abc",9,5,"2026-11-22T10:00:00.000Z","k"]');

  it('verifies its own signature under its key id, and nothing else', () => {
    const signer = create();
    const signature = signer.sign(bytes);
    expect(signer.verify(bytes, signature, signer.keyId)).to.equal(true);
    const altered = bytes.slice();
    altered[altered.length - 3] ^= 1;
    expect(signer.verify(altered, signature, signer.keyId)).to.equal(false);
    expect(signer.verify(bytes, signature, `${signer.keyId}x`)).to.equal(false);
    const flipped = `${signature.slice(0, 10)}${signature[10] === 'A' ? 'B' : 'A'}${signature.slice(11)}`;
    expect(signer.verify(bytes, flipped, signer.keyId)).to.equal(false);
    expect(signer.verify(bytes, 'not a signature', signer.keyId)).to.equal(false);
    expect(signer.verify(bytes, '', signer.keyId)).to.equal(false);
  });

  it('refuses another key’s signature, even under its own key id', () => {
    const signer = create();
    const other = createAnother();
    expect(other.keyId).to.not.equal(signer.keyId);
    expect(signer.verify(bytes, other.sign(bytes), signer.keyId)).to.equal(false);
  });

  it('names its key the same way every time, and publishes its public half', () => {
    const signer = create();
    expect(create().keyId).to.equal(signer.keyId);
    expect(signer.publicKey()).to.deep.include({ key_id: signer.keyId, algorithm: 'Ed25519' });
    expect(Buffer.from(signer.publicKey().public_key, 'base64url')).to.have.length(32);
    expect(signer.publicKeys()[0]).to.deep.equal(signer.publicKey());
  });
}
