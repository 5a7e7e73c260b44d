// The embedded key table of the personal-data vault: `personal_data_keys` in the events file
// (platform.db), so a copy of that file (a backup) has the keys its events need. It is given a
// connection of its own, on which `secure_delete` is on, so that whatever SQLite frees of an
// erased row is overwritten with zeros rather than left in a free part of a page. An older
// copy of the page stays in the write-ahead log until the log is next recycled
// (docs/personal-data.md).

import type { SqliteDatabase } from '../sqlite/database';
import type { SubjectKeyRow, SubjectKeyTable } from './vault';

export const SUBJECT_KEYS_TABLE = 'personal_data_keys';

export class SqliteSubjectKeyTable implements SubjectKeyTable {
  private readonly statements;

  constructor(private readonly db: SqliteDatabase) {
    db.pragma('secure_delete = ON');
    db.exec(`CREATE TABLE IF NOT EXISTS ${SUBJECT_KEYS_TABLE} (
      subject TEXT PRIMARY KEY,
      key_sealed TEXT,
      created_at TEXT NOT NULL,
      erased_at TEXT
    ) WITHOUT ROWID`);
    this.statements = {
      find: db.prepare<[string], SubjectKeyRow>(`SELECT subject, key_sealed, created_at, erased_at FROM ${SUBJECT_KEYS_TABLE} WHERE subject IN (SELECT value FROM json_each(?))`),
      // Most reads ask for one subject: by its key, without building and reading a JSON array.
      findOne: db.prepare<[string], SubjectKeyRow>(`SELECT subject, key_sealed, created_at, erased_at FROM ${SUBJECT_KEYS_TABLE} WHERE subject = ?`),
      insert: db.prepare<[string, string | null, string]>(`INSERT INTO ${SUBJECT_KEYS_TABLE} (subject, key_sealed, created_at, erased_at) VALUES (?, ?, ?, NULL) ON CONFLICT (subject) DO NOTHING`),
      erase: db.prepare<{ subject: string; at: string }>(
        `INSERT INTO ${SUBJECT_KEYS_TABLE} (subject, key_sealed, created_at, erased_at) VALUES (@subject, NULL, @at, @at)
         ON CONFLICT (subject) DO UPDATE SET key_sealed = NULL, erased_at = COALESCE(${SUBJECT_KEYS_TABLE}.erased_at, excluded.erased_at)`,
      ),
    };
  }

  async find(subjects: readonly string[]): Promise<Map<string, SubjectKeyRow>> {
    if (subjects.length === 1) {
      const row = this.statements.findOne.get(subjects[0]);
      return new Map(row ? [[row.subject, row]] : []);
    }
    return new Map(this.statements.find.all(JSON.stringify(subjects)).map((row) => [row.subject, row]));
  }

  async insertIfAbsent(row: SubjectKeyRow): Promise<SubjectKeyRow> {
    this.statements.insert.run(row.subject, row.key_sealed, row.created_at);
    const stored = (await this.find([row.subject])).get(row.subject);
    if (!stored) throw new Error(`${SUBJECT_KEYS_TABLE}: the row of ${row.subject} was not stored`);
    return stored;
  }

  async markErased(subject: string, at: string): Promise<void> {
    this.statements.erase.run({ subject, at });
  }

  async close(): Promise<void> {
    this.db.close();
  }
}
