// Text extraction off the serving thread. pdf.js reads a PDF in one go: a 5 MB, 1,000-page
// PDF held the event loop for 2.7 s on the machine of docs/performance.md, and every chat,
// widget socket and API call of every organization waited for it. Here each document is read
// by DocumentTextExtractor on a worker thread of a WorkerPool (extraction-worker.ts), one
// document per worker at a time, the others waiting in arrival order; sniffing stays here (it
// reads a few bytes).
//
// A worker is also a fence around a hostile or broken document: one that takes longer than the
// time limit to read, or whose reading needs more JavaScript heap than the limit, has its
// worker stopped and is refused (UnsupportedDocumentError: it would do the same again), where
// on the serving thread it would have stalled or taken down the process. A worker that fails
// otherwise fails its document with a plain Error, which the indexing saga retries.

import path from 'node:path';
import { type SupportedType, type TextExtractor, UnsupportedDocumentError } from '../../application/ports/text-extractor';
import { SUPPORTED_TYPES } from '../../application/document/document-types';
import { WorkerPool, type WorkerPoolLimits } from '../workers/worker-pool';
import type { ExtractionAnswer, ExtractionRequest } from './extraction-worker';
import { sniffDocumentType } from './sniff';

export type ExtractionOutcome = 'read' | 'unsupported' | 'timed_out' | 'out_of_memory' | 'failed';

export interface ThreadedExtractionOptions extends WorkerPoolLimits {
  /** Told of every document read or refused and how long it took, waiting for a worker included. */
  observe?: (outcome: ExtractionOutcome, seconds: number) => void;
  /** The worker's script: extraction-worker.js beside this file (tests give others). */
  workerScript?: string;
}

const WORKER_SCRIPT = path.join(__dirname, 'extraction-worker.js');

export class ThreadedTextExtractor implements TextExtractor {
  readonly supported: readonly SupportedType[] = SUPPORTED_TYPES;
  private readonly pool: WorkerPool<ExtractionRequest, ExtractionAnswer>;

  constructor(private readonly options: ThreadedExtractionOptions) {
    this.pool = new WorkerPool(options.workerScript ?? WORKER_SCRIPT, options, 'the text extractor');
  }

  sniff(bytes: Buffer, filename: string | null): string | null {
    return sniffDocumentType(bytes, filename);
  }

  async extract(bytes: Buffer, contentType: string): Promise<string> {
    const started = performance.now();
    const observe = (outcome: ExtractionOutcome): void => this.options.observe?.(outcome, (performance.now() - started) / 1000);
    // A copy the worker owns: a Buffer may be a view of a pool other buffers share.
    const copy = new Uint8Array(bytes);
    let outcome;
    try {
      outcome = await this.pool.run({ bytes: copy, contentType }, [copy.buffer]);
    } catch (error) {
      observe('failed');
      throw error;
    }
    switch (outcome.kind) {
      case 'timed_out':
        observe('timed_out');
        throw new UnsupportedDocumentError(`the document took longer than ${this.options.timeoutMs / 1000} s to read`);
      case 'out_of_memory':
        observe('out_of_memory');
        throw new UnsupportedDocumentError(`the document needs more than ${this.options.maxHeapMb} MiB of memory to read`);
      case 'answered': {
        const answer = outcome.answer;
        if (answer.ok) {
          observe('read');
          return answer.text;
        }
        observe(answer.unsupported ? 'unsupported' : 'failed');
        throw answer.unsupported ? new UnsupportedDocumentError(answer.message) : new Error(`reading a document failed: ${answer.message}`);
      }
    }
  }

  /** Documents being read, and documents waiting for a worker. */
  load(): { running: number; waiting: number } {
    return this.pool.load();
  }

  /** Stops the workers; the extractor reads no more documents. */
  close(): Promise<void> {
    return this.pool.close();
  }
}
