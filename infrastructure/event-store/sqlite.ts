// The embedded event store: EventStoreDB's semantics on one SQLite file (WAL).
//
// - `$all` is the `events` table; its INTEGER PRIMARY KEY AUTOINCREMENT is the commit
//   position, so the global order is the commit order and positions are never reused.
// - Group commit: appends that arrive while a flush is pending share one transaction and
//   one WAL sync, each still checked against its own expected revision (in a savepoint, so
//   a conflict or an error in one append leaves the others of the group untouched). The
//   transaction is the connection's commit group (../sqlite/commit-group.ts), shared with
//   the read store's projection commits of the same turn.
// - Subscribers are woken in-process when a group commits, and poll as a fallback so that
//   another process (the operator CLI tailing `$all`) sees appends too.
// - The events of the last commits stay in memory (the tail): a live subscriber that is
//   caught up reads its next page there, filtered in memory, instead of querying `$all`. The
//   tail is only ever a contiguous range of positions ending at the store's head; when
//   another process appended in between, or a subscriber is further behind, it reads SQLite.
// - A row kept in memory (the tail, a stream kept for the commands that read it again) is
//   parsed once and its event shared, deep-frozen, by the readers after that; everything kept
//   is forgotten once another connection commits to the file (PRAGMA data_version).

import { deepFreeze } from '../../application/shared/immutable';
import {
  type AllFilter,
  type AppendResult,
  type EventStore,
  type EventSubscription,
  type ExpectedRevision,
  type NewEvent,
  type ReadAllOptions,
  type ReadStreamOptions,
  type StreamAppend,
  type RecordedEvent,
  type StreamMetadata,
  type SubscribeToAllOptions,
  type SubscriptionMessage,
  WrongExpectedRevisionError,
  revisionMatches,
} from '../../application/ports/event-store';
import type { Statement } from 'better-sqlite3';
import { CommitGroup } from '../sqlite/commit-group';
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
  /** A row kept in memory (the tail, recent streams) that a reader has parsed already. */
  readBefore?: boolean;
  /** Its event, frozen and shared by the readers from then on (sharedEvent, heldEvent). */
  shared?: RecordedEvent;
}

interface StreamRow {
  revision: number;
  deleted: number;
  truncate_before: number;
  metadata: string | null;
}

type Outcome = { ok: true; results: AppendResult[]; rows: EventRow[] } | { ok: false; error: unknown };

/** An append waiting for the next group commit: to one stream, or to several at once. */
interface PendingAppend {
  parts: readonly StreamAppend[];
  resolve(results: AppendResult[]): void;
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
/** Events kept in the tail; a subscriber further behind reads SQLite. */
const TAIL_CAPACITY = 8192;
/** Rows of recently read or written streams kept for the commands that read them again. */
const RECENT_STREAM_ROWS = 16_384;

export interface SqliteEventStoreOptions {
  /** How often subscribers look for appends made by other processes. */
  pollIntervalMs?: number;
  now?: () => Date;
  /** Events of the last commits kept in memory for live subscribers (default 8,192). */
  tailCapacity?: number;
  /** Told the head after each commit of this connection (the projection thread follows it: infrastructure/sqlite/projection-thread.ts). */
  onCommitted?: (head: number) => void;
}

export class SqliteEventStore implements EventStore {
  private readonly pending: PendingAppend[] = [];
  private closed = false;
  /**
   * Live subscriptions waiting for the head to pass their position: released by the commit
   * that passes it, or by the next poll (appends of other processes). One set and one timer
   * for all of them: every commit wakes every projection and saga group (about 27), and a
   * timer, an abort listener and an rxjs subscription made and dropped per wait were a
   * measurable part of what a commit costs at a low rate (docs/performance-history.md, tenth session).
   */
  private readonly appendWaiters = new Set<AppendWaiter>();
  private pollTimer: NodeJS.Timeout | null = null;
  /**
   * The last position known committed, by this connection or (appendedElsewhere) another of
   * this process: a subscriber that asks to wait for what is already there does not wait.
   */
  private committedHead = 0;
  /** The subscriptions' abort signals listened to: once each, not once per wait. */
  private readonly watchedAborts = new WeakSet<AbortSignal>();
  private readonly pollIntervalMs: number;
  private readonly now: () => Date;
  private readonly onCommitted: ((head: number) => void) | undefined;
  private readonly tailCapacity: number;
  private readonly statements;
  private readonly group: CommitGroup;
  /**
   * Reads of `$all` prepared once per distinct query: every subscription (each projection and
   * saga group) reads a page with its own filter after every commit, and preparing the same
   * statement each time cost more than the read itself.
   */
  private readonly allReads = new Map<string, Statement<Array<string | number>, EventRow>>();
  private readonly tail: CommittedTail;
  private readonly recentStreams = new RecentStreams(RECENT_STREAM_ROWS);
  private headThisTurn: number | null = null;
  /** SQLite's count of other connections' commits, as last seen; null before the first look. */
  private dataVersion: number | null = null;
  private otherWritersCheckedThisTurn = false;

