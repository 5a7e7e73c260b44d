// The personal-data vault (application/ports/personal-data.ts): a random 256-bit key per data
// subject, kept in a key table beside the event log (SQLite's `personal_data_keys` in the
// events file, or a MongoDB collection of the same name), itself sealed under the data key.
// Values are sealed with AES-256-GCM under the subject's key, the subject bound as associated
// data (a value moved to another subject's event does not open): `pd1.<nonce>.<ciphertext+tag>`,
// base64url.
//
// Erasing replaces the subject's row by a tombstone (no key, `erased_at`): the key is gone, and
// the tombstone keeps a later append from making a new key for the same subject. Keys are
// read from the table on every use, never kept in memory, so an erasure in one process holds
// in every other at once.

import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import type { Clock } from '../../application/ports/clock';
import type { Secrets } from '../../application/ports/identity';
import { type PersonalDataVault, type SealedValue, SubjectErasedError } from '../../application/ports/personal-data';

/** A subject's row: its key sealed under the data key, or null once erased. */
export interface SubjectKeyRow {
  subject: string;
  key_sealed: string | null;
  created_at: string;
  erased_at: string | null;
}

/** Where the rows are kept (SQLite or MongoDB). */
export interface SubjectKeyTable {
  /** The rows of these subjects; a subject without one is absent. */
  find(subjects: readonly string[]): Promise<Map<string, SubjectKeyRow>>;
  /** Stores the row unless its subject has one (another process's, or a tombstone); answers the row stored now. */
  insertIfAbsent(row: SubjectKeyRow): Promise<SubjectKeyRow>;
  /** Makes the subject's row a tombstone (no key), whether it had a row or not; the first erasure's time stays. */
  markErased(subject: string, at: string): Promise<void>;
}

const FORMAT = 'pd1';
const KEY_BYTES = 32;
const NONCE_BYTES = 12;
const TAG_BYTES = 16;

export class KeyedPersonalDataVault implements PersonalDataVault {
  constructor(
    private readonly table: SubjectKeyTable,
    /** Seals the keys at rest (the data key's sealing). */
    private readonly dataKey: Pick<Secrets, 'seal' | 'open'>,
    private readonly clock: Clock,
  ) {}

  async seal(subject: string, values: readonly string[]): Promise<string[]> {
    const key = await this.keyMadeOnce(subject);
    return values.map((value) => sealWith(key, subject, value));
  }

  async open(values: readonly SealedValue[]): Promise<Array<string | null>> {
    if (values.length === 0) return [];
    const rows = await this.table.find([...new Set(values.map((value) => value.subject))]);
    const keys = new Map<string, Buffer | null>();
    for (const [subject, row] of rows) keys.set(subject, row.key_sealed === null ? null : this.keyOf(row.key_sealed));
    return values.map((value) => {
      const key = keys.get(value.subject);
      // Sealed, yet no row: the key table was lost or restored from an older copy. Loud, never a silent erasure.
      if (key === undefined) throw new Error(`personal data of ${value.subject} is sealed under a key the key table does not have (was personal_data_keys lost, or restored from an older backup?)`);
      return key === null ? null : openWith(key, value.subject, value.sealed);
    });
  }

  async keptAmong(subjects: readonly string[]): Promise<Set<string>> {
    if (subjects.length === 0) return new Set();
    const rows = await this.table.find(subjects);
    return new Set([...rows.values()].filter((row) => row.key_sealed !== null).map((row) => row.subject));
  }

  async erase(subject: string): Promise<void> {
    await this.table.markErased(subject, this.clock.now().toISOString());
  }

  private async keyMadeOnce(subject: string): Promise<Buffer> {
    let row = (await this.table.find([subject])).get(subject);
    if (!row) {
      const made = randomBytes(KEY_BYTES);
      row = await this.table.insertIfAbsent({ subject, key_sealed: this.dataKey.seal(made.toString('base64')), created_at: this.clock.now().toISOString(), erased_at: null });
    }
    if (row.key_sealed === null) throw new SubjectErasedError(subject);
    return this.keyOf(row.key_sealed);
  }

  private keyOf(sealed: string): Buffer {
    return Buffer.from(this.dataKey.open(sealed), 'base64');
  }
}

function sealWith(key: Buffer, subject: string, value: string): string {
  const nonce = randomBytes(NONCE_BYTES);
  const cipher = createCipheriv('aes-256-gcm', key, nonce);
  cipher.setAAD(Buffer.from(subject, 'utf8'));
  const body = Buffer.concat([cipher.update(value, 'utf8'), cipher.final(), cipher.getAuthTag()]);
  return `${FORMAT}.${nonce.toString('base64url')}.${body.toString('base64url')}`;
}

function openWith(key: Buffer, subject: string, sealed: string): string {
  const [format, nonce, body] = sealed.split('.');
  if (format !== FORMAT || !nonce || !body) throw new Error(`a sealed value of ${subject} is not in the ${FORMAT} format`);
  const bytes = Buffer.from(body, 'base64url');
  const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(nonce, 'base64url'));
  decipher.setAAD(Buffer.from(subject, 'utf8'));
  decipher.setAuthTag(bytes.subarray(bytes.length - TAG_BYTES));
  return Buffer.concat([decipher.update(bytes.subarray(0, bytes.length - TAG_BYTES)), decipher.final()]).toString('utf8');
}
