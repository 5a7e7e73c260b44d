// Retrieval: the passages of the tenant's knowledge that answer a question, from the
// workspaces the asker may read and nowhere else (permission-aware retrieval: an employee
// assistant never cites a workspace its user was not granted).

import type { Passage } from '../ports/assistant-engine';
import { type Embeddings, EmbeddingsError } from '../ports/embeddings';
import type { Logger } from '../ports/logger';
import type { SearchIndex } from '../ports/search-index';
import type { Principal } from '../session/sessions';
import type { ReadModelDependencies } from '../shared/read-models';
import { workspaceAccess } from '../workspace/workspace-access';

export interface RetrievalDependencies extends ReadModelDependencies {
  searchIndex: SearchIndex;
  /** Null: BM25 alone. */
  embeddings: Embeddings | null;
  /** Told when the embeddings endpoint fails and a question is answered by BM25 alone. */
  logger?: Logger;
}

export const DEFAULT_PASSAGES = 5;

/**
 * The best passages for `question`, numbered `1`, `2` ... as an answer cites them. With
 * `workspaceId`, only that workspace (which must be readable: otherwise nothing); without,
 * every workspace the asker may read.
 */
export async function retrievePassages(
  deps: RetrievalDependencies,
  asker: Pick<Principal, 'tenant_id' | 'user_id' | 'role'>,
  question: string,
  options: { workspaceId?: string | null; limit?: number } = {},
): Promise<Passage[]> {
  const { readable } = await workspaceAccess(deps, asker);
  const workspaceIds = options.workspaceId ? (readable.has(options.workspaceId) ? [options.workspaceId] : []) : [...readable];
  if (workspaceIds.length === 0 || question.trim().length === 0) return [];
  const vector = deps.embeddings ? await questionVector(deps, deps.embeddings, question) : null;
  const hits = await deps.searchIndex.search({ tenant_id: asker.tenant_id, workspace_ids: workspaceIds, text: question, vector, limit: options.limit ?? DEFAULT_PASSAGES });
  // The index filters by workspace; checking again costs nothing and keeps the promise even if an adapter errs.
  const allowed = new Set(workspaceIds);
  return hits
    .filter((hit) => hit.chunk.tenant_id === asker.tenant_id && allowed.has(hit.chunk.workspace_id))
    .map((hit, index) => ({
      id: String(index + 1),
      document_id: hit.chunk.document_id,
      chunk_id: hit.chunk.chunk_id,
      title: hit.chunk.title,
      heading: hit.chunk.heading,
      text: hit.chunk.text,
    }));
}

/**
 * The question's vector; null when the embeddings endpoint fails: an asker still gets the
 * BM25 passages rather than an error while the endpoint is down.
 */
async function questionVector(deps: Pick<RetrievalDependencies, 'logger'>, embeddings: Embeddings, question: string): Promise<number[] | null> {
  try {
    return (await embeddings.embed([question]))[0] ?? null;
  } catch (error) {
    if (!(error instanceof EmbeddingsError)) throw error;
    deps.logger?.warn({ err: error }, 'embeddings endpoint failed; retrieving by BM25 alone');
    return null;
  }
}
