// The worker thread of WorkerOpenApiReader (worker-reader.ts): reads OpenAPI documents one at
// a time, proposes their import, and posts each proposal (plain JSON) or refusal back. It
// first reads two tiny documents, so that the validator's schemas of OpenAPI 3.0 and 3.1 are
// compiled before the first real document's time starts, and says it is ready.

import { parentPort } from 'node:worker_threads';
import { inProcessOpenApiReader } from '../../application/integration/openapi-reading';
import type { OpenApiProposalRequest } from '../../application/ports/openapi-reader';
import { DomainError, messageOf } from '../../domain/shared/errors';
import type { ProposalAnswer } from './proposal-protocol';
import { WORKER_READY } from '../workers/worker-pool';

const WARM_UP = ['3.0.3', '3.1.0'].map((openapi) => JSON.stringify({ openapi, info: { title: 'warm-up', version: '1' }, paths: {} }));

async function answer(request: OpenApiProposalRequest): Promise<ProposalAnswer> {
  try {
    return { ok: true, proposal: await inProcessOpenApiReader.propose(request) };
  } catch (error) {
    if (error instanceof DomainError) return { ok: false, refusal: { kind: error.kind, code: error.code, message: error.message, ...(error.field === undefined ? {} : { field: error.field }) } };
    return { ok: false, failure: messageOf(error) };
  }
}

if (parentPort) {
  const port = parentPort;
  port.on('message', (request: OpenApiProposalRequest) => {
    void answer(request).then((result) => port.postMessage(result));
  });
  void Promise.all(WARM_UP.map((bytes) => answer({ bytes, field: 'warm-up', url: null, takenNames: [], namesByOperation: [] }))).then(() => port.postMessage(WORKER_READY));
}