  constructor(private readonly db: SqliteDatabase, options: SqliteEventStoreOptions = {}) {
    this.pollIntervalMs = options.pollIntervalMs ?? 250;
    this.now = options.now ?? (() => new Date());
    this.onCommitted = options.onCommitted;
    this.tailCapacity = options.tailCapacity ?? TAIL_CAPACITY;
    this.tail = new CommittedTail(this.tailCapacity);
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
      dataVersion: db.prepare<[], number>('PRAGMA data_version').pluck(),
      streamForwards: db.prepare<[string, number, number], EventRow>(
        'SELECT * FROM events WHERE stream = ? AND revision >= ? ORDER BY revision ASC LIMIT ?',
      ),
      streamBackwards: db.prepare<[string, number, number, number], EventRow>(
        'SELECT * FROM events WHERE stream = ? AND revision <= ? AND revision >= ? ORDER BY revision DESC LIMIT ?',
      ),
    };
    // A lone append needs no savepoint; in a group each append gets one, so that its
    // conflict or error leaves the others of the group untouched. An append to several
    // streams is one item: its parts are undone together.
    const appendOne = db.transaction((append: PendingAppend) => this.appendParts(append));
    this.group = CommitGroup.of(db);
    this.group.join<PendingAppend[], Outcome[]>({
      take: () => (this.pending.length === 0 ? null : this.pending.splice(0, this.pending.length)),
      write: (appends, alone) =>
        alone && appends.length === 1
          ? [{ ok: true, ...this.appendParts(appends[0]) }]
          : appends.map((append): Outcome => {
              try {
                return { ok: true, ...appendOne(append) };
              } catch (error) {
                return { ok: false, error };
              }
            }),
      settle: (appends, result) => this.settle(appends, result),
    });
  }

  async appendToStream(stream: string, events: readonly NewEvent[], options: { expectedRevision?: ExpectedRevision } = {}): Promise<AppendResult> {
    const [result] = await this.appendToStreams([{ stream, events, expectedRevision: options.expectedRevision }]);
    return result;
  }

  /** All or none: the parts are written in one savepoint of the group's transaction. */
  appendToStreams(parts: readonly StreamAppend[]): Promise<AppendResult[]> {
    if (this.closed) return Promise.reject(new Error('event store is closed'));
    return new Promise<AppendResult[]>((resolve, reject) => {
      this.pending.push({ parts, resolve, reject });
      this.group.schedule();
    });
  }

  private appendParts(append: PendingAppend): { results: AppendResult[]; rows: EventRow[] } {
    const results: AppendResult[] = [];
    const rows: EventRow[] = [];
    for (const part of append.parts) {
      const written = this.appendInTransaction(part);
      results.push(written.result);
      rows.push(...written.rows);
    }
    return { results, rows };
  }

