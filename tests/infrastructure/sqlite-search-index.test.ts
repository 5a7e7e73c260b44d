// The embedded search index beyond the contract: it lives in the platform's SQLite file, so
// another process (another connection) sees its changes, including the vectors it keeps in
// memory, and a reopened file still has every chunk.

import { expect } from 'chai';
import type { IndexedChunk } from '../../application/ports/search-index';
import { CANDIDATE_BUDGET, SqliteSearchIndex } from '../../infrastructure/search-index/sqlite';
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

  it('in a large index, takes candidates by the rare words of a question and still scores the common ones', async () => {
    const db = openSqliteDatabase(`${dir.path}/large.db`, { synchronous: 'off' });
    try {
      const index = new SqliteSearchIndex(db);
      const at = (documentId: string, text: string): IndexedChunk => ({ ...chunk(documentId, text, []), title: 'Manual', vector: null });
      // As long as each other: without the common word's score they would tie, and the first indexed (plain) would come first.
      await index.replaceDocument('tenant-a', 'plain', [at('plain', 'The warranty covers two years of the repairs.')]);
      await index.replaceDocument('tenant-a', 'branded', [at('branded', 'The acme warranty covers two years of repair.')]);
      // "acme" in 2 of 5 fillers: more chunks than the candidate budget, yet under half of them, so BM25 still weighs it.
      for (let batch = 0; batch < 30; batch += 1) {
        const chunks = Array.from({ length: 200 }, (_, ordinal) => ({
          ...at(`filler-${batch}`, ordinal % 5 < 2 ? `Acme device note ${batch}-${ordinal} about cables.` : `Device note ${batch}-${ordinal} about cables.`),
          chunk_id: `filler-${batch}:${ordinal}`,
          ordinal,
        }));
        await index.replaceDocument('tenant-a', `filler-${batch}`, chunks);
      }
      expect(30 * 200 * (2 / 5)).to.be.within(CANDIDATE_BUDGET, (30 * 200) / 2);
      const hits = await index.search({ tenant_id: 'tenant-a', workspace_ids: ['workspace-a'], text: 'acme warranty', vector: null, limit: 5 });
      expect(hits.map((hit) => hit.chunk.document_id)).to.deep.equal(['branded', 'plain']);
      expect(hits[0].score).to.be.greaterThan(hits[1].score);
      // A question of common words alone still finds them.
      expect(await index.search({ tenant_id: 'tenant-a', workspace_ids: ['workspace-a'], text: 'acme cables', vector: null, limit: 5 })).to.have.length(5);
      // Words found nowhere are dropped, not a reason to find nothing.
      expect((await index.search({ tenant_id: 'tenant-a', workspace_ids: ['workspace-a'], text: 'warranty zeppelin', vector: null, limit: 5 })).map((hit) => hit.chunk.document_id)).to.have.members(['branded', 'plain']);
      // A new chunk is counted at once (the counts are forgotten on every change).
      await index.replaceDocument('tenant-a', 'late', [at('late', 'Zeppelin warranty terms.')]);
      expect((await index.search({ tenant_id: 'tenant-a', workspace_ids: ['workspace-a'], text: 'warranty zeppelin', vector: null, limit: 5 }))[0].chunk.document_id).to.equal('late');
    } finally {
      db.close();
    }
  });
});
