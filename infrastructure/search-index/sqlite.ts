// The embedded search index: SQLite FTS5 with BM25 ranking, in the platform's SQLite file
// (on its connection, like the event and read stores).
//
// - `search_chunks` holds the chunks (and their vectors, as BLOBs of Float32), and
//   `search_chunks_fts` is an FTS5 index over it (external content, kept in step by
//   triggers), tokenized with Porter stemming over unicode61 without diacritics.
// - Each chunk's tenant and workspace are also one word of a `scope` column (a digest of the
//   pair: `k<32 hex>0`, which no stemmer changes), and every search requires one of the
//   allowed pairs in its MATCH expression: FTS5 intersects their posting lists with the
//   question's, so a search reads only its own tenant's and workspaces' chunks instead of
//   ranking everyone's and filtering after. The rows are checked against tenant_id and
//   workspace_id as well.
// - The question becomes quoted words (ranking/searchTerms): no text a user types can be
//   FTS5 syntax. BM25 weighs the title and heading above the text; `scope` not at all.
// - Scoring is most of a search's time (FTS5's bm25() per matching chunk), so a question's
//   words are split by how many chunks hold them (`splitByRarity`, Elasticsearch's "common
//   terms" idea): the rarest words, up to CANDIDATE_BUDGET chunks together, decide which
//   chunks are candidates; the common ones (in a product's manual: its name, "get", "use")
//   only add to the BM25 score of those candidates, through a clause every candidate
//   satisfies (`common OR scope`). A candidate's score is its full BM25 score; a chunk with
//   none of the rare words is not considered.
// - With a query vector, the tenant's vectors are compared by cosine similarity (exact,
//   over the allowed workspaces) and the two rankings fused by RRF (k = 60). Vectors are
//   kept in memory per tenant, normalised, and reloaded when the tenant's index version
//   (`search_index_versions`, bumped in the same transaction as every change) moved, so a
//   change by another process is seen at the next search.
// - replaceDocument and removeDocument are one transaction each.

import { createHash } from 'node:crypto';
import type Database from 'better-sqlite3';
import { LRUCache } from 'lru-cache';
import type { IndexedChunk, SearchHit, SearchIndex, SearchQuery } from '../../application/ports/search-index';
import type { SqliteDatabase } from '../sqlite/database';
import { blobToVector, boundedLimit, candidatesFor, dot, normalized, reciprocalRankFusion, searchTerms, topByScore, vectorToBlob } from './ranking';

const SCHEMA = `
CREATE TABLE IF NOT EXISTS search_chunks (
  id INTEGER PRIMARY KEY,
  chunk_id TEXT NOT NULL,
  tenant_id TEXT NOT NULL,
  workspace_id TEXT NOT NULL,
  document_id TEXT NOT NULL,
  title TEXT NOT NULL,
  ordinal INTEGER NOT NULL,
  heading TEXT,
  text TEXT NOT NULL,
  scope TEXT NOT NULL,
  vector BLOB,
  UNIQUE (tenant_id, chunk_id)
);
CREATE INDEX IF NOT EXISTS search_chunks_document ON search_chunks (tenant_id, document_id);
CREATE VIRTUAL TABLE IF NOT EXISTS search_chunks_fts USING fts5(
  scope, title, heading, text,
  content = 'search_chunks', content_rowid = 'id',
  tokenize = 'porter unicode61 remove_diacritics 2'
);
CREATE TRIGGER IF NOT EXISTS search_chunks_added AFTER INSERT ON search_chunks BEGIN
  INSERT INTO search_chunks_fts (rowid, scope, title, heading, text) VALUES (new.id, new.scope, new.title, new.heading, new.text);
END;
CREATE TRIGGER IF NOT EXISTS search_chunks_removed AFTER DELETE ON search_chunks BEGIN
  INSERT INTO search_chunks_fts (search_chunks_fts, rowid, scope, title, heading, text) VALUES ('delete', old.id, old.scope, old.title, old.heading, old.text);
END;
CREATE TABLE IF NOT EXISTS search_index_versions (
  tenant_id TEXT PRIMARY KEY,
  version INTEGER NOT NULL
) WITHOUT ROWID;
`;

