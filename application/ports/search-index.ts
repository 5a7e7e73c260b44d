// The search index port: the chunks of every indexed document, searched by relevance.
// Embedded: SQLite FTS5 with BM25 ranking; MongoDB: a text index. When an embeddings
// endpoint is configured, chunks also carry vectors and search fuses BM25 with vector
// similarity (reciprocal rank fusion). A search names the tenant and the workspaces the asker
// may read: nothing outside them is ever returned.

export interface IndexedChunk {
  chunk_id: string;
  document_id: string;
  tenant_id: string;
  workspace_id: string;
  title: string;
  /** 0, 1, 2 ... within its document. */
  ordinal: number;
  /** The heading the chunk sits under, when the document has headings. */
  heading: string | null;
  text: string;
  /** Set when an embeddings endpoint is configured. */
  vector?: readonly number[] | null;
}

export interface SearchHit {
  chunk: IndexedChunk;
  /** Higher is more relevant; comparable within one search only. */
  score: number;
}

export interface SearchQuery {
  tenant_id: string;
  /** Only chunks of these workspaces (never empty: no readable workspace means no search). */
  workspace_ids: readonly string[];
  text: string;
  /** The query's vector, when embeddings are configured. */
  vector?: readonly number[] | null;
  limit: number;
}

export interface SearchIndex {
  /** Replaces every chunk of the document with these (a reindex), atomically. */
  replaceDocument(tenantId: string, documentId: string, chunks: readonly IndexedChunk[]): Promise<void>;
  /** Removes every chunk of the document. */
  removeDocument(tenantId: string, documentId: string): Promise<void>;
  search(query: SearchQuery): Promise<SearchHit[]>;
}
