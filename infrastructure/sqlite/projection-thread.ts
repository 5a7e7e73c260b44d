// Projections of the embedded store built on a thread of their own (PROJECTION_THREAD=worker,
// the default). The serving thread of a platform on SQLite does everything on one core: HTTP,
// commands and their appends, sagas, and every projection with its writes. The audit log alone
// (a hash chain with a row and six indexes for every event) and its anchoring were about a
// quarter of that thread's time per orchestration event, the orchestration events' queue about
// a tenth more (docs/performance-history.md). Their read models live in a file of their own (the
// projection file, `read-models.db`), so a second thread can write them without waiting for the
// serving thread's write lock, nor making it wait for its own.
//
// - The thread (projection-thread-worker.ts) follows `$all` on its own connection and holds
//   the projections' leases under a holder id of its own; the serving thread's runner lists
//   them as followed elsewhere (ProjectionRunner `followedElsewhere`) and learns their progress
//   from the thread's messages, so read-your-writes waits for them as for its own.
// - The serving thread tells the thread the head after each of its commits; the thread's
//   subscription otherwise polls, as for another process's appends.
// - A thread that fails or exits is started again after a pause (growing to a minute): its
//   projections resume from their checkpoints, and waits on them time out meanwhile.
// - Stopping asks the thread to stop its runner (its checkpoints are committed per batch) and
//   close its connections; one that does not within the grace is terminated.

import type { KeyObject } from 'node:crypto';
import path from 'node:path';
import { Worker } from 'node:worker_threads';
import type { AuditAnchoringSettings, CheckpointRecorder, CheckpointToRecord } from '../../application/audit-log/audit-anchoring';
import type { Logger } from '../../application/ports/logger';
import { DomainError, type DomainErrorKind, messageOf } from '../../domain/shared/errors';
import type { ProjectionProgress } from '../../projections/runner';
import type { SqliteSynchronous } from './database';

export interface ProjectionThreadData {
  eventsFile: string;
  readModelsFile: string;
  synchronous: SqliteSynchronous;
  /** The projections it builds, by name. */
  projections: readonly string[];
  leaseHolder: string;
  leaseTtlMs: number;
  readCacheTtlMs: number;
  logLevel: string;
  /**
   * The data key, for the personal-data vault the thread opens sealed fields with (orchestration
   * payloads): the keys of subjects are read from the events file's key table on each use there too.
   */
  dataKey: Uint8Array;
  /** The audit anchoring runs there too, when set (it hashes every event again, from the events). */
  anchoring: (AuditAnchoringSettings & { privateKey: KeyObject; publicKey: KeyObject; previousPublicKeys: KeyObject[] }) | null;
}

type Refusal = { kind: DomainErrorKind; code: string; message: string };

export type ToProjectionThread =
  | { kind: 'head'; head: number }
  | { kind: 'rebuild'; id: number; name: string }
  | { kind: 'anchor_once'; id: number }
  | { kind: 'checkpoint_recorded'; id: number; refusal: Refusal | null; failure: string | null }
  | { kind: 'stop' };

export type FromProjectionThread =
  | { kind: 'ready' }
  | { kind: 'progress'; progress: ProjectionProgress[] }
  | { kind: 'failed'; message: string }
  /** The answer to a `rebuild` or an `anchor_once`: its result, or why it failed. */
  | { kind: 'answer'; id: number; result: unknown; failure: string | null }
  | { kind: 'record_checkpoint'; id: number; toRecord: CheckpointToRecord }
  | { kind: 'stopped' };

const WORKER_SCRIPT = path.join(__dirname, 'projection-thread-worker.js');
const STOP_GRACE_MS = 10_000;
const RESTART_FIRST_MS = 1_000;
const RESTART_MAX_MS = 60_000;

export interface ProjectionThreadOptions {
  data: ProjectionThreadData;
  logger: Logger;
  /** The thread's progress, as it reports it (and `failed` for each projection when it dies). */
  onProgress: (progress: ProjectionProgress[]) => void;
  /** Appends the checkpoints the thread's audit anchoring asks for (one connection writes the events file). */
  recordCheckpoint?: CheckpointRecorder;
  /** The worker's script (tests give one that fails). */
  workerScript?: string;
}

/** The thread's answer to a checkpoint to record: a refusal crosses as its kind, code and message. */
export async function checkpointAnswer(record: CheckpointRecorder, toRecord: CheckpointToRecord): Promise<{ refusal: Refusal | null; failure: string | null }> {
  try {
    await record(toRecord);
    return { refusal: null, failure: null };
  } catch (error) {
    if (error instanceof DomainError) return { refusal: { kind: error.kind, code: error.code, message: error.message }, failure: null };
    return { refusal: null, failure: messageOf(error) };
  }
}

/** The error the thread's anchoring sees for an answer. */
export function checkpointOutcome(answer: { refusal: Refusal | null; failure: string | null }): void {
  if (answer.refusal) throw new DomainError(answer.refusal.kind, answer.refusal.code, answer.refusal.message);
  if (answer.failure !== null) throw new Error(answer.failure);
}