  /**
   * Settles a committed group of appends (the connection's commit group, commit-group.ts: one
   * transaction and one WAL sync for them and the read store's commits of the same turn).
   */
  private settle(group: PendingAppend[], result: { ok: true; outcomes: Outcome[] } | { ok: false; error: unknown }): void {
    if (!result.ok) {
      for (const append of group) append.reject(result.error);
      return;
    }
    const outcomes = result.outcomes;
    let head = 0;
    const committed = outcomes.flatMap((outcome) => (outcome.ok ? outcome.rows : []));
    this.tail.add(committed);
    this.recentStreams.append(committed);
    group.forEach((append, index) => {
      const outcome = outcomes[index];
      if (outcome.ok) {
        for (const result of outcome.results) head = Math.max(head, result.position);
        append.resolve(outcome.results);
      } else {
        append.reject(outcome.error);
      }
    });
    if (head > 0) {
      if (this.headThisTurn !== null) this.headThisTurn = Math.max(this.headThisTurn, head);
      this.committedHead = Math.max(this.committedHead, head);
      this.releaseWaiters((waiter) => waiter.position < head);
      this.onCommitted?.(head);
    }
  }

  /**
   * Another connection of this process committed up to `head` (the serving thread's, told to
   * the projection thread): its subscribers read on now rather than at the next poll. What it
   * appended since the last such news is read once, into the tail, so that those subscribers
   * (each projection of the thread) read it from memory, parsed once, instead of each querying
   * SQLite for it. The tail is forgotten first, as that connection's commit changed the file.
   */
  appendedElsewhere(head: number): void {
    if (this.closed || head <= this.committedHead) return;
    const from = this.committedHead;
    this.committedHead = head;
    // A subscriber woken here must read up to it this very turn (the head is read once per turn).
    if (this.headThisTurn !== null) this.headThisTurn = Math.max(this.headThisTurn, head);
    this.noticeOtherWriters(true);
    if (from > 0 && head - from <= this.tailCapacity) {
      // Every row, system streams too: the tail is a range of positions with none missing.
      this.tail.add(this.readAllRows({ fromPosition: from, upTo: head, includeSystem: true, maxCount: head - from }));
    }
    this.releaseWaiters((waiter) => waiter.position < head);
  }

