// An in-memory SearchIndex with the port's semantics (application/ports/search-index.ts), for
// suites that need retrieval before the real index adapters are wired: a document's chunks are
// replaced or removed as one; a search sees only the tenant's chunks in the listed workspaces
// (none for an empty list), ranks them by BM25 over title, heading and text (any query word
// matches; higher is better), leaves out chunks sharing no word with the query, and returns at
// most `limit`.

import type { IndexedChunk, SearchHit, SearchIndex, SearchQuery } from '../../application/ports/search-index';

const K1 = 1.2;
const B = 0.75;

const wordsOf = (text: string): string[] => text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [];

export class InMemorySearchIndex implements SearchIndex {
  private readonly documents = new Map<string, readonly IndexedChunk[]>();
  /** Every search asked, for suites that check what retrieval asked for. */
  readonly searches: SearchQuery[] = [];

  private key(tenantId: string, documentId: string): string {
    return `${tenantId}/${documentId}`;
  }

  async replaceDocument(tenantId: string, documentId: string, chunks: readonly IndexedChunk[]): Promise<void> {
    if (chunks.some((chunk) => chunk.tenant_id !== tenantId || chunk.document_id !== documentId)) throw new Error('a chunk of another document or tenant');
    this.documents.set(this.key(tenantId, documentId), chunks.map((chunk) => ({ ...chunk })));
  }

  async removeDocument(tenantId: string, documentId: string): Promise<void> {
    this.documents.delete(this.key(tenantId, documentId));
  }

  async search(query: SearchQuery): Promise<SearchHit[]> {
    this.searches.push(query);
    const workspaces = new Set(query.workspace_ids);
    const candidates = [...this.documents.values()].flat().filter((chunk) => chunk.tenant_id === query.tenant_id && workspaces.has(chunk.workspace_id));
    const terms = [...new Set(wordsOf(query.text))];
    if (candidates.length === 0 || terms.length === 0) return [];
    const bags = candidates.map((chunk) => wordsOf(`${chunk.title} ${chunk.heading ?? ''} ${chunk.text}`));
    const averageLength = bags.reduce((sum, bag) => sum + bag.length, 0) / bags.length;
    const idf = new Map(terms.map((term) => [term, Math.log(1 + (bags.length - bags.filter((bag) => bag.includes(term)).length + 0.5) / (bags.filter((bag) => bag.includes(term)).length + 0.5))]));
    return candidates
      .map((chunk, index) => {
        const bag = bags[index];
        const score = terms.reduce((sum, term) => {
          const frequency = bag.filter((word) => word === term).length;
          if (frequency === 0) return sum;
          return sum + (idf.get(term)! * frequency * (K1 + 1)) / (frequency + K1 * (1 - B + (B * bag.length) / averageLength));
        }, 0);
        return { chunk: { ...chunk }, score };
      })
      .filter((hit) => hit.score > 0)
      .sort((a, b) => b.score - a.score || a.chunk.chunk_id.localeCompare(b.chunk.chunk_id))
      .slice(0, query.limit);
  }
}

/** Chunks of one document, numbered in order, for seeding the index. */
export function chunksOf(document: { tenant_id: string; workspace_id: string; document_id: string; title: string }, texts: readonly string[], heading: string | null = null): IndexedChunk[] {
  return texts.map((text, ordinal) => ({ ...document, chunk_id: `${document.document_id}:${ordinal}`, ordinal, heading, text }));
}
