// The MongoDB key table of the personal-data vault: the collection `personal_data_keys` of the
// read store's database, one document per subject (`_id` the subject). It is not a read model:
// nothing rebuilds it, and without it the personal data of the events cannot be read (back it
// up with the events; README, "MongoDB"). Writes wait for a majority of the replica set, so a
// failover cannot lose a key whose values were already appended.

import type { Db } from 'mongodb';
import type { SubjectKeyRow, SubjectKeyTable } from './vault';

export const SUBJECT_KEYS_COLLECTION = 'personal_data_keys';

interface StoredRow {
  _id: string;
  key_sealed: string | null;
  created_at: string;
  erased_at: string | null;
}

const DURABLE = { writeConcern: { w: 'majority' as const, journal: true } };
const DUPLICATE_KEY = 11000;

const toRow = (stored: StoredRow): SubjectKeyRow => ({ subject: stored._id, key_sealed: stored.key_sealed, created_at: stored.created_at, erased_at: stored.erased_at });

export class MongoSubjectKeyTable implements SubjectKeyTable {
  constructor(private readonly db: Db) {}

  private get rows() {
    return this.db.collection<StoredRow>(SUBJECT_KEYS_COLLECTION);
  }

  async find(subjects: readonly string[]): Promise<Map<string, SubjectKeyRow>> {
    const found = await this.rows.find({ _id: { $in: [...subjects] } }).toArray();
    return new Map(found.map((stored) => [stored._id, toRow(stored)]));
  }

  async insertIfAbsent(row: SubjectKeyRow): Promise<SubjectKeyRow> {
    try {
      await this.rows.insertOne({ _id: row.subject, key_sealed: row.key_sealed, created_at: row.created_at, erased_at: row.erased_at }, DURABLE);
    } catch (error) {
      // Another process made it first (or it was erased): theirs stands.
      if ((error as { code?: unknown }).code !== DUPLICATE_KEY) throw error;
    }
    const stored = await this.rows.findOne({ _id: row.subject });
    if (!stored) throw new Error(`${SUBJECT_KEYS_COLLECTION}: the row of ${row.subject} was not stored`);
    return toRow(stored);
  }

  async markErased(subject: string, at: string): Promise<void> {
    await this.rows.updateOne(
      { _id: subject },
      [{ $set: { key_sealed: null, erased_at: { $ifNull: ['$erased_at', at] }, created_at: { $ifNull: ['$created_at', at] } } }],
      { upsert: true, ...DURABLE },
    );
  }
}
