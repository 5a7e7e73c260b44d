// `npm run bench -- store [--events N] [--streams N]`: the embedded event store against a raw
// better-sqlite3 loop doing the same SQL work with the same pragmas, in the same run.
// Each case gets a fresh database file; durability is synchronous=FULL throughout.

import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { DecodingEventStore } from '../application/events/decoding-event-store';
import type { EventMetadata, NewEvent } from '../application/ports/event-store';
import { SqliteEventStore } from '../infrastructure/event-store/sqlite';
import { SqliteReadStore } from '../infrastructure/read-store/sqlite';
import { type SqliteDatabase, openSqliteDatabase } from '../infrastructure/sqlite/database';
import { systemClock } from '../infrastructure/system';
import type { Projection } from '../projections/projection';
import { ProjectionRunner } from '../projections/runner';

interface Options {
  events: number;
  streams: number;
  writers: number;
  batch: number;
}

interface Row {
  case: string;
  ours: number;
  raw: number | null;
  note: string;
}

const METADATA: EventMetadata = {
  tenant_id: 'bench-tenant',
  actor: { kind: 'system', id: 'bench' },
  request_id: null,
  correlation_id: 'bench',
  causation_id: null,
  occurred_at: new Date(0).toISOString(),
  ip: null,
};

const payload = (index: number): Record<string, unknown> => ({ index, name: `item ${index}`, amount: index % 997, tags: ['a', 'b'] });
const streamOf = (index: number, streams: number): string => `bench-${index % streams}`;
const newEvent = (index: number): NewEvent => ({ id: randomUUID(), type: 'ItemRecorded', data: payload(index), metadata: METADATA });

function parseOptions(args: string[]): Options {
  const read = (name: string, fallback: number): number => {
    const at = args.indexOf(`--${name}`);
    return at >= 0 ? Number(args[at + 1]) : fallback;
  };
  return { events: read('events', 100_000), streams: read('streams', 1000), writers: read('writers', 50), batch: read('batch', 10) };
}

function freshDatabase(root: string, name: string): SqliteDatabase {
  return openSqliteDatabase(path.join(root, `${name}.db`), { synchronous: 'full' });
}

async function timed(work: () => Promise<void> | void): Promise<number> {
  const started = process.hrtime.bigint();
  await work();
  return Number(process.hrtime.bigint() - started) / 1e9;
}

/** The raw loop's schema and statements: the same tables and SQL as the store. */
function rawStatements(db: SqliteDatabase) {
  new SqliteEventStore(db); // creates the identical schema
  return {
    stream: db.prepare('SELECT revision, deleted, truncate_before, metadata FROM streams WHERE stream = ?'),
    eventById: db.prepare('SELECT stream, revision, position FROM events WHERE event_id = ?'),
    insert: db.prepare('INSERT INTO events (event_id, stream, revision, type, data, metadata, recorded_at) VALUES (?, ?, ?, ?, ?, ?, ?)'),
    upsertStream: db.prepare('INSERT INTO streams (stream, revision) VALUES (?, ?) ON CONFLICT (stream) DO UPDATE SET revision = excluded.revision, deleted = 0'),
  };
}

/** One append the way the store does it: look up the stream and the id, insert, move the stream. */
function rawAppend(statements: ReturnType<typeof rawStatements>, stream: string, events: NewEvent[]): void {
  const row = statements.stream.get(stream) as { revision: number } | undefined;
  statements.eventById.get(events[0].id);
  let revision = row ? row.revision : -1;
  const at = new Date().toISOString();
  for (const event of events) {
    revision += 1;
    statements.insert.run(event.id, stream, revision, event.type, JSON.stringify(event.data), JSON.stringify(event.metadata), at);
  }
  statements.upsertStream.run(stream, revision);
}

async function sequentialAppends(root: string, options: Options): Promise<Row> {
  // Events are made inside the timed loops, the same way for ours and raw: holding 100,000
  // of them up front would only measure the bench's own memory.
  const db = freshDatabase(root, 'sequential');
  const store = new SqliteEventStore(db);
  const revisions = new Array<number>(options.streams).fill(-1);
  const ours = await timed(async () => {
    for (let index = 0; index < options.events; index += 1) {
      const stream = index % options.streams;
      const expected = revisions[stream] === -1 ? 'no_stream' : revisions[stream];
      revisions[stream] = (await store.appendToStream(streamOf(index, options.streams), [newEvent(index)], { expectedRevision: expected })).nextExpectedRevision;
    }
  });
  await store.close();
  db.close();
  const rawDb = freshDatabase(root, 'sequential-raw');
  const statements = rawStatements(rawDb);
  const append = rawDb.transaction((stream: string, batch: NewEvent[]) => rawAppend(statements, stream, batch));
  const raw = await timed(() => {
    for (let index = 0; index < options.events; index += 1) append.immediate(streamOf(index, options.streams), [newEvent(index)]);
  });
  rawDb.close();
  return { case: 'sequential single-event appends', ours: options.events / ours, raw: options.events / raw, note: 'one transaction and one WAL sync per event' };
}

