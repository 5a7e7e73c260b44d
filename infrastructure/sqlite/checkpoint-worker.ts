// The worker thread of BackgroundCheckpointer (checkpointer.ts): its own connection to the
// file, copying the WAL's committed pages back into the database with PASSIVE checkpoints
// (which never wait for, nor block, the writer or the readers), every `intervalMs`, until
// told to stop.

import Database from 'better-sqlite3';
import { parentPort, workerData } from 'node:worker_threads';
import type { CheckpointerMessage, CheckpointWorkerData } from './checkpointer';
import { messageOf } from '../../domain/shared/errors';

const { file, synchronous, intervalMs } = workerData as CheckpointWorkerData;
const db = new Database(file);
db.pragma('busy_timeout = 5000');
// FULL: the database file is synced after each checkpoint, as SQLite's own checkpoints do.
db.pragma(`synchronous = ${synchronous.toUpperCase()}`);

const post = (message: CheckpointerMessage): void => parentPort!.postMessage(message);

const timer = setInterval(() => {
  try {
    // Nothing is posted for a checkpoint done: an idle server's thread is not woken for it.
    db.pragma('wal_checkpoint(PASSIVE)');
  } catch (error) {
    // Another connection checkpointing at the moment (a second process on the file): next time.
    const code = (error as { code?: unknown }).code;
    if (code === 'SQLITE_BUSY' || code === 'SQLITE_LOCKED') return;
    post({ kind: 'failed', message: messageOf(error) });
  }
}, intervalMs);

parentPort!.on('message', (message: unknown) => {
  if (message !== 'stop') return;
  clearInterval(timer);
  db.close();
  parentPort!.close();
});

post({ kind: 'ready' });
