// The embedded read store with its cache on: what the contract cannot see from outside.

import { expect } from 'chai';
import { type Document, UniqueConstraintError } from '../../application/ports/read-store';
import { PREPARED_STATEMENT_LIMIT, SqliteReadStore, coalesceWrites, inListLength } from '../../infrastructure/read-store/sqlite';
import { type SqliteDatabase, openSqliteDatabase } from '../../infrastructure/sqlite/database';
import { auditLogProjection } from '../../projections/audit-log';
import { orchestrationEventsProjection } from '../../projections/orchestration-events';
import { sqliteFixture } from '../support/files';

interface Tagged extends Document {
  tag: string | number | null;
}

describe('SQLite read store with the read cache on', () => {
  let fixture: ReturnType<typeof sqliteFixture<SqliteReadStore>>;

  beforeEach(async () => {
    fixture = sqliteFixture((db) => new SqliteReadStore(db, { cacheTtlMs: 60_000 }));
    await fixture.store.ensureCollection({ name: 'tagged', indexes: [{ field: 'tag' }] });
    const tagged = fixture.store.collection<Tagged>('tagged');
    await tagged.put({ id: 'a', tag: null });
    await tagged.put({ id: 'b', tag: 'x' });
    await tagged.put({ id: 'c', tag: 'null' });
  });

  afterEach(() => fixture.dispose());

  it('never answers one filter with the cached result of another that JSON would write alike', async () => {
    const tagged = fixture.store.collection<Tagged>('tagged');
    const ids = async (where: Record<string, unknown>): Promise<string[]> =>
      (await tagged.find({ where: where as never })).items.map((doc) => doc.id);
    // Each pair below is the same JSON text; asked in this order, a cache keyed by JSON
    // would answer the second from the first.
    expect(await ids({})).to.deep.equal(['a', 'b', 'c']);
    expect(await ids({ tag: undefined })).to.deep.equal(['a']);
    expect(await ids({ tag: null })).to.deep.equal(['a']);
    expect(await ids({ tag: Number.NaN })).to.deep.equal([]);
    expect(await ids({ tag: 'null' })).to.deep.equal(['c']);
    expect(await ids({ tag: { in: ['x', null] } })).to.deep.equal(['a', 'b']);
    expect(await ids({ tag: { in: ['x', Number.NaN] } })).to.deep.equal(['b']);
  });

  it('forgets what it read inside a projection commit that rolled back', async () => {
    const { store } = fixture;
    await store.ensureCollection({ name: 'codes', indexes: [{ field: 'code', unique: true }] });
    await store.collection('codes').put({ id: '1', code: 'same' });
    const commit = store.commitProjection({
      projection: 'test',
      expectedCheckpoint: 0,
      operations: [
        { kind: 'delete', collection: 'tagged', id: 'a' },
        // Reads 'a' inside the transaction, where it is already gone.
        { kind: 'patch', collection: 'tagged', id: 'a', changes: { tag: 'q' } },
        { kind: 'put', collection: 'codes', doc: { id: '2', code: 'same' } },
      ],
      state: { name: 'test', version: 1, checkpoint: 1, status: 'running', error: null, updated_at: new Date(0).toISOString() },
    });
    let failure: unknown = null;
    await commit.catch((error: unknown) => {
      failure = error;
    });
    expect(failure).to.not.equal(null);
    expect(await store.collection<Tagged>('tagged').get('a')).to.deep.equal({ id: 'a', tag: null });
  });

  it('answers a read right after a write as JSON would have kept the document, and its queries with the write', async () => {
    const tagged = fixture.store.collection<Tagged>('tagged');
    expect((await tagged.find({ where: { tag: 'x' } })).items.map((doc) => doc.id)).to.deep.equal(['b']);
    const written = { id: 'd', tag: 'x', gone: undefined, when: new Date(Date.UTC(2026, 10, 28)), nan: Number.NaN, list: [undefined, 1, () => 2], nested: { keep: true, drop: undefined } };
    await tagged.put(written as unknown as Tagged);
    const expected = JSON.parse(JSON.stringify(written));
    expect(await tagged.get('d')).to.deep.equal(expected);
    expect(Object.keys((await tagged.get('d')) as object)).to.deep.equal(Object.keys(expected));
    expect((await tagged.find({ where: { tag: 'x' } })).items.map((doc) => doc.id)).to.deep.equal(['b', 'd']);
    // What a caller does to what it wrote or read changes nothing kept.
    written.nested.keep = false;
    const read = (await tagged.get('d')) as unknown as { nested: { keep: boolean } };
    read.nested.keep = false;
    expect(((await tagged.get('d')) as unknown as { nested: { keep: boolean } }).nested.keep).to.equal(true);
    await tagged.patch('d', { tag: 'z' });
    expect(await tagged.get('d')).to.deep.equal({ ...expected, tag: 'z' });
    expect((await tagged.find({ where: { tag: 'x' } })).items.map((doc) => doc.id)).to.deep.equal(['b']);
    await tagged.delete('d');
    expect(await tagged.get('d')).to.equal(null);
    expect((await tagged.find({ where: { tag: 'z' } })).items).to.deep.equal([]);
  });

  it('forgets what it read of a collection once a commit deleted documents of it by their fields', async () => {
    const tagged = fixture.store.collection<Tagged>('tagged');
    expect(await tagged.get('b')).to.deep.equal({ id: 'b', tag: 'x' });
    expect((await tagged.find({ where: { tag: 'x' } })).items.map((doc) => doc.id)).to.deep.equal(['b']);
    await fixture.store.commitProjection({
      projection: 'cleaner',
      expectedCheckpoint: 0,
      operations: [{ kind: 'deleteWhere', collection: 'tagged', where: { tag: 'x' } }],
      state: { name: 'cleaner', version: 1, checkpoint: 1, status: 'running', error: null, updated_at: new Date(0).toISOString() },
    });
    expect(await tagged.get('b')).to.equal(null);
    expect((await tagged.find({ where: { tag: 'x' } })).items).to.deep.equal([]);
    expect((await tagged.find({})).items.map((doc) => doc.id)).to.deep.equal(['a', 'c']);
  });

  it('keeps a "__proto__" field of a document as a field', async () => {
    const tagged = fixture.store.collection<Tagged>('tagged');
    await tagged.put(JSON.parse('{"id":"p","tag":"y","__proto__":{"polluted":true},"nested":{"__proto__":{"polluted":true}},"list":[{"__proto__":{"polluted":true}},"text",3]}') as Tagged);
    for (let read = 0; read < 2; read += 1) {
      const doc = (await tagged.get('p')) as unknown as Record<string, unknown> & { nested: Record<string, unknown>; list: unknown[] };
      for (const object of [doc, doc.nested, doc.list[0] as Record<string, unknown>]) {
        expect(Object.getPrototypeOf(object)).to.equal(Object.prototype);
        expect(Object.keys(object)).to.include('__proto__');
        expect(object.polluted).to.equal(undefined);
      }
      expect(doc.list.slice(1)).to.deep.equal(['text', 3]);
    }
  });

  it('reads what another process committed once it reads the projection states (as a standby does)', async () => {
    const tagged = fixture.store.collection<Tagged>('tagged');
    expect(await tagged.get('b')).to.deep.equal({ id: 'b', tag: 'x' });
    expect((await tagged.find({ where: { tag: 'x' } })).items).to.have.length(1);
    // Another process: its own connection to the same file.
    const other = openSqliteDatabase(fixture.path);
    try {
      await new SqliteReadStore(other).commitProjection({
        projection: 'tags',
        expectedCheckpoint: 0,
        operations: [{ kind: 'put', collection: 'tagged', doc: { id: 'b', tag: 'y' } }],
        state: { name: 'tags', version: 1, checkpoint: 7, status: 'running', error: null, updated_at: new Date(0).toISOString() },
      });
    } finally {
      other.close();
    }
    expect(await fixture.store.getProjectionState('tags')).to.deep.include({ checkpoint: 7 });
    expect(await tagged.get('b')).to.deep.equal({ id: 'b', tag: 'y' });
    expect((await tagged.find({ where: { tag: 'x' } })).items).to.deep.equal([]);
  });
});

