// EventStore port on EventStoreDB / KurrentDB through @eventstore/db-client 6.2.1.
//
// Mapping choices (the port leaves room for these; keep the SQLite store in step):
// - Revisions and positions are bigint in the client and `number` in the port; every
//   conversion goes through `toSafeNumber`, which throws above Number.MAX_SAFE_INTEGER.
// - Position = the event's commit position in `$all`. GRPC appends write one prepare per
//   event, so each event has its own commit position (commit == prepare).
//   Reading or subscribing from p passes {commit: p, prepare: p}, and we also drop
//   anything at or before p (after p, reading backwards), which gives the port's
//   exclusive bounds whatever the server does at the boundary.
// - Event ids: EventStoreDB needs UUIDs and returns them in lowercase. A lowercase
//   canonical UUID is used as is. Any other id is mapped to a deterministic name-based
//   UUID (SHA-1, v5 layout), and the original is kept in the metadata key
//   `original_event_id`, which is removed again on read. Appending the same ids twice
//   therefore stays idempotent, natively.
// - Data and metadata are JSON events; `recorded_at` is the server's `created` time.
// - readAll: this client version has no server-side filter for reads, so `$all` is read
//   in pages and filtered here (system events, then `filterMatches`). `maxCount` counts
//   events after filtering.
// - subscribeToAll always filters on the server: the port's filter as a regex or prefix
//   filter, or `excludeSystemEvents()` when there is none. `filterMatches` is applied here
//   as well. Checkpoints come from the filter's `checkpointReached`.
//   `caught_up` is sent once. It comes from the server's CaughtUp message, which client
//   6.2.1 emits as 'caughtUp' (servers 23.10 and later). For older servers there is a
//   fallback: the head is read when the subscription starts, and `caught_up` is sent as
//   soon as an event or checkpoint at or past that head has been passed. Its position
//   is always one that every earlier event has been delivered before (or filtered out),
//   so it is safe to store as a checkpoint.
//   Signals (checkpoints, caught-up) are kept in order with the events the client stream
//   still buffers. Backpressure: a bounded queue pauses the client stream. If the server
//   drops a slow live subscriber ("consumer too slow"), iteration throws, and the caller
//   resubscribes from its checkpoint.
// - headPosition is the position of the newest non-system event. EventStoreDB writes
//   system events to `$all` by itself (for example persistent-subscription checkpoints),
//   and lag should not count them. At most HEAD_SCAN_LIMIT events are scanned backwards;
//   if all of them are system events, the newest raw position is returned.
// - deleteStream is a soft delete. 'stream_exists' is not offered by the client for
//   deletes, so it is checked first and the delete then runs with ANY.
// - Stream metadata: maxAge (seconds), maxCount and truncateBefore map to $maxAge,
//   $maxCount and $tb. `custom` keys are stored at the top level, as EventStoreDB does.
//   They may not start with `$` or use the system names. A truncateBefore above the safe
//   integer range (a soft delete writes long.MaxValue) is read as Number.MAX_SAFE_INTEGER.
// - Appending zero events appends nothing: the expected revision is checked against the
//   stream's current one and the result describes the stream as it is.

import { createHash } from 'node:crypto';
import {
  ANY,
  BACKWARDS,
  END,
  EventStoreDBClient,
  ErrorType,
  FORWARDS,
  NO_STREAM,
  START,
  STREAM_EXISTS,
  eventTypeFilter,
  excludeSystemEvents,
  isCommandError,
  jsonEvent,
  streamNameFilter,
} from '@eventstore/db-client';
import type {
  AllStreamResolvedEvent,
  AllStreamSubscription,
  AppendExpectedRevision,
  Filter,
  JSONType,
  Position,
  ReadPosition,
  RecordedEvent as EsdbRecordedEvent,
  StreamMetadata as EsdbStreamMetadata,
} from '@eventstore/db-client';
import {
  WrongExpectedRevisionError,
  filterMatches,
  revisionMatches,
  type AllFilter,
  type AppendResult,
  type EventMetadata,
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
  type StreamAppend,
} from '../../application/ports/event-store';
import { messageOf } from '../../domain/shared/errors';