  /** The append's result and the rows it inserted (none for a repeated append). */
  private appendInTransaction({ stream, events, expectedRevision: expected = 'any' }: StreamAppend): { result: AppendResult; rows: EventRow[] } {
    const row = this.statements.stream.get(stream);
    const current = liveRevision(row);
    if (events.length > 0) {
      const replay = this.previousAppendOf(stream, events);
      if (replay) return { result: replay, rows: [] };
    }
    if (!revisionMatches(expected, current)) {
      throw new WrongExpectedRevisionError(stream, expected, current ?? 'no_stream');
    }
    if (events.length === 0) {
      return { result: { nextExpectedRevision: current ?? -1, position: this.head() }, rows: [] };
    }
    let revision = row ? row.revision : -1;
    const rows: EventRow[] = [];
    const recordedAt = this.now().toISOString();
    for (const event of events) {
      revision += 1;
      const inserted: EventRow = {
        position: 0,
        event_id: event.id,
        stream,
        revision,
        type: event.type,
        data: JSON.stringify(event.data ?? null),
        metadata: JSON.stringify(event.metadata),
        recorded_at: recordedAt,
      };
      const info = this.statements.insert.run(inserted.event_id, stream, revision, inserted.type, inserted.data, inserted.metadata, recordedAt);
      inserted.position = Number(info.lastInsertRowid);
      rows.push(inserted);
    }
    this.statements.upsertStream.run(stream, revision);
    return { result: { nextExpectedRevision: revision, position: rows[rows.length - 1].position }, rows };
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
    this.noticeOtherWriters();
    const row = this.statements.stream.get(stream);
    if (!row || liveRevision(row) === null) return [];
    const lowest = this.lowestVisibleRevision(row);
    const maxCount = options.maxCount ?? Number.MAX_SAFE_INTEGER;
    const backwards = options.direction === 'backwards';
    const from = options.fromRevision ?? (backwards ? row.revision : lowest);
    const held = this.recentStreams.rows(stream, row.revision, lowest);
    let rows: EventRow[];
    let kept = true;
    if (held) {
      rows = backwards
        ? held.filter((event) => event.revision <= from).reverse().slice(0, maxCount)
        : held.filter((event) => event.revision >= from).slice(0, maxCount);
    } else {
      rows = backwards
        ? this.statements.streamBackwards.all(stream, from, lowest, maxCount)
        : this.statements.streamForwards.all(stream, Math.max(from, lowest), maxCount);
      // The whole visible stream, read forwards: kept for the next command on it.
      kept = !backwards && from <= lowest && rows.length < maxCount;
      if (kept) this.recentStreams.keep(stream, lowest, rows);
    }
    const maxAge = this.metadataOf(row).maxAge;
    const events = rows.map(kept ? heldEvent : toRecordedEvent);
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
    // A forward read of the last commits (the audit anchoring's, every poll) from the tail,
    // whose events are already parsed, when it holds everything up to the head and nobody
    // else has written the file since (a rebuild after an operator's edit reads the edit).
    this.noticeOtherWriters(true);
    if (options.direction !== 'backwards' && !options.includeSystem && (options.maxCount ?? 1) > 0) {
      const fromTail = this.tail.page(options.fromPosition ?? 0, this.head(), options.filter, options.maxCount ?? Number.MAX_SAFE_INTEGER);
      if (fromTail) return fromTail.rows.map(sharedEvent);
    }
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
    this.noticeOtherWriters();
    const head = this.headForPage();
    if (head <= fromPosition) return { events: [], scannedTo: fromPosition };
    const fromTail = this.tail.page(fromPosition, head, filter, PAGE_SIZE);
    if (fromTail) return { events: fromTail.rows.map(sharedEvent), scannedTo: fromTail.scannedTo };
    const rows = this.readAllRows({ fromPosition, filter, maxCount: PAGE_SIZE, upTo: head });
    const scannedTo = rows.length === PAGE_SIZE ? rows[rows.length - 1].position : head;
    return { events: rows.map(toRecordedEvent), scannedTo };
  }

  /**
   * Resolves once this process commits past `position`, at the next poll (at most the poll
   * interval: another process may have appended), or when `abort` fires or the store closes.
   * A subscriber hands its events to its consumer before it waits, and commits made meanwhile
   * have woken nobody for it: past `position` already, it does not wait (it used to, until
   * the next commit or poll: up to the poll interval at a low rate).
   */
  waitForAppend(position: number, abort: AbortSignal): Promise<void> {
    if (abort.aborted || this.closed || this.committedHead > position) return Promise.resolve();
    if (!this.watchedAborts.has(abort)) {
      this.watchedAborts.add(abort);
      abort.addEventListener('abort', () => this.releaseWaiters((waiter) => waiter.abort === abort), { once: true });
    }
    return new Promise((resolve) => {
      this.appendWaiters.add({ position, abort, resolve });
      this.pollTimer ??= setTimeout(() => {
        this.pollTimer = null;
        this.releaseWaiters(() => true);
      }, this.pollIntervalMs);
    });
  }

  private releaseWaiters(which: (waiter: AppendWaiter) => boolean): void {
    for (const waiter of this.appendWaiters) {
      if (!which(waiter)) continue;
      this.appendWaiters.delete(waiter);
      waiter.resolve();
    }
    if (this.appendWaiters.size === 0 && this.pollTimer !== null) {
      clearTimeout(this.pollTimer);
      this.pollTimer = null;
    }
  }

  async headPosition(): Promise<number> {
    return this.head();
  }

