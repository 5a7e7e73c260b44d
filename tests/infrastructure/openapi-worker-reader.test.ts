// The OpenAPI reader of the platform (infrastructure/openapi/worker-reader.ts): documents are
// read in worker threads, refusals come back as the same 400s, a document whose reading runs
// away is stopped and refused while the reader goes on serving, and documents beyond the
// number of workers wait their turn.

import { expect } from 'chai';
import { DomainError } from '../../domain/shared/errors';
import { WorkerOpenApiReader } from '../../infrastructure/openapi/worker-reader';
import { openApiFixture } from '../support/openapi-documents';

const request = (bytes: Buffer | string) => ({ bytes, field: 'file', url: null, takenNames: ['ADDPET'], namesByOperation: [['deletePet', 'removePet']] as Array<[string, string]> });

/** A document whose $refs expand to 2^levels schemas: its validation never ends in time. */
function exploding(levels: number): string {
  const schemas: Record<string, unknown> = { [`S${levels}`]: { type: 'string' } };
  for (let level = 0; level < levels; level += 1) schemas[`S${level}`] = { type: 'object', properties: { left: { $ref: `#/components/schemas/S${level + 1}` }, right: { $ref: `#/components/schemas/S${level + 1}` } } };
  return JSON.stringify({
    openapi: '3.0.3',
    info: { title: 'Exploding', version: '1' },
    paths: { '/x': { post: { requestBody: { content: { 'application/json': { schema: { $ref: '#/components/schemas/S0' } } } }, responses: { '204': { description: 'ok' } } } } },
    components: { schemas },
  });
}

async function refusalOf(promise: Promise<unknown>): Promise<DomainError> {
  try {
    await promise;
  } catch (error) {
    expect(error).to.be.instanceOf(DomainError);
    return error as DomainError;
  }
  throw new Error('the document was read');
}

describe('OpenAPI documents read in worker threads', () => {
  let reader: WorkerOpenApiReader;
  afterEach(() => reader.close());

  it('proposes as the application does, with the names given; refusals keep their code and field', async () => {
    reader = new WorkerOpenApiReader({ timeoutMs: 60_000, maxHeapMb: 256, maxWorkers: 1 });
    const proposal = await reader.propose(request(openApiFixture('petstore-expanded.yaml')));
    expect(proposal.operations.map((operation) => operation.name)).to.deep.equal(['findPets', 'addPet_2', 'find_pet_by_id', 'removePet']);
    const refusal = await refusalOf(reader.propose(request(openApiFixture('swagger-2.0.json'))));
    expect([refusal.kind, refusal.code, refusal.field]).to.deep.equal(['invalid', 'swagger_not_supported', 'file']);
  });

  it('stops a document whose reading runs away, refuses it, and goes on with the next', async () => {
    reader = new WorkerOpenApiReader({ timeoutMs: 500, maxHeapMb: 256, maxWorkers: 1 });
    const [runaway, next] = await Promise.allSettled([reader.propose(request(exploding(40))), reader.propose(request(openApiFixture('petstore.json')))]);
    expect(runaway.status).to.equal('rejected');
    const refusal = (runaway as PromiseRejectedResult).reason as DomainError;
    expect([refusal.code, refusal.field]).to.deep.equal(['invalid_openapi', 'file']);
    expect(refusal.message).to.equal('file: reading the document took longer than 500 ms (its $refs may expand too far)');
    expect(next.status).to.equal('fulfilled');
    expect((next as PromiseFulfilledResult<{ operations: unknown[] }>).value.operations).to.have.length(3);
  });

  it('reads more documents at once than it has workers, each in turn', async () => {
    reader = new WorkerOpenApiReader({ timeoutMs: 60_000, maxHeapMb: 256, maxWorkers: 2 });
    const proposals = await Promise.all(['petstore.json', 'petstore-expanded.yaml', 'catalog-3.1.yaml', 'petstore.json'].map((name) => reader.propose(request(openApiFixture(name)))));
    expect(proposals.map((proposal) => proposal.operations.length)).to.deep.equal([3, 4, 5, 3]);
  });
});
