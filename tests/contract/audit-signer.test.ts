import { generateKeyPairSync } from 'node:crypto';
import { loadKeys } from '../../infrastructure/crypto/keys';
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
    const { privateKey, publicKey } = generateKeyPairSync('ed25519');
    return new Ed25519AuditSigner(privateKey, publicKey);
  });
});
