// An online backup of the embedded data folder (`npm run cli -- backup DEST`), taken while
// servers keep writing to it. Copying the files by hand is not one: a WAL-mode database is
// three files changing under the copy, and the copy may hold half a commit.
//
// - Each SQLite file is copied with `VACUUM INTO`: one read transaction, so the copy is the
//   database as of one commit, compacted; the writers go on meanwhile (the WAL grows until it
//   ends). The backup API would start again after every commit of another process, so under
//   steady writes it might never end.
// - read-models.db first, then platform.db: the read models there are derived from the
//   events, and a copy whose checkpoints were ahead of the copied events would skip the events
//   appended after a restore at those positions. Behind them, they are brought up to date.
// - The blobs (documents' original bytes) after platform.db: a blob is written before the
//   event that refers to it, so every document of the copy has its bytes, unless it was
//   deleted while the backup ran. Temporary files of writes under way are left out.
// - keys.json (the token key and the data key) too: without the data key the sealed secrets
//   of the copied events cannot be read.
// - The copies' leases (which process runs each projection and saga group) are released: the
//   copy is a folder no process has opened, and a server started on it would otherwise wait
//   for the source's leases to lapse (LEASE_TTL_MS) before its projections ran.
// - Everything is written into a folder beside the destination and renamed to it once
//   complete and synced, so a destination that exists is a whole backup.

import { createHash, randomBytes } from 'node:crypto';
import { constants, createReadStream } from 'node:fs';
import { copyFile, mkdir, open, readFile, readdir, rename, rm, stat } from 'node:fs/promises';
import path from 'node:path';
import Database from 'better-sqlite3';
import { SqliteReadStore } from '../read-store/sqlite';

export const BACKUP_MANIFEST = 'backup.json';
export const BACKUP_FORMAT = 'svc-backup-1';

/** What the backup needs to know of the data folder's layout (the composition root's names). */
export interface DataFolderLayout {
  eventsFile: string;
  readModelsFile: string;
  keysFile: string;
  blobsFolder: string;
}

export interface BackupOptions {
  dataDir: string;
  destination: string;
  layout: DataFolderLayout;
  /** Where documents' bytes are when not in the folder (S3_BUCKET): not copied, said in the notes. */
  blobsElsewhere: string | null;
  /** TOKEN_SECRET_KEY / DATA_ENCRYPTION_KEY given in the environment rather than keys.json. */
  keysFromEnvironment: boolean;
  /** What the caller knows the operator must be told besides (read models kept elsewhere). */
  notes: string[];
  now: () => Date;
}

export interface BackedUpFile {
  path: string;
  bytes: number;
  sha256: string;
}

export interface BackupReport {
  destination: string;
  /** The last event's position in the copy (0: none). */
  eventHead: number;
  files: BackedUpFile[];
  blobs: { files: number; bytes: number };
  /** What the operator must keep or know besides the folder. */
  notes: string[];
}

/** A backup that cannot be taken as asked; the message is one line, for the operator. */
export class BackupError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'BackupError';
  }
}

