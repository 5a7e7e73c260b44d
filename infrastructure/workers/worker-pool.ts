// Work whose cost its input decides, kept off the serving thread: an OpenAPI document whose
// `$ref`s expand without end, a PDF of a thousand pages. Each request runs on a worker thread
// of its own script, one request per worker at a time, each worker with a bounded heap: the
// server keeps answering other requests meanwhile, and a request that takes longer than the
// time limit, or runs out of the heap, has its worker stopped and comes back as such (the
// caller refuses the input). Idle workers are kept for the next request (loading a parser
// costs more than most inputs), at most `maxWorkers` at once; further requests wait their turn.
//
// A worker script posts WORKER_READY once it has loaded what it needs, then answers each
// request it receives with one message.

import { type TransferListItem, Worker } from 'node:worker_threads';

/** What a worker posts once it is ready for requests. */
export const WORKER_READY = 'ready';

export interface WorkerPoolLimits {
  /** How long one request may take, from when a worker takes it. */
  timeoutMs: number;
  /** The heap of one worker (V8's old generation), in MiB. */
  maxHeapMb: number;
  /** Workers at most, busy or idle. */
  maxWorkers: number;
}

/** How a request ended on its worker; a worker that failed or stopped otherwise rejects instead. */
export type WorkerOutcome<Answer> = { kind: 'answered'; answer: Answer } | { kind: 'timed_out' } | { kind: 'out_of_memory' };

export class WorkerPool<Request, Answer> {
  private readonly idle: Worker[] = [];
  private readonly waiting: Array<(worker: Promise<Worker>) => void> = [];
  private readonly live = new Set<Worker>();
  /** Requests taken and not yet answered. */
  private taken = 0;
  private closed = false;

  /** `name` says whose workers they are in errors ("the text extractor"). */
  constructor(
    private readonly script: string,
    private readonly limits: WorkerPoolLimits,
    private readonly name: string,
  ) {}

  /** Runs `request` on a worker; `transfer` lists what moves to it rather than being copied. */
  async run(request: Request, transfer: readonly TransferListItem[] = []): Promise<WorkerOutcome<Answer>> {
    this.taken += 1;
    try {
      const worker = await this.acquire();
      let outcome: WorkerOutcome<Answer>;
      try {
        outcome = await this.ask(worker, request, transfer);
      } catch (error) {
        this.discard(worker);
        throw error;
      }
      if (outcome.kind === 'answered') this.release(worker);
      else this.discard(worker);
      return outcome;
    } finally {
      this.taken -= 1;
    }
  }

  /** Requests running on a worker (or on one starting for them), and requests waiting for one. */
  load(): { running: number; waiting: number } {
    return { running: this.taken - this.waiting.length, waiting: this.waiting.length };
  }

  /** Stops every worker; the pool takes no more requests. */
  async close(): Promise<void> {
    this.closed = true;
    this.idle.length = 0;
    for (const next of this.waiting.splice(0)) next(Promise.reject(this.closedError()));
    await Promise.all([...this.live].map((worker) => worker.terminate()));
  }

  private closedError(): Error {
    return new Error(`${this.name} is closed`);
  }

  /** A new worker, once it has said it is ready (a worker that cannot start rejects). */
  private spawn(): Promise<Worker> {
    const worker = new Worker(this.script, { resourceLimits: { maxOldGenerationSizeMb: this.limits.maxHeapMb } });
    this.live.add(worker);
    // A request's own listeners report its failures; these keep a crash of an idle worker from
    // being an unhandled 'error', and forget a worker that ended.
    worker.on('error', () => undefined);
    worker.once('exit', () => {
      this.live.delete(worker);
      const index = this.idle.indexOf(worker);
      if (index >= 0) this.idle.splice(index, 1);
    });
    return new Promise<Worker>((resolve, reject) => {
      const ready = (message: unknown): void => {
        if (message !== WORKER_READY) return;
        worker.off('message', ready);
        worker.off('exit', ended);
        resolve(worker);
      };
      const ended = (code: number): void => {
        worker.off('message', ready);
        reject(new Error(`${this.name}'s worker stopped (exit code ${code}) before it was ready`));
      };
      worker.on('message', ready);
      worker.once('exit', ended);
    });
  }

  private acquire(): Promise<Worker> {
    if (this.closed) return Promise.reject(this.closedError());
    const idle = this.idle.pop();
    if (idle) return Promise.resolve(idle);
    if (this.live.size < this.limits.maxWorkers) return this.spawn();
    return new Promise<Promise<Worker>>((resolve) => this.waiting.push(resolve)).then((worker) => worker);
  }

  private release(worker: Worker): void {
    const next = this.waiting.shift();
    if (next) return next(Promise.resolve(worker));
    if (this.closed) {
      this.discard(worker);
      return;
    }
    // An idle worker does not keep the process alive.
    worker.unref();
    this.idle.push(worker);
  }

  /** Stops a worker that failed or ran too long; a waiting request gets a new one. */
  private discard(worker: Worker): void {
    this.live.delete(worker);
    void worker.terminate();
    const next = this.waiting.shift();
    if (next) next(this.spawn());
  }

  private ask(worker: Worker, request: Request, transfer: readonly TransferListItem[]): Promise<WorkerOutcome<Answer>> {
    // Referenced while it works: a caller waiting for the answer keeps the process alive.
    worker.ref();
    return new Promise<WorkerOutcome<Answer>>((resolve, reject) => {
      const done = (): void => {
        clearTimeout(timer);
        worker.off('message', onMessage);
        worker.off('error', onError);
        worker.off('exit', onExit);
      };
      const onMessage = (answer: Answer): void => {
        done();
        resolve({ kind: 'answered', answer });
      };
      const onError = (error: Error & { code?: string }): void => {
        done();
        if (error.code === 'ERR_WORKER_OUT_OF_MEMORY') resolve({ kind: 'out_of_memory' });
        else reject(error);
      };
      const onExit = (code: number): void => {
        done();
        reject(new Error(`${this.name}'s worker stopped (exit code ${code}) without an answer`));
      };
      const timer = setTimeout(() => {
        done();
        resolve({ kind: 'timed_out' });
      }, this.limits.timeoutMs);
      worker.on('message', onMessage);
      worker.on('error', onError);
      worker.on('exit', onExit);
      worker.postMessage(request, [...transfer]);
    });
  }
}