async function concurrentAppends(root: string, options: Options, sequentialRate: number): Promise<Row> {
  const db = freshDatabase(root, 'concurrent');
  const store = new SqliteEventStore(db);
  const perWriter = Math.ceil(options.events / options.writers);
  const ours = await timed(async () => {
    await Promise.all(
      Array.from({ length: options.writers }, async (_, writer) => {
        for (let index = 0; index < perWriter; index += 1) {
          const global = writer + index * options.writers;
          if (global >= options.events) return;
          await store.appendToStream(streamOf(global, options.streams), [newEvent(global)], { expectedRevision: 'any' });
        }
      }),
    );
  });
  await store.close();
  db.close();
  const rate = options.events / ours;
  return { case: `${options.writers} concurrent single-event writers`, ours: rate, raw: null, note: `${(rate / sequentialRate).toFixed(1)}x our sequential rate (group commit)` };
}

async function batchedAppends(root: string, options: Options): Promise<Row> {
  const batches = Math.floor(options.events / options.batch);
  const makeBatch = (batch: number): NewEvent[] => Array.from({ length: options.batch }, (_, offset) => newEvent(batch * options.batch + offset));
  const db = freshDatabase(root, 'batched');
  const store = new SqliteEventStore(db);
  const ours = await timed(async () => {
    for (let batch = 0; batch < batches; batch += 1) await store.appendToStream(streamOf(batch, options.streams), makeBatch(batch), { expectedRevision: 'any' });
  });
  await store.close();
  db.close();
  const rawDb = freshDatabase(root, 'batched-raw');
  const statements = rawStatements(rawDb);
  const append = rawDb.transaction((stream: string, batch: NewEvent[]) => rawAppend(statements, stream, batch));
  const raw = await timed(() => {
    for (let batch = 0; batch < batches; batch += 1) append.immediate(streamOf(batch, options.streams), makeBatch(batch));
  });
  rawDb.close();
  return { case: `batches of ${options.batch}`, ours: (batches * options.batch) / ours, raw: (batches * options.batch) / raw, note: 'one transaction per batch' };
}

/** Fills a database quickly (one transaction) for the read and rebuild cases. */
function seed(db: SqliteDatabase, options: Options): void {
  const statements = rawStatements(db);
  db.transaction(() => {
    for (let index = 0; index < options.events; index += 1) rawAppend(statements, streamOf(index, options.streams), [newEvent(index)]);
  })();
}

interface EventRowLike {
  data: string;
  metadata: string;
  position: number;
  stream: string;
}

async function reads(root: string, options: Options): Promise<Row[]> {
  const db = freshDatabase(root, 'reads');
  seed(db, options);
  const store = new SqliteEventStore(db);
  let count = 0;
  const oursByStream = await timed(async () => {
    for (let stream = 0; stream < options.streams; stream += 1) count += (await store.readStream(`bench-${stream}`)).length;
  });
  const byStream = db.prepare('SELECT * FROM events WHERE stream = ? AND revision >= ? ORDER BY revision ASC LIMIT ?');
  const rawByStream = await timed(() => {
    for (let stream = 0; stream < options.streams; stream += 1) {
      for (const row of byStream.all(`bench-${stream}`, 0, Number.MAX_SAFE_INTEGER) as EventRowLike[]) {
        JSON.parse(row.data);
        JSON.parse(row.metadata);
      }
    }
  });
  let allCount = 0;
  const oursAll = await timed(async () => {
    let from = 0;
    for (;;) {
      const page = await store.readAll({ fromPosition: from, maxCount: 500 });
      if (page.length === 0) break;
      allCount += page.length;
      from = page[page.length - 1].position;
    }
  });
  const allPage = db.prepare("SELECT * FROM events WHERE position > ? AND substr(stream, 1, 1) <> '$' ORDER BY position ASC LIMIT ?");
  const rawAll = await timed(() => {
    let from = 0;
    for (;;) {
      const page = allPage.all(from, 500) as EventRowLike[];
      if (page.length === 0) break;
      for (const row of page) {
        JSON.parse(row.data);
        JSON.parse(row.metadata);
      }
      from = page[page.length - 1].position;
    }
  });
  await store.close();
  db.close();
  if (count !== options.events || allCount !== options.events) throw new Error(`read ${count} / ${allCount} events, expected ${options.events}`);
  return [
    { case: 'read by stream', ours: options.events / oursByStream, raw: options.events / rawByStream, note: `${options.streams} streams, whole stream each` },
    { case: 'read $all', ours: options.events / oursAll, raw: options.events / rawAll, note: 'pages of 500' },
  ];
}