/** Metadata key carrying our id when it is not a UUID EventStoreDB can store as is. */
const ORIGINAL_ID_KEY = 'original_event_id';
/** Page size for reads of `$all` that filter on our side. */
const READ_PAGE_SIZE = 1000;
/** How far back headPosition looks for a non-system event. */
const HEAD_SCAN_LIMIT = 1000;
const HEAD_SCAN_PAGE = 100;
/** Bounded subscription queue: pause the client stream above HIGH, resume below LOW. */
const QUEUE_HIGH_WATER = 512;
const QUEUE_LOW_WATER = 128;
/** Checkpoint every (interval x the server's search window) events the filter considered. */
const CHECKPOINT_INTERVAL = 1;

const MAX_SAFE = BigInt(Number.MAX_SAFE_INTEGER);
const MIN_SAFE = BigInt(Number.MIN_SAFE_INTEGER);
/** -1 sent as an unsigned 64-bit position: "no position". */
const NO_POSITION = 2n ** 63n - 1n;
const UUID_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
/** Namespace of the name-based UUIDs made from non-UUID ids (fixed, arbitrary). */
const ID_NAMESPACE = Buffer.from('4f1c2a9e7b3d4e8a9c6b5d2e1f0a3b7c', 'hex');
/** Stream-metadata names the client maps to system properties. */
const SYSTEM_METADATA_KEYS = new Set(['maxAge', 'maxCount', 'truncateBefore', 'cacheControl', 'acl']);

export class EventStoreDbEventStore implements EventStore {
  constructor(readonly client: EventStoreDBClient) {}

  async appendToStream(
    stream: string,
    events: readonly NewEvent[],
    options: { expectedRevision?: ExpectedRevision } = {},
  ): Promise<AppendResult> {
    const expected = options.expectedRevision ?? 'any';
    if (events.length === 0) return this.appendNothing(stream, expected);
    let result;
    try {
      result = await this.client.appendToStream(stream, events.map(toEventData), {
        expectedRevision: toClientExpectedRevision(expected),
      });
    } catch (error) {
      throw mapWrongExpectedVersion(error, stream, expected);
    }
    if (!result.success) {
      // Only when the connection string sets throwOnAppendFailure=false; the client's
      // batch append then reports an unreliable current revision, so ask the stream.
      const actual = await this.streamRevision(stream);
      throw new WrongExpectedRevisionError(stream, expected, actual ?? 'no_stream');
    }
    const nextExpectedRevision = toSafeNumber(result.nextExpectedRevision, 'revision');
    // An idempotent re-append may come back without a position: use the stream's last
    // event, a safe upper bound for read-your-writes.
    const position =
      result.position !== undefined
        ? toSafeNumber(result.position.commit, 'position')
        : (await this.lastEventPosition(stream)) ?? (await this.headPosition());
    return { nextExpectedRevision, position };
  }

  /**
   * EventStoreDB commits one stream at a time: the appends go one after the other, each
   * acknowledged before the next, so a later one is never stored without the earlier ones.
   * The first refused ends it; those before it stay (the caller's retry finds them).
   */
  async appendToStreams(appends: readonly StreamAppend[]): Promise<AppendResult[]> {
    const results: AppendResult[] = [];
    for (const { stream, events, expectedRevision } of appends) results.push(await this.appendToStream(stream, events, { expectedRevision }));
    return results;
  }

  async readStream(stream: string, options: ReadStreamOptions = {}): Promise<RecordedEvent[]> {
    if (options.maxCount !== undefined && options.maxCount <= 0) return [];
    const direction = options.direction === 'backwards' ? BACKWARDS : FORWARDS;
    const fromRevision =
      options.fromRevision !== undefined ? BigInt(options.fromRevision) : direction === FORWARDS ? START : END;
    const events: RecordedEvent[] = [];
    try {
      const read = this.client.readStream(stream, {
        direction,
        fromRevision,
        ...(options.maxCount !== undefined ? { maxCount: options.maxCount } : {}),
      });
      for await (const resolved of read) {
        if (resolved.event) events.push(toRecordedEvent(resolved.event, resolved.commitPosition));
      }
    } catch (error) {
      if (isMissingStream(error)) return [];
      throw error;
    }
    return events;
  }

