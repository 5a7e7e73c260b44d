// The embedded stores share one connection and one group commit per turn of the event loop:
// the appends and the projection commits of a turn are one transaction, each still accepted
// or refused on its own.

import { expect } from 'chai';
import fs from 'node:fs';
import { WrongExpectedRevisionError } from '../../application/ports/event-store';
import { CheckpointConflictError, type ProjectionCommit } from '../../application/ports/read-store';
import { SqliteEventStore } from '../../infrastructure/event-store/sqlite';
import { SqliteReadStore } from '../../infrastructure/read-store/sqlite';
import { type SqliteDatabase, openSqliteDatabase } from '../../infrastructure/sqlite/database';
import { newEvent, uniqueStream } from '../support/events';
import { temporaryDirectory } from '../support/files';

/**
 * The commits in the connection's write-ahead log: each ends with a frame whose header
 * (bytes 4-7) gives the database size after it; other frames carry 0 there.
 */
function walCommits(file: string): number {
  const wal = fs.readFileSync(`${file}-wal`);
  const pageSize = wal.readUInt32BE(8);
  let commits = 0;
  for (let offset = 32; offset + 24 + pageSize <= wal.length; offset += 24 + pageSize) {
    if (wal.readUInt32BE(offset + 4) !== 0) commits += 1;
  }
  return commits;
}

const commitOf = (projection: string, expectedCheckpoint: number, checkpoint: number, id: string): ProjectionCommit => ({
  projection,
  expectedCheckpoint,
  operations: [{ kind: 'put', collection: 'notes', doc: { id, text: projection } }],
  state: { name: projection, version: 1, checkpoint, status: 'running', error: null, updated_at: new Date(0).toISOString() },
});

describe('SQLite stores on one connection: one group commit per turn', () => {
  let dir: ReturnType<typeof temporaryDirectory>;
  let file: string;
  let db: SqliteDatabase;
  let events: SqliteEventStore;
  let reads: SqliteReadStore;

  beforeEach(async () => {
    dir = temporaryDirectory();
    file = `${dir.path}/store.db`;
    db = openSqliteDatabase(file);
    events = new SqliteEventStore(db);
    reads = new SqliteReadStore(db);
    await reads.ensureCollection({ name: 'notes' });
  });

  afterEach(async () => {
    await events.close();
    await reads.close();
    db.close();
    dir.remove();
  });

  it('commits the appends and projection commits of one turn in one transaction', async () => {
    const before = walCommits(file);
    const stream = uniqueStream();
    await Promise.all([
      events.appendToStream(stream, [newEvent('First')]),
      reads.commitProjection(commitOf('notes_a', 0, 1, 'a')),
      events.appendToStream(uniqueStream(), [newEvent('Second')]),
      reads.commitProjection(commitOf('notes_b', 0, 1, 'b')),
    ]);
    expect(walCommits(file) - before).to.equal(1);
    // On disk: another connection reads both.
    const other = openSqliteDatabase(file);
    try {
      expect(other.prepare('SELECT count(*) AS n FROM events').get()).to.deep.equal({ n: 2 });
      expect(other.prepare("SELECT count(*) AS n FROM rm_notes WHERE id IN ('a', 'b')").get()).to.deep.equal({ n: 2 });
    } finally {
      other.close();
    }
  });

  it('refuses one append or one projection commit of a group and keeps the others', async () => {
    const stream = uniqueStream();
    await events.appendToStream(stream, [newEvent('Opened')]);
    await reads.commitProjection(commitOf('notes_a', 0, 1, 'a'));
    const outcomes = await Promise.allSettled([
      events.appendToStream(stream, [newEvent('Stale')], { expectedRevision: 'no_stream' }),
      reads.commitProjection(commitOf('notes_a', 0, 2, 'a-again')),
      events.appendToStream(stream, [newEvent('Next')], { expectedRevision: 0 }),
      reads.commitProjection(commitOf('notes_b', 0, 1, 'b')),
    ]);
    expect(outcomes.map((outcome) => outcome.status)).to.deep.equal(['rejected', 'rejected', 'fulfilled', 'fulfilled']);
    expect((outcomes[0] as PromiseRejectedResult).reason).to.be.instanceOf(WrongExpectedRevisionError);
    expect((outcomes[1] as PromiseRejectedResult).reason).to.be.instanceOf(CheckpointConflictError);
    expect((await events.readStream(stream)).map((event) => event.type)).to.deep.equal(['Opened', 'Next']);
    expect(await reads.collection('notes').get('a-again')).to.equal(null);
    expect(await reads.collection('notes').get('b')).to.deep.equal({ id: 'b', text: 'notes_b' });
    expect(await reads.getProjectionState('notes_a')).to.deep.include({ checkpoint: 1 });
  });

  it('undoes a refused item larger than the in-memory journal, its journal kept in memory', async () => {
    // Savepoint journals past SQLite's 64 KiB spill stay in memory (temp_store), not a file per connection.
    expect(db.pragma('temp_store', { simple: true })).to.equal(2);
    await reads.ensureCollection({ name: 'tags', indexes: [{ field: 'tag', unique: true }] });
    await reads.commitProjection({ ...commitOf('tags_a', 0, 1, 'x'), operations: [{ kind: 'put', collection: 'tags', doc: { id: 'taken', tag: 'taken' } }] });
    const large = Array.from({ length: 300 }, (_, index) => ({ kind: 'put' as const, collection: 'tags', doc: { id: `doc-${index}`, tag: `tag-${index}`, text: 'x'.repeat(1000) } }));
    const outcomes = await Promise.allSettled([
      // 300 KiB written, then a duplicate tag: the whole item is undone.
      reads.commitProjection({ ...commitOf('tags_a', 1, 2, 'y'), operations: [...large, { kind: 'put', collection: 'tags', doc: { id: 'duplicate', tag: 'taken' } }] }),
      reads.commitProjection(commitOf('notes_b', 0, 1, 'b')),
    ]);
    expect(outcomes.map((outcome) => outcome.status)).to.deep.equal(['rejected', 'fulfilled']);
    expect((await reads.collection('tags').find({})).items.map((doc) => doc.id)).to.deep.equal(['taken']);
    expect(await reads.getProjectionState('tags_a')).to.deep.include({ checkpoint: 1 });
    expect(await reads.collection('notes').get('b')).to.deep.equal({ id: 'b', text: 'notes_b' });
  });
});