describe('SQLite read store: collections kept in the old WITHOUT ROWID layout', () => {
  it('copies one into the rowid layout when it is ensured, keeping its documents, indexes and unique fields', async () => {
    const fixture = sqliteFixture((db) => {
      // The layout and index bookkeeping the store wrote before 2026-11 (no is_sparse column yet).
      db.exec(`CREATE TABLE _read_indexes (collection TEXT NOT NULL, field TEXT NOT NULL, is_unique INTEGER NOT NULL, index_name TEXT NOT NULL UNIQUE, PRIMARY KEY (collection, field)) WITHOUT ROWID;
        CREATE TABLE rm_people (id TEXT PRIMARY KEY, doc TEXT NOT NULL, "f_email", "f_team") WITHOUT ROWID;
        CREATE UNIQUE INDEX "ix_people_aaaa0001" ON rm_people ("f_email");
        CREATE INDEX "ix_people_aaaa0002" ON rm_people ("f_team");
        INSERT INTO _read_indexes VALUES ('people', 'email', 1, 'ix_people_aaaa0001'), ('people', 'team', 0, 'ix_people_aaaa0002');
        INSERT INTO rm_people VALUES ('p2', '{"id":"p2","email":"b@x.test","team":"red"}', 'b@x.test', 'red'),
          ('p1', '{"id":"p1","email":"a@x.test","team":"blue"}', 'a@x.test', 'blue'),
          ('p3', '{"id":"p3","email":"c@x.test","team":"red"}', 'c@x.test', 'red');`);
      return { db, store: new SqliteReadStore(db), close: async () => undefined };
    });
    try {
      const { db, store } = fixture.store;
      await store.ensureCollection({ name: 'people', indexes: [{ field: 'email', unique: true }, { field: 'team' }] });
      const table = db.prepare<[], { sql: string }>("SELECT sql FROM sqlite_master WHERE name = 'rm_people'").get();
      expect(table?.sql).to.not.match(/WITHOUT ROWID/i);
      const indexes = db.prepare<[], { name: string }>("SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'rm_people' AND name LIKE 'ix_%' ORDER BY name").all();
      expect(indexes.map((index) => index.name)).to.deep.equal(['ix_people_aaaa0001', 'ix_people_aaaa0002']);

      const people = store.collection<Document & { email: string; team: string }>('people');
      expect(await people.get('p1')).to.deep.equal({ id: 'p1', email: 'a@x.test', team: 'blue' });
      expect((await people.find({ where: { team: 'red' } })).items.map((doc) => doc.id)).to.deep.equal(['p2', 'p3']);
      expect((await people.find({})).items.map((doc) => doc.id)).to.deep.equal(['p1', 'p2', 'p3']);
      await people.put({ id: 'p1', email: 'a@x.test', team: 'green' });
      expect(await people.get('p1')).to.deep.include({ team: 'green' });
      let refused: unknown = null;
      await people.put({ id: 'p4', email: 'b@x.test', team: 'red' }).catch((error: unknown) => {
        refused = error;
      });
      expect(refused).to.be.instanceOf(UniqueConstraintError);
      // Ensured again: nothing left to copy.
      await store.ensureCollection({ name: 'people', indexes: [{ field: 'email', unique: true }, { field: 'team' }] });
      expect(await people.count({})).to.equal(3);
    } finally {
      await fixture.dispose();
    }
  });
});

