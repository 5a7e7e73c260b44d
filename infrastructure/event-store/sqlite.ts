// The embedded event store: EventStoreDB's semantics on one SQLite file (WAL).
//
// - `$all` is the `events` table; its INTEGER PRIMARY KEY AUTOINCREMENT is the commit
//   position, so the global order is the commit order and positions are never reused.
// - Group commit: appends that arrive while a flush is pending share one transaction and
//   one WAL sync, each still checked against its own expected revision (in a savepoint, so
//   a conflict or an error in one append leaves the others of the group untouched).
// - Subscribers are woken in-process when a group commits, and poll as a fallback so that
//   another process (the operator CLI tailing `$all`) sees appends too.

import { Subject } from 'rxjs';
import {
  type AllFilter,
  type AppendResult,
  type EventStore,
  type EventSubscription,
  type ExpectedRevision,
  type NewEvent,
  type ReadAllOptions,
  type ReadStreamOptions,
  type RecordedEvent,
  type StreamMetadata,
  type SubscribeToAllOptions,
  type SubscriptionMessage,
  WrongExpectedRevisionError,
  revisionMatches,
} from '../../application/ports/event-store';
import type { Statement } from 'better-sqlite3';
import type { SqliteDatabase } from '../sqlite/database';

const MAX_PREPARED_ALL_READS = 256;

interface EventRow {
  position: number;
  event_id: string;
  stream: string;
  revision: number;
  type: string;
  data: string;
  metadata: string;
  recorded_at: string;
}

interface StreamRow {
  revision: number;
  deleted: number;
  truncate_before: number;
  metadata: string | null;
}

type Outcome = { ok: true; result: AppendResult } | { ok: false; error: unknown };

interface PendingAppend {
  stream: string;
  events: readonly NewEvent[];
  expected: ExpectedRevision;
  resolve(result: AppendResult): void;
  reject(error: unknown): void;
}

const SCHEMA = `
CREATE TABLE IF NOT EXISTS events (
  position INTEGER PRIMARY KEY AUTOINCREMENT,
  event_id TEXT NOT NULL UNIQUE,
  stream TEXT NOT NULL,
  revision INTEGER NOT NULL,
  type TEXT NOT NULL,
  data TEXT NOT NULL,
  metadata TEXT NOT NULL,
  recorded_at TEXT NOT NULL,
  UNIQUE (stream, revision)
);
CREATE INDEX IF NOT EXISTS events_by_type ON events (type, position);
CREATE TABLE IF NOT EXISTS streams (
  stream TEXT PRIMARY KEY,
  revision INTEGER NOT NULL,
  deleted INTEGER NOT NULL DEFAULT 0,
  truncate_before INTEGER NOT NULL DEFAULT 0,
  metadata TEXT
) WITHOUT ROWID;
`;

const PAGE_SIZE = 500;

export interface SqliteEventStoreOptions {
  /** How often subscribers look for appends made by other processes. */
  pollIntervalMs?: number;
  now?: () => Date;
}

export class SqliteEventStore implements EventStore {
  private readonly pending: PendingAppend[] = [];
  private flushScheduled = false;
  private closed = false;
  /** Emits the head position after every committed group. */
  private readonly committed$ = new Subject<number>();
  private readonly pollIntervalMs: number;
  private readonly now: () => Date;
  private readonly statements;
  private readonly transactions;
  /**
   * Reads of `$all` prepared once per distinct query: every subscription (each projection and
   * saga group) reads a page with its own filter after every commit, and preparing the same
   * statement each time cost more than the read itself.
   */
  private readonly allReads = new Map<string, Statement<Array<string | number>, EventRow>>();

