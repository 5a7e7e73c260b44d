// Read model `documents`: one entry per live document of the knowledge base, with where its
// indexing stands (the status of its current generation, its chunks once indexed, the reason
// when it failed). The documents routes list and read it, the CLI's `documents status` counts
// it. A deleted document is removed from it (its events stay in the log for the audit); a
// reindex puts the entry back to `queued` for the next generation, keeping the chunk count of
// the last indexed one until the new outcome.
//
// Outcomes of a generation that is no longer the current one change nothing, as in the
// aggregate. Every event moves `revision` (the stream's, the document's ETag) and `position`
// (an event at or below it was applied already).

import type { DocumentSource, IndexingStatus } from '../domain/document/document';
import { type DocumentEvent, documentEvents } from '../domain/document/document';
import type { EventProjection } from './projection';

export interface DocumentEntry {
  id: string;
  tenant_id: string;
  workspace_id: string;
  title: string;
  source: DocumentSource;
  /** The uploaded file's name; null for a text document. */
  filename: string | null;
  /** Sniffed from the bytes. */
  content_type: string;
  size_bytes: number;
  sha256: string;
  /** Where the original bytes are (the blob store's key); never shown to clients. */
  blob_key: string;
  status: IndexingStatus;
  /** Why the current generation failed; null otherwise. */
  failure_reason: string | null;
  /** Chunks in the search index from the last generation indexed (0 until one is). */
  chunks: number;
  characters: number;
  /** The current indexing generation: 1 when added, one more per reindex. */
  generation: number;
  added_by: string;
  added_at: string;
  indexed_at: string | null;
  updated_at: string;
  position: number;
  /** Revision of the document's stream at the last event applied: its version (ETag). */
  revision: number;
  [field: string]: unknown;
}

export const DOCUMENTS = 'documents';

export const documentsProjection: EventProjection<DocumentEvent['type']> = {
  name: 'documents',
  version: 1,
  collections: [{ name: DOCUMENTS, indexes: [{ field: 'tenant_id' }, { field: 'workspace_id' }, { field: 'status' }, { field: 'added_at' }] }],
  handles: documentEvents.types,
  async apply(event, view) {
    const at = event.metadata.occurred_at;
    if (event.type === 'DocumentAdded') {
      const { data } = event;
      const existing = await view.get<DocumentEntry>(DOCUMENTS, data.document_id);
      if (existing && existing.position >= event.position) return;
      const entry: DocumentEntry = {
        id: data.document_id,
        tenant_id: data.tenant_id,
        workspace_id: data.workspace_id,
        title: data.title,
        source: data.source,
        filename: data.filename,
        content_type: data.content_type,
        size_bytes: data.size_bytes,
        sha256: data.sha256,
        blob_key: data.blob_key,
        status: 'queued',
        failure_reason: null,
        chunks: 0,
        characters: 0,
        generation: 1,
        added_by: data.added_by,
        added_at: data.added_at,
        indexed_at: null,
        updated_at: at,
        position: event.position,
        revision: event.revision,
      };
      view.put(DOCUMENTS, entry);
      return;
    }
    const current = await view.get<DocumentEntry>(DOCUMENTS, event.data.document_id);
    if (!current || current.position >= event.position) return;
    if (event.type === 'DocumentDeleted') {
      view.delete(DOCUMENTS, current.id);
      return;
    }
    const base = { updated_at: at, position: event.position, revision: event.revision };
    const isCurrent = (generation: number): boolean => generation === current.generation;
    switch (event.type) {
      case 'DocumentIndexingStarted':
        view.patch(DOCUMENTS, current.id, isCurrent(event.data.generation) ? { ...base, status: 'indexing' } : base);
        return;
      case 'DocumentIndexed':
        view.patch(
          DOCUMENTS,
          current.id,
          isCurrent(event.data.generation)
            ? { ...base, status: 'ready', failure_reason: null, chunks: event.data.chunks, characters: event.data.characters, indexed_at: event.data.indexed_at }
            : base,
        );
        return;
      case 'DocumentIndexingFailed':
        view.patch(DOCUMENTS, current.id, isCurrent(event.data.generation) ? { ...base, status: 'failed', failure_reason: event.data.reason } : base);
        return;
      case 'DocumentReindexRequested':
        view.patch(DOCUMENTS, current.id, { ...base, status: 'queued', failure_reason: null, generation: event.data.generation });
        return;
    }
  },
};
