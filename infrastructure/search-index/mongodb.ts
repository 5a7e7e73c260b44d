// The search index on MongoDB, next to the read store (same client and database): a text
// index ranks by MongoDB's own relevance score (term frequency weighted per field, English
// stemming and stopwords), the counterpart of the embedded FTS5/BM25 index.
//
// - Collection `search_chunks`, one document per chunk (`_id` = tenant and chunk id, a chunk
//   id being unique within its tenant). The text index is
//   compound with `tenant_id` first, so MongoDB requires and uses the tenant in every text
//   search: one tenant's chunks are never ranked among another's. Weights: title 4,
//   heading 3, text 2 (as the embedded index: title and heading above the text).
// - The question is given to `$text` as plain words only (ranking/searchTerms): no quotes
//   (phrases) and no leading `-` (negation) can come from a user.
// - Vectors are stored as arrays; with a query vector the allowed workspaces' vectors are
//   read and compared by cosine similarity in this process, then fused with the text ranking
//   by RRF (k = 60). Exact, and fine for a tenant's knowledge base of some ten thousand
//   chunks; beyond that, a vector index (Atlas Vector Search) would take this place.
// - replaceDocument is one multi-document transaction (the read store already requires a
//   replica set).

import type { ClientSession, Collection, Db, MongoClient } from 'mongodb';
import type { IndexedChunk, SearchHit, SearchIndex, SearchQuery } from '../../application/ports/search-index';
import { boundedLimit, candidatesFor, dot, normalized, reciprocalRankFusion, searchTerms, topByScore } from './ranking';

export const SEARCH_CHUNKS = 'search_chunks';

/** A chunk as stored: the port's chunk under a tenant-scoped key, its vector a plain array. */
type ChunkDocument = Omit<IndexedChunk, 'vector'> & {
  /** keyOf(tenant_id, chunk_id). */
  _id: string;
  vector: number[] | null;
};

const WITHOUT_VECTOR = { vector: 0 } as const;

const keyOf = (tenantId: string, chunkId: string): string => JSON.stringify([tenantId, chunkId]);

export class MongoSearchIndex implements SearchIndex {
  private ready: Promise<void> | null = null;
  private readonly chunks: Collection<ChunkDocument>;

  constructor(
    private readonly client: MongoClient,
    db: Db,
  ) {
    this.chunks = db.collection<ChunkDocument>(SEARCH_CHUNKS);
  }

  /** Creates the indexes once per process (createIndex is a no-op when they exist). */
  private ensureIndexes(): Promise<void> {
    this.ready ??= (async () => {
      await this.chunks.createIndex(
        { tenant_id: 1, title: 'text', heading: 'text', text: 'text' },
        { name: 'search_text', weights: { title: 4, heading: 3, text: 2 }, default_language: 'english', language_override: 'search_language' },
      );
      await this.chunks.createIndex({ tenant_id: 1, document_id: 1 }, { name: 'search_document' });
      await this.chunks.createIndex({ tenant_id: 1, workspace_id: 1 }, { name: 'search_workspace' });
    })().catch((error: unknown) => {
      this.ready = null;
      throw error;
    });
    return this.ready;
  }

  async replaceDocument(tenantId: string, documentId: string, chunks: readonly IndexedChunk[]): Promise<void> {
    for (const chunk of chunks) {
      if (chunk.tenant_id !== tenantId || chunk.document_id !== documentId) throw new Error(`chunk ${chunk.chunk_id} is not of document ${documentId} of tenant ${tenantId}`);
    }
    await this.ensureIndexes();
    await this.client.withSession((session: ClientSession) =>
      session.withTransaction(async () => {
        await this.chunks.deleteMany({ tenant_id: tenantId, document_id: documentId }, { session });
        if (chunks.length > 0) await this.chunks.insertMany(chunks.map(toDocument), { session });
      }),
    );
  }

  async removeDocument(tenantId: string, documentId: string): Promise<void> {
    await this.ensureIndexes();
    await this.chunks.deleteMany({ tenant_id: tenantId, document_id: documentId });
  }