export async function backUpDataFolder(options: BackupOptions): Promise<BackupReport> {
  const { dataDir, layout } = options;
  const destination = path.resolve(options.destination);
  const eventsFile = path.join(dataDir, layout.eventsFile);
  if (!(await exists(eventsFile))) throw new BackupError(`${dataDir} holds no embedded store (${layout.eventsFile}): check DATA_DIR`);
  if (path.resolve(dataDir) === destination || destination.startsWith(`${path.resolve(dataDir)}${path.sep}`)) {
    throw new BackupError(`${options.destination} is inside the data folder ${dataDir}: back up to a folder outside it`);
  }
  if (await exists(destination)) {
    const present = await readdir(destination).catch(() => null);
    if (present === null || present.length > 0) throw new BackupError(`${options.destination} already exists and is not an empty folder: name a new one`);
    await rm(destination, { recursive: true });
  }

  await mkdir(path.dirname(destination), { recursive: true });
  // Beside the destination, so that the final rename stays on one file system.
  const working = `${destination}.partial-${randomBytes(4).toString('hex')}`;
  await mkdir(working, { mode: 0o700 });
  try {
    const files: BackedUpFile[] = [];
    const readModelsFile = path.join(dataDir, layout.readModelsFile);
    if (await exists(readModelsFile)) files.push(await copyDatabase(readModelsFile, working, layout.readModelsFile));
    files.push(await copyDatabase(eventsFile, working, layout.eventsFile));
    const eventHead = headOf(path.join(working, layout.eventsFile));

    const blobs = { files: 0, bytes: 0 };
    const blobsFolder = path.join(dataDir, layout.blobsFolder);
    if (options.blobsElsewhere === null && (await exists(blobsFolder))) await copyBlobs(blobsFolder, path.join(working, layout.blobsFolder), blobs);

    const notes = [...options.notes];
    if (options.blobsElsewhere !== null) notes.push(`documents' original bytes are in ${options.blobsElsewhere}, not in this backup: back the bucket up with its own tools (versioning, replication)`);
    const keysFile = path.join(dataDir, layout.keysFile);
    if (await exists(keysFile)) {
      await copyFile(keysFile, path.join(working, layout.keysFile), constants.COPYFILE_EXCL);
      files.push(await describeFile(working, layout.keysFile));
    }
    if (options.keysFromEnvironment) notes.push('TOKEN_SECRET_KEY / DATA_ENCRYPTION_KEY come from the environment: keep them with this backup; without the data key the sealed secrets in its events cannot be read');
    else if (!(await exists(keysFile))) notes.push(`${layout.keysFile} is missing from the data folder: this backup has no keys, and the sealed secrets in its events cannot be read without them`);

    const manifest = {
      format: BACKUP_FORMAT,
      created_at: options.now().toISOString(),
      source: path.resolve(dataDir),
      event_head: eventHead,
      files,
      blobs,
      notes,
    };
    await writeSynced(path.join(working, BACKUP_MANIFEST), `${JSON.stringify(manifest, null, 2)}\n`);
    for (const file of files) await syncFile(path.join(working, file.path));
    await syncFile(working);
    await rename(working, destination);
    await syncFile(path.dirname(destination));
    return { destination, eventHead, files, blobs, notes };
  } catch (error) {
    await rm(working, { recursive: true, force: true });
    throw error;
  }
}

/** The database as of one commit, compacted, checked, then described. */
async function copyDatabase(source: string, folder: string, name: string): Promise<BackedUpFile> {
  const target = path.join(folder, name);
  const db = new Database(source, { readonly: true, fileMustExist: true });
  try {
    db.pragma('busy_timeout = 5000');
    db.prepare('VACUUM INTO ?').run(target);
  } finally {
    db.close();
  }
  // The copy as VACUUM INTO left it, one file in rollback journal mode (a server sets WAL mode
  // again when it opens it): its leases released, then checked.
  const copy = new Database(target, { fileMustExist: true });
  try {
    const store = new SqliteReadStore(copy);
    for (const state of await store.listProjectionStates()) {
      if (state.lease) await store.releaseLease(state.name, state.lease.holder);
    }
    const check = copy.pragma('quick_check', { simple: true });
    if (check !== 'ok') throw new BackupError(`the copy of ${name} fails SQLite's quick_check (${String(check)}): the source may be damaged; run PRAGMA integrity_check on it`);
  } finally {
    copy.close();
  }
  return describeFile(folder, name);
}

function headOf(eventsCopy: string): number {
  const db = new Database(eventsCopy, { readonly: true, fileMustExist: true });
  try {
    const hasEvents = db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'events'").get() !== undefined;
    if (!hasEvents) return 0;
    return Number((db.prepare('SELECT MAX(position) AS head FROM events').get() as { head: number | null }).head ?? 0);
  } finally {
    db.close();
  }
}

/** Blob files, each synced; writes under way (`*.tmp`) left out, a file deleted meanwhile skipped. */
async function copyBlobs(from: string, to: string, count: { files: number; bytes: number }): Promise<void> {
  await mkdir(to, { recursive: true, mode: 0o700 });
  for (const entry of await readdir(from, { withFileTypes: true })) {
    const source = path.join(from, entry.name);
    const target = path.join(to, entry.name);
    if (entry.isDirectory()) {
      await copyBlobs(source, target, count);
    } else if (entry.isFile() && !entry.name.endsWith('.tmp')) {
      try {
        await copyFile(source, target, constants.COPYFILE_EXCL);
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === 'ENOENT') continue;
        throw error;
      }
      await syncFile(target);
      count.files += 1;
      count.bytes += (await stat(target)).size;
    }
  }
  await syncFile(to);
}

