// The read-store port: named collections of JSON documents that projections build and
// queries read. Every adapter runs tests/contract/read-store.

import { hash as hashOf } from 'node:crypto';

export type Scalar = string | number | boolean | null;

/** A read-model document; `id` is its key within the collection. */
export interface Document {
  id: string;
  [field: string]: unknown;
}

export interface IndexSpec {
  /** Top-level or dotted field path: the index's key, or its first key. */
  field: string;
  /**
   * Further keys, in order: a compound index (MongoDB's compound index, SQLite's index on
   * several columns). A query with equalities on the leading keys reads the next key in its
   * order: `{field: 'tenant_id', then: ['seq']}` gives a tenant's newest page without sorting
   * the tenant's whole history, which an index on `tenant_id` alone makes every page do.
   */
  then?: readonly string[];
  unique?: boolean;
  /**
   * The index may leave out the documents whose `field` is absent or null (a queue's `due_at`,
   * set only while an item waits): writing those touches no entry of it. Queries give the same
   * documents either way; one on the field's values (`eq`, `lt`, ...) still reads it, and a
   * hint naming it in a query that asks for no value of the field is not followed. SQLite
   * makes a partial index; MongoDB a full one (its partial indexes cannot leave out an explicit
   * null).
   */
  sparse?: boolean;
}

/** An index's fields, in key order. */
export const indexFields = (index: IndexSpec): string[] => [index.field, ...(index.then ?? [])];

/** An index's keys, comma-joined: `tenant_id,seq`. It names the index in `FindOptions.index`. */
export const indexKey = (index: IndexSpec): string => indexFields(index).join(',');

/** The fields of an index named by its key (`indexKey`'s inverse). */
export const keyFields = (key: string): string[] => key.split(',');

export interface CollectionSpec {
  name: string;
  /**
   * The collection's indexes, all of them: ensuring it again with another list makes the
   * missing ones and drops those no longer listed. Only the fields of its indexes may be
   * filtered or sorted on (besides `id`).
   */
  indexes?: readonly IndexSpec[];
}

export type FieldCondition =
  | Scalar
  | { eq?: Scalar; ne?: Scalar; gt?: Scalar; gte?: Scalar; lt?: Scalar; lte?: Scalar; in?: readonly Scalar[] };

export type Where = Record<string, FieldCondition>;

export interface Sort {
  field: string;
  direction: 'asc' | 'desc';
}

export interface FindOptions {
  where?: Where;
  /** Ties are broken by `id` in the same direction. Default: `id` ascending. */
  sort?: Sort;
  /** Default 50; at most 1000. */
  limit?: number;
  /** Opaque, from a previous page's `next_cursor`; valid only with the same where/sort. */
  cursor?: string;
  /**
   * The key of the declared index (not a unique one) the query reads, as `indexKey` writes it
   * (MongoDB's `hint`, SQLite's `INDEXED BY`), for a caller that knows which of its conditions
   * is the selective one. Without it each
   * store picks by its own estimates, and SQLite without statistics prefers any equality: a
   * queue's `tenant_id = ? AND due_at <= ?` then scans the tenant's whole history, where
   * `due_at` (set only while an item waits) finds the few that are due. The same documents
   * come back either way.
   */
  index?: string;
  /**
   * The documents may be the very objects every other reader of the same result gets: deeply
   * frozen, to be read and never changed (a change throws). For a hot path that only reads a
   * large document (the dispatcher reads a tenant's connections, tools and all, twice per
   * event), where the copy each reader otherwise gets costs more than the read.
   */
  shared?: boolean;
}

/** The one pagination shape of the platform. */
export interface Page<T> {
  items: T[];
  next_cursor: string | null;
}

export interface Collection<T extends Document = Document> {
  get(id: string): Promise<T | null>;
  /** Inserts or replaces the document with this id. */
  put(doc: T): Promise<void>;
  /** Shallow-merges `changes` into the document; returns it, or null when absent. */
  patch(id: string, changes: Partial<T>): Promise<T | null>;
  delete(id: string): Promise<boolean>;
  find(options?: FindOptions): Promise<Page<T>>;
  count(where?: Where): Promise<number>;
}

/**
 * The documents a `deleteWhere` removes (or a `patchWhere` changes): those whose every named field (declared, as for a
 * query) equals its value. Equalities only, and never null, so that every store and the
 * projection view's overlay (projections/runner.ts) judge a document alike.
 */
export type FieldEqualities = Record<string, string | number | boolean>;