  /**
   * What this process keeps of the log (the tail, recent streams' rows and their parsed
   * events) is forgotten once another connection has committed to the file: another process's
   * appends, or an operator's edit of a row. Looked at once per turn of the event loop, or now
   * (`now`).
   */
  private noticeOtherWriters(now = false): void {
    if (this.otherWritersCheckedThisTurn && !now) return;
    if (!this.otherWritersCheckedThisTurn) {
      this.otherWritersCheckedThisTurn = true;
      setImmediate(() => {
        this.otherWritersCheckedThisTurn = false;
      });
    }
    const version = this.statements.dataVersion.get() as number;
    if (this.dataVersion !== null && version !== this.dataVersion) {
      this.tail.forget();
      this.recentStreams.forgetAll();
    }
    this.dataVersion = version;
  }

  private head(): number {
    return this.statements.head.get()?.head ?? 0;
  }

  /**
   * The head position for a subscriber's next page. Every subscriber asks after every commit,
   * so it is read once per turn of the event loop: this process's own commits raise it, and
   * another process's appends are seen from the next turn on (as the poll would see them).
   */
  private headForPage(): number {
    if (this.headThisTurn === null) {
      this.headThisTurn = this.head();
      setImmediate(() => {
        this.headThisTurn = null;
      });
    }
    return this.headThisTurn;
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
    if (this.pending.length > 0) this.group.flush();
    this.closed = true;
    this.releaseWaiters(() => true);
  }

  get isClosed(): boolean {
    return this.closed;
  }
}

/** The revision of a stream that has events and is not deleted; otherwise null. */
function liveRevision(row: StreamRow | undefined): number | null {
  return row && !row.deleted && row.revision >= 0 ? row.revision : null;
}

/**
 * The event of a row of this process's last commits (the tail): every one is read by several
 * subscribers (the audit log and its anchoring at least), so it is parsed once, frozen and
 * shared by all of them.
 */
function sharedEvent(row: EventRow): RecordedEvent {
  row.shared ??= deepFreeze(toRecordedEvent(row));
  return row.shared;
}

/**
 * The event of a stream's row kept for the commands that read it again. Its first reader gets
 * its own; a row read a second time (the next command on the stream) is shared frozen from
 * then on, so a stream read once and never again costs no more than a plain parse.
 */