/** Size and SHA-256, read as a stream: a store may be larger than memory. */
async function describeFile(folder: string, name: string): Promise<BackedUpFile> {
  const hash = createHash('sha256');
  let bytes = 0;
  for await (const chunk of createReadStream(path.join(folder, name))) {
    hash.update(chunk as Buffer);
    bytes += (chunk as Buffer).length;
  }
  return { path: name, bytes, sha256: hash.digest('hex') };
}

async function writeSynced(file: string, text: string): Promise<void> {
  const handle = await open(file, constants.O_CREAT | constants.O_EXCL | constants.O_WRONLY, 0o600);
  try {
    await handle.writeFile(text);
    await handle.sync();
  } finally {
    await handle.close();
  }
}

/** fsync of a file or a folder (a folder's entries: the renames and creations in it). */
async function syncFile(file: string): Promise<void> {
  const handle = await open(file, constants.O_RDONLY);
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

async function exists(file: string): Promise<boolean> {
  try {
    await stat(file);
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return false;
    throw error;
  }
}

export interface BackupCheck {
  /** What was checked and found as recorded. */
  checked: string[];
  /** What was not: empty when the backup is whole. */
  problems: string[];
}

/**
 * Checks a backup folder against its manifest: every file there, of its size and SHA-256; each
 * database passes SQLite's quick_check; as many blob files as were copied. Reads only.
 */
export async function verifyBackup(folder: string, blobsFolder: string): Promise<BackupCheck> {
  const checked: string[] = [];
  const problems: string[] = [];
  let manifest: { format?: unknown; files?: unknown; blobs?: { files?: unknown } };
  try {
    manifest = JSON.parse(await readFile(path.join(folder, BACKUP_MANIFEST), 'utf8')) as typeof manifest;
  } catch (error) {
    throw new BackupError(`${folder} has no readable ${BACKUP_MANIFEST} (${(error as Error).message}): is it a backup folder?`);
  }
  if (manifest.format !== BACKUP_FORMAT || !Array.isArray(manifest.files)) throw new BackupError(`${path.join(folder, BACKUP_MANIFEST)} is not a manifest of format ${BACKUP_FORMAT}`);
  for (const recorded of manifest.files as BackedUpFile[]) {
    if (!(await exists(path.join(folder, recorded.path)))) {
      problems.push(`${recorded.path}: missing`);
      continue;
    }
    const found = await describeFile(folder, recorded.path);
    if (found.bytes !== recorded.bytes || found.sha256 !== recorded.sha256) {
      problems.push(`${recorded.path}: ${found.bytes} bytes with SHA-256 ${found.sha256}, recorded as ${recorded.bytes} bytes with ${recorded.sha256}`);
      continue;
    }
    if (recorded.path.endsWith('.db')) {
      const db = new Database(path.join(folder, recorded.path), { readonly: true, fileMustExist: true });
      try {
        const check = db.pragma('quick_check', { simple: true });
        if (check !== 'ok') {
          problems.push(`${recorded.path}: quick_check says ${String(check)}`);
          continue;
        }
      } finally {
        db.close();
      }
    }
    checked.push(`${recorded.path}: ${recorded.bytes} bytes, SHA-256 as recorded${recorded.path.endsWith('.db') ? ', quick_check ok' : ''}`);
  }
  const blobsRecorded = typeof manifest.blobs?.files === 'number' ? manifest.blobs.files : 0;
  const blobsFound = await countFiles(path.join(folder, blobsFolder));
  if (blobsFound !== blobsRecorded) problems.push(`${blobsFolder}/: ${blobsFound} files, recorded as ${blobsRecorded}`);
  else if (blobsFound > 0) checked.push(`${blobsFolder}/: ${blobsFound} files as recorded`);
  return { checked, problems };
}

async function countFiles(folder: string): Promise<number> {
  if (!(await exists(folder))) return 0;
  let count = 0;
  for (const entry of await readdir(folder, { withFileTypes: true })) {
    if (entry.isDirectory()) count += await countFiles(path.join(folder, entry.name));
    else if (entry.isFile()) count += 1;
  }
  return count;
}