describe('SQLite read store: successive writes to one document in a commit', () => {
  const noUnique = () => false;

  it('folds them into the one write they amount to, where the first stood', () => {
    const folded = coalesceWrites(
      [
        { kind: 'put', collection: 'heads', doc: { id: 'h', seq: 1 } },
        { kind: 'patch', collection: 'events', id: 'e', changes: { status: 'dispatched', step: 1 } },
        { kind: 'put', collection: 'heads', doc: { id: 'h', seq: 2 } },
        { kind: 'patch', collection: 'events', id: 'e', changes: { status: 'processed' } },
        { kind: 'put', collection: 'docs', doc: { id: 'd', a: 1 } },
        { kind: 'patch', collection: 'docs', id: 'd', changes: { b: 2 } },
        { kind: 'delete', collection: 'gone', id: 'g' },
        { kind: 'patch', collection: 'gone', id: 'g', changes: { back: true } },
        { kind: 'patch', collection: 'later', id: 'l', changes: { a: 1 } },
        { kind: 'delete', collection: 'later', id: 'l' },
      ],
      noUnique,
    );
    expect(folded).to.deep.equal([
      { kind: 'put', collection: 'heads', doc: { id: 'h', seq: 2 } },
      { kind: 'patch', collection: 'events', id: 'e', changes: { status: 'processed', step: 1 } },
      { kind: 'put', collection: 'docs', doc: { id: 'd', a: 1, b: 2 } },
      { kind: 'delete', collection: 'gone', id: 'g' },
      { kind: 'delete', collection: 'later', id: 'l' },
    ]);
  });

  it('folds no write across a deleteWhere of its collection: the one before stays before it, the one after after it', () => {
    const folded = coalesceWrites(
      [
        { kind: 'put', collection: 'messages', doc: { id: 'm', thread: 't', text: 'first' } },
        { kind: 'patch', collection: 'other', id: 'o', changes: { a: 1 } },
        { kind: 'deleteWhere', collection: 'messages', where: { thread: 't' } },
        { kind: 'put', collection: 'messages', doc: { id: 'm', thread: 't', text: 'again' } },
        { kind: 'patch', collection: 'messages', id: 'm', changes: { read: true } },
        { kind: 'patch', collection: 'other', id: 'o', changes: { b: 2 } },
      ],
      noUnique,
    );
    expect(folded).to.deep.equal([
      { kind: 'put', collection: 'messages', doc: { id: 'm', thread: 't', text: 'first' } },
      { kind: 'patch', collection: 'other', id: 'o', changes: { a: 1, b: 2 } },
      { kind: 'deleteWhere', collection: 'messages', where: { thread: 't' } },
      { kind: 'put', collection: 'messages', doc: { id: 'm', thread: 't', text: 'again', read: true } },
    ]);
  });

  it('folds no write across a patchWhere of its collection either', () => {
    const folded = coalesceWrites(
      [
        { kind: 'put', collection: 'messages', doc: { id: 'm', thread: 't', text: 'first' } },
        { kind: 'patchWhere', collection: 'messages', where: { thread: 't' }, changes: { text: '[redacted]' } },
        { kind: 'patch', collection: 'messages', id: 'm', changes: { read: true } },
      ],
      noUnique,
    );
    expect(folded.map((operation) => operation.kind)).to.deep.equal(['put', 'patchWhere', 'patch']);
  });

  it('keeps every write of a collection with a unique field, in order', () => {
    const operations = [
      { kind: 'put', collection: 'people', doc: { id: 'a', email: 'x' } },
      { kind: 'put', collection: 'people', doc: { id: 'b', email: 'y' } },
      { kind: 'put', collection: 'people', doc: { id: 'a', email: 'y' } },
    ] as const;
    expect(coalesceWrites(operations, (collection) => collection === 'people')).to.deep.equal(operations);
  });

  it('leaves the store as the writes one by one would', async () => {
    const fixture = sqliteFixture((db) => new SqliteReadStore(db));
    try {
      await fixture.store.ensureCollection({ name: 'things', indexes: [{ field: 'status' }] });
      await fixture.store.ensureCollection({ name: 'people', indexes: [{ field: 'email', unique: true }] });
      const things = fixture.store.collection('things');
      await things.put({ id: 'kept', status: 'old', note: 'stays' });
      await fixture.store.commitProjection({
        projection: 'folding',
        expectedCheckpoint: 0,
        operations: [
          { kind: 'patch', collection: 'things', id: 'kept', changes: { status: 'mid' } },
          { kind: 'put', collection: 'things', doc: { id: 'new', status: 'a' } },
          { kind: 'patch', collection: 'things', id: 'kept', changes: { status: 'new' } },
          { kind: 'patch', collection: 'things', id: 'new', changes: { status: 'b' } },
          // One frees an address the other then takes: kept in order, this commits.
          { kind: 'put', collection: 'people', doc: { id: 'p1', email: 'one@x.test' } },
          { kind: 'put', collection: 'people', doc: { id: 'p1', email: 'two@x.test' } },
          { kind: 'put', collection: 'people', doc: { id: 'p2', email: 'one@x.test' } },
        ],
        state: { name: 'folding', version: 1, checkpoint: 3, status: 'running', error: null, updated_at: new Date(0).toISOString() },
      });
      expect(await things.get('kept')).to.deep.equal({ id: 'kept', status: 'new', note: 'stays' });
      expect(await things.get('new')).to.deep.equal({ id: 'new', status: 'b' });
      expect((await things.find({ where: { status: 'new' } })).items.map((doc) => doc.id)).to.deep.equal(['kept']);
      expect((await fixture.store.collection('people').find({ sort: { field: 'id', direction: 'asc' } })).items).to.deep.equal([
        { id: 'p1', email: 'two@x.test' },
        { id: 'p2', email: 'one@x.test' },
      ]);
    } finally {
      await fixture.dispose();
    }
  });
});

