// Saga `document_indexing` (version 1): makes each document searchable, generation by
// generation, and takes it out of the index and the blob store when it is deleted.
//
// DocumentAdded (generation 1) or DocumentReindexRequested (generation n) -> StartIndexing(n)
// -> the original bytes from the blob store -> the text extractor -> chunking -> vectors
// (when an embeddings endpoint is configured) -> searchIndex.replaceDocument ->
// RecordIndexed(n, chunks, characters). DocumentDeleted -> searchIndex.removeDocument and
// blobStore.delete.
//
// `documentIndexing` is the process manager (pure): given the document's events and an
// input (a trigger, or the outcome of the indexing call), what to do. The saga reads the
// document's stream, does what it asks, and feeds the outcome back in over the stream as it
// is then, so a redelivered trigger asks for nothing once its generation has an outcome, an
// outcome of a generation a reindex superseded records nothing, and chunks written for a
// document deleted meanwhile are taken out again.
//
// Failures: what cannot get better by trying again (the file is missing, not what its type
// says, or has no text) is recorded at once as RecordIndexingFailed with its reason. Anything
// else (the embeddings endpoint down, a store failing) is thrown, so saga delivery retries
// the trigger with back-off (SAGA_MAX_ATTEMPTS, 1 s doubling); the last attempt records the
// failure instead of throwing, so the document ends `failed` with a reason, never stuck in
// `indexing`. Retried work is the same work: replaceDocument replaces.

import { type DocumentAddedData, type DocumentCommand, type DocumentEvent, type DocumentState, documentDecider, documentEvents, documentStream } from '../../domain/document/document';
import { type Aggregate, type CommandDependencies, handleCommand, loadAggregate } from '../command-handling/handle-command';
import type { BlobStore } from '../ports/blob-store';
import { type Embeddings, EmbeddingsError } from '../ports/embeddings';
import type { IndexedChunk, SearchIndex } from '../ports/search-index';
import { type TextExtractor, UnsupportedDocumentError } from '../ports/text-extractor';
import type { ProcessManager } from '../sagas/process-manager';
import type { Saga, SagaContext } from '../sagas/saga';
import { type RequestContext, systemContext } from '../shared/request-context';
import { type ChunkingOptions, DEFAULT_CHUNKING, type TextChunk, chunkText } from './chunking';

export const DOCUMENT_INDEXING = 'document_indexing';

const documentAggregate: Aggregate<DocumentCommand, DocumentEvent, DocumentState> = { decider: documentDecider, events: documentEvents };

type Trigger<Type extends DocumentEvent['type']> = Extract<DocumentEvent, { type: Type }>;

export type IndexingInput =
  | Trigger<'DocumentAdded'>
  | Trigger<'DocumentReindexRequested'>
  | Trigger<'DocumentDeleted'>
  /** The indexing call wrote the generation's chunks. */
  | { type: 'IndexerFinished'; data: { tenant_id: string; document_id: string; generation: number; chunks: number; characters: number } }
  /** The indexing call gave up on the generation: a reason a tenant can act on. */
  | { type: 'IndexerFailed'; data: { document_id: string; generation: number; reason: string } };

export type IndexingOutput =
  | Extract<DocumentCommand, { type: 'StartIndexing' | 'RecordIndexed' | 'RecordIndexingFailed' }>
  /** Extract, chunk, embed and index the generation; its outcome comes back as an input. */
  | { type: 'IndexDocument'; data: { generation: number } }
  | { type: 'RemoveFromIndex'; data: { tenant_id: string; document_id: string } }
  | { type: 'DeleteBlob'; data: { blob_key: string } };

export const documentIndexing: ProcessManager<IndexingInput, DocumentEvent, DocumentState, IndexingOutput> = {
  initialState: documentDecider.initialState,
  evolve: documentDecider.evolve,
  decide(input, state) {
    const current = (generation: number): boolean => state.status === 'live' && state.generation === generation;
    switch (input.type) {
      case 'DocumentAdded':
      case 'DocumentReindexRequested': {
        const generation = input.type === 'DocumentAdded' ? 1 : input.data.generation;
        // Deleted, superseded by a later reindex (its own trigger handles it), or done.
        if (state.status !== 'live' || !current(generation)) return [];
        if (state.indexing === 'queued') return [{ type: 'StartIndexing', data: { generation } }, { type: 'IndexDocument', data: { generation } }];
        // Started by an earlier delivery that recorded no outcome (a crash, a passing failure): index again.
        if (state.indexing === 'indexing') return [{ type: 'IndexDocument', data: { generation } }];
        return [];
      }
      case 'IndexerFinished': {
        const { tenant_id, document_id, generation, chunks, characters } = input.data;
        // Deleted while it was being indexed: the chunks just written must not stay.
        if (state.status === 'deleted') return [{ type: 'RemoveFromIndex', data: { tenant_id, document_id } }];
        return current(generation) && state.status === 'live' && state.indexing === 'indexing' ? [{ type: 'RecordIndexed', data: { generation, chunks, characters } }] : [];
      }
      case 'IndexerFailed':
        return current(input.data.generation) && state.status === 'live' && state.indexing === 'indexing'
          ? [{ type: 'RecordIndexingFailed', data: { generation: input.data.generation, reason: input.data.reason } }]
          : [];
      case 'DocumentDeleted':
        // Both are harmless to repeat, so a redelivered deletion needs no state to check.
        return [
          { type: 'RemoveFromIndex', data: { tenant_id: input.data.tenant_id, document_id: input.data.document_id } },
          { type: 'DeleteBlob', data: { blob_key: input.data.blob_key } },
        ];
    }
  },
};