const countsProjection: Projection = {
  name: 'stream_counts',
  version: 1,
  collections: [{ name: 'stream_counts', indexes: [{ field: 'count' }] }],
  handles: 'all',
  async apply(event, view) {
    const current = await view.get<{ id: string; count: number }>('stream_counts', event.stream);
    view.put('stream_counts', { id: event.stream, count: (current?.count ?? 0) + 1, position: event.position });
  },
};

async function rebuild(root: string, options: Options): Promise<Row> {
  const db = freshDatabase(root, 'rebuild');
  seed(db, options);
  const eventStore = new SqliteEventStore(db);
  const readStore = new SqliteReadStore(db);
  const runner = new ProjectionRunner({ eventStore: new DecodingEventStore(eventStore), readStore, clock: systemClock }, [countsProjection]);
  for (const spec of countsProjection.collections) await readStore.ensureCollection(spec);
  let rebuilt = 0;
  const ours = await timed(async () => {
    rebuilt = (await runner.rebuild('stream_counts')).events;
  });
  await eventStore.close();
  db.close();
  if (rebuilt !== options.events) throw new Error(`rebuilt ${rebuilt} events, expected ${options.events}`);

  const rawDb = freshDatabase(root, 'rebuild-raw');
  seed(rawDb, options);
  new SqliteReadStore(rawDb);
  // The read store's layout: the document, and its declared field as an indexed column.
  rawDb.exec('CREATE TABLE IF NOT EXISTS "rm_raw_counts" (id TEXT PRIMARY KEY, doc TEXT NOT NULL, f_count) WITHOUT ROWID');
  rawDb.exec('CREATE INDEX IF NOT EXISTS raw_counts_count ON "rm_raw_counts" (f_count)');
  const page = rawDb.prepare("SELECT * FROM events WHERE position > ? AND substr(stream, 1, 1) <> '$' ORDER BY position ASC LIMIT ?");
  const get = rawDb.prepare('SELECT doc FROM "rm_raw_counts" WHERE id = ?');
  const put = rawDb.prepare('INSERT INTO "rm_raw_counts" (id, doc, f_count) VALUES (?, ?, ?) ON CONFLICT (id) DO UPDATE SET doc = excluded.doc, f_count = excluded.f_count');
  const checkpoint = rawDb.prepare('INSERT INTO _projections (name, state) VALUES (?, ?) ON CONFLICT (name) DO UPDATE SET state = excluded.state');
  const applyPage = rawDb.transaction((rows: EventRowLike[]) => {
    for (const row of rows) {
      JSON.parse(row.data);
      JSON.parse(row.metadata);
      const current = get.get(row.stream) as { doc: string } | undefined;
      const count = current ? (JSON.parse(current.doc) as { count: number }).count : 0;
      put.run(row.stream, JSON.stringify({ id: row.stream, count: count + 1, position: row.position }), count + 1);
    }
    checkpoint.run('raw_counts', JSON.stringify({ checkpoint: rows[rows.length - 1].position }));
  });
  const raw = await timed(() => {
    let from = 0;
    for (;;) {
      const rows = page.all(from, 500) as EventRowLike[];
      if (rows.length === 0) break;
      applyPage.immediate(rows);
      from = rows[rows.length - 1].position;
    }
  });
  rawDb.close();
  return { case: 'projection rebuild', ours: options.events / ours, raw: options.events / raw, note: 'read-modify-write of one document per event, batches of 500' };
}

export async function run(args: string[]): Promise<void> {
  const options = parseOptions(args);
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-bench-store-'));
  console.log(`store bench: ${options.events} events over ${options.streams} streams, synchronous=FULL, ${os.cpus().length} cores, Node ${process.version}`);
  try {
    const rows: Row[] = [];
    const sequential = await sequentialAppends(root, options);
    rows.push(sequential);
    rows.push(await concurrentAppends(root, options, sequential.ours));
    rows.push(await batchedAppends(root, options));
    rows.push(...(await reads(root, options)));
    rows.push(await rebuild(root, options));
    const format = (value: number): string => Math.round(value).toLocaleString('en-US');
    console.log('');
    console.log('| case | ours (events/s) | raw better-sqlite3 (events/s) | ratio | note |');
    console.log('|---|---:|---:|---:|---|');
    for (const row of rows) {
      console.log(`| ${row.case} | ${format(row.ours)} | ${row.raw === null ? '-' : format(row.raw)} | ${row.raw === null ? '-' : (row.ours / row.raw).toFixed(2)} | ${row.note} |`);
    }
    console.log('');
    console.log(`peak RSS: ${Math.round(process.resourceUsage().maxRSS / 1024)} MB`);
  } finally {
    fs.rmSync(root, { recursive: true, force: true });
  }
}