  constructor(private readonly db: SqliteDatabase, options: SqliteEventStoreOptions = {}) {
    this.pollIntervalMs = options.pollIntervalMs ?? 250;
    this.now = options.now ?? (() => new Date());
    db.exec(SCHEMA);
    this.statements = {
      stream: db.prepare<[string], StreamRow>('SELECT revision, deleted, truncate_before, metadata FROM streams WHERE stream = ?'),
      eventById: db.prepare<[string], { stream: string; revision: number; position: number }>(
        'SELECT stream, revision, position FROM events WHERE event_id = ?',
      ),
      insert: db.prepare(
        'INSERT INTO events (event_id, stream, revision, type, data, metadata, recorded_at) VALUES (?, ?, ?, ?, ?, ?, ?)',
      ),
      upsertStream: db.prepare(
        `INSERT INTO streams (stream, revision) VALUES (?, ?)
         ON CONFLICT (stream) DO UPDATE SET revision = excluded.revision, deleted = 0`,
      ),
      head: db.prepare<[], { head: number | null }>('SELECT max(position) AS head FROM events'),
      streamForwards: db.prepare<[string, number, number], EventRow>(
        'SELECT * FROM events WHERE stream = ? AND revision >= ? ORDER BY revision ASC LIMIT ?',
      ),
      streamBackwards: db.prepare<[string, number, number, number], EventRow>(
        'SELECT * FROM events WHERE stream = ? AND revision <= ? AND revision >= ? ORDER BY revision DESC LIMIT ?',
      ),
    };
    // A lone append needs no savepoint; in a group each append gets one, so that its
    // conflict or error leaves the others of the group untouched.
    const appendOne = db.transaction((append: PendingAppend) => this.appendInTransaction(append));
    this.transactions = {
      single: db.transaction((append: PendingAppend): Outcome[] => [{ ok: true, result: this.appendInTransaction(append) }]),
      group: db.transaction((group: PendingAppend[]): Outcome[] =>
        group.map((append): Outcome => {
          try {
            return { ok: true, result: appendOne(append) };
          } catch (error) {
            return { ok: false, error };
          }
        }),
      ),
    };
  }

  appendToStream(stream: string, events: readonly NewEvent[], options: { expectedRevision?: ExpectedRevision } = {}): Promise<AppendResult> {
    if (this.closed) return Promise.reject(new Error('event store is closed'));
    return new Promise<AppendResult>((resolve, reject) => {
      this.pending.push({ stream, events, expected: options.expectedRevision ?? 'any', resolve, reject });
      if (!this.flushScheduled) {
        this.flushScheduled = true;
        setImmediate(() => this.flush());
      }
    });
  }

  /** Commits every pending append in one transaction: one WAL sync for the whole group. */
  private flush(): void {
    this.flushScheduled = false;
    const group = this.pending.splice(0, this.pending.length);
    if (group.length === 0) return;
    let outcomes: Outcome[];
    try {
      outcomes = group.length === 1 ? this.transactions.single.immediate(group[0]) : this.transactions.group.immediate(group);
    } catch (error) {
      if (group.length === 1) group[0].reject(error);
      else for (const append of group) append.reject(error);
      return;
    }
    let head = 0;
    group.forEach((append, index) => {
      const outcome = outcomes[index];
      if (outcome.ok) {
        head = Math.max(head, outcome.result.position);
        append.resolve(outcome.result);
      } else {
        append.reject(outcome.error);
      }
    });
    if (head > 0) this.committed$.next(head);
  }

  private appendInTransaction({ stream, events, expected }: PendingAppend): AppendResult {
    const row = this.statements.stream.get(stream);
    const current = liveRevision(row);
    if (events.length > 0) {
      const replay = this.previousAppendOf(stream, events);
      if (replay) return replay;
    }
    if (!revisionMatches(expected, current)) {
      throw new WrongExpectedRevisionError(stream, expected, current ?? 'no_stream');
    }
    if (events.length === 0) {
      return { nextExpectedRevision: current ?? -1, position: this.head() };
    }
    let revision = row ? row.revision : -1;
    let position = 0;
    const recordedAt = this.now().toISOString();
    for (const event of events) {
      revision += 1;
      const info = this.statements.insert.run(
        event.id,
        stream,
        revision,
        event.type,
        JSON.stringify(event.data ?? null),
        JSON.stringify(event.metadata),
        recordedAt,
      );
      position = Number(info.lastInsertRowid);
    }
    this.statements.upsertStream.run(stream, revision);
    return { nextExpectedRevision: revision, position };
  }

  /**
   * EventStoreDB's idempotence: when these event ids were already appended, in this order,
   * to this stream, the append succeeds again without writing. A partial overlap is a conflict.
   */
  private previousAppendOf(stream: string, events: readonly NewEvent[]): AppendResult | null {
    const first = this.statements.eventById.get(events[0].id);
    if (!first) return null;
    let last = first;
    for (let index = 1; index < events.length; index += 1) {
      const next = this.statements.eventById.get(events[index].id);
      if (!next || next.stream !== stream || next.revision !== first.revision + index) {
        throw new WrongExpectedRevisionError(stream, 'any', first.revision);
      }
      last = next;
    }
    if (first.stream !== stream) throw new WrongExpectedRevisionError(stream, 'any', first.revision);
    return { nextExpectedRevision: last.revision, position: last.position };
  }

