// One SQLite file holds the embedded event store and read store. Both adapters share one
// connection per process: better-sqlite3 is synchronous, so sharing it serialises their
// transactions instead of having two connections wait on each other's locks. The read models
// the projection thread builds live in a file of their own for that reason (projection-thread.ts).

import Database from 'better-sqlite3';
import fs from 'node:fs';
import path from 'node:path';

export type SqliteDatabase = Database.Database;

/** `full` syncs the WAL on every commit, as EventStoreDB acknowledges only what is on disk. */
export type SqliteSynchronous = 'full' | 'normal' | 'off';

export interface SqliteOptions {
  synchronous?: SqliteSynchronous;
  readonly?: boolean;
}

/**
 * The sync level of a file of derived data (the projection file's read models), given the
 * events file's: never more than NORMAL. In WAL mode NORMAL loses, on a power cut, the last
 * commits and nothing else; a read model's checkpoint is committed with its documents, so it
 * falls back with them and is applied again from the events, which were synced first.
 */
export function derivedDataSynchronous(events: SqliteSynchronous): SqliteSynchronous {
  return events === 'full' ? 'normal' : events;
}

export function openSqliteDatabase(file: string, options: SqliteOptions = {}): SqliteDatabase {
  if (file !== ':memory:') fs.mkdirSync(path.dirname(path.resolve(file)), { recursive: true });
  const db = new Database(file, { readonly: options.readonly ?? false });
  if (!options.readonly) db.pragma('journal_mode = WAL');
  db.pragma(`synchronous = ${(options.synchronous ?? 'full').toUpperCase()}`);
  // Another process (the operator CLI) may hold the write lock for a moment.
  db.pragma('busy_timeout = 5000');
  // Group commits write each item in a savepoint; the journal that undoes one outgrows
  // SQLite's 64 KiB in-memory spill and went to a file in /var/tmp, one write() per page,
  // nearly as many as the WAL itself took (docs/performance-history.md, ninth session). Memory is
  // where it belongs: it lives only until the commit.
  db.pragma('temp_store = MEMORY');
  return db;
}
