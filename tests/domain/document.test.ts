import { expect } from 'chai';
import { type DocumentAddedData, type DocumentCommand, type DocumentEvent, documentDecider, documentStream } from '../../domain/document/document';
import { FIXED_NOW, deciderSpec } from '../support/decider-spec';

const spec = deciderSpec(documentDecider);
const AT = FIXED_NOW.toISOString();
const ID = 'doc-1';

const addition: Omit<DocumentAddedData, 'added_at'> = {
  document_id: ID,
  tenant_id: 't1',
  workspace_id: 'ws-1',
  title: 'Refund policy',
  source: 'upload',
  filename: 'refunds.pdf',
  content_type: 'application/pdf',
  size_bytes: 1234,
  sha256: 'a'.repeat(64),
  blob_key: `t1/${ID}`,
  added_by: 'user-1',
};
const added: DocumentEvent = { type: 'DocumentAdded', data: { ...addition, added_at: AT } };
const started = (generation: number): DocumentEvent => ({ type: 'DocumentIndexingStarted', data: { document_id: ID, generation, started_at: AT } });
const indexed = (generation: number, chunks = 3): DocumentEvent => ({ type: 'DocumentIndexed', data: { document_id: ID, generation, chunks, characters: 900, indexed_at: AT } });
const failed = (generation: number, reason = 'no text in the PDF'): DocumentEvent => ({ type: 'DocumentIndexingFailed', data: { document_id: ID, generation, reason, failed_at: AT } });
const reindexRequested = (generation: number): DocumentEvent => ({ type: 'DocumentReindexRequested', data: { document_id: ID, generation, requested_by: 'user-2', requested_at: AT } });
const deleted: DocumentEvent = { type: 'DocumentDeleted', data: { document_id: ID, tenant_id: 't1', workspace_id: 'ws-1', blob_key: `t1/${ID}`, deleted_by: 'user-2', deleted_at: AT } };

const start = (generation: number): DocumentCommand => ({ type: 'StartIndexing', data: { generation } });
const recordIndexed = (generation: number, chunks = 3): DocumentCommand => ({ type: 'RecordIndexed', data: { generation, chunks, characters: 900 } });
const recordFailed = (generation: number, reason = 'no text in the PDF'): DocumentCommand => ({ type: 'RecordIndexingFailed', data: { generation, reason } });
const reindex: DocumentCommand = { type: 'RequestReindex', data: { requested_by: 'user-2' } };

describe('document decider (spec 4.5)', () => {
  it('lives in the stream document-<id>', () => {
    expect(documentStream(ID)).to.equal('document-doc-1');
  });

  describe('adding', () => {
    it('adds a document with a trimmed title, queued as generation 1', () => {
      spec.given([]).when({ type: 'AddDocument', data: { ...addition, title: '  Refund policy ' } }).then([added]);
      spec.given([added]).when(start(1)).then([started(1)]);
    });

    it('refuses a bad title, naming the field', () => {
      spec.given([]).when({ type: 'AddDocument', data: { ...addition, title: '   ' } }).thenThrows('invalid', 'invalid_document', 'title');
      spec.given([]).when({ type: 'AddDocument', data: { ...addition, title: 't'.repeat(201) } }).thenThrows('invalid', 'invalid_document', 'title');
      spec.given([]).when({ type: 'AddDocument', data: { ...addition, title: 'tab\there' } }).thenThrows('invalid', 'invalid_document', 'title');
    });

    it('refuses to add the same document twice, and after it was deleted', () => {
      spec.given([added]).when({ type: 'AddDocument', data: addition }).thenThrows('conflict', 'document_exists');
      spec.given([added, deleted]).when({ type: 'AddDocument', data: addition }).thenThrows('conflict', 'document_exists');
    });
  });

  describe('indexing a generation', () => {
    it('starts, then records the outcome: indexed with its chunks, or failed with a reason', () => {
      spec.given([added, started(1)]).when(recordIndexed(1, 7)).then([indexed(1, 7)]);
      spec.given([added, started(1)]).when(recordFailed(1)).then([failed(1)]);
    });

    it('records an outcome without a start (the saga may fail before it starts)', () => {
      spec.given([added]).when(recordFailed(1, 'the PDF is password-protected')).then([failed(1, 'the PDF is password-protected')]);
      spec.given([added]).when(recordIndexed(1)).then([indexed(1)]);
    });

    it('starts a generation once, and records its outcome once (a redelivered saga step changes nothing)', () => {
      spec.given([added, started(1)]).when(start(1)).thenNothingHappened();
      spec.given([added, started(1), indexed(1)]).when(start(1)).thenNothingHappened();
      spec.given([added, started(1), indexed(1)]).when(recordIndexed(1)).thenNothingHappened();
      spec.given([added, started(1), indexed(1)]).when(recordFailed(1)).thenNothingHappened();
      spec.given([added, started(1), failed(1)]).when(recordIndexed(1)).thenNothingHappened();
    });

    it('ignores what a saga says about any generation but the current one', () => {
      spec.given([added]).when(start(2)).thenNothingHappened();
      spec.given([added, started(1)]).when(recordIndexed(2)).thenNothingHappened();
      spec.given([added, started(1)]).when(recordFailed(0)).thenNothingHappened();
    });
  });

  describe('reindexing: the next generation supersedes the one running', () => {
    it('queues the next generation from any status', () => {
      spec.given([added]).when(reindex).then([reindexRequested(2)]);
      spec.given([added, started(1)]).when(reindex).then([reindexRequested(2)]);
      spec.given([added, started(1), indexed(1)]).when(reindex).then([reindexRequested(2)]);
      spec.given([added, started(1), failed(1), reindexRequested(2)]).when(reindex).then([reindexRequested(3)]);
    });

    it('drops the outcome of the superseded generation and takes that of the new one', () => {
      const superseded = [added, started(1), reindexRequested(2)];
      spec.given(superseded).when(recordIndexed(1)).thenNothingHappened();
      spec.given(superseded).when(recordFailed(1)).thenNothingHappened();
      spec.given(superseded).when(start(1)).thenNothingHappened();
      spec.given(superseded).when(start(2)).then([started(2)]);
      spec.given([...superseded, started(2)]).when(recordIndexed(2, 9)).then([indexed(2, 9)]);
    });

    it('an outcome of the old generation recorded late does not move the new one', () => {
      // Generation 1 finished after the reindex was requested: its DocumentIndexed is dropped by evolve, so generation 2 still starts.
      spec.given([added, started(1), reindexRequested(2), indexed(1)]).when(start(2)).then([started(2)]);
    });
  });

  describe('deleting', () => {
    it('deletes with the blob key and workspace the cleanup needs', () => {
      spec.given([added]).when({ type: 'DeleteDocument', data: { deleted_by: 'user-2' } }).then([deleted]);
      spec.given([added, started(1), indexed(1)]).when({ type: 'DeleteDocument', data: { deleted_by: 'user-2' } }).then([deleted]);
    });

    it('a deleted or unknown document is not found for every other command', () => {
      for (const command of [start(1), recordIndexed(1), recordFailed(1), reindex, { type: 'DeleteDocument', data: { deleted_by: 'user-2' } } as DocumentCommand]) {
        spec.given([added, deleted]).when(command).thenThrows('not_found', 'document_not_found');
        spec.given([]).when(command).thenThrows('not_found', 'document_not_found');
      }
    });
  });
});
