// The platform's keys: a PASETO v4 signing key pair and a 32-byte data key (sealing and
// keyed digests). From the environment (TOKEN_SECRET_KEY as a PASERK `k4.secret.`,
// DATA_ENCRYPTION_KEY as 32 bytes of base64) when set; otherwise generated once and kept in
// DATA_DIR/keys.json (mode 0600), the embedded default. Several processes sharing one
// EventStoreDB must share their keys through the environment.

import { type KeyObject, createPrivateKey, createPublicKey, generateKeyPairSync, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { V4 } from 'paseto';

export interface PlatformKeys {
  tokenPrivateKey: KeyObject;
  tokenPublicKey: KeyObject;
  dataKey: Buffer;
}

interface StoredKeys {
  token_secret_key: string;
  data_encryption_key: string;
}

const PASERK_SECRET = 'k4.secret.';

function privateKeyFromPaserk(paserk: string): KeyObject {
  if (!paserk.startsWith(PASERK_SECRET)) throw new Error('TOKEN_SECRET_KEY must be a PASERK k4.secret key');
  const bytes = Buffer.from(paserk.slice(PASERK_SECRET.length), 'base64url');
  if (bytes.length !== 64) throw new Error('TOKEN_SECRET_KEY must hold 64 bytes');
  return V4.bytesToKeyObject(bytes);
}

function paserkFromPrivateKey(key: KeyObject): string {
  return PASERK_SECRET + V4.keyObjectToBytes(key).toString('base64url');
}

function dataKeyFrom(base64: string): Buffer {
  const key = Buffer.from(base64, 'base64');
  if (key.length !== 32) throw new Error('DATA_ENCRYPTION_KEY must be 32 bytes, base64-encoded');
  return key;
}

/** The keys generated for a data folder when the environment does not give them. */
export const KEYS_FILE = 'keys.json';

export function loadKeys(options: { dataDir: string; tokenSecretKey: string | null; dataEncryptionKey: string | null }): PlatformKeys {
  let stored: StoredKeys | null = null;
  const file = path.join(options.dataDir, KEYS_FILE);
  if (!options.tokenSecretKey || !options.dataEncryptionKey) {
    if (fs.existsSync(file)) {
      stored = JSON.parse(fs.readFileSync(file, 'utf8')) as StoredKeys;
    } else {
      const { privateKey } = generateKeyPairSync('ed25519');
      stored = { token_secret_key: paserkFromPrivateKey(privateKey), data_encryption_key: randomBytes(32).toString('base64') };
      fs.mkdirSync(options.dataDir, { recursive: true });
      // Two processes starting at once must agree on one set of keys, and neither may read a
      // half-written file: each writes its own temporary file and links it into place, which
      // either appears whole or fails because the other's is there.
      const temporary = `${file}.${process.pid}.${randomBytes(4).toString('hex')}`;
      fs.writeFileSync(temporary, JSON.stringify(stored, null, 2), { mode: 0o600, flag: 'wx' });
      try {
        fs.linkSync(temporary, file);
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
        stored = JSON.parse(fs.readFileSync(file, 'utf8')) as StoredKeys;
      } finally {
        fs.rmSync(temporary, { force: true });
      }
    }
  }
  const tokenPrivateKey = privateKeyFromPaserk(options.tokenSecretKey ?? stored!.token_secret_key);
  return {
    tokenPrivateKey: createPrivateKey(tokenPrivateKey.export({ format: 'pem', type: 'pkcs8' })),
    tokenPublicKey: createPublicKey(tokenPrivateKey),
    dataKey: dataKeyFrom(options.dataEncryptionKey ?? stored!.data_encryption_key),
  };
}
