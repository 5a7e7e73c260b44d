// Passwords hashed with scrypt at OWASP's recommended cost (N=2^17, r=8, p=1), encoded as
// `scrypt$<log2 N>$<r>$<p>$<salt>$<hash>` so the cost can rise without breaking old hashes.

import { randomBytes, scrypt, timingSafeEqual } from 'node:crypto';
import type { PasswordHasher } from '../../application/ports/identity';

const KEY_LENGTH = 32;

function derive(password: string, salt: Buffer, logN: number, r: number, p: number): Promise<Buffer> {
  const N = 2 ** logN;
  return new Promise((resolve, reject) =>
    scrypt(password.normalize('NFKC'), salt, KEY_LENGTH, { N, r, p, maxmem: 256 * N * r + 1024 * 1024 }, (error, key) => (error ? reject(error) : resolve(key))),
  );
}

export class ScryptPasswordHasher implements PasswordHasher {
  /** `logN` 17 is OWASP's minimum for scrypt; only tests lower it, through SCRYPT_LOG_N. */
  constructor(
    private readonly logN = 17,
    private readonly r = 8,
    private readonly p = 1,
  ) {}

  async hash(password: string): Promise<string> {
    const salt = randomBytes(16);
    const key = await derive(password, salt, this.logN, this.r, this.p);
    return ['scrypt', this.logN, this.r, this.p, salt.toString('base64url'), key.toString('base64url')].join('$');
  }

  async verify(password: string, encoded: string): Promise<boolean> {
    const [scheme, logN, r, p, salt, hash] = encoded.split('$');
    if (scheme !== 'scrypt' || !salt || !hash) return false;
    const expected = Buffer.from(hash, 'base64url');
    const actual = await derive(password, Buffer.from(salt, 'base64url'), Number(logN), Number(r), Number(p));
    return actual.length === expected.length && timingSafeEqual(actual, expected);
  }
}
