// The OpenApiReader port off the request's thread. A document's author controls how much work
// its reading is (a large YAML file, `$ref`s that expand exponentially), so documents are read
// in worker threads (proposal-worker.ts), each with a bounded heap, one document at a time per
// worker: the server keeps answering other requests meanwhile, and a worker that takes longer
// than the time limit (or runs out of its heap) is stopped and the document refused with 400
// `invalid_openapi`. Idle workers are kept for the next document (loading the parser and its
// OpenAPI schemas costs more than most documents), at most `maxWorkers` at once; further
// documents wait their turn.

import path from 'node:path';
import { Worker } from 'node:worker_threads';
import type { ImportProposal } from '../../application/integration/openapi-proposal';
import type { OpenApiProposalRequest, OpenApiReader } from '../../application/ports/openapi-reader';
import { DomainError, invalid } from '../../domain/shared/errors';
import { type ProposalAnswer, READY } from './proposal-protocol';

export interface WorkerReaderLimits {
  /** How long reading one document may take, from when a worker takes it. */
  timeoutMs: number;
  /** The heap of one worker, in MiB. */
  maxHeapMb: number;
  /** Workers at most, busy or idle. */
  maxWorkers: number;
}

const WORKER_SCRIPT = path.join(__dirname, 'proposal-worker.js');

export class WorkerOpenApiReader implements OpenApiReader {
  private readonly idle: Worker[] = [];
  private readonly waiting: Array<(worker: Promise<Worker>) => void> = [];
  private readonly live = new Set<Worker>();
  private closed = false;

  constructor(private readonly limits: WorkerReaderLimits) {}

  async propose(request: OpenApiProposalRequest): Promise<ImportProposal> {
    const worker = await this.acquire();
    let answer: ProposalAnswer;
    try {
      answer = await this.ask(worker, request);
    } catch (error) {
      this.discard(worker);
      throw error;
    }
    this.release(worker);
    if (answer.ok) return answer.proposal as ImportProposal;
    if ('refusal' in answer) throw new DomainError(answer.refusal.kind, answer.refusal.code, answer.refusal.message, answer.refusal.field);
    throw new Error(`reading an OpenAPI document failed: ${answer.failure}`);
  }

  /** Stops every worker; the reader takes no more documents. */
  async close(): Promise<void> {
    this.closed = true;
    this.idle.length = 0;
    await Promise.all([...this.live].map((worker) => worker.terminate()));
  }

  /** A new worker, once it has loaded the parser (a worker that cannot start rejects). */
  private spawn(): Promise<Worker> {
    const worker = new Worker(WORKER_SCRIPT, { resourceLimits: { maxOldGenerationSizeMb: this.limits.maxHeapMb } });
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
        if (message !== READY) return;
        worker.off('message', ready);
        worker.off('exit', ended);
        resolve(worker);
      };
      const ended = (code: number): void => {
        worker.off('message', ready);
        reject(new Error(`the OpenAPI reader's worker stopped (exit code ${code}) before it was ready`));
      };
      worker.on('message', ready);
      worker.once('exit', ended);
    });
  }

  private acquire(): Promise<Worker> {
    if (this.closed) return Promise.reject(new Error('the OpenAPI reader is closed'));
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

  /** Stops a worker that failed or ran too long; a waiting document gets a new one. */
  private discard(worker: Worker): void {
    this.live.delete(worker);
    void worker.terminate();
    const next = this.waiting.shift();
    if (next) next(this.spawn());
  }

  private ask(worker: Worker, request: OpenApiProposalRequest): Promise<ProposalAnswer> {
    const { field } = request;
    worker.ref();
    return new Promise<ProposalAnswer>((resolve, reject) => {
      const done = (): void => {
        clearTimeout(timer);
        worker.off('message', onMessage);
        worker.off('error', onError);
        worker.off('exit', onExit);
      };
      const onMessage = (answer: ProposalAnswer): void => {
        done();
        resolve(answer);
      };
      const onError = (error: Error & { code?: string }): void => {
        done();
        reject(error.code === 'ERR_WORKER_OUT_OF_MEMORY' ? invalid('invalid_openapi', `${field}: reading the document needs more memory than an import may use (its $refs may expand too far)`, field) : error);
      };
      const onExit = (code: number): void => {
        done();
        reject(new Error(`the OpenAPI reader's worker stopped (exit code ${code}) without an answer`));
      };
      const timer = setTimeout(() => {
        done();
        reject(invalid('invalid_openapi', `${field}: reading the document took longer than ${this.limits.timeoutMs} ms (its $refs may expand too far)`, field));
      }, this.limits.timeoutMs);
      worker.on('message', onMessage);
      worker.on('error', onError);
      worker.on('exit', onExit);
      worker.postMessage(request);
    });
  }
}
