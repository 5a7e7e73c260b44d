// The layout of the embedded data folder, kept in SQLite's `user_version`. Version 1 is the
// stream-name rule (docs/decisions.md, "Stream names"): `<category>-<id>` with camelCase
// categories, and reservation streams named by a keyed digest. Events written before it used
// other names (`access-denial-<id>`, `reservation-user_email-<email>`), which this release
// would not find; there were no users whose data had to survive, so such a folder is refused
// rather than migrated or misread.

import type { SqliteDatabase } from './database';

export const DATA_FORMAT_VERSION = 1;

/** A data folder this release cannot use as it is; the message is one line, for the operator. */
export class DataFolderError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'DataFolderError';
  }
}

/** Marks a new file with the current format; refuses one written with another. */
export function checkDataFormat(db: SqliteDatabase, file: string): void {
  const version = Number(db.pragma('user_version', { simple: true }));
  if (version === DATA_FORMAT_VERSION) return;
  if (version > DATA_FORMAT_VERSION) {
    throw new DataFolderError(`${file} has data format ${version}, newer than this release understands (${DATA_FORMAT_VERSION}); run a newer release`);
  }
  const hasEvents = db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'events'").get() !== undefined && db.prepare('SELECT 1 FROM events LIMIT 1').get() !== undefined;
  if (hasEvents) {
    throw new DataFolderError(
      `${file} holds events written with the old stream names (before docs/decisions.md "Stream names"); this release starts clean: move the data folder away or point DATA_DIR at an empty one`,
    );
  }
  db.pragma(`user_version = ${DATA_FORMAT_VERSION}`);
}
