// The platform's keys: a PASETO v4 signing key pair and a 32-byte data key (sealing and
// keyed digests). From the environment (TOKEN_SECRET_KEY as a PASERK `k4.secret.`,
// DATA_ENCRYPTION_KEY as 32 bytes of base64) when set; otherwise generated once and kept in
// DATA_DIR/keys.json (mode 0600), the embedded default. Several processes sharing one
// EventStoreDB must share their keys through the environment. After the token key is rotated,
// the public halves of the earlier ones (TOKEN_PREVIOUS_PUBLIC_KEYS, PASERK `k4.public.`) still
// verify what they signed in the event log: the audit checkpoints.

import { type KeyObject, createPrivateKey, createPublicKey, generateKeyPairSync, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { V4 } from 'paseto';

export interface PlatformKeys {
  tokenPrivateKey: KeyObject;
  tokenPublicKey: KeyObject;
  /** Public halves of earlier token keys, for what they signed before the rotation. */
  previousTokenPublicKeys: KeyObject[];
  dataKey: Buffer;
}

interface StoredKeys {
  token_secret_key: string;
  data_encryption_key: string;
}

const PASERK_SECRET = 'k4.secret.';
const PASERK_PUBLIC = 'k4.public.';

function privateKeyFromPaserk(paserk: string): KeyObject {
  if (!paserk.startsWith(PASERK_SECRET)) throw new Error('TOKEN_SECRET_KEY must be a PASERK k4.secret key');
  const bytes = Buffer.from(paserk.slice(PASERK_SECRET.length), 'base64url');
  if (bytes.length !== 64) throw new Error('TOKEN_SECRET_KEY must hold 64 bytes');
  return V4.bytesToKeyObject(bytes);
}

function paserkFromPrivateKey(key: KeyObject): string {
  return PASERK_SECRET + V4.keyObjectToBytes(key).toString('base64url');
}

/** The PASERK `k4.public.` form of an Ed25519 public key: what TOKEN_PREVIOUS_PUBLIC_KEYS lists. */
export function paserkFromPublicKey(key: KeyObject): string {
  return PASERK_PUBLIC + V4.keyObjectToBytes(key).toString('base64url');
}

export function publicKeyFromPaserk(paserk: string): KeyObject {
  const bytes = Buffer.from(paserk.startsWith(PASERK_PUBLIC) ? paserk.slice(PASERK_PUBLIC.length) : '', 'base64url');
  if (bytes.length !== 32) throw new Error('a previous token key must be a PASERK k4.public key of 32 bytes');
  return V4.bytesToKeyObject(bytes);
}

/**
 * A new Ed25519 key pair whose KeyObjects share nothing with the generation. Node 20's
 * generateKeyPairSync hands back KeyObjects that share a lock with its job object; exporting
 * one as JWK (which paseto and the audit signer do) holds that lock while allocating, and a
 * garbage collection that finalizes the job at that moment waits for the same lock: the thread
 * hangs for good (seen once in CI, the stack in the twenty-ninth session's note). Generated as
 * DER bytes and read back, the keys are new objects with locks of their own.
 */
export function generateEd25519KeyPair(): { privateKey: KeyObject; publicKey: KeyObject } {
  const generated = generateKeyPairSync('ed25519', { privateKeyEncoding: { format: 'der', type: 'pkcs8' }, publicKeyEncoding: { format: 'der', type: 'spki' } });
  return {
    privateKey: createPrivateKey({ key: generated.privateKey, format: 'der', type: 'pkcs8' }),
    publicKey: createPublicKey({ key: generated.publicKey, format: 'der', type: 'spki' }),
  };
}

/** A new token key, as TOKEN_SECRET_KEY takes it, with its public half. */
export function generateTokenKey(): { secret: string; public: string } {
  const { privateKey, publicKey } = generateEd25519KeyPair();
  return { secret: paserkFromPrivateKey(privateKey), public: paserkFromPublicKey(publicKey) };
}

function dataKeyFrom(base64: string): Buffer {
  const key = Buffer.from(base64, 'base64');
  if (key.length !== 32) throw new Error('DATA_ENCRYPTION_KEY must be 32 bytes, base64-encoded');
  return key;
}

/** The keys generated for a data folder when the environment does not give them. */
export const KEYS_FILE = 'keys.json';

const storedKeysIn = (file: string): StoredKeys => JSON.parse(fs.readFileSync(file, 'utf8')) as StoredKeys;

/** The public half of the token key a platform on these options signs with (PASERK); null when it has none yet (nothing is generated here). */
export function currentTokenPublicKey(options: { dataDir: string; tokenSecretKey: string | null }): string | null {
  const file = path.join(options.dataDir, KEYS_FILE);
  const secret = options.tokenSecretKey ?? (fs.existsSync(file) ? storedKeysIn(file).token_secret_key : null);
  return secret === null ? null : paserkFromPublicKey(createPublicKey(privateKeyFromPaserk(secret)));
}

export function loadKeys(options: { dataDir: string; tokenSecretKey: string | null; dataEncryptionKey: string | null; tokenPreviousPublicKeys?: readonly string[] }): PlatformKeys {
  let stored: StoredKeys | null = null;
  const file = path.join(options.dataDir, KEYS_FILE);
  if (!options.tokenSecretKey || !options.dataEncryptionKey) {
    if (fs.existsSync(file)) {
      stored = storedKeysIn(file);
    } else {
      const { privateKey } = generateEd25519KeyPair();
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
        stored = storedKeysIn(file);
      } finally {
        fs.rmSync(temporary, { force: true });
      }
    }
  }
  const tokenPrivateKey = privateKeyFromPaserk(options.tokenSecretKey ?? stored!.token_secret_key);
  return {
    tokenPrivateKey: createPrivateKey(tokenPrivateKey.export({ format: 'pem', type: 'pkcs8' })),
    tokenPublicKey: createPublicKey(tokenPrivateKey),
    previousTokenPublicKeys: (options.tokenPreviousPublicKeys ?? []).map(publicKeyFromPaserk),
    dataKey: dataKeyFrom(options.dataEncryptionKey ?? stored!.data_encryption_key),
  };
}
