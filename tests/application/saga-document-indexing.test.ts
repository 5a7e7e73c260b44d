// The document indexing saga: its process manager given/when/then, and the saga over the
// embedded stores, the SQLite search index, the file blob store and the platform's text
// extractor: generations, redelivery, permanent and passing failures, embeddings, deletion.

import { expect } from 'chai';
import { handleCommand } from '../../application/command-handling/handle-command';
import { type IndexingInput, documentIndexing, documentIndexingSaga, embeddingTextOf } from '../../application/knowledge/indexing-saga';
import type { BlobStore } from '../../application/ports/blob-store';
import type { RecordedOf } from '../../application/ports/domain-event-store';
import { silentLogger } from '../../application/ports/logger';
import type { SearchHit } from '../../application/ports/search-index';
import type { SagaContext } from '../../application/sagas/saga';
import { type DocumentAddedData, type DocumentCommand, type DocumentEvent, documentDecider, documentEvents, documentStream } from '../../domain/document/document';
import { OpenAiEmbeddings } from '../../infrastructure/llm/embeddings';
import { SqliteSearchIndex } from '../../infrastructure/search-index/sqlite';
import { userContext } from '../support/context';
import { FIXED_NOW } from '../support/decider-spec';
import { LocalEmbeddingsServer, embedText } from '../support/embeddings-server';
import { processManagerSpec } from '../support/process-manager-spec';
import { type EmbeddedStores, embeddedStores } from '../support/stores';
import { FileBlobStore } from '../../infrastructure/blob-store/files';
import { DocumentTextExtractor } from '../../infrastructure/extraction/document-text-extractor';
import { temporaryDirectory } from '../support/files';

const T = 'tenant-1';
const W = 'workspace-1';
const at = FIXED_NOW.toISOString();

const added = (documentId = 'doc-1'): DocumentAddedData => ({
  document_id: documentId,
  tenant_id: T,
  workspace_id: W,
  title: 'Refund policy',
  source: 'text',
  filename: null,
  content_type: 'text/markdown',
  size_bytes: 10,
  sha256: 'digest',
  blob_key: `${T}/${documentId}`,
  added_by: 'user-1',
  added_at: at,
});