  async readStream(stream: string, options: ReadStreamOptions = {}): Promise<RecordedEvent[]> {
    const row = this.statements.stream.get(stream);
    if (!row || liveRevision(row) === null) return [];
    const lowest = this.lowestVisibleRevision(row);
    const maxCount = options.maxCount ?? Number.MAX_SAFE_INTEGER;
    const backwards = options.direction === 'backwards';
    const from = options.fromRevision ?? (backwards ? row.revision : lowest);
    const rows = backwards
      ? this.statements.streamBackwards.all(stream, from, lowest, maxCount)
      : this.statements.streamForwards.all(stream, Math.max(from, lowest), maxCount);
    const maxAge = this.metadataOf(row).maxAge;
    const events = rows.map(toRecordedEvent);
    if (maxAge === undefined) return events;
    const oldest = this.now().getTime() - maxAge * 1000;
    return events.filter((event) => Date.parse(event.recorded_at) >= oldest);
  }

  private lowestVisibleRevision(row: StreamRow): number {
    const metadata = this.metadataOf(row);
    const byCount = metadata.maxCount !== undefined ? row.revision - metadata.maxCount + 1 : 0;
    return Math.max(row.truncate_before, metadata.truncateBefore ?? 0, byCount, 0);
  }

  private metadataOf(row: StreamRow): StreamMetadata {
    return row.metadata ? (JSON.parse(row.metadata) as StreamMetadata) : {};
  }

  async readAll(options: ReadAllOptions = {}): Promise<RecordedEvent[]> {
    return this.readAllRows(options).map(toRecordedEvent);
  }

  private readAllRows(options: ReadAllOptions & { upTo?: number }): EventRow[] {
    const backwards = options.direction === 'backwards';
    const conditions: string[] = [];
    const params: Array<string | number> = [];
    if (backwards) {
      if (options.fromPosition !== undefined) {
        conditions.push('position < ?');
        params.push(options.fromPosition);
      }
    } else {
      conditions.push('position > ?');
      params.push(options.fromPosition ?? 0);
    }
    if (options.upTo !== undefined) {
      conditions.push('position <= ?');
      params.push(options.upTo);
    }
    if (!options.includeSystem) conditions.push("substr(stream, 1, 1) <> '$'");
    const filter = filterSql(options.filter);
    if (filter) {
      conditions.push(filter.sql);
      params.push(...filter.params);
    }
    const sql = `SELECT * FROM events ${conditions.length ? `WHERE ${conditions.join(' AND ')}` : ''}
      ORDER BY position ${backwards ? 'DESC' : 'ASC'} LIMIT ?`;
    params.push(options.maxCount ?? Number.MAX_SAFE_INTEGER);
    let statement = this.allReads.get(sql);
    if (!statement) {
      // Distinct queries are few (one per filter shape); the bound only guards against a caller that varies them.
      if (this.allReads.size >= MAX_PREPARED_ALL_READS) this.allReads.clear();
      statement = this.db.prepare<Array<string | number>, EventRow>(sql);
      this.allReads.set(sql, statement);
    }
    return statement.all(...params);
  }

  subscribeToAll(options: SubscribeToAllOptions): EventSubscription {
    return new SqliteSubscription(this, options);
  }

  /** Reads the next page for a subscription, never past the head seen before the read. */
  readPage(fromPosition: number, filter: AllFilter | undefined): { events: RecordedEvent[]; scannedTo: number } {
    const head = this.head();
    if (head <= fromPosition) return { events: [], scannedTo: fromPosition };
    const rows = this.readAllRows({ fromPosition, filter, maxCount: PAGE_SIZE, upTo: head });
    const scannedTo = rows.length === PAGE_SIZE ? rows[rows.length - 1].position : head;
    return { events: rows.map(toRecordedEvent), scannedTo };
  }

  /** Resolves once the head passes `position`, the poll interval elapses, or `abort` fires. */
  waitForAppend(position: number, abort: AbortSignal): Promise<void> {
    return new Promise((resolve) => {
      const done = (): void => {
        clearTimeout(timer);
        subscription.unsubscribe();
        abort.removeEventListener('abort', done);
        resolve();
      };
      const timer = setTimeout(done, this.pollIntervalMs);
      const subscription = this.committed$.subscribe((head) => {
        if (head > position) done();
      });
      abort.addEventListener('abort', done);
    });
  }