/** A store on a fresh file with its connection, for what only the file shows (query plans, index definitions). */
async function withFileStore(test: (opened: { db: SqliteDatabase; store: SqliteReadStore; plan(sql: string): string }) => Promise<void>): Promise<void> {
  const fixture = sqliteFixture((db) => ({ db, store: new SqliteReadStore(db), close: async () => undefined }));
  const { db, store } = fixture.store;
  const plan = (sql: string): string => db.prepare<[], { detail: string }>(`EXPLAIN QUERY PLAN ${sql}`).all().map((row) => row.detail).join(' | ');
  try {
    await test({ db, store, plan });
  } finally {
    await fixture.dispose();
  }
}

describe('SQLite read store: compound and sparse indexes', () => {
  it("reads a tenant's newest entries along a compound index, without sorting the tenant's history", () =>
    withFileStore(async ({ db, store, plan }) => {
      await store.ensureCollection({ name: 'entries', indexes: [{ field: 'tenant_id', then: ['seq'] }, { field: 'due_at', sparse: true }] });
      const entries = store.collection<Document & { tenant_id: string; seq: number; due_at: string | null }>('entries');
      for (let seq = 1; seq <= 20; seq += 1) await entries.put({ id: `e${seq}`, tenant_id: seq % 2 ? 't1' : 't2', seq, due_at: seq === 7 ? '2026-01-01' : null });
      expect((await entries.find({ where: { tenant_id: 't1' }, sort: { field: 'seq', direction: 'desc' }, limit: 3 })).items.map((entry) => entry.seq)).to.deep.equal([19, 17, 15]);

      const newest = plan(`SELECT doc FROM rm_entries WHERE f_tenant_id = 't1' ORDER BY f_seq DESC, id DESC LIMIT 50`);
      expect(newest).to.match(/USING INDEX ix_entries_\w+ \(f_tenant_id=\?\)/);
      // Read in seq order; only entries of equal seq would be sorted by id (and the LIMIT stops the read).
      expect(newest).to.not.match(/TEMP B-TREE FOR ORDER BY/);
      expect(plan(`SELECT doc FROM rm_entries WHERE f_tenant_id = 't1' ORDER BY f_seq DESC LIMIT 50`)).to.not.match(/TEMP B-TREE/);
      // The sparse index holds only the rows with a due_at: one of twenty.
      const sparse = db.prepare<[], { sql: string }>("SELECT sql FROM sqlite_master WHERE type = 'index' AND tbl_name = 'rm_entries' AND sql LIKE '%f_due_at%'").get();
      expect(sparse?.sql).to.match(/WHERE "f_due_at" IS NOT NULL$/);
      const name = /INDEX "(\w+)"/.exec(sparse!.sql)![1];
      expect(db.prepare<[], { n: number }>(`SELECT count(*) AS n FROM rm_entries INDEXED BY "${name}" WHERE f_due_at IS NOT NULL`).get()?.n).to.equal(1);
      expect(plan(`SELECT doc FROM rm_entries WHERE f_due_at <= '2026-02-01' ORDER BY f_due_at`)).to.match(/USING INDEX/);
    }));
});