/** How many chunks the rarest words of a question may hold together before the rest only add to the score. */
export const CANDIDATE_BUDGET = 2000;

/** BM25 column weights: scope, title, heading, text. */
const BM25 = 'bm25(search_chunks_fts, 0.0, 2.0, 1.5, 1.0)';

/** A workspace of a tenant as one word of the `scope` column. */
export function scopeToken(tenantId: string, workspaceId: string): string {
  return `k${createHash('sha256').update(JSON.stringify([tenantId, workspaceId])).digest('hex').slice(0, 32)}0`;
}

/** A chunk as its row holds it (the vector is kept apart). */
type ChunkRow = Omit<IndexedChunk, 'vector'> & { id: number };

interface TenantVectors {
  version: number;
  rows: Array<{ id: number; workspace_id: string; vector: Float32Array }>;
}

export interface SqliteSearchIndexOptions {
  /** Memory for cached vectors, all tenants together (default 256 MiB). */
  vectorCacheBytes?: number;
}

type Statement = Database.Statement<unknown[], unknown>;

export class SqliteSearchIndex implements SearchIndex {
  private readonly insert: Statement;
  private readonly deleteDocument: Statement;
  private readonly bumpVersion: Statement;
  private readonly readVersion: Statement;
  private readonly readVectors: Statement;
  private readonly vectors: LRUCache<string, TenantVectors>;
  /** The full-text query per number of workspaces searched. */
  private readonly fullTextQueries = new Map<number, Statement>();
  private readonly countMatches: Statement;
  private readonly countChunks: Statement;
  /** Chunks per question word over the whole index, and the chunk total; forgotten on every change. */
  private readonly frequencies = new Map<string, number>();
  private chunkTotal: number | null = null;
  private dataVersion: number | null = null;

  constructor(
    private readonly db: SqliteDatabase,
    options: SqliteSearchIndexOptions = {},
  ) {
    db.exec(SCHEMA);
    this.insert = db.prepare(
      `INSERT INTO search_chunks (chunk_id, tenant_id, workspace_id, document_id, title, ordinal, heading, text, scope, vector)
       VALUES (@chunk_id, @tenant_id, @workspace_id, @document_id, @title, @ordinal, @heading, @text, @scope, @vector)`,
    );
    this.deleteDocument = db.prepare('DELETE FROM search_chunks WHERE tenant_id = ? AND document_id = ?');
    this.bumpVersion = db.prepare('INSERT INTO search_index_versions (tenant_id, version) VALUES (?, 1) ON CONFLICT (tenant_id) DO UPDATE SET version = version + 1');
    this.readVersion = db.prepare('SELECT version FROM search_index_versions WHERE tenant_id = ?');
    this.countMatches = db.prepare('SELECT count(*) AS n FROM search_chunks_fts WHERE search_chunks_fts MATCH ?');
    this.countChunks = db.prepare('SELECT count(*) AS n FROM search_chunks');
    this.readVectors = db.prepare('SELECT id, workspace_id, vector FROM search_chunks WHERE tenant_id = ? AND vector IS NOT NULL ORDER BY id');
    this.vectors = new LRUCache<string, TenantVectors>({
      maxSize: options.vectorCacheBytes ?? 256 * 1024 * 1024,
      sizeCalculation: (entry) => Math.max(1, entry.rows.reduce((bytes, row) => bytes + row.vector.byteLength + 64, 0)),
    });
  }

  async replaceDocument(tenantId: string, documentId: string, chunks: readonly IndexedChunk[]): Promise<void> {
    for (const chunk of chunks) {
      if (chunk.tenant_id !== tenantId || chunk.document_id !== documentId) throw new Error(`chunk ${chunk.chunk_id} is not of document ${documentId} of tenant ${tenantId}`);
    }
    this.db.transaction(() => {
      this.deleteDocument.run(tenantId, documentId);
      for (const chunk of chunks) {
        this.insert.run({
          chunk_id: chunk.chunk_id,
          tenant_id: chunk.tenant_id,
          workspace_id: chunk.workspace_id,
          document_id: chunk.document_id,
          title: chunk.title,
          ordinal: chunk.ordinal,
          heading: chunk.heading,
          text: chunk.text,
          scope: scopeToken(chunk.tenant_id, chunk.workspace_id),
          vector: chunk.vector && chunk.vector.length > 0 ? vectorToBlob(chunk.vector) : null,
        });
      }
      this.bumpVersion.run(tenantId);
    })();
    this.forgetFrequencies();
  }

