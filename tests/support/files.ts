import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { type SqliteDatabase, openSqliteDatabase } from '../../infrastructure/sqlite/database';

/** A fresh directory under the OS temp folder, removed by `remove()`. */
export function temporaryDirectory(prefix = 'svc-test-'): { path: string; remove(): void } {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  return { path: dir, remove: () => fs.rmSync(dir, { recursive: true, force: true }) };
}

/** A store on a fresh SQLite file, disposed of with its folder: the fixture of the contract suites. */
export function sqliteFixture<Store extends { close(): Promise<void> }>(open: (db: SqliteDatabase) => Store): { store: Store; path: string; dispose(): Promise<void> } {
  const dir = temporaryDirectory();
  const db = openSqliteDatabase(`${dir.path}/store.db`);
  const store = open(db);
  return {
    store,
    path: `${dir.path}/store.db`,
    async dispose() {
      await store.close();
      db.close();
      dir.remove();
    },
  };
}