  async search(query: SearchQuery): Promise<SearchHit[]> {
    await this.ensureIndexes();
    const limit = boundedLimit(query.limit);
    const workspaces = [...new Set(query.workspace_ids)];
    if (workspaces.length === 0) return [];
    const hybrid = Boolean(query.vector && query.vector.length > 0);
    const fullText = await this.fullText(query.tenant_id, workspaces, query.text, hybrid ? candidatesFor(limit) : limit);
    if (!hybrid) return fullText.map(({ document, score }) => ({ chunk: toChunk(document), score }));

    const similar = await this.similar(query.tenant_id, workspaces, normalized(query.vector!), candidatesFor(limit));
    const fused = reciprocalRankFusion([fullText.map(({ document }) => document._id), similar.map(({ item }) => item._id)], limit);
    const documents = new Map(fullText.map(({ document }) => [document._id, document]));
    const missing = fused.map(({ id }) => id).filter((id) => !documents.has(id));
    if (missing.length > 0) {
      for (const document of await this.chunks.find({ _id: { $in: missing }, tenant_id: query.tenant_id }, { projection: WITHOUT_VECTOR }).toArray()) documents.set(document._id, document);
    }
    return fused.flatMap(({ id, score }) => {
      const document = documents.get(id);
      return document && workspaces.includes(document.workspace_id) ? [{ chunk: toChunk(document), score }] : [];
    });
  }

  /** Nothing to release: the client belongs to the read store. */
  async close(): Promise<void> {}

  private async fullText(tenantId: string, workspaces: readonly string[], text: string, limit: number): Promise<Array<{ document: ChunkDocument; score: number }>> {
    const terms = searchTerms(text);
    if (terms.length === 0) return [];
    const found = await this.chunks
      .find(
        { tenant_id: tenantId, workspace_id: { $in: [...workspaces] }, $text: { $search: terms.join(' ') } },
        { projection: { ...WITHOUT_VECTOR, score: { $meta: 'textScore' } } },
      )
      .sort({ score: { $meta: 'textScore' }, _id: 1 })
      .limit(limit)
      .toArray();
    return found.map((document) => {
      const { score, ...chunk } = document as ChunkDocument & { score: number };
      return { document: chunk, score };
    });
  }

  private async similar(tenantId: string, workspaces: readonly string[], query: Float32Array, limit: number) {
    const rows = await this.chunks
      .find({ tenant_id: tenantId, workspace_id: { $in: [...workspaces] }, vector: { $type: 'array' } }, { projection: { _id: 1, vector: 1 } })
      .toArray();
    const comparable = rows.flatMap((row) => (row.vector && row.vector.length === query.length ? [{ _id: row._id, vector: normalized(row.vector) }] : []));
    return topByScore(comparable, (row) => dot(row.vector, query), limit);
  }
}

function toDocument(chunk: IndexedChunk): ChunkDocument {
  return {
    _id: keyOf(chunk.tenant_id, chunk.chunk_id),
    chunk_id: chunk.chunk_id,
    tenant_id: chunk.tenant_id,
    workspace_id: chunk.workspace_id,
    document_id: chunk.document_id,
    title: chunk.title,
    ordinal: chunk.ordinal,
    heading: chunk.heading,
    text: chunk.text,
    vector: chunk.vector && chunk.vector.length > 0 ? [...chunk.vector] : null,
  };
}

function toChunk(document: ChunkDocument): IndexedChunk {
  return {
    chunk_id: document.chunk_id,
    document_id: document.document_id,
    tenant_id: document.tenant_id,
    workspace_id: document.workspace_id,
    title: document.title,
    ordinal: document.ordinal,
    heading: document.heading,
    text: document.text,
  };
}

/** The search index over the read store's MongoDB client and database. */
export function mongoSearchIndex(store: { client: MongoClient; db: Db }): MongoSearchIndex {
  return new MongoSearchIndex(store.client, store.db);
}