export interface DocumentIndexingDependencies extends CommandDependencies {
  blobStore: BlobStore;
  textExtractor: TextExtractor;
  searchIndex: SearchIndex;
  /** Null: chunks are indexed for BM25 alone. */
  embeddings: Embeddings | null;
}

export interface DocumentIndexingPolicy {
  /** SAGA_MAX_ATTEMPTS: the attempt at which a passing failure is recorded instead of retried. */
  maxAttempts: number;
  chunking?: ChunkingOptions;
}

/** A failure no retry can mend; its message is the reason recorded on the document. */
class PermanentIndexingFailure extends Error {}

/** The text a chunk's vector is made of: where it sits, then what it says. */
export const embeddingTextOf = (title: string, chunk: Pick<TextChunk, 'heading' | 'text'>): string => `${chunk.heading ? `${title} › ${chunk.heading}` : title}\n\n${chunk.text}`;

export function documentIndexingSaga(deps: DocumentIndexingDependencies, policy: DocumentIndexingPolicy): Saga<'DocumentAdded' | 'DocumentReindexRequested' | 'DocumentDeleted'> {
  const chunking = policy.chunking ?? DEFAULT_CHUNKING;

  /** Feeds one input to the process manager over the document's current state, and carries out what it decides. */
  async function run(documentId: string, input: IndexingInput, context: RequestContext, saga: SagaContext): Promise<void> {
    const stream = documentStream(documentId);
    const { state } = await loadAggregate(deps, documentAggregate, stream);
    for (const output of documentIndexing.decide(input, state, { now: deps.clock.now() })) {
      switch (output.type) {
        case 'IndexDocument':
          if (state.status === 'live') await run(documentId, await indexGeneration(state.document, output.data.generation, saga), context, saga);
          break;
        case 'RemoveFromIndex':
          await deps.searchIndex.removeDocument(output.data.tenant_id, output.data.document_id);
          break;
        case 'DeleteBlob':
          await deps.blobStore.delete(output.data.blob_key);
          break;
        default:
          await handleCommand(deps, documentAggregate, stream, output, context);
      }
    }
  }

  /** The generation indexed, as an outcome; throws a passing failure while attempts remain. */
  async function indexGeneration(document: DocumentAddedData, generation: number, saga: SagaContext): Promise<IndexingInput> {
    const { tenant_id, document_id } = document;
    try {
      const { chunks, characters } = await indexedChunks(document);
      await deps.searchIndex.replaceDocument(tenant_id, document_id, chunks);
      return { type: 'IndexerFinished', data: { tenant_id, document_id, generation, chunks: chunks.length, characters } };
    } catch (error) {
      if (error instanceof PermanentIndexingFailure) return { type: 'IndexerFailed', data: { document_id, generation, reason: error.message } };
      if (saga.attempt < policy.maxAttempts) {
        saga.logger.warn({ err: error, document_id, generation, attempt: saga.attempt }, 'indexing failed; it will be retried');
        throw error;
      }
      saga.logger.error({ err: error, document_id, generation, attempt: saga.attempt }, 'indexing failed on its last attempt');
      // An EmbeddingsError says only status and code; any other error may carry internals, which stay in the log.
      const cause = error instanceof EmbeddingsError ? error.message : 'an unexpected error (the operator log has the details)';
      return { type: 'IndexerFailed', data: { document_id, generation, reason: `indexing gave up after ${saga.attempt} attempts: ${cause}` } };
    }
  }

  async function indexedChunks(document: DocumentAddedData): Promise<{ chunks: IndexedChunk[]; characters: number }> {
    const blob = await deps.blobStore.get(document.blob_key);
    if (!blob) throw new PermanentIndexingFailure("the document's file is missing from storage; upload it again");
    let text: string;
    try {
      text = await deps.textExtractor.extract(blob.bytes, document.content_type);
    } catch (error) {
      if (error instanceof UnsupportedDocumentError) throw new PermanentIndexingFailure(`the file could not be read as ${document.content_type}: ${error.message}`);
      throw error;
    }
    const pieces = chunkText(text, chunking);
    if (pieces.length === 0) throw new PermanentIndexingFailure('no text could be read from the file (a scanned document holds only pictures of its text)');
    const vectors = deps.embeddings ? await deps.embeddings.embed(pieces.map((piece) => embeddingTextOf(document.title, piece))) : null;
    const chunks = pieces.map(
      (piece, index): IndexedChunk => ({
        chunk_id: `${document.document_id}:${piece.ordinal}`,
        document_id: document.document_id,
        tenant_id: document.tenant_id,
        workspace_id: document.workspace_id,
        title: document.title,
        ordinal: piece.ordinal,
        heading: piece.heading,
        text: piece.text,
        vector: vectors ? vectors[index] : null,
      }),
    );
    return { chunks, characters: text.length };
  }

  return {
    name: DOCUMENT_INDEXING,
    version: 1,
    filter: { kind: 'event_type', types: ['DocumentAdded', 'DocumentReindexRequested', 'DocumentDeleted'] },
    async handle(event, saga) {
      const context = { ...systemContext(event.metadata.correlation_id, DOCUMENT_INDEXING, event.id), tenant_id: event.metadata.tenant_id };
      await run(event.data.document_id, { type: event.type, data: event.data } as IndexingInput, context, saga);
    },
  };
}