export class ProjectionThread {
  private worker: Worker | null = null;
  private stopping = false;
  private restartDelayMs = RESTART_FIRST_MS;
  private restartTimer: NodeJS.Timeout | null = null;
  /** The last head told to the thread; a new thread is told it first. */
  private head = 0;
  private exited: Promise<void> = Promise.resolve();
  private nextRequest = 1;
  /** Requests to the thread waiting for its answer, with what they are (for the error when it exits). */
  private readonly requests = new Map<number, { what: string; resolve: (result: unknown) => void; reject: (error: Error) => void }>();

  private constructor(private readonly options: ProjectionThreadOptions) {}

  /** Starts the thread; resolves once its projections run (or it failed, and will be started again). */
  static async start(options: ProjectionThreadOptions): Promise<ProjectionThread> {
    const thread = new ProjectionThread(options);
    await thread.spawn();
    return thread;
  }

  /** The serving thread committed up to `head`. */
  committed(head: number): void {
    if (head <= this.head) return;
    this.head = head;
    this.worker?.postMessage({ kind: 'head', head } satisfies ToProjectionThread);
  }

  /** Rebuilds one of the thread's projections there (ProjectionRunner.rebuild). */
  rebuild(name: string): Promise<{ events: number; checkpoint: number }> {
    if (!this.worker) return Promise.reject(new Error(`projection ${name} cannot be rebuilt now: the projection thread is not running`));
    return this.request((id) => ({ kind: 'rebuild', id, name }), 'the rebuild') as Promise<{ events: number; checkpoint: number }>;
  }

  /** Runs one pass of the thread's audit anchoring (AuditAnchoring.runOnce). */
  async anchorOnce(): Promise<void> {
    if (!this.worker || !this.options.data.anchoring) throw new Error('the audit anchoring does not run: the projection thread is not running');
    await this.request((id) => ({ kind: 'anchor_once', id }), "the audit anchoring's pass");
  }

  private request(message: (id: number) => ToProjectionThread, what: string): Promise<unknown> {
    const id = this.nextRequest++;
    return new Promise((resolve, reject) => {
      this.requests.set(id, { what, resolve, reject });
      this.worker!.postMessage(message(id));
    });
  }

  private answered(id: number, answer: { result: unknown; failure: string | null }): void {
    const pending = this.requests.get(id);
    this.requests.delete(id);
    if (answer.failure === null) pending?.resolve(answer.result);
    else pending?.reject(new Error(answer.failure));
  }

  private answerCheckpoint(worker: Worker, id: number, toRecord: CheckpointToRecord): void {
    const record = this.options.recordCheckpoint;
    const answering = record ? checkpointAnswer(record, toRecord) : Promise.resolve({ refusal: null, failure: 'no checkpoint recorder on the serving thread' });
    void answering.then((answer) => worker.postMessage({ kind: 'checkpoint_recorded', id, ...answer } satisfies ToProjectionThread));
  }

  private spawn(): Promise<void> {
    const { data, logger } = this.options;
    const worker = new Worker(this.options.workerScript ?? WORKER_SCRIPT, { workerData: data });
    this.worker = worker;
    let settled = false;
    return new Promise<void>((resolve) => {
      const ready = (): void => {
        if (settled) return;
        settled = true;
        resolve();
      };
      worker.on('message', (message: FromProjectionThread) => {
        switch (message.kind) {
          case 'ready':
            this.restartDelayMs = RESTART_FIRST_MS;
            if (this.head > 0) worker.postMessage({ kind: 'head', head: this.head } satisfies ToProjectionThread);
            ready();
            return;
          case 'progress':
            this.options.onProgress(message.progress);
            return;
          case 'failed':
            logger.error({ reason: message.message }, 'projection thread failed');
            return;
          case 'answer':
            this.answered(message.id, message);
            return;
          case 'record_checkpoint':
            this.answerCheckpoint(worker, message.id, message.toRecord);
            return;
          case 'stopped':
            return;
        }
      });
      worker.on('error', (error) => logger.error({ err: error }, 'projection thread failed'));
      this.exited = new Promise<void>((exited) =>
        worker.once('exit', (code) => {
          if (this.worker === worker) this.worker = null;
          for (const [id, { what }] of [...this.requests]) this.answered(id, { result: null, failure: `the projection thread exited (code ${code}) during ${what}` });
          exited();
          ready();
          if (this.stopping) return;
          logger.error({ code, restart_in_ms: this.restartDelayMs }, 'projection thread exited; starting it again');
          this.options.onProgress(data.projections.map((name) => ({ name, checkpoint: 0, status: 'failed', error: `the projection thread exited (code ${code}); starting it again`, stuck: false })));
          this.restartTimer = setTimeout(() => {
            this.restartTimer = null;
            void this.spawn();
          }, this.restartDelayMs);
          this.restartTimer.unref();
          this.restartDelayMs = Math.min(RESTART_MAX_MS, this.restartDelayMs * 2);
        }),
      );
    });
  }

  /** Stops the thread's projections and closes its connections. */
  async stop(): Promise<void> {
    this.stopping = true;
    if (this.restartTimer) clearTimeout(this.restartTimer);
    const worker = this.worker;
    if (!worker) return;
    worker.postMessage({ kind: 'stop' } satisfies ToProjectionThread);
    const grace = setTimeout(() => void worker.terminate(), STOP_GRACE_MS);
    await this.exited;
    clearTimeout(grace);
  }
}