  async removeDocument(tenantId: string, documentId: string): Promise<void> {
    this.db.transaction(() => {
      if (this.deleteDocument.run(tenantId, documentId).changes > 0) this.bumpVersion.run(tenantId);
    })();
    this.forgetFrequencies();
  }

  async search(query: SearchQuery): Promise<SearchHit[]> {
    const limit = boundedLimit(query.limit);
    const workspaces = [...new Set(query.workspace_ids)];
    if (workspaces.length === 0) return [];
    const candidates = candidatesFor(limit);
    const fullText = this.fullText(query.tenant_id, workspaces, query.text, query.vector ? candidates : limit);
    if (!query.vector || query.vector.length === 0) return fullText.map(({ row, score }) => ({ chunk: toChunk(row), score }));

    const similar = this.similar(query.tenant_id, new Set(workspaces), normalized(query.vector), candidates);
    const fused = reciprocalRankFusion([fullText.map(({ row }) => String(row.id)), similar.map(({ item }) => String(item.id))], limit);
    const rows = new Map(fullText.map(({ row }) => [row.id, row]));
    const missing = fused.map(({ id }) => Number(id)).filter((id) => !rows.has(id));
    for (const row of this.rowsById(missing)) rows.set(row.id, row);
    return fused.flatMap(({ id, score }) => {
      const row = rows.get(Number(id));
      // A chunk replaced between the two reads is left out rather than shown stale.
      return row && row.tenant_id === query.tenant_id && workspaces.includes(row.workspace_id) ? [{ chunk: toChunk(row), score }] : [];
    });
  }

  /** Nothing to release: the connection belongs to the platform. */
  async close(): Promise<void> {}

  private fullText(tenantId: string, workspaces: readonly string[], text: string, limit: number): Array<{ row: ChunkRow; score: number }> {
    const { rare, common } = this.splitByRarity(searchTerms(text));
    if (rare.length === 0) return [];
    const scope = `scope : (${workspaces.map((id) => scopeToken(tenantId, id)).join(' OR ')})`;
    const words = (terms: readonly string[]): string => `{title heading text} : (${terms.map((term) => `"${term}"`).join(' OR ')})`;
    // `(common OR scope)` holds for every candidate: the common words are scored, never required.
    const match = common.length === 0 ? `${scope} AND ${words(rare)}` : `${scope} AND ${words(rare)} AND (${words(common)} OR ${scope})`;
    const rows = this.fullTextQuery(workspaces.length).all(match, limit, tenantId, ...workspaces) as Array<ChunkRow & { bm25: number }>;
    // bm25() is lower for better matches; a hit's score is higher for better ones.
    return rows.map(({ bm25, ...row }) => ({ row, score: -bm25 }));
  }

  /**
   * The question's words that decide the candidates (`rare`: the rarest, holding at most
   * CANDIDATE_BUDGET chunks together, and at least the rarest one) and those that only add
   * to their score (`common`). Words found nowhere are dropped. While the whole index is
   * within the budget, every word decides.
   */
  private splitByRarity(terms: string[]): { rare: string[]; common: string[] } {
    if (terms.length < 2) return { rare: terms, common: [] };
    const version = Number(this.db.pragma('data_version', { simple: true }));
    // Another connection (another process) committed: counts may have changed.
    if (version !== this.dataVersion) {
      this.forgetFrequencies();
      this.dataVersion = version;
    }
    this.chunkTotal ??= (this.countChunks.get() as { n: number }).n;
    if (this.chunkTotal <= CANDIDATE_BUDGET) return { rare: terms, common: [] };
    const counted = terms
      .map((term) => ({ term, chunks: this.chunksWith(term) }))
      .filter(({ chunks }) => chunks > 0)
      .sort((left, right) => left.chunks - right.chunks);
    const rare: string[] = [];
    const common: string[] = [];
    let candidates = 0;
    for (const { term, chunks } of counted) {
      if (rare.length === 0 || candidates + chunks <= CANDIDATE_BUDGET) {
        rare.push(term);
        candidates += chunks;
      } else common.push(term);
    }
    return { rare, common };
  }

