import { expect } from 'chai';
import { generateEd25519KeyPair, generateTokenKey, loadKeys, paserkFromPublicKey } from '../../infrastructure/crypto/keys';
import { Ed25519AuditSigner } from '../../infrastructure/crypto/audit-signer';
import { temporaryDirectory } from '../support/files';
import { auditSignerContract } from './audit-signer.contract';

describe('AuditSigner contract: Ed25519 with the platform key', () => {
  const dir = temporaryDirectory();
  after(() => dir.remove());
  // The platform's own key as the composition root loads it (generated into DATA_DIR/keys.json).
  const platformSigner = () => {
    const keys = loadKeys({ dataDir: dir.path, tokenSecretKey: null, dataEncryptionKey: null });
    return new Ed25519AuditSigner(keys.tokenPrivateKey, keys.tokenPublicKey);
  };
  auditSignerContract(platformSigner, () => {
    const { privateKey, publicKey } = generateEd25519KeyPair();
    return new Ed25519AuditSigner(privateKey, publicKey);
  });
});

describe('Ed25519AuditSigner after the token key is rotated', () => {
  const bytes = new TextEncoder().encode('svc.audit-checkpoint.v1\n["t1",5,"abc",9,5,"2026-11-22T10:00:00.000Z","k"]');
  const dir = temporaryDirectory();
  after(() => dir.remove());

  it('verifies what an earlier key signed, under that key id, when given its public half (PASERK k4.public); signs with the new one', () => {
    const before = loadKeys({ dataDir: dir.path, tokenSecretKey: generateTokenKey().secret, dataEncryptionKey: null });
    const old = new Ed25519AuditSigner(before.tokenPrivateKey, before.tokenPublicKey);
    const signedBefore = old.sign(bytes);
    const next = generateTokenKey();
    const after = loadKeys({ dataDir: dir.path, tokenSecretKey: next.secret, dataEncryptionKey: null, tokenPreviousPublicKeys: [paserkFromPublicKey(before.tokenPublicKey)] });
    const signer = new Ed25519AuditSigner(after.tokenPrivateKey, after.tokenPublicKey, after.previousTokenPublicKeys);
    expect(paserkFromPublicKey(after.tokenPublicKey)).to.equal(next.public);
    expect(signer.keyId).to.not.equal(old.keyId);
    expect(signer.verify(bytes, signedBefore, old.keyId)).to.equal(true);
    expect(signer.verify(bytes, signedBefore, signer.keyId)).to.equal(false);
    expect(signer.verify(bytes, signer.sign(bytes), signer.keyId)).to.equal(true);
    expect(signer.publicKeys()).to.deep.equal([signer.publicKey(), old.publicKey()]);
    // Without the earlier key's public half, what it signed does not verify.
    const forgetful = new Ed25519AuditSigner(after.tokenPrivateKey, after.tokenPublicKey);
    expect(forgetful.verify(bytes, signedBefore, old.keyId)).to.equal(false);
  });

  it('refuses a previous key that is not a PASERK k4.public key of 32 bytes', () => {
    const secret = generateTokenKey().secret;
    for (const bad of [secret, 'k4.public.c2hvcnQ', 'k3.public.' + 'A'.repeat(43)]) {
      expect(() => loadKeys({ dataDir: dir.path, tokenSecretKey: secret, dataEncryptionKey: null, tokenPreviousPublicKeys: [bad] }), bad).to.throw(/PASERK k4.public/);
    }
  });
});
