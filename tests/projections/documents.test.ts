// The documents read model follows each document's indexing generations; the tenant's documents
// counter (the quota) and the daily documents metric count additions and deletions once, however
// often the log is replayed.

import { expect } from 'chai';
import { DAILY_USAGE, type DailyUsageDocument, dailyUsageProjection } from '../../projections/daily-usage';
import { DOCUMENTS, type DocumentEntry, documentsProjection } from '../../projections/documents';
import { ProjectionRunner } from '../../projections/runner';
import { TENANT_QUOTAS, type TenantQuotaDocument, tenantQuotasProjection } from '../../projections/tenant-quotas';
import { newEvent } from '../support/events';
import { type EmbeddedStores, embeddedStores } from '../support/stores';

const PROJECTIONS = [documentsProjection, tenantQuotasProjection, dailyUsageProjection];

describe('documents projection, and documents in the quota and usage counters', () => {
  let stores: EmbeddedStores;
  let runner: ProjectionRunner;

  const added = (id: string, tenantId: string, at: string) =>
    newEvent('DocumentAdded', {
      document_id: id,
      tenant_id: tenantId,
      workspace_id: 'ws-1',
      title: `Title ${id}`,
      source: 'upload',
      filename: `${id}.pdf`,
      content_type: 'application/pdf',
      size_bytes: 100,
      sha256: 'f'.repeat(64),
      blob_key: `${tenantId}/${id}`,
      added_by: 'u1',
      added_at: at,
    });
  const on = (id: string) => ({
    started: (generation: number) => newEvent('DocumentIndexingStarted', { document_id: id, generation, started_at: '2026-03-01T10:00:01.000Z' }),
    indexed: (generation: number, chunks: number) => newEvent('DocumentIndexed', { document_id: id, generation, chunks, characters: chunks * 100, indexed_at: '2026-03-01T10:00:02.000Z' }),
    failed: (generation: number, reason: string) => newEvent('DocumentIndexingFailed', { document_id: id, generation, reason, failed_at: '2026-03-01T10:00:03.000Z' }),
    reindex: (generation: number) => newEvent('DocumentReindexRequested', { document_id: id, generation, requested_by: 'u2', requested_at: '2026-03-01T11:00:00.000Z' }),
    deleted: (tenantId: string) => newEvent('DocumentDeleted', { document_id: id, tenant_id: tenantId, workspace_id: 'ws-1', blob_key: `${tenantId}/${id}`, deleted_by: 'u2', deleted_at: '2026-03-02T09:00:00.000Z' }),
  });

  const startRunner = async (): Promise<void> => {
    runner = new ProjectionRunner({ eventStore: stores.events, readStore: stores.readStore, clock: stores.clock }, PROJECTIONS, { retryDelayMs: 20, idleCheckpointMs: 0 });
    await runner.start();
  };
  const settle = async () => expect(await runner.waitFor(await stores.eventStore.headPosition(), { timeoutMs: 5000 })).to.equal(true);
  const entry = (id: string) => stores.readStore.collection<DocumentEntry>(DOCUMENTS).get(id);
  const documentsCounter = async (tenantId: string) => (await stores.readStore.collection<TenantQuotaDocument>(TENANT_QUOTAS).get(tenantId))?.counters.documents;
  const dailyDocuments = async (day: string) => (await stores.readStore.collection<DailyUsageDocument>(DAILY_USAGE).get(`documents:${day}`))?.count ?? 0;

  beforeEach(async () => {
    stores = embeddedStores();
    await startRunner();
  });
  afterEach(async () => {
    await runner.stop();
    await stores.dispose();
  });

  it('adds a queued entry, then follows its generation: indexing, ready with chunks, failed with a reason', async () => {
    await stores.eventStore.appendToStream('document-d1', [added('d1', 't1', '2026-03-01T10:00:00.000Z')]);
    await settle();
    expect(await entry('d1')).to.deep.include({ tenant_id: 't1', workspace_id: 'ws-1', title: 'Title d1', status: 'queued', generation: 1, chunks: 0, failure_reason: null, indexed_at: null, revision: 0 });
    await stores.eventStore.appendToStream('document-d1', [on('d1').started(1)]);
    await settle();
    expect(await entry('d1')).to.deep.include({ status: 'indexing', revision: 1 });
    await stores.eventStore.appendToStream('document-d1', [on('d1').indexed(1, 4)]);
    await settle();
    expect(await entry('d1')).to.deep.include({ status: 'ready', chunks: 4, characters: 400, indexed_at: '2026-03-01T10:00:02.000Z', revision: 2 });
    await stores.eventStore.appendToStream('document-d1', [on('d1').reindex(2), on('d1').started(2), on('d1').failed(2, 'the PDF is password-protected')]);
    await settle();
    // The chunks of generation 1 are still the ones in the index until generation 2 replaces them.
    expect(await entry('d1')).to.deep.include({ status: 'failed', generation: 2, chunks: 4, failure_reason: 'the PDF is password-protected', revision: 5 });
  });

  it('ignores outcomes of a superseded generation, but still moves the revision (the ETag is the stream revision)', async () => {
    await stores.eventStore.appendToStream('document-d2', [added('d2', 't1', '2026-03-01T10:00:00.000Z'), on('d2').started(1), on('d2').reindex(2), on('d2').indexed(1, 9)]);
    await settle();
    expect(await entry('d2')).to.deep.include({ status: 'queued', generation: 2, chunks: 0, revision: 3 });
  });

  it('removes a deleted document, and counts documents in the quota (+1, -1) and the daily usage (additions) once across a replay', async () => {
    await stores.eventStore.appendToStream('document-a', [added('a', 't1', '2026-03-01T10:00:00.000Z')]);
    await stores.eventStore.appendToStream('document-b', [added('b', 't1', '2026-03-01T12:00:00.000Z')]);
    await stores.eventStore.appendToStream('document-c', [added('c', 't2', '2026-03-02T08:00:00.000Z')]);
    await stores.eventStore.appendToStream('document-a', [on('a').deleted('t1')]);
    await settle();
    expect(await entry('a')).to.equal(null);
    expect(await entry('b')).to.not.equal(null);
    expect([await documentsCounter('t1'), await documentsCounter('t2')]).to.deep.equal([1, 1]);
    expect([await dailyDocuments('2026-03-01'), await dailyDocuments('2026-03-02')]).to.deep.equal([2, 1]);
    // A crash before the checkpoint: everything comes again.
    await runner.stop();
    for (const projection of PROJECTIONS) {
      const state = await stores.readStore.getProjectionState(projection.name);
      await stores.readStore.putProjectionState({ ...state!, checkpoint: 0 });
    }
    await startRunner();
    await settle();
    expect([await documentsCounter('t1'), await documentsCounter('t2')]).to.deep.equal([1, 1]);
    expect([await dailyDocuments('2026-03-01'), await dailyDocuments('2026-03-02')]).to.deep.equal([2, 1]);
    expect(await entry('a')).to.equal(null);
  });
});
