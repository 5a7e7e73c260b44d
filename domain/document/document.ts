// The document aggregate: one piece of a tenant's knowledge in one workspace, from an upload
// or from text, and where its indexing stands. Stream `document-<id>`.
//
// Indexing runs in generations: adding the document queues generation 1, each reindex the
// next. The indexing saga starts a generation, extracts, chunks and indexes it, and records
// the outcome for that generation only, so an outcome of a generation a reindex superseded
// (or of a deleted document) changes nothing.

import * as t from 'io-ts';
import { type Either, left, right } from 'fp-ts/Either';
import type { Decider } from '../shared/decider';
import { type DomainError, conflict, notFound } from '../shared/errors';
import { declareEvent, type EventOf, eventGroup, type GroupEvent } from '../shared/events';
import { toStreamName } from '../shared/stream-names';
import { checkText } from '../shared/text';

export const DocumentSource = t.keyof({ upload: null, text: null });
export type DocumentSource = t.TypeOf<typeof DocumentSource>;

export const DocumentAdded = declareEvent(
  'DocumentAdded',
  t.type({
    document_id: t.string,
    tenant_id: t.string,
    workspace_id: t.string,
    title: t.string,
    source: DocumentSource,
    /** The name the file was uploaded with; null for a text document. */
    filename: t.union([t.string, t.null]),
    /** Sniffed from the bytes, never taken from the name. */
    content_type: t.string,
    size_bytes: t.number,
    sha256: t.string,
    /** Where the original bytes are kept (the blob store's key). */
    blob_key: t.string,
    added_by: t.string,
    added_at: t.string,
  }),
);
export const DocumentIndexingStarted = declareEvent('DocumentIndexingStarted', t.type({ document_id: t.string, generation: t.number, started_at: t.string }));
export const DocumentIndexed = declareEvent(
  'DocumentIndexed',
  t.type({ document_id: t.string, generation: t.number, chunks: t.number, characters: t.number, indexed_at: t.string }),
);
export const DocumentIndexingFailed = declareEvent('DocumentIndexingFailed', t.type({ document_id: t.string, generation: t.number, reason: t.string, failed_at: t.string }));
export const DocumentReindexRequested = declareEvent('DocumentReindexRequested', t.type({ document_id: t.string, generation: t.number, requested_by: t.string, requested_at: t.string }));
export const DocumentDeleted = declareEvent('DocumentDeleted', t.type({ document_id: t.string, tenant_id: t.string, workspace_id: t.string, blob_key: t.string, deleted_by: t.string, deleted_at: t.string }));

export const documentEvents = eventGroup('document', [DocumentAdded, DocumentIndexingStarted, DocumentIndexed, DocumentIndexingFailed, DocumentReindexRequested, DocumentDeleted]);
export type DocumentEvent = GroupEvent<typeof documentEvents>;
export type DocumentAddedData = EventOf<typeof DocumentAdded>['data'];

export type IndexingStatus = 'queued' | 'indexing' | 'ready' | 'failed';

export type DocumentCommand =
  | { type: 'AddDocument'; data: Omit<DocumentAddedData, 'added_at'> }
  | { type: 'StartIndexing'; data: { generation: number } }
  | { type: 'RecordIndexed'; data: { generation: number; chunks: number; characters: number } }
  | { type: 'RecordIndexingFailed'; data: { generation: number; reason: string } }
  | { type: 'RequestReindex'; data: { requested_by: string } }
  | { type: 'DeleteDocument'; data: { deleted_by: string } };

export type DocumentState =
  | { status: 'absent' }
  | { status: 'live'; document: DocumentAddedData; indexing: IndexingStatus; generation: number }
  | { status: 'deleted'; document_id: string };

export const documentStream = (documentId: string): string => toStreamName(documentEvents.category, documentId);

export const MAX_TITLE_LENGTH = 200;

export const documentDecider: Decider<DocumentCommand, DocumentEvent, DocumentState> = {
  initialState: () => ({ status: 'absent' }),
  evolve(state, event) {
    switch (event.type) {
      case 'DocumentAdded':
        return { status: 'live', document: event.data, indexing: 'queued', generation: 1 };
      case 'DocumentIndexingStarted':
        return state.status === 'live' && state.generation === event.data.generation ? { ...state, indexing: 'indexing' } : state;
      case 'DocumentIndexed':
        return state.status === 'live' && state.generation === event.data.generation ? { ...state, indexing: 'ready' } : state;
      case 'DocumentIndexingFailed':
        return state.status === 'live' && state.generation === event.data.generation ? { ...state, indexing: 'failed' } : state;
      case 'DocumentReindexRequested':
        return state.status === 'live' ? { ...state, indexing: 'queued', generation: event.data.generation } : state;
      case 'DocumentDeleted':
        return { status: 'deleted', document_id: event.data.document_id };
    }
  },
  decide(command, state, { now }): Either<DomainError, DocumentEvent[]> {
    const at = now.toISOString();
    if (command.type === 'AddDocument') {
      if (state.status !== 'absent') return left(conflict('document_exists', 'the document already exists'));
      const title = checkText('title', command.data.title, { max: MAX_TITLE_LENGTH, code: 'invalid_document' });
      if (title._tag === 'Left') return title;
      return right([{ type: 'DocumentAdded', data: { ...command.data, title: title.right, added_at: at } }]);
    }
    if (state.status !== 'live') return left(notFound('document_not_found', 'no such document'));
    const { document_id } = state.document;
    // An outcome for a generation that is no longer the current one (a reindex came after) records nothing.
    const current = (generation: number): boolean => generation === state.generation;
    switch (command.type) {
      case 'StartIndexing':
        if (!current(command.data.generation) || state.indexing !== 'queued') return right([]);
        return right([{ type: 'DocumentIndexingStarted', data: { document_id, generation: state.generation, started_at: at } }]);
      case 'RecordIndexed':
        if (!current(command.data.generation) || state.indexing === 'ready' || state.indexing === 'failed') return right([]);
        return right([{ type: 'DocumentIndexed', data: { document_id, generation: state.generation, chunks: command.data.chunks, characters: command.data.characters, indexed_at: at } }]);
      case 'RecordIndexingFailed':
        if (!current(command.data.generation) || state.indexing === 'ready' || state.indexing === 'failed') return right([]);
        return right([{ type: 'DocumentIndexingFailed', data: { document_id, generation: state.generation, reason: command.data.reason, failed_at: at } }]);
      case 'RequestReindex':
        return right([{ type: 'DocumentReindexRequested', data: { document_id, generation: state.generation + 1, requested_by: command.data.requested_by, requested_at: at } }]);
      case 'DeleteDocument': {
        const { tenant_id, workspace_id, blob_key } = state.document;
        return right([{ type: 'DocumentDeleted', data: { document_id, tenant_id, workspace_id, blob_key, deleted_by: command.data.deleted_by, deleted_at: at } }]);
      }
    }
  },
};