/** A write inside a projection batch. */
export type WriteOperation =
  | { kind: 'put'; collection: string; doc: Document }
  | { kind: 'patch'; collection: string; id: string; changes: Record<string, unknown> }
  | { kind: 'delete'; collection: string; id: string }
  /** Every document of the collection matching `where`, as the batch's earlier writes left them. */
  | { kind: 'deleteWhere'; collection: string; where: FieldEqualities }
  /** `changes` shallow-merged into every document matching `where`, as the batch's earlier writes left them. */
  | { kind: 'patchWhere'; collection: string; where: FieldEqualities; changes: Record<string, unknown> };

/** The operations that reach every document matching their `where`: barriers to folding a batch's writes. */
export type WhereOperation = Extract<WriteOperation, { kind: 'deleteWhere' | 'patchWhere' }>;
export const isWhereOperation = (operation: WriteOperation): operation is WhereOperation => operation.kind === 'deleteWhere' || operation.kind === 'patchWhere';

/** Whether `doc`'s fields (dotted paths reach into objects) equal every value of `where`. */
export function matchesEqualities(doc: Document, where: FieldEqualities): boolean {
  return Object.entries(where).every(([field, value]) => fieldValue(doc, field) === value);
}

export type ProjectionStatus = 'running' | 'rebuilding' | 'stopped' | 'failed';

/** The one process allowed to run a projection (or saga group), until `expires_at`. */
export interface ProjectionLease {
  holder: string;
  /** ISO-8601, by the clock of the process that took or renewed the lease. */
  expires_at: string;
}

/** What the runner keeps per projection, next to its read models. */
export interface ProjectionState {
  name: string;
  version: number;
  /** Position of the last event of `$all` the projection has passed. */
  checkpoint: number;
  status: ProjectionStatus;
  error: string | null;
  updated_at: string;
  /**
   * Changed only by the lease operations: writing a state keeps the stored lease, whatever
   * this field says. Reads give it (null when nobody ever held one or it was released).
   */
  lease?: ProjectionLease | null;
}

/** One batch of a projection: its writes and its new checkpoint, committed together. */
export interface ProjectionCommit {
  projection: string;
  /** The checkpoint the batch was built on; a different stored one aborts the commit. */
  expectedCheckpoint: number;
  state: ProjectionState;
  operations: readonly WriteOperation[];
  /** When set, the commit applies only while this holder holds the lease; else LeaseLostError. */
  holder?: string;
}

/** Moves rebuilt shadow collections into place, with the rebuilt projection's state. */
export interface ShadowPromotion {
  projection: string;
  /** shadow name -> live name */
  collections: ReadonlyArray<{ shadow: string; live: string }>;
  state: ProjectionState;
  /** When set, the promotion happens only while this holder holds the lease; else LeaseLostError. */
  holder?: string;
}

/** A lease operation by `holder`, at `now` by its clock. */
export interface LeaseRequest {
  projection: string;
  holder: string;
  now: Date;
  /** The lease lasts until `now + ttlMs` unless renewed. */
  ttlMs: number;
  /** acquireLease only: a holder known to be gone, whose lease is taken even while it lasts. */
  replacing?: string;
}

export interface ReadStore {
  /** Creates the collection if missing and makes its indexes the spec's (see CollectionSpec.indexes); idempotent. */
  ensureCollection(spec: CollectionSpec): Promise<void>;
  dropCollection(name: string): Promise<void>;
  collection<T extends Document = Document>(name: string): Collection<T>;
  /** Applies the operations and stores the checkpoint atomically; throws CheckpointConflictError or LeaseLostError. */
  commitProjection(commit: ProjectionCommit): Promise<void>;
  getProjectionState(projection: string): Promise<ProjectionState | null>;
  /** Stores the state (keeping its lease); with `holder`, only while that holder holds the lease. */
  putProjectionState(state: ProjectionState, options?: { holder?: string }): Promise<void>;
  listProjectionStates(): Promise<ProjectionState[]>;
  promoteShadow(promotion: ShadowPromotion): Promise<void>;
  /**
   * Takes the lease when nobody holds it, it lapsed, the holder already has it, or `replacing`
   * has it, in one atomic step; a projection without a state gets one (checkpoint 0, `version`, stopped).
   * Returns the lease as it stands afterwards: the caller's when taken, another's when not
   * (null only if it was released meanwhile, so that a next attempt takes it).
   */
  acquireLease(request: LeaseRequest & { version: number }): Promise<ProjectionLease | null>;
  /**
   * Extends the lease while the holder still has it (even lapsed: nobody took it over).
   * Returns the lease as it stands afterwards (another's, or null, when it was lost).
   */
  renewLease(request: LeaseRequest): Promise<ProjectionLease | null>;
  /** Gives the lease up if `holder` has it, so another process takes over at once. */
  releaseLease(projection: string, holder: string): Promise<void>;
  /** True when the backing database answers. */
  ping(): Promise<boolean>;
  close(): Promise<void>;
}

