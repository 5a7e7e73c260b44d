// The OpenApiReader port off the request's thread. A document's author controls how much work
// its reading is (a large YAML file, `$ref`s that expand exponentially), so documents are read
// in worker threads (proposal-worker.ts) of a WorkerPool, each with a bounded heap: the server
// keeps answering other requests meanwhile, and a document whose reading takes longer than the
// time limit (or runs out of its heap) has its worker stopped and is refused with 400
// `invalid_openapi`. Idle workers are kept for the next document (loading the parser and its
// OpenAPI schemas costs more than most documents).

import path from 'node:path';
import type { ImportProposal } from '../../application/integration/openapi-proposal';
import type { OpenApiProposalRequest, OpenApiReader } from '../../application/ports/openapi-reader';
import { DomainError, invalid } from '../../domain/shared/errors';
import { WorkerPool, type WorkerPoolLimits } from '../workers/worker-pool';
import type { ProposalAnswer } from './proposal-protocol';

const WORKER_SCRIPT = path.join(__dirname, 'proposal-worker.js');

export class WorkerOpenApiReader implements OpenApiReader {
  private readonly pool: WorkerPool<OpenApiProposalRequest, ProposalAnswer>;

  constructor(private readonly limits: WorkerPoolLimits) {
    this.pool = new WorkerPool(WORKER_SCRIPT, limits, 'the OpenAPI reader');
  }

  async propose(request: OpenApiProposalRequest): Promise<ImportProposal> {
    const { field } = request;
    const outcome = await this.pool.run(request);
    if (outcome.kind === 'timed_out') throw invalid('invalid_openapi', `${field}: reading the document took longer than ${this.limits.timeoutMs} ms (its $refs may expand too far)`, field);
    if (outcome.kind === 'out_of_memory') throw invalid('invalid_openapi', `${field}: reading the document needs more memory than an import may use (its $refs may expand too far)`, field);
    const answer = outcome.answer;
    if (answer.ok) return answer.proposal as ImportProposal;
    if ('refusal' in answer) throw new DomainError(answer.refusal.kind, answer.refusal.code, answer.refusal.message, answer.refusal.field);
    throw new Error(`reading an OpenAPI document failed: ${answer.failure}`);
  }

  /** Stops every worker; the reader takes no more documents. */
  close(): Promise<void> {
    return this.pool.close();
  }
}