  async readAll(options: ReadAllOptions = {}): Promise<RecordedEvent[]> {
    const limit = options.maxCount ?? Number.POSITIVE_INFINITY;
    if (limit <= 0) return [];
    const forwards = options.direction !== 'backwards';
    const includeSystem = options.includeSystem ?? false;
    // `bound` is exclusive: forwards keeps events after it, backwards events before it.
    let bound: number | undefined = forwards ? options.fromPosition || undefined : options.fromPosition;
    let from: ReadPosition = bound === undefined ? (forwards ? START : END) : positionOf(bound);
    const events: RecordedEvent[] = [];
    for (;;) {
      const pageSize = Math.min(READ_PAGE_SIZE, Math.max(100, limit - events.length));
      let seen = 0;
      let last: Position | undefined;
      // Each page is read to its end (at most pageSize events), so no gRPC call is left
      // half-consumed.
      for await (const resolved of this.client.readAll({
        direction: forwards ? FORWARDS : BACKWARDS,
        fromPosition: from,
        maxCount: pageSize,
      })) {
        seen += 1;
        const event = resolved.event;
        if (!event) continue;
        last = event.position;
        if (events.length >= limit) continue;
        const position = toSafeNumber(event.position.commit, 'position');
        if (bound !== undefined && (forwards ? position <= bound : position >= bound)) continue;
        if (!includeSystem && isSystemEvent(event)) continue;
        if (!filterMatches(options.filter, { type: event.type, stream: event.streamId })) continue;
        events.push(toRecordedEvent(event, resolved.commitPosition));
      }
      if (events.length >= limit || seen < pageSize || last === undefined) return events;
      from = last;
      bound = toSafeNumber(last.commit, 'position');
    }
  }

  subscribeToAll(options: SubscribeToAllOptions): EventSubscription {
    return new AllSubscription(this, options);
  }

  async headPosition(): Promise<number> {
    let from: ReadPosition = END;
    let newest: number | null = null;
    let scanned = 0;
    while (scanned < HEAD_SCAN_LIMIT) {
      let seen = 0;
      let last: Position | undefined;
      let found: number | null = null;
      for await (const resolved of this.client.readAll({ direction: BACKWARDS, fromPosition: from, maxCount: HEAD_SCAN_PAGE })) {
        seen += 1;
        const event = resolved.event;
        if (!event) continue;
        last = event.position;
        const position = toSafeNumber(event.position.commit, 'position');
        newest ??= position;
        if (found === null && !isSystemEvent(event)) found = position;
      }
      if (found !== null) return found;
      // The whole log is system events: our `$all` is empty.
      if (seen < HEAD_SCAN_PAGE || last === undefined) return 0;
      scanned += seen;
      from = last;
    }
    return newest ?? 0;
  }

  async streamRevision(stream: string): Promise<number | null> {
    const [last] = await this.readStream(stream, { direction: 'backwards', maxCount: 1 });
    return last ? last.revision : null;
  }

  async deleteStream(stream: string, options: { expectedRevision?: ExpectedRevision } = {}): Promise<void> {
    const expected = options.expectedRevision ?? 'any';
    let expectedRevision: typeof ANY | typeof NO_STREAM | bigint;
    if (expected === 'stream_exists') {
      if ((await this.streamRevision(stream)) === null) {
        throw new WrongExpectedRevisionError(stream, expected, 'no_stream');
      }
      expectedRevision = ANY;
    } else {
      expectedRevision = expected === 'any' ? ANY : expected === 'no_stream' ? NO_STREAM : toClientRevision(expected);
    }
    try {
      await this.client.deleteStream(stream, { expectedRevision });
    } catch (error) {
      throw mapWrongExpectedVersion(error, stream, expected);
    }
  }

  async getStreamMetadata(stream: string): Promise<StreamMetadata> {
    const { metadata } = await this.client.getStreamMetadata(stream);
    if (!metadata) return {};
    const result: StreamMetadata = {};
    const custom: Record<string, unknown> = {};
    for (const [key, value] of Object.entries(metadata)) {
      switch (key) {
        case 'maxAge':
        case 'maxCount':
          if (typeof value === 'number') result[key] = value;
          break;
        case 'truncateBefore':
          if (typeof value === 'number') result.truncateBefore = Math.min(value, Number.MAX_SAFE_INTEGER);
          break;
        case 'cacheControl':
        case 'acl':
          break; // not part of the port
        default:
          custom[key] = value;
      }
    }
    if (Object.keys(custom).length > 0) result.custom = custom;
    return result;
  }