export class CheckpointConflictError extends Error {
  readonly code = 'checkpoint_conflict';
  constructor(readonly projection: string, readonly expected: number, readonly actual: number) {
    super(`projection ${projection}: expected checkpoint ${expected}, found ${actual}`);
    this.name = 'CheckpointConflictError';
  }
}

/** The writer no longer holds the projection's lease: another process runs it now. */
export class LeaseLostError extends Error {
  readonly code = 'lease_lost';
  constructor(readonly projection: string, readonly holder: string, readonly actual: string | null) {
    super(`projection ${projection}: lease of ${holder} is lost${actual ? ` to ${actual}` : ''}`);
    this.name = 'LeaseLostError';
  }
}

/** The lease a granted request gives: its holder, until `now` plus the time to live. */
export function leaseUntil(request: LeaseRequest): ProjectionLease {
  return { holder: request.holder, expires_at: new Date(request.now.getTime() + request.ttlMs).toISOString() };
}

/** Every adapter fences a write the same way: one named by `holder` goes through only while that holder has the lease. */
export function checkLeaseHolder(projection: string, stored: ProjectionState | null, holder: string | undefined): void {
  if (holder === undefined) return;
  const actual = stored?.lease?.holder ?? null;
  if (actual !== holder) throw new LeaseLostError(projection, holder, actual);
}

/** True while `lease` is held by someone at `now`. */
export function leaseIsLive(lease: ProjectionLease | null | undefined, now: Date): lease is ProjectionLease {
  return lease !== null && lease !== undefined && lease.expires_at > now.toISOString();
}

export class UniqueConstraintError extends Error {
  readonly code = 'unique_violation';
  constructor(readonly collection: string, readonly field: string) {
    super(`${collection}: duplicate value for unique field ${field}`);
    this.name = 'UniqueConstraintError';
  }
}

/** A filter or sort on a field the collection did not declare: a programming error. */
export class UndeclaredFieldError extends Error {
  readonly code = 'undeclared_field';
  constructor(readonly collection: string, readonly field: string) {
    super(`${collection}: field ${field} is not an indexed field`);
    this.name = 'UndeclaredFieldError';
  }
}

export class InvalidCursorError extends Error {
  readonly code = 'invalid_cursor';
  constructor() {
    super('cursor is malformed or belongs to another query');
    this.name = 'InvalidCursorError';
  }
}

export const DEFAULT_PAGE_SIZE = 50;
export const MAX_PAGE_SIZE = 1000;

/** Opaque cursors: the last item's sort value and id, bound to the query's shape. */
export function encodeCursor(queryKey: string, sortValue: unknown, id: string): string {
  return Buffer.from(JSON.stringify([queryKey, sortValue, id])).toString('base64url');
}

export function decodeCursor(queryKey: string, cursor: string): { sortValue: unknown; id: string } {
  try {
    const decoded: unknown = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
    if (Array.isArray(decoded) && decoded.length === 3 && decoded[0] === queryKey && typeof decoded[2] === 'string') {
      return { sortValue: decoded[1], id: decoded[2] };
    }
  } catch {
    // falls through to the typed error
  }
  throw new InvalidCursorError();
}

/** Identifies a query's shape so a cursor cannot be replayed against another query. */
export function queryKeyOf(collection: string, options: FindOptions): string {
  const sort = options.sort ?? { field: 'id', direction: 'asc' };
  const shape = `${collection}|${sort.field}|${sort.direction}|${JSON.stringify(options.where ?? {})}`;
  return hashOf('sha256', shape, 'base64url').slice(0, 12);
}

/** Reads a dotted field path from a document. */
export function fieldValue(doc: Record<string, unknown>, path: string): unknown {
  // Most declared fields are top-level: read without splitting the path (every write reads each declared field).
  if (!path.includes('.')) return doc[path];
  let value: unknown = doc;
  for (const part of path.split('.')) {
    if (value === null || typeof value !== 'object') return undefined;
    value = (value as Record<string, unknown>)[part];
  }
  return value;
}
