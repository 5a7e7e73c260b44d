// Checkpoints of the embedded file, off the thread that serves requests. SQLite copies the WAL
// back into the database itself at the end of a commit once the WAL passes 1,000 pages: with
// synchronous=FULL that commit reads and writes about 4 MB and syncs the file twice, and the
// event loop waits 5-20 ms for it, every few dozen commits under load (docs/performance-history.md).
// A worker thread (checkpoint-worker.ts) with its own connection runs the same PASSIVE
// checkpoints every `intervalMs` instead, and the serving connection's automatic checkpoints
// are turned off while it runs. A PASSIVE checkpoint never waits for, nor blocks, the writer
// or the readers; the writer starts the WAL over once everything in it has been copied, as
// before. If the worker fails or stops unexpectedly, the connection checkpoints inline again.

import path from 'node:path';
import { Worker } from 'node:worker_threads';
import type { SqliteDatabase, SqliteSynchronous } from './database';

export interface CheckpointWorkerData {
  file: string;
  synchronous: SqliteSynchronous;
  intervalMs: number;
}

export type CheckpointerMessage =
  | { kind: 'ready' }
  | { kind: 'failed'; message: string };

/** SQLite's default: a commit that leaves more WAL pages than this checkpoints inline. */
const INLINE_CHECKPOINT_PAGES = 1000;
const WORKER_SCRIPT = path.join(__dirname, 'checkpoint-worker.js');

export interface CheckpointerOptions {
  synchronous: SqliteSynchronous;
  intervalMs?: number;
  /** Called once when the worker fails and the connection checkpoints inline again. */
  onFallback?: (reason: string) => void;
  /** The worker's script: checkpoint-worker.js beside this file (tests give one that fails). */
  workerScript?: string;
}

export class BackgroundCheckpointer {
  private stopping = false;
  private fellBack = false;
  private hasExited = false;
  /** Settles when the worker's thread has ended, for whatever reason. */
  private readonly exited: Promise<void>;

  private constructor(
    private readonly db: SqliteDatabase,
    private readonly worker: Worker,
    private readonly options: CheckpointerOptions,
  ) {
    this.exited = new Promise((resolve) =>
      worker.once('exit', () => {
        this.hasExited = true;
        resolve();
      }),
    );
    worker.on('message', (message: CheckpointerMessage) => {
      if (message.kind === 'failed') this.fallBack(`checkpoint failed: ${message.message}`);
    });
    worker.on('error', (error) => this.fallBack(`checkpoint worker failed: ${error.message}`));
    worker.on('exit', (code) => {
      if (!this.stopping) this.fallBack(`checkpoint worker exited (${code})`);
    });
  }

  /**
   * Starts the worker on `file` (the file `db` is open on) and, once it is ready, turns the
   * connection's inline checkpoints off. Null when the worker could not start: the connection
   * keeps checkpointing inline.
   */
  static async start(db: SqliteDatabase, file: string, options: CheckpointerOptions): Promise<BackgroundCheckpointer | null> {
    const workerData: CheckpointWorkerData = { file: path.resolve(file), synchronous: options.synchronous, intervalMs: options.intervalMs ?? 100 };
    const worker = new Worker(options.workerScript ?? WORKER_SCRIPT, { workerData });
    const ready = await new Promise<boolean>((resolve) => {
      worker.once('message', (message: CheckpointerMessage) => resolve(message.kind === 'ready'));
      worker.once('error', () => resolve(false));
      worker.once('exit', () => resolve(false));
    });
    if (!ready) {
      await worker.terminate();
      return null;
    }
    // A worker that never exits on its own must not keep the process alive.
    worker.unref();
    const checkpointer = new BackgroundCheckpointer(db, worker, options);
    db.pragma('wal_autocheckpoint = 0');
    return checkpointer;
  }

  /** Whether the worker still checkpoints. */
  status(): { background: boolean } {
    return { background: !this.fellBack && !this.stopping };
  }

  /** Stops the worker (its connection closed) and gives checkpoints back to the connection. */
  async stop(): Promise<void> {
    if (this.stopping) return;
    this.stopping = true;
    if (!this.hasExited) {
      // Referenced again while it is waited for: an unreferenced worker is no reason to stay
      // alive, and the process would end in the middle of this wait.
      this.worker.ref();
      this.worker.postMessage('stop');
      await this.exited;
    }
    this.inline();
  }

  private fallBack(reason: string): void {
    if (this.fellBack || this.stopping) return;
    this.fellBack = true;
    this.inline();
    void this.worker.terminate();
    this.options.onFallback?.(reason);
  }

  private inline(): void {
    if (this.db.open) this.db.pragma(`wal_autocheckpoint = ${INLINE_CHECKPOINT_PAGES}`);
  }
}