  async setStreamMetadata(stream: string, metadata: StreamMetadata): Promise<void> {
    const esdb: EsdbStreamMetadata = {};
    for (const [key, value] of Object.entries(metadata.custom ?? {})) {
      if (key.startsWith('$') || SYSTEM_METADATA_KEYS.has(key)) {
        throw new Error(`stream ${stream}: custom metadata key ${key} is reserved`);
      }
      esdb[key] = value;
    }
    if (metadata.maxAge !== undefined) esdb.maxAge = metadata.maxAge;
    if (metadata.maxCount !== undefined) esdb.maxCount = metadata.maxCount;
    if (metadata.truncateBefore !== undefined) esdb.truncateBefore = metadata.truncateBefore;
    await this.client.setStreamMetadata(stream, esdb);
  }

  async close(): Promise<void> {
    await this.client.dispose();
  }

  private async appendNothing(stream: string, expected: ExpectedRevision): Promise<AppendResult> {
    const actual = await this.streamRevision(stream);
    if (!revisionMatches(expected, actual)) {
      throw new WrongExpectedRevisionError(stream, expected, actual ?? 'no_stream');
    }
    const position = (await this.lastEventPosition(stream)) ?? 0;
    return { nextExpectedRevision: actual ?? -1, position };
  }

  private async lastEventPosition(stream: string): Promise<number | null> {
    const [last] = await this.readStream(stream, { direction: 'backwards', maxCount: 1 });
    return last ? last.position : null;
  }
}

export function connectEventStoreDb(url: string): EventStoreDbEventStore {
  return new EventStoreDbEventStore(EventStoreDBClient.connectionString(url));
}

/**
 * The catch-up subscription behind `subscribeToAll`: an async iterable over a bounded
 * queue fed by the client's subscription stream.
 */
class AllSubscription implements EventSubscription {
  private readonly queue: SubscriptionMessage[] = [];
  private waiting: (() => void) | null = null;
  private failure: Error | null = null;
  private stopped = false;
  private paused = false;
  private source: AllStreamSubscription | null = null;
  /** Signals waiting until the events the client stream buffered before them are out. */
  private pendingSignals: Array<{ remaining: number; run: () => void }> = [];
  private readonly from: number;
  /** Highest position passed: every event at or before it was queued or filtered out. */
  private passed: number;
  /** Head when the subscription started (newest non-system event). */
  private head = 0;
  private caughtUp = false;
  private readonly started: Promise<void>;

  constructor(
    private readonly store: EventStoreDbEventStore,
    private readonly options: SubscribeToAllOptions,
  ) {
    this.from = Math.max(0, options.fromPosition);
    this.passed = this.from;
    this.started = this.start().catch((error: unknown) => this.fail(error));
  }

  [Symbol.asyncIterator](): AsyncIterator<SubscriptionMessage> {
    return {
      next: () => this.next(),
      return: async () => {
        await this.stop();
        return { done: true, value: undefined };
      },
    };
  }

  async stop(): Promise<void> {
    if (!this.stopped) {
      this.stopped = true;
      this.queue.length = 0;
      this.pendingSignals = [];
      this.wake();
    }
    await this.started;
    const source = this.source;
    this.source = null;
    if (source) await source.unsubscribe();
  }

  private async start(): Promise<void> {
    this.head = await this.store.headPosition();
    if (this.stopped) return;
    if (this.head <= this.from) this.markCaughtUp(this.from);
    const source = this.store.client.subscribeToAll({
      fromPosition: this.from === 0 ? START : positionOf(this.from),
      resolveLinkTos: false,
      filter: serverFilterOf(this.options.filter, (_subscription, position) => {
        this.signal(() => this.onCheckpoint(position));
      }),
    });
    this.source = source;
    source.on('data', (resolved: AllStreamResolvedEvent) => this.onData(resolved));
    source.on('caughtUp', () => this.signal(() => this.markCaughtUp(Math.max(this.passed, this.head))));
    source.on('error', (error: Error) => this.fail(error));
    source.on('close', () => {
      if (!this.stopped) this.fail(new Error('subscription to $all was closed by the server'));
    });
  }

  private async next(): Promise<IteratorResult<SubscriptionMessage>> {
    for (;;) {
      if (this.stopped) return { done: true, value: undefined };
      const message = this.queue.shift();
      if (message) {
        if (this.paused && this.queue.length <= QUEUE_LOW_WATER) {
          this.paused = false;
          this.source?.resume();
        }
        return { done: false, value: message };
      }
      if (this.failure) throw this.failure;
      await new Promise<void>((resolve) => {
        this.waiting = resolve;
      });
    }
  }