describe('document indexing process manager', () => {
  const spec = processManagerSpec(documentIndexing);
  const documentAdded: DocumentEvent = { type: 'DocumentAdded', data: added() };
  const started = (generation: number): DocumentEvent => ({ type: 'DocumentIndexingStarted', data: { document_id: 'doc-1', generation, started_at: at } });
  const indexed = (generation: number): DocumentEvent => ({ type: 'DocumentIndexed', data: { document_id: 'doc-1', generation, chunks: 3, characters: 900, indexed_at: at } });
  const failed = (generation: number): DocumentEvent => ({ type: 'DocumentIndexingFailed', data: { document_id: 'doc-1', generation, reason: 'no text', failed_at: at } });
  const reindex = (generation: number): Extract<DocumentEvent, { type: 'DocumentReindexRequested' }> => ({
    type: 'DocumentReindexRequested',
    data: { document_id: 'doc-1', generation, requested_by: 'user-1', requested_at: at },
  });
  const deleted: Extract<DocumentEvent, { type: 'DocumentDeleted' }> = {
    type: 'DocumentDeleted',
    data: { document_id: 'doc-1', tenant_id: T, workspace_id: W, blob_key: `${T}/doc-1`, deleted_by: 'user-1', deleted_at: at },
  };
  const finished = (generation: number): IndexingInput => ({ type: 'IndexerFinished', data: { tenant_id: T, document_id: 'doc-1', generation, chunks: 3, characters: 900 } });
  const gaveUp = (generation: number): IndexingInput => ({ type: 'IndexerFailed', data: { document_id: 'doc-1', generation, reason: 'the file is missing' } });

  it('starts and indexes generation 1 of an added document', () => {
    spec.given([documentAdded]).when(documentAdded as IndexingInput).then([{ type: 'StartIndexing', data: { generation: 1 } }, { type: 'IndexDocument', data: { generation: 1 } }]);
  });

  it('indexes again a generation started by a delivery that recorded no outcome', () => {
    spec.given([documentAdded, started(1)]).when(documentAdded as IndexingInput).then([{ type: 'IndexDocument', data: { generation: 1 } }]);
  });

  it('asks nothing for a trigger whose generation has an outcome (a redelivery)', () => {
    spec.given([documentAdded, started(1), indexed(1)]).when(documentAdded as IndexingInput).thenNothingHappened();
    spec.given([documentAdded, started(1), failed(1)]).when(documentAdded as IndexingInput).thenNothingHappened();
    spec.given([documentAdded, started(1), indexed(1), reindex(2), started(2), indexed(2)]).when(reindex(2)).thenNothingHappened();
  });

  it('leaves a superseded generation to the trigger of the newer one', () => {
    spec.given([documentAdded, reindex(2)]).when(documentAdded as IndexingInput).thenNothingHappened();
    spec.given([documentAdded, started(1), reindex(2), reindex(3)]).when(reindex(2)).thenNothingHappened();
    spec.given([documentAdded, started(1), reindex(2)]).when(reindex(2)).then([{ type: 'StartIndexing', data: { generation: 2 } }, { type: 'IndexDocument', data: { generation: 2 } }]);
    spec.given([documentAdded, started(1), indexed(1), reindex(2)]).when(reindex(2)).then([{ type: 'StartIndexing', data: { generation: 2 } }, { type: 'IndexDocument', data: { generation: 2 } }]);
  });

  it('records the outcome of the current generation only, and once', () => {
    spec.given([documentAdded, started(1)]).when(finished(1)).then([{ type: 'RecordIndexed', data: { generation: 1, chunks: 3, characters: 900 } }]);
    spec.given([documentAdded, started(1)]).when(gaveUp(1)).then([{ type: 'RecordIndexingFailed', data: { generation: 1, reason: 'the file is missing' } }]);
    spec.given([documentAdded, started(1), reindex(2)]).when(finished(1)).thenNothingHappened();
    spec.given([documentAdded, started(1), reindex(2)]).when(gaveUp(1)).thenNothingHappened();
    spec.given([documentAdded, started(1), indexed(1)]).when(finished(1)).thenNothingHappened();
    spec.given([documentAdded, started(1), failed(1)]).when(gaveUp(1)).thenNothingHappened();
  });

  it('does nothing for a deleted document but take back chunks indexed while it was deleted', () => {
    spec.given([documentAdded, deleted]).when(documentAdded as IndexingInput).thenNothingHappened();
    spec.given([documentAdded, started(1), deleted]).when(gaveUp(1)).thenNothingHappened();
    spec.given([documentAdded, started(1), deleted]).when(finished(1)).then([{ type: 'RemoveFromIndex', data: { tenant_id: T, document_id: 'doc-1' } }]);
  });

  it('removes the chunks and the file of a deleted document', () => {
    spec.given([documentAdded, started(1), indexed(1), deleted]).when(deleted).then([
      { type: 'RemoveFromIndex', data: { tenant_id: T, document_id: 'doc-1' } },
      { type: 'DeleteBlob', data: { blob_key: `${T}/doc-1` } },
    ]);
  });
});

