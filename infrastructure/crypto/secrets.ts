// Sealing (AES-256-GCM, random 96-bit nonce, `v1.<nonce>.<ciphertext+tag>` base64url) and
// keyed digests (HMAC-SHA256) under the data key; subkeys are derived with HKDF so the two
// uses never share a key.

import { createCipheriv, createDecipheriv, createHmac, hkdfSync, randomBytes, randomInt } from 'node:crypto';
import type { Secrets } from '../../application/ports/identity';

export class AesGcmSecrets implements Secrets {
  private readonly sealKey: Buffer;
  private readonly digestKey: Buffer;

  constructor(dataKey: Buffer) {
    this.sealKey = Buffer.from(hkdfSync('sha256', dataKey, Buffer.alloc(0), 'svc seal v1', 32));
    this.digestKey = Buffer.from(hkdfSync('sha256', dataKey, Buffer.alloc(0), 'svc digest v1', 32));
  }

  seal(plaintext: string): string {
    const nonce = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.sealKey, nonce);
    const body = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final(), cipher.getAuthTag()]);
    return `v1.${nonce.toString('base64url')}.${body.toString('base64url')}`;
  }

  open(sealed: string): string {
    const [version, nonce, body] = sealed.split('.');
    if (version !== 'v1' || !nonce || !body) throw new Error('not a sealed value');
    const bytes = Buffer.from(body, 'base64url');
    const decipher = createDecipheriv('aes-256-gcm', this.sealKey, Buffer.from(nonce, 'base64url'));
    decipher.setAuthTag(bytes.subarray(bytes.length - 16));
    return Buffer.concat([decipher.update(bytes.subarray(0, bytes.length - 16)), decipher.final()]).toString('utf8');
  }

  digest(value: string): string {
    return createHmac('sha256', this.digestKey).update(value).digest('hex');
  }

  randomToken(bytes = 32): string {
    return randomBytes(bytes).toString('base64url');
  }

  randomDigits(length: number): string {
    return Array.from({ length }, () => String(randomInt(10))).join('');
  }
}