  private onData(resolved: AllStreamResolvedEvent): void {
    if (this.stopped) return;
    try {
      const event = resolved.event;
      if (event) {
        const position = toSafeNumber(event.position.commit, 'position');
        if (position > this.from) {
          if (!isSystemEvent(event) && filterMatches(this.options.filter, { type: event.type, stream: event.streamId })) {
            this.push({ kind: 'event', event: toRecordedEvent(event, resolved.commitPosition) });
          }
          this.passed = Math.max(this.passed, position);
          if (!this.caughtUp && position >= this.head) this.markCaughtUp(this.passed);
        }
      }
    } catch (error) {
      this.fail(error);
    }
    this.releaseSignals();
  }

  private onCheckpoint(position: Position): void {
    const checkpoint = toSafeNumber(position.commit, 'position');
    if (checkpoint <= this.passed) return;
    this.passed = checkpoint;
    this.push({ kind: 'checkpoint', position: checkpoint });
    if (!this.caughtUp && checkpoint >= this.head) this.markCaughtUp(checkpoint);
  }

  private markCaughtUp(position: number): void {
    if (this.caughtUp) return;
    this.caughtUp = true;
    this.push({ kind: 'caught_up', position });
  }

  /**
   * Runs a signal after the events the client stream has already produced but not yet
   * handed to us: the client raises checkpoints and caught-up outside its buffer.
   */
  private signal(run: () => void): void {
    if (this.stopped) return;
    const buffered = this.source?.readableLength ?? 0;
    if (buffered === 0 && this.pendingSignals.length === 0) {
      this.runSignal(run);
    } else {
      this.pendingSignals.push({ remaining: buffered, run });
      if (buffered === 0) this.releaseSignals(false);
    }
  }

  private releaseSignals(countEvent = true): void {
    if (this.pendingSignals.length === 0) return;
    if (countEvent) for (const pending of this.pendingSignals) pending.remaining -= 1;
    while (this.pendingSignals.length > 0 && this.pendingSignals[0]!.remaining <= 0) {
      this.runSignal(this.pendingSignals.shift()!.run);
    }
  }

  private runSignal(run: () => void): void {
    try {
      run();
    } catch (error) {
      this.fail(error);
    }
  }

  private push(message: SubscriptionMessage): void {
    if (this.stopped) return;
    this.queue.push(message);
    if (!this.paused && this.queue.length >= QUEUE_HIGH_WATER && this.source) {
      this.paused = true;
      this.source.pause();
    }
    this.wake();
  }

  private fail(error: unknown): void {
    if (this.stopped || this.failure) return;
    const message = messageOf(error);
    this.failure = new Error(`subscription to $all failed: ${message}`, { cause: error });
    const source = this.source;
    if (source) void source.unsubscribe().catch(() => undefined);
    this.wake();
  }

  private wake(): void {
    const waiting = this.waiting;
    this.waiting = null;
    waiting?.();
  }
}

/** The port's filter as an EventStoreDB server-side filter; system events are excluded. */
export function serverFilterOf(filter: AllFilter | undefined, checkpointReached?: Filter['checkpointReached']): Filter {
  const common = { checkpointInterval: CHECKPOINT_INTERVAL, ...(checkpointReached ? { checkpointReached } : {}) };
  if (!filter) return excludeSystemEvents(common);
  switch (filter.kind) {
    case 'event_type':
      return eventTypeFilter({
        ...common,
        regex: filter.types.length > 0 ? `^(?:${filter.types.map(escapeRegex).join('|')})$` : NEVER_MATCHES,
      });
    case 'event_type_prefix':
      return filter.prefixes.length > 0
        ? eventTypeFilter({ ...common, prefixes: [...filter.prefixes] })
        : eventTypeFilter({ ...common, regex: NEVER_MATCHES });
    case 'stream_prefix':
      return filter.prefixes.length > 0
        ? streamNameFilter({ ...common, prefixes: [...filter.prefixes] })
        : streamNameFilter({ ...common, regex: NEVER_MATCHES });
  }
}