function heldEvent(row: EventRow): RecordedEvent {
  if (row.shared) return row.shared;
  if (!row.readBefore) {
    row.readBefore = true;
    return toRecordedEvent(row);
  }
  return sharedEvent(row);
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

/**
 * The rows of the streams read or written lately, by stream: a command reads the stream it
 * appends to, often one this process has just written (an orchestration event's attempt is
 * five commands on its stream in a row). An entry holds a stream's rows from a revision to its
 * last, and is used only when the stream's stored revision, read on every call, is still its
 * last and the visible range starts within it: another process's append, a deletion or
 * truncation is seen there. This process's commits extend an entry; the least recently used
 * go once `capacity` rows are held.
 */
class RecentStreams {
  private readonly entries = new Map<string, { from: number; rows: EventRow[] }>();
  private held = 0;

  constructor(private readonly capacity: number) {}

  /** The rows from `lowest` to `revision`, when held; null otherwise. */
  rows(stream: string, revision: number, lowest: number): EventRow[] | null {
    const entry = this.entries.get(stream);
    if (!entry) return null;
    const last = entry.rows.length === 0 ? entry.from - 1 : entry.rows[entry.rows.length - 1].revision;
    if (last !== revision || lowest < entry.from) return null;
    this.entries.delete(stream);
    this.entries.set(stream, entry);
    return lowest === entry.from ? entry.rows : entry.rows.filter((row) => row.revision >= lowest);
  }

  keep(stream: string, from: number, rows: EventRow[]): void {
    this.forget(stream);
    this.entries.set(stream, { from, rows });
    this.held += rows.length;
    this.trim();
  }

  /** Committed rows, in position order: each extends its stream's entry, or starts one for a new stream. */
  append(committed: EventRow[]): void {
    for (const row of committed) {
      const entry = this.entries.get(row.stream);
      const last = entry ? (entry.rows.length === 0 ? entry.from - 1 : entry.rows[entry.rows.length - 1].revision) : -1;
      if (entry && last === row.revision - 1) {
        entry.rows.push(row);
        this.held += 1;
      } else if (!entry && row.revision === 0) {
        this.entries.set(row.stream, { from: 0, rows: [row] });
        this.held += 1;
      } else {
        this.forget(row.stream);
      }
    }
    this.trim();
  }

  forgetAll(): void {
    this.entries.clear();
    this.held = 0;
  }

  private forget(stream: string): void {
    const entry = this.entries.get(stream);
    if (!entry) return;
    this.held -= entry.rows.length;
    this.entries.delete(stream);
  }

  private trim(): void {
    for (const stream of this.entries.keys()) {
      if (this.held <= this.capacity) return;
      this.forget(stream);
    }
  }
}

/**
 * The rows of this process's last commits: a contiguous range of positions, `first` to
 * `last`. A commit that does not follow on (another process appended in between) starts it
 * again; the oldest rows go once it holds `capacity`.
 */
class CommittedTail {
  private rows: EventRow[] = [];
  private start = 0;

  constructor(private readonly capacity: number) {}

  private get first(): number {
    return this.rows.length > this.start ? this.rows[this.start].position : 0;
  }

  private get last(): number {
    return this.rows.length > this.start ? this.rows[this.rows.length - 1].position : 0;
  }

  add(committed: EventRow[]): void {
    if (committed.length === 0) return;
    committed.sort((a, b) => a.position - b.position);
    for (const row of committed) {
      if (this.rows.length > this.start && row.position !== this.last + 1) this.forget();
      this.rows.push(row);
    }
    if (this.rows.length - this.start > this.capacity) this.start = this.rows.length - this.capacity;
    // Drop the forgotten rows in one go now and then, not one by one.
    if (this.start > this.capacity) {
      this.rows = this.rows.slice(this.start);
      this.start = 0;
    }
  }

  /** Forgets every row: the next page is read from SQLite. */
  forget(): void {
    this.rows = [];
    this.start = 0;
  }

  /**
   * The page after `fromPosition` up to `head`, filtered as `readAllRows` filters (system
   * streams left out), when the tail holds all of it; otherwise null (read SQLite).
   */
  page(fromPosition: number, head: number, filter: AllFilter | undefined, maxCount: number): { rows: EventRow[]; scannedTo: number } | null {
    if (this.rows.length === this.start || head !== this.last || fromPosition < this.first - 1) return null;
    const matches = rowFilter(filter);
    const rows: EventRow[] = [];
    for (let index = this.start + (fromPosition - this.first + 1); index < this.rows.length; index += 1) {
      const row = this.rows[index];
      if (row.stream.charCodeAt(0) === 36 /* $ */ || !matches(row)) continue;
      rows.push(row);
      if (rows.length === maxCount) return { rows, scannedTo: row.position };
    }
    return { rows, scannedTo: head };
  }
}

const rowFilters = new WeakMap<AllFilter, (row: EventRow) => boolean>();

/** `filterSql` in memory (made once per filter: a subscription keeps its own). */
function rowFilter(filter: AllFilter | undefined): (row: EventRow) => boolean {
  if (!filter) return () => true;
  let matches = rowFilters.get(filter);
  if (!matches) {
    matches = rowFilterOf(filter);
    rowFilters.set(filter, matches);
  }
  return matches;
}

function rowFilterOf(filter: AllFilter): (row: EventRow) => boolean {
  switch (filter.kind) {
    case 'event_type': {
      const types = new Set(filter.types);
      return (row) => types.has(row.type);
    }
    case 'event_type_prefix':
      return (row) => filter.prefixes.some((prefix) => row.type.startsWith(prefix));
    case 'stream_prefix':
      return (row) => filter.prefixes.some((prefix) => row.stream.startsWith(prefix));
  }
}

interface AppendWaiter {
  position: number;
  abort: AbortSignal;
  resolve: () => void;
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
