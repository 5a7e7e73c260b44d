// The event store port. Its semantics are EventStoreDB's, so that the embedded SQLite
// store is a faithful stand-in for a cluster: every adapter runs tests/contract/event-store.

/** Who caused an event; the audit log is a projection of this. */
export interface Actor {
  kind: 'user' | 'admin' | 'widget' | 'end_user' | 'connector' | 'system';
  id: string;
}

/** Metadata every event carries (ARCHITECTURE.md, "Events"). */
export interface EventMetadata {
  tenant_id: string | null;
  actor: Actor;
  /**
   * On whose behalf the actor acted, when that is someone else: the member a super admin
   * impersonates. Absent otherwise (and on every event recorded before it existed).
   */
  subject?: Actor;
  request_id: string | null;
  correlation_id: string;
  causation_id: string | null;
  occurred_at: string;
  ip: string | null;
  /** Set on events appended by a replay; references the original. */
  replay_of?: string;
  /** The schema version of `data` when the event was written (domain/shared/events.ts); absent means 1. */
  schema_version?: number;
}

/** An event to append. `id` makes appends idempotent: the same ids twice append once. */
export interface NewEvent {
  id: string;
  type: string;
  data: unknown;
  metadata: EventMetadata;
}

/** An event as stored: its stream, revision in that stream and position in `$all`. */
export interface RecordedEvent<Type extends string = string, Data = unknown> {
  id: string;
  type: Type;
  data: Data;
  metadata: EventMetadata;
  stream: string;
  /** 0-based, per stream. */
  revision: number;
  /** Commit position in `$all`; strictly increasing in commit order, starts above 0. */
  position: number;
  recorded_at: string;
}

/** What the appender expects of the stream: EventStoreDB's four cases. */
export type ExpectedRevision = number | 'no_stream' | 'stream_exists' | 'any';

export interface AppendResult {
  /** Revision of the last event of the stream after the append. */
  nextExpectedRevision: number;
  /** Position in `$all` of the last event appended. */
  position: number;
}

export type Direction = 'forwards' | 'backwards';

export interface ReadStreamOptions {
  direction?: Direction;
  /** Inclusive; defaults to the start (forwards) or the end (backwards). */
  fromRevision?: number;
  maxCount?: number;
}

/** Filters of `$all`: by event type or by stream-name prefix. */
export type AllFilter =
  | { kind: 'event_type'; types: readonly string[] }
  | { kind: 'event_type_prefix'; prefixes: readonly string[] }
  | { kind: 'stream_prefix'; prefixes: readonly string[] };

export interface ReadAllOptions {
  direction?: Direction;
  /**
   * Exclusive bound: forwards returns events after it (0 = from the start), backwards
   * returns events before it (omitted = from the end).
   */
  fromPosition?: number;
  maxCount?: number;
  filter?: AllFilter;
  /** Include system streams (those beginning with `$`); default false. */
  includeSystem?: boolean;
}

export interface SubscribeToAllOptions {
  /** Exclusive: deliver events after this position; 0 = from the start. */
  fromPosition: number;
  filter?: AllFilter;
}

/**
 * What a subscription delivers: events, and checkpoints that tell how far `$all` has been
 * scanned even when the filter skipped everything (so lag can be measured).
 */
export type SubscriptionMessage =
  | { kind: 'event'; event: RecordedEvent }
  | { kind: 'checkpoint'; position: number }
  | { kind: 'caught_up'; position: number };

/** A catch-up subscription: historical events first, then live ones, until stopped. */
export interface EventSubscription extends AsyncIterable<SubscriptionMessage> {
  stop(): Promise<void>;
}

/** EventStoreDB's stream metadata, as far as the platform uses it. */
export interface StreamMetadata {
  maxAge?: number;
  maxCount?: number;
  truncateBefore?: number;
  custom?: Record<string, unknown>;
}

/** One stream's part of an append to several streams. */
export interface StreamAppend {
  stream: string;
  events: readonly NewEvent[];
  expectedRevision?: ExpectedRevision;
}

export interface EventStore {
  /** Appends all events atomically, or none; throws WrongExpectedRevisionError. */
  appendToStream(stream: string, events: readonly NewEvent[], options?: { expectedRevision?: ExpectedRevision }): Promise<AppendResult>;
  /**
   * Appends to several streams, in the order given; the results in the same order. Where the
   * store can commit them together (the embedded store: one transaction) all are appended or
   * none; otherwise (EventStoreDB) one after the other, each acknowledged before the next,
   * stopping at the first refused. Either way a later one is never on disk without the earlier
   * ones: put first what must exist before the rest (a follow-on event before the step that
   * records it).
   */
  appendToStreams(appends: readonly StreamAppend[]): Promise<AppendResult[]>;
  /** Reads a stream; a stream that does not exist (or was deleted) reads as empty. */
  readStream(stream: string, options?: ReadStreamOptions): Promise<RecordedEvent[]>;
  /** Reads the global log. */
  readAll(options?: ReadAllOptions): Promise<RecordedEvent[]>;
  /** Catch-up subscription to `$all`. */
  subscribeToAll(options: SubscribeToAllOptions): EventSubscription;
  /** Position of the last event in `$all`, 0 when empty. */
  headPosition(): Promise<number>;
  /** Current revision of a stream, or null when it does not exist. */
  streamRevision(stream: string): Promise<number | null>;
  /** Soft-deletes a stream: reads come back empty; a later append continues its revisions. */
  deleteStream(stream: string, options?: { expectedRevision?: ExpectedRevision }): Promise<void>;
  getStreamMetadata(stream: string): Promise<StreamMetadata>;
  setStreamMetadata(stream: string, metadata: StreamMetadata): Promise<void>;
  close(): Promise<void>;
}

/** The one conflict error every adapter maps its vendor error to. */
export class WrongExpectedRevisionError extends Error {
  readonly code = 'wrong_expected_revision';
  constructor(
    readonly stream: string,
    readonly expected: ExpectedRevision,
    readonly actual: number | 'no_stream',
  ) {
    super(`stream ${stream}: expected revision ${String(expected)}, actual ${String(actual)}`);
    this.name = 'WrongExpectedRevisionError';
  }
}

/** Whether `actual` satisfies `expected`; `actual` is null when the stream does not exist. */
export function revisionMatches(expected: ExpectedRevision, actual: number | null): boolean {
  switch (expected) {
    case 'any':
      return true;
    case 'no_stream':
      return actual === null;
    case 'stream_exists':
      return actual !== null;
    default:
      return actual === expected;
  }
}

/** Matches an event against a `$all` filter, the same way in every adapter. */
export function filterMatches(filter: AllFilter | undefined, event: { type: string; stream: string }): boolean {
  if (!filter) return true;
  switch (filter.kind) {
    case 'event_type':
      return filter.types.includes(event.type);
    case 'event_type_prefix':
      return filter.prefixes.some((prefix) => event.type.startsWith(prefix));
    case 'stream_prefix':
      return filter.prefixes.some((prefix) => event.stream.startsWith(prefix));
  }
}