/** A .NET regex that matches nothing: an empty list in the port's filter. */
const NEVER_MATCHES = '(?!)';

function escapeRegex(text: string): string {
  return text.replace(/[\\^$.|?*+()[\]{}#]/g, '\\$&');
}

/** Converts a client event to the port's shape; the commit position falls back to the resolved one. */
export function toRecordedEvent(event: EsdbRecordedEvent, fallbackCommit?: bigint): RecordedEvent {
  const commit = usablePosition(event.position?.commit) ?? usablePosition(fallbackCommit);
  if (commit === undefined) {
    throw new Error(`event ${event.id} in ${event.streamId} has no position (EventStoreDB older than 22.6?)`);
  }
  let id = event.id;
  let metadata: unknown = event.metadata;
  if (isPlainObject(metadata) && typeof metadata[ORIGINAL_ID_KEY] === 'string') {
    const { [ORIGINAL_ID_KEY]: original, ...rest } = metadata;
    id = original as string;
    metadata = rest;
  }
  return {
    id,
    type: event.type,
    data: event.data,
    metadata: (metadata ?? {}) as EventMetadata,
    stream: event.streamId,
    revision: toSafeNumber(event.revision, 'revision'),
    position: toSafeNumber(commit, 'position'),
    recorded_at: event.created.toISOString(),
  };
}

/** Servers before 22.6 send -1 (as an unsigned 64-bit value) where a stream read has no position. */
function usablePosition(position: bigint | undefined): bigint | undefined {
  return position !== undefined && position >= 0n && position < NO_POSITION ? position : undefined;
}

/** System events: types or streams beginning with `$`. */
export function isSystemEvent(event: { type: string; streamId: string }): boolean {
  return event.type.startsWith('$') || event.streamId.startsWith('$');
}

export function toSafeNumber(value: bigint, what: string): number {
  if (value > MAX_SAFE || value < MIN_SAFE) {
    throw new RangeError(`${what} ${value.toString()} is outside the safe integer range`);
  }
  return Number(value);
}

function toEventData(event: NewEvent) {
  const native = UUID_PATTERN.test(event.id);
  const metadata = native ? event.metadata : { ...event.metadata, [ORIGINAL_ID_KEY]: event.id };
  return jsonEvent({
    id: native ? event.id : nameBasedUuid(event.id),
    type: event.type,
    // JSON of any value; undefined has none, so it is stored as null.
    data: (event.data === undefined ? null : event.data) as JSONType,
    metadata,
  });
}

/** A deterministic UUID (v5 layout) for an id EventStoreDB cannot take as is. */
function nameBasedUuid(name: string): string {
  const hash = createHash('sha1').update(ID_NAMESPACE).update(name, 'utf8').digest();
  hash[6] = (hash[6]! & 0x0f) | 0x50;
  hash[8] = (hash[8]! & 0x3f) | 0x80;
  const hex = hash.subarray(0, 16).toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20, 32)}`;
}

function toClientRevision(revision: number): bigint {
  if (!Number.isSafeInteger(revision) || revision < 0) {
    throw new RangeError(`expected revision ${revision} is not a stream revision`);
  }
  return BigInt(revision);
}

function toClientExpectedRevision(expected: ExpectedRevision): AppendExpectedRevision {
  switch (expected) {
    case 'any':
      return ANY;
    case 'no_stream':
      return NO_STREAM;
    case 'stream_exists':
      return STREAM_EXISTS;
    default:
      return toClientRevision(expected);
  }
}

function positionOf(position: number): Position {
  const value = BigInt(position);
  return { commit: value, prepare: value };
}

/** The one place the client's conflict error becomes ours. */
function mapWrongExpectedVersion(error: unknown, stream: string, expected: ExpectedRevision): unknown {
  if (error instanceof Error && isCommandError(error) && error.type === ErrorType.WRONG_EXPECTED_VERSION) {
    const actual = error.actualVersion;
    return new WrongExpectedRevisionError(stream, expected, actual === 'no_stream' ? 'no_stream' : toSafeNumber(actual, 'revision'));
  }
  return error;
}

function isMissingStream(error: unknown): boolean {
  return (
    error instanceof Error &&
    isCommandError(error) &&
    (error.type === ErrorType.STREAM_NOT_FOUND || error.type === ErrorType.STREAM_DELETED)
  );
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value) && !(value instanceof Uint8Array);
}
