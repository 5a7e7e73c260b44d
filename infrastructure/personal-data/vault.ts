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
// in every other at once; except the keys of subjects that no process may erase before a known
// time (`keptUntil`: an organization's orchestration payloads of a day, erased two days later
// at the soonest), kept in memory until then: the hot path of orchestration events reads them
// on every emit and step, where a read of the key table each time cost more than the rest.

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

/** Until when a subject's key may be kept in memory (no process can erase it sooner); null: read on every use. */
export type KeyKeptUntil = (subject: string) => Date | null;

/** Kept keys beyond this many, those past their time are dropped. */
const KEPT_KEYS_PRUNE_AT = 1000;

export class KeyedPersonalDataVault implements PersonalDataVault {
  /** Keys of subjects that cannot be erased before `until` (ms), as `keptUntil` says. */
  private readonly kept = new Map<string, { key: Buffer; until: number }>();

  constructor(
    private readonly table: SubjectKeyTable,
    /** Seals the keys at rest (the data key's sealing). */
    private readonly dataKey: Pick<Secrets, 'seal' | 'open'>,
    private readonly clock: Clock,
    private readonly keptUntil: KeyKeptUntil = () => null,
  ) {}

  async seal(subject: string, values: readonly string[]): Promise<string[]> {
    const key = this.keptKey(subject) ?? (await this.keyMadeOnce(subject));
    return values.map((value) => sealWith(key, subject, value));
  }

  async open(values: readonly SealedValue[]): Promise<Array<string | null>> {
    if (values.length === 0) return [];
    const keys = new Map<string, Buffer | null>();
    for (const { subject } of values) {
      const key = this.keptKey(subject);
      if (key) keys.set(subject, key);
    }
    const unknown = [...new Set(values.map((value) => value.subject))].filter((subject) => !keys.has(subject));
    const rows = unknown.length === 0 ? new Map<string, SubjectKeyRow>() : await this.table.find(unknown);
    for (const [subject, row] of rows) keys.set(subject, row.key_sealed === null ? null : this.keyOf(row.key_sealed, subject));
    return values.map((value) => {
      const key = keys.get(value.subject);
      // Sealed, yet no row: the key table was lost or restored from an older copy. Loud, never a silent erasure.
      if (key === undefined) throw new Error(`personal data of ${value.subject} is sealed under a key the key table does not have (was personal_data_keys lost, or restored from an older backup?)`);
      return key === null ? null : openWith(key, value.subject, value.sealed);
    });
  }

  async keptAmong(subjects: readonly string[]): Promise<Set<string>> {
    if (subjects.length === 0) return new Set();
    const kept = new Set(subjects.filter((subject) => this.keptKey(subject) !== null));
    const unknown = subjects.filter((subject) => !kept.has(subject));
    if (unknown.length === 0) return kept;
    const rows = await this.table.find(unknown);
    for (const row of rows.values()) if (row.key_sealed !== null) kept.add(row.subject);
    return kept;
  }

  async erase(subject: string): Promise<void> {
    this.kept.delete(subject);
    await this.table.markErased(subject, this.clock.now().toISOString());
  }

  /** The subject's key kept in memory, while no process may erase it yet. */
  private keptKey(subject: string): Buffer | null {
    const entry = this.kept.get(subject);
    if (!entry) return null;
    if (entry.until > this.clock.now().getTime()) return entry.key;
    this.kept.delete(subject);
    return null;
  }

  private async keyMadeOnce(subject: string): Promise<Buffer> {
    let row = (await this.table.find([subject])).get(subject);
    if (!row) {
      const made = randomBytes(KEY_BYTES);
      row = await this.table.insertIfAbsent({ subject, key_sealed: this.dataKey.seal(made.toString('base64')), created_at: this.clock.now().toISOString(), erased_at: null });
    }
    if (row.key_sealed === null) throw new SubjectErasedError(subject);
    return this.keyOf(row.key_sealed, subject);
  }

  /** A key read from the table, kept in memory when its subject cannot be erased for a while. */
  private keyOf(sealed: string, subject: string): Buffer {
    const key = Buffer.from(this.dataKey.open(sealed), 'base64');
    const until = this.keptUntil(subject)?.getTime() ?? 0;
    if (until > this.clock.now().getTime()) {
      if (this.kept.size >= KEPT_KEYS_PRUNE_AT) this.pruneKept();
      this.kept.set(subject, { key, until });
    }
    return key;
  }

  private pruneKept(): void {
    const now = this.clock.now().getTime();
    for (const [subject, entry] of this.kept) if (entry.until <= now) this.kept.delete(subject);
  }
}

/**
 * Nonces drawn from a pool of random bytes filled a few thousand at a time, each used once: a
 * call of the random source per value sealed cost more than the sealing (an orchestration event
 * seals its payload and its outputs on the hot path). Node's randomUUID keeps such a pool too.
 */
const NONCE_POOL_BYTES = NONCE_BYTES * 512;
let noncePool = Buffer.alloc(0);
let noncePoolOffset = 0;

function freshNonce(): Buffer {
  if (noncePoolOffset + NONCE_BYTES > noncePool.length) {
    noncePool = randomBytes(NONCE_POOL_BYTES);
    noncePoolOffset = 0;
  }
  const nonce = noncePool.subarray(noncePoolOffset, noncePoolOffset + NONCE_BYTES);
  noncePoolOffset += NONCE_BYTES;
  return nonce;
}

function sealWith(key: Buffer, subject: string, value: string): string {
  const nonce = freshNonce();
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