  private chunksWith(term: string): number {
    let chunks = this.frequencies.get(term);
    if (chunks === undefined) {
      chunks = (this.countMatches.get(`{title heading text} : "${term}"`) as { n: number }).n;
      if (this.frequencies.size >= 10_000) this.frequencies.clear();
      this.frequencies.set(term, chunks);
    }
    return chunks;
  }

  private forgetFrequencies(): void {
    this.frequencies.clear();
    this.chunkTotal = null;
  }

  private fullTextQuery(workspaceCount: number): Statement {
    let statement = this.fullTextQueries.get(workspaceCount);
    if (!statement) {
      // FTS5 first, then the rows by id: the other join order would run the MATCH once per row.
      statement = this.db.prepare(
        `SELECT c.id, c.chunk_id, c.tenant_id, c.workspace_id, c.document_id, c.title, c.ordinal, c.heading, c.text, f.bm25
         FROM (SELECT rowid, ${BM25} AS bm25 FROM search_chunks_fts WHERE search_chunks_fts MATCH ? ORDER BY bm25, rowid LIMIT ?) AS f
         CROSS JOIN search_chunks c ON c.id = f.rowid
         WHERE c.tenant_id = ? AND c.workspace_id IN (${Array.from({ length: workspaceCount }, () => '?').join(', ')})
         ORDER BY f.bm25, c.id`,
      );
      // Workspace counts are bounded by the tenant's workspaces; keep the most recent few dozen shapes.
      if (this.fullTextQueries.size >= 64) this.fullTextQueries.delete(this.fullTextQueries.keys().next().value as number);
      this.fullTextQueries.set(workspaceCount, statement);
    }
    return statement;
  }

  private similar(tenantId: string, workspaces: ReadonlySet<string>, query: Float32Array, limit: number) {
    const rows = this.tenantVectors(tenantId).rows.filter((row) => workspaces.has(row.workspace_id) && row.vector.length === query.length);
    return topByScore(rows, (row) => dot(row.vector, query), limit);
  }

  private tenantVectors(tenantId: string): TenantVectors {
    const version = (this.readVersion.get(tenantId) as { version: number } | undefined)?.version ?? 0;
    const cached = this.vectors.get(tenantId);
    if (cached && cached.version === version) return cached;
    // Version and rows read in one transaction, so they agree.
    const loaded = this.db.transaction((): TenantVectors => {
      const current = (this.readVersion.get(tenantId) as { version: number } | undefined)?.version ?? 0;
      const rows = (this.readVectors.all(tenantId) as Array<{ id: number; workspace_id: string; vector: Buffer }>).map((row) => ({
        id: row.id,
        workspace_id: row.workspace_id,
        vector: normalized(blobToVector(row.vector)),
      }));
      return { version: current, rows };
    })();
    this.vectors.set(tenantId, loaded);
    return loaded;
  }

  private rowsById(ids: readonly number[]): ChunkRow[] {
    if (ids.length === 0) return [];
    return this.db
      .prepare(`SELECT id, chunk_id, tenant_id, workspace_id, document_id, title, ordinal, heading, text FROM search_chunks WHERE id IN (${ids.map(() => '?').join(', ')})`)
      .all(...ids) as ChunkRow[];
  }
}

function toChunk(row: ChunkRow): IndexedChunk {
  return {
    chunk_id: row.chunk_id,
    document_id: row.document_id,
    tenant_id: row.tenant_id,
    workspace_id: row.workspace_id,
    title: row.title,
    ordinal: row.ordinal,
    heading: row.heading,
    text: row.text,
  };
}