describe("SQLite read store: the platform's lists read their page in index order", () => {
  // What listAuditLog and listOrchestrationEvents ask, as the adapter writes it: no sort of
  // the tenant's history (`USE TEMP B-TREE FOR ORDER BY`) for any filter they offer.
  it('the audit log, whole or by actor, action, resource type or resource; the orchestration events, whole or by status or name', () =>
    withFileStore(async ({ store, plan }) => {
      for (const spec of [...auditLogProjection.collections, ...orchestrationEventsProjection.collections]) await store.ensureCollection(spec);
      const newestFirst = (table: string, where: string, sort: string): string => plan(`SELECT doc FROM ${table} WHERE ${where} ORDER BY ${sort} DESC, id DESC LIMIT 51`);
      for (const filter of ['', " AND f_actor_id = 'u'", " AND f_action = 'a'", " AND f_resource_type = 'r'", " AND f_resource_id = 'r'"]) {
        expect(newestFirst('rm_audit_log', `f_tenant_id = 't'${filter}`, 'f_seq'), filter).to.not.match(/TEMP B-TREE FOR ORDER BY/);
      }
      for (const filter of ['', " AND f_status = 'queued'", " AND f_name = 'shop.order.created'"]) {
        expect(newestFirst('rm_orchestration_events', `f_tenant_id = 't'${filter}`, 'f_received_at'), filter).to.not.match(/TEMP B-TREE FOR ORDER BY/);
      }
    }));
});

