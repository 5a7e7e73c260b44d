// The embedded search index beyond the contract: it lives in the platform's SQLite file, so
// another process (another connection) sees its changes, including the vectors it keeps in
// memory, and a reopened file still has every chunk.

import { expect } from 'chai';
import type { IndexedChunk } from '../../application/ports/search-index';
import { SqliteSearchIndex } from '../../infrastructure/search-index/sqlite';
import { openSqliteDatabase } from '../../infrastructure/sqlite/database';
import { temporaryDirectory } from '../support/files';

const chunk = (documentId: string, text: string, vector: number[]): IndexedChunk => ({
  chunk_id: `${documentId}:0`,
  document_id: documentId,
  tenant_id: 'tenant-a',
  workspace_id: 'workspace-a',
  title: documentId,
  ordinal: 0,
  heading: null,
  text,
  vector,
});

describe('SQLite search index', () => {
  const dir = temporaryDirectory();
  after(() => dir.remove());
  const query = { tenant_id: 'tenant-a', workspace_ids: ['workspace-a'], text: 'nothing-matches', vector: [1, 0, 0], limit: 5 };

  it("sees another connection's changes to vectors it has cached", async () => {
    const first = openSqliteDatabase(`${dir.path}/shared.db`, { synchronous: 'normal' });
    const second = openSqliteDatabase(`${dir.path}/shared.db`, { synchronous: 'normal' });
    try {
      const reader = new SqliteSearchIndex(first);
      const writer = new SqliteSearchIndex(second);
      await writer.replaceDocument('tenant-a', 'north', [chunk('north', 'North.', [1, 0, 0])]);
      await writer.replaceDocument('tenant-a', 'east', [chunk('east', 'East.', [0, 1, 0])]);
      expect((await reader.search(query)).map((hit) => hit.chunk.document_id)).to.deep.equal(['north', 'east']);
      await writer.replaceDocument('tenant-a', 'north', [chunk('north', 'North, turned.', [0, 0, 1])]);
      await writer.replaceDocument('tenant-a', 'east', [chunk('east', 'East, turned.', [1, 0, 0])]);
      const hits = await reader.search(query);
      expect(hits.map((hit) => [hit.chunk.document_id, hit.chunk.text])).to.deep.equal([
        ['east', 'East, turned.'],
        ['north', 'North, turned.'],
      ]);
      await writer.removeDocument('tenant-a', 'east');
      expect((await reader.search(query)).map((hit) => hit.chunk.document_id)).to.deep.equal(['north']);
    } finally {
      first.close();
      second.close();
    }
  });

  it('keeps every chunk and vector in the file across a reopen', async () => {
    const file = `${dir.path}/reopened.db`;
    const before = openSqliteDatabase(file, { synchronous: 'normal' });
    await new SqliteSearchIndex(before).replaceDocument('tenant-a', 'kept', [chunk('kept', 'Kept across restarts.', [1, 0, 0])]);
    before.close();
    const after = openSqliteDatabase(file, { synchronous: 'normal' });
    try {
      const index = new SqliteSearchIndex(after);
      expect((await index.search({ ...query, text: 'restarts', vector: null })).map((hit) => hit.chunk.text)).to.deep.equal(['Kept across restarts.']);
      expect((await index.search(query)).map((hit) => hit.chunk.document_id)).to.deep.equal(['kept']);
    } finally {
      after.close();
    }
  });
});