  async headPosition(): Promise<number> {
    return this.head();
  }

  private head(): number {
    return this.statements.head.get()?.head ?? 0;
  }

  async streamRevision(stream: string): Promise<number | null> {
    return liveRevision(this.statements.stream.get(stream));
  }

  async deleteStream(stream: string, options: { expectedRevision?: ExpectedRevision } = {}): Promise<void> {
    this.db
      .transaction(() => {
        const current = liveRevision(this.statements.stream.get(stream));
        const expected = options.expectedRevision ?? 'any';
        if (!revisionMatches(expected, current)) {
          throw new WrongExpectedRevisionError(stream, expected, current ?? 'no_stream');
        }
        this.db.prepare('UPDATE streams SET deleted = 1, truncate_before = revision + 1 WHERE stream = ?').run(stream);
      })
      .immediate();
  }

  async getStreamMetadata(stream: string): Promise<StreamMetadata> {
    const row = this.statements.stream.get(stream);
    return row ? this.metadataOf(row) : {};
  }

  async setStreamMetadata(stream: string, metadata: StreamMetadata): Promise<void> {
    // Metadata may precede the stream's first event, as in EventStoreDB.
    this.db
      .prepare(
        `INSERT INTO streams (stream, revision, metadata) VALUES (?, -1, ?)
         ON CONFLICT (stream) DO UPDATE SET metadata = excluded.metadata`,
      )
      .run(stream, JSON.stringify(metadata));
  }

  async close(): Promise<void> {
    if (this.closed) return;
    if (this.pending.length > 0) this.flush();
    this.closed = true;
    this.committed$.complete();
  }

  get isClosed(): boolean {
    return this.closed;
  }
}

/** The revision of a stream that has events and is not deleted; otherwise null. */
function liveRevision(row: StreamRow | undefined): number | null {
  return row && !row.deleted && row.revision >= 0 ? row.revision : null;
}

function toRecordedEvent(row: EventRow): RecordedEvent {
  return {
    id: row.event_id,
    type: row.type,
    data: JSON.parse(row.data),
    metadata: JSON.parse(row.metadata),
    stream: row.stream,
    revision: row.revision,
    position: row.position,
    recorded_at: row.recorded_at,
  };
}

function filterSql(filter: AllFilter | undefined): { sql: string; params: string[] } | null {
  if (!filter) return null;
  switch (filter.kind) {
    case 'event_type':
      if (filter.types.length === 0) return { sql: '0', params: [] };
      return { sql: `type IN (${filter.types.map(() => '?').join(', ')})`, params: [...filter.types] };
    case 'event_type_prefix':
      return prefixSql('type', filter.prefixes);
    case 'stream_prefix':
      return prefixSql('stream', filter.prefixes);
  }
}

function prefixSql(column: string, prefixes: readonly string[]): { sql: string; params: string[] } {
  if (prefixes.length === 0) return { sql: '0', params: [] };
  return {
    sql: `(${prefixes.map(() => `substr(${column}, 1, ?) = ?`).join(' OR ')})`,
    params: prefixes.flatMap((prefix) => [String(prefix.length), prefix]),
  };
}

/** Catch-up then live: pages through `$all`, then waits for the next commit. */
class SqliteSubscription implements EventSubscription {
  private readonly abort = new AbortController();

  constructor(
    private readonly store: SqliteEventStore,
    private readonly options: SubscribeToAllOptions,
  ) {}

  async *[Symbol.asyncIterator](): AsyncGenerator<SubscriptionMessage> {
    let position = this.options.fromPosition;
    let caughtUp = false;
    while (!this.abort.signal.aborted && !this.store.isClosed) {
      const { events, scannedTo } = this.store.readPage(position, this.options.filter);
      for (const event of events) {
        if (this.abort.signal.aborted) return;
        yield { kind: 'event', event };
        position = event.position;
      }
      if (scannedTo > position) {
        position = scannedTo;
        yield { kind: 'checkpoint', position };
      }
      if (events.length === PAGE_SIZE) continue;
      if (!caughtUp) {
        caughtUp = true;
        yield { kind: 'caught_up', position };
      }
      await this.store.waitForAppend(position, this.abort.signal);
    }
  }

  async stop(): Promise<void> {
    this.abort.abort();
  }
}