describe('SQLite read store: the statements it keeps', () => {
  it('pads an IN list to the next power of two up to 256, and keeps longer ones exact', () => {
    expect([0, 1, 2, 3, 5, 8, 9, 100, 256, 257, 1000].map(inListLength)).to.deep.equal([0, 1, 2, 4, 8, 8, 16, 128, 256, 257, 1000]);
  });

  it('answers IN lists of every length as exactly, and keeps a bounded number of statements', () =>
    withFileStore(async ({ store }) => {
      await store.ensureCollection({ name: 'numbered', indexes: [{ field: 'n' }] });
      const numbered = store.collection<Document & { n: number | null }>('numbered');
      for (let n = 0; n < 300; n += 1) await numbered.put({ id: `d${n}`, n });
      await numbered.put({ id: 'none', n: null });
      for (let length = 1; length <= 300; length += 1) {
        const wanted = Array.from({ length }, (_, index) => (index * 7) % 300);
        const found = await numbered.find({ where: { n: { in: [...wanted, ...(length % 2 ? [null] : [])] } }, limit: 1000 });
        const expected = new Set(wanted.map((n) => `d${n}`));
        if (length % 2) expected.add('none');
        expect(new Set(found.items.map((item) => item.id)), `a list of ${length}`).to.deep.equal(expected);
      }
      // Lengths 1..256 share nine shapes (twice: with and without the null), 257..300 are one each.
      expect(store.preparedStatementCount).to.be.at.most(2 * 9 + 44 + 10);
      // Each longer list is a statement of its own: the least recently used make way.
      for (let length = 301; length < 301 + PREPARED_STATEMENT_LIMIT; length += 1) {
        const found = await numbered.find({ where: { n: { in: Array.from({ length }, (_, index) => index) } }, limit: 1 });
        expect(found.items).to.have.length(1);
      }
      expect(store.preparedStatementCount).to.equal(PREPARED_STATEMENT_LIMIT);
    }));
});