describe('document indexing saga', () => {
  let stores: EmbeddedStores;
  let searchIndex: SqliteSearchIndex;
  let blobs: FileBlobStore;
  let blobFolder: { path: string; remove(): void };
  const extractor = new DocumentTextExtractor();
  const MAX_ATTEMPTS = 3;
  const attempt = (n: number): SagaContext => ({ idempotencyKey: 'document_indexing:trigger', attempt: n, logger: silentLogger });
  const aggregate = { decider: documentDecider, events: documentEvents };

  beforeEach(() => {
    stores = embeddedStores();
    searchIndex = new SqliteSearchIndex(stores.db);
    blobFolder = temporaryDirectory();
    blobs = new FileBlobStore(blobFolder.path);
  });
  afterEach(async () => {
    await stores.dispose();
    blobFolder.remove();
  });
  const stored = async (key: string): Promise<boolean> => (await blobs.get(key)) !== null;

  const saga = (options: { embeddings?: OpenAiEmbeddings | null; blobStore?: BlobStore } = {}) =>
    documentIndexingSaga(
      { ...stores.commands, blobStore: options.blobStore ?? blobs, textExtractor: extractor, searchIndex, embeddings: options.embeddings ?? null },
      { maxAttempts: MAX_ATTEMPTS, chunking: { maxCharacters: 200, overlapCharacters: 30 } },
    );
  const command = (documentId: string, cmd: DocumentCommand) => handleCommand(stores.commands, aggregate, documentStream(documentId), cmd, userContext({ tenant_id: T }));
  const types = async (documentId: string): Promise<string[]> => (await stores.events.readStream(documentStream(documentId))).map((event) => event.type);
  const lastOf = async <Type extends DocumentEvent['type']>(documentId: string, type: Type): Promise<RecordedOf<Type>> => {
    const events = await stores.events.readStream(documentStream(documentId));
    const found = events.filter((event) => event.type === type).at(-1);
    if (!found) throw new Error(`no ${type} on ${documentId}: ${events.map((event) => event.type).join(', ')}`);
    return found as RecordedOf<Type>;
  };
  const search = (text: string, vector: number[] | null = null): Promise<SearchHit[]> => searchIndex.search({ tenant_id: T, workspace_ids: [W], text, vector, limit: 50 });

  const MARKDOWN = [
    '# Refunds',
    'A refund is paid within five days of the return reaching our depot. Refunds go back to the card you paid with.',
    '',
    '## Exceptions',
    'Gift cards are never refunded. Sale items can be exchanged but not refunded.',
    '',
    '# Shipping',
    'Parcels leave every morning from the depot in Leeds.',
  ].join('\n');

  /** Adds a document whose file holds `content`; returns its DocumentAdded as delivered. */
  async function addDocument(documentId: string, content: string | Buffer, contentType = 'text/markdown', storeFile = true): Promise<RecordedOf<'DocumentAdded'>> {
    const data = { ...added(documentId), content_type: contentType };
    if (storeFile) await blobs.put(data.blob_key, Buffer.isBuffer(content) ? content : Buffer.from(content), contentType);
    const { added_at: _addedAt, ...command_data } = data;
    await command(documentId, { type: 'AddDocument', data: command_data });
    return lastOf(documentId, 'DocumentAdded');
  }

  it('indexes an added document: started, then indexed with its chunks and characters, each chunk under its heading', async () => {
    const trigger = await addDocument('doc-1', MARKDOWN);
    await saga().handle(trigger, attempt(1));
    expect(await types('doc-1')).to.deep.equal(['DocumentAdded', 'DocumentIndexingStarted', 'DocumentIndexed']);
    const indexed = await lastOf('doc-1', 'DocumentIndexed');
    const extracted = await extractor.extract(Buffer.from(MARKDOWN), 'text/markdown');
    expect(indexed.data).to.deep.include({ document_id: 'doc-1', generation: 1, chunks: 3, characters: extracted.length });
    expect(indexed.metadata.actor).to.deep.equal({ kind: 'system', id: 'document_indexing' });
    expect(indexed.metadata.causation_id).to.equal(trigger.id);
    expect(indexed.metadata.tenant_id).to.equal(T);
    const hits = await search('gift');
    expect(hits.map((hit) => [hit.chunk.heading, hit.chunk.chunk_id])).to.deep.equal([['Exceptions', 'doc-1:1']]);
    expect(hits[0].chunk).to.deep.include({ title: 'Refund policy', tenant_id: T, workspace_id: W, document_id: 'doc-1', ordinal: 1 });
  });

  it('does nothing more when the trigger is delivered again', async () => {
    const trigger = await addDocument('doc-1', MARKDOWN);
    const indexing = saga();
    await indexing.handle(trigger, attempt(1));
    const before = await search('refund depot parcels exchanged');
    await indexing.handle(trigger, attempt(1));
    await indexing.handle(trigger, attempt(2));
    expect(await types('doc-1')).to.deep.equal(['DocumentAdded', 'DocumentIndexingStarted', 'DocumentIndexed']);
    expect(await search('refund depot parcels exchanged')).to.deep.equal(before);
    expect(before).to.have.length(3);
  });

  it('finishes a generation whose earlier delivery started it and stopped without an outcome', async () => {
    const trigger = await addDocument('doc-1', MARKDOWN);
    await command('doc-1', { type: 'StartIndexing', data: { generation: 1 } });
    await saga().handle(trigger, attempt(2));
    expect(await types('doc-1')).to.deep.equal(['DocumentAdded', 'DocumentIndexingStarted', 'DocumentIndexed']);
    expect(await search('refund')).to.have.length.greaterThan(0);
  });

  it('rebuilds the document on reindex, replacing its chunks, and ignores the superseded trigger', async () => {
    const trigger = await addDocument('doc-1', MARKDOWN);
    const indexing = saga();
    await indexing.handle(trigger, attempt(1));
    await blobs.put(`${T}/doc-1`, Buffer.from('# Warranty\nEvery kettle carries a two year warranty.'), 'text/markdown');
    await command('doc-1', { type: 'RequestReindex', data: { requested_by: 'user-1' } });
    const reindex = await lastOf('doc-1', 'DocumentReindexRequested');
    await indexing.handle(trigger, attempt(1));
    expect((await types('doc-1')).slice(3)).to.deep.equal(['DocumentReindexRequested']);
    await indexing.handle(reindex, attempt(1));
    expect((await types('doc-1')).slice(3)).to.deep.equal(['DocumentReindexRequested', 'DocumentIndexingStarted', 'DocumentIndexed']);
    expect((await lastOf('doc-1', 'DocumentIndexed')).data).to.deep.include({ generation: 2, chunks: 1 });
    expect(await search('depot')).to.deep.equal([]);
    expect((await search('kettle warranty')).map((hit) => hit.chunk.heading)).to.deep.equal(['Warranty']);
  });

  describe('failures', () => {
    async function failureReason(documentId: string): Promise<string> {
      expect(await types(documentId)).to.deep.equal(['DocumentAdded', 'DocumentIndexingStarted', 'DocumentIndexingFailed']);
      return (await lastOf(documentId, 'DocumentIndexingFailed')).data.reason;
    }

    it('records a missing file at once as failed, with the reason', async () => {
      await saga().handle(await addDocument('doc-1', MARKDOWN, 'text/markdown', false), attempt(1));
      expect(await failureReason('doc-1')).to.equal("the document's file is missing from storage; upload it again");
    });

    it('records a file that is not what its type says, or of a type the extractor does not read, as failed', async () => {
      await saga().handle(await addDocument('doc-1', Buffer.from([0x66, 0x00, 0x6f]), 'text/plain'), attempt(1));
      expect(await failureReason('doc-1')).to.equal('the file could not be read as text/plain: the bytes are not text/plain text (not UTF-8, or binary)');
      await saga().handle(await addDocument('doc-2', '%PDF-1.7 but no more', 'application/pdf'), attempt(1));
      expect(await failureReason('doc-2')).to.match(/^the file could not be read as application\/pdf: the PDF could not be read/);
      await saga().handle(await addDocument('doc-3', 'MZ', 'application/x-msdownload'), attempt(1));
      expect(await failureReason('doc-3')).to.equal('the file could not be read as application/x-msdownload: application/x-msdownload is not a document type the platform reads');
    });

    it('records a file without text as failed and indexes nothing', async () => {
      await saga().handle(await addDocument('doc-1', ' \n\n\t \n', 'text/plain'), attempt(1));
      expect(await failureReason('doc-1')).to.equal('no text could be read from the file (a scanned document holds only pictures of its text)');
      expect(await search('text')).to.deep.equal([]);
    });

    it('retries a passing failure (the embeddings endpoint down) and records it as failed on the last attempt', async () => {
      const server = await LocalEmbeddingsServer.start();
      try {
        server.down = true;
        const embeddings = new OpenAiEmbeddings({ baseUrl: server.baseUrl, apiKey: 'sk-secret-key', model: 'test-embed-1', batchSize: 16, maxRetries: 0 });
        const trigger = await addDocument('doc-1', MARKDOWN);
        const indexing = saga({ embeddings });
        for (const n of [1, 2]) {
          let thrown: unknown = null;
          await indexing.handle(trigger, attempt(n)).catch((error: unknown) => (thrown = error));
          expect(thrown, `attempt ${n}`).to.be.instanceOf(Error);
          expect(await types('doc-1')).to.deep.equal(['DocumentAdded', 'DocumentIndexingStarted']);
        }
        await indexing.handle(trigger, attempt(MAX_ATTEMPTS));
        expect(await failureReason('doc-1')).to.equal('indexing gave up after 3 attempts: the embeddings endpoint answered 503 (model_loading)');
        expect(await search('refund')).to.deep.equal([]);
        expect(server.requests).to.have.length(3);

        // Back up: a reindex makes it ready.
        server.down = false;
        await command('doc-1', { type: 'RequestReindex', data: { requested_by: 'user-1' } });
        await indexing.handle(await lastOf('doc-1', 'DocumentReindexRequested'), attempt(1));
        expect((await lastOf('doc-1', 'DocumentIndexed')).data.generation).to.equal(2);
      } finally {
        await server.close();
      }
    });

    it('records an unexpected failure on the last attempt without its internals', async () => {
      const broken: BlobStore = { get: () => Promise.reject(new Error('EIO: disk /var/secret failed')), put: blobs.put.bind(blobs), delete: blobs.delete.bind(blobs) };
      const trigger = await addDocument('doc-1', MARKDOWN);
      await saga({ blobStore: broken }).handle(trigger, attempt(1)).catch(() => undefined);
      await saga({ blobStore: broken }).handle(trigger, attempt(MAX_ATTEMPTS));
      expect(await failureReason('doc-1')).to.equal('indexing gave up after 3 attempts: an unexpected error (the operator log has the details)');
    });
  });

  it('stores a vector per chunk when embeddings are configured, in batches, so a question is found by meaning', async () => {
    const server = await LocalEmbeddingsServer.start();
    try {
      const embeddings = new OpenAiEmbeddings({ baseUrl: server.baseUrl, apiKey: null, model: 'test-embed-1', batchSize: 2, maxRetries: 0 });
      await saga({ embeddings }).handle(await addDocument('doc-1', MARKDOWN), attempt(1));
      expect(server.requests.map((request) => (request.body.input as string[]).length)).to.deep.equal([2, 1]);
      expect(server.texts[1]).to.equal(embeddingTextOf('Refund policy', { heading: 'Exceptions', text: 'Gift cards are never refunded. Sale items can be exchanged but not refunded.' }));
      // "reimbursement" shares no word with the document; its vector is next to "refund".
      expect(await search('reimbursement')).to.deep.equal([]);
      const hits = await search('reimbursement', embedText('reimbursement'));
      expect(hits[0].chunk.heading).to.equal('Refunds');
    } finally {
      await server.close();
    }
  });

  describe('deletion', () => {
    it('removes the chunks and the file; a redelivery is harmless', async () => {
      const indexing = saga();
      await indexing.handle(await addDocument('doc-1', MARKDOWN), attempt(1));
      await indexing.handle(await addDocument('doc-2', '# Refunds\nAnother refund note.'), attempt(1));
      await command('doc-1', { type: 'DeleteDocument', data: { deleted_by: 'user-1' } });
      const deletion = await lastOf('doc-1', 'DocumentDeleted');
      await indexing.handle(deletion, attempt(1));
      await indexing.handle(deletion, attempt(2));
      expect((await search('refund')).map((hit) => hit.chunk.document_id)).to.deep.equal(['doc-2']);
      expect(await stored(`${T}/doc-1`)).to.equal(false);
      expect(await stored(`${T}/doc-2`)).to.equal(true);
      expect((await types('doc-1')).at(-1)).to.equal('DocumentDeleted');
    });

    it('takes back the chunks of a document deleted while it was being indexed', async () => {
      const trigger = await addDocument('doc-1', MARKDOWN);
      // The deletion lands between reading the file and writing the chunks.
      const racing: BlobStore = {
        put: blobs.put.bind(blobs),
        delete: blobs.delete.bind(blobs),
        get: async (key) => {
          const blob = await blobs.get(key);
          await command('doc-1', { type: 'DeleteDocument', data: { deleted_by: 'user-1' } });
          return blob;
        },
      };
      await saga({ blobStore: racing }).handle(trigger, attempt(1));
      expect(await search('refund')).to.deep.equal([]);
      expect(await types('doc-1')).to.deep.equal(['DocumentAdded', 'DocumentIndexingStarted', 'DocumentDeleted']);
    });
  });
});
