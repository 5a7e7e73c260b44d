// ReadStore port on MongoDB (a replica set: projection commits are multi-document
// transactions) through the official `mongodb` driver.
//
// Mapping choices (the port leaves room for these; keep the SQLite store in step):
// - A document is stored with `_id` = its id and without an `id` field; reads give back
//   `{id, ...fields}`. `_position` is reserved: commitProjection stamps each document it
//   puts or patches with the batch's new checkpoint (the position of the last event
//   applied). Reads strip it, and direct put/patch through a Collection do not set it.
// - Undefined values follow JSON: they are dropped on put (client option
//   `ignoreUndefined`), and a patch removes the fields set to undefined ($unset).
// - Indexes: `{[field]: 1, ...then}` named `${field}_1` (`a_1_b_1` for a compound one). A
//   unique one is named `${field}_1_unique`
//   and is partial on `{[field]: {$type: [non-null types]}}`, so that, as in SQLite, it
//   applies only to values that are present and not null. A duplicate-key error (11000)
//   is mapped to UniqueConstraintError by reading the field back from the index name.
//   A sparse index is a full one here: a partial filter cannot leave out an explicit null
//   without listing types, and the queries give the same documents either way. Indexes
//   named so and no longer declared are dropped by ensureCollection; the hint of a query
//   (`FindOptions.index`) is the index's key pattern.
// - Declared fields: ensureCollection records the declared index fields in this process.
//   For a collection first seen through collection(), the fields are read once, lazily,
//   from listIndexes. Filtering or sorting on any other field than `id` throws
//   UndeclaredFieldError.
// - where: a scalar is equality (null matches null and missing, as in MongoDB). eq, ne,
//   gt, gte, lt, lte and in map to the operators of the same name, so `ne` also matches
//   documents where the field is missing or null. Comparisons follow MongoDB's type
//   brackets: a range on a number matches only numbers.
// - Sort: by the field, then `_id`, both in the same direction. MongoDB sorts
//   null/missing first when ascending. Cursors hold the last item's sort value and id,
//   and the next page is `(field > v) OR (field = v AND _id > id)` (mirrored for desc).
//   Null sort values are handled, but a sort field should hold one type and no nulls:
//   values of another type than the cursor's fall out of the range.
// - commitProjection: a single transaction (majority write concern, snapshot reads). The
//   stored checkpoint is checked (missing state = 0), then one bulkWrite per run of
//   operations on the same collection (a `deleteWhere` is a deleteMany among them, its
//   fields checked declared before the transaction), then the new state in `_projections`
//   (`_id` = projection name). Two concurrent commits of one projection collide on that
//   state document. The driver retries the loser, whose check then fails with
//   CheckpointConflictError. A commit with a `holder` also finds that holder in the stored
//   lease, or throws LeaseLostError.
// - Leases live in the state document's `lease` field ({holder, expires_at}, an ISO string
//   compared as text). Writing a state `$set`s its other fields and never touches `lease`.
//   acquireLease is one findOneAndUpdate with upsert whose filter matches only a free,
//   lapsed or own lease: when another process holds it, the upsert's insert collides on
//   `_id` (duplicate key) and the current lease is read back. renewLease and releaseLease
//   are updates filtered on `lease.holder`. A renewal during a commit's transaction is a
//   write conflict on the state document, which the driver's transaction retry absorbs.
// - promoteShadow with a `holder` checks the lease before renaming and writes the state
//   only while the holder still has it (the renames themselves cannot be fenced).
// - promoteShadow renames each shadow over its live collection (renameCollection with
//   dropTarget, which is atomic per collection, not across several). The state is
//   written last. If the process crashes between renames, the state still says
//   `rebuilding` and the runner re-runs the rebuild, which repairs it. A shadow that no
//   longer exists is taken as already moved.
// - dropCollection tolerates a missing collection. ping never throws and gives up after
//   PING_TIMEOUT_MS.

import {
  MongoBulkWriteError,
  MongoClient,
  MongoServerError,
  type AnyBulkWriteOperation,
  type Collection as MongoCollection,
  type Db,
  type Filter,
  type Sort as MongoSort,
  type UpdateFilter,
} from 'mongodb';
import {
  CheckpointConflictError,
  DEFAULT_PAGE_SIZE,
  LeaseLostError,
  checkLeaseHolder,
  leaseUntil,
  MAX_PAGE_SIZE,
  UndeclaredFieldError,
  UniqueConstraintError,
  decodeCursor,
  encodeCursor,
  fieldValue,
  indexFields,
  indexKey,
  keyFields,
  queryKeyOf,
  type Collection,
  type CollectionSpec,
  type Document,
  type FieldCondition,
  type FindOptions,
  type LeaseRequest,
  type Page,
  type ProjectionCommit,
  type ProjectionLease,
  type ProjectionState,
  type ReadStore,
  type ShadowPromotion,
  type Where,
  type WriteOperation,
  isWhereOperation,
} from '../../application/ports/read-store';
import { deepFreeze } from '../../application/shared/immutable';

const PROJECTIONS = '_projections';
const DEFAULT_DATABASE = 'svc';
const POSITION_FIELD = '_position';
const PING_TIMEOUT_MS = 5000;
/** BSON types other than null/undefined: a partial unique index covers only these. */
const NON_NULL_TYPES = ['string', 'number', 'bool', 'date', 'object', 'array', 'objectId', 'binData', 'timestamp'];

const DUPLICATE_KEY = 11000;
const NAMESPACE_NOT_FOUND = 26;
const NAMESPACE_EXISTS = 48;

interface StoredDocument {
  _id: string;
  [field: string]: unknown;
}

interface StoredProjectionState extends ProjectionState {
  _id: string;
}

export class MongoReadStore implements ReadStore {
  /** The database, shared with the rate limiter so both use one connection pool. */
  readonly db: Db;
  /** Index fields per collection: declared in this process, or read from listIndexes. */
  private readonly declared = new Map<string, Set<string>>();

  constructor(
    /** The client, shared with the search index for its transactions. */
    readonly client: MongoClient,
    databaseName: string,
  ) {
    this.db = client.db(databaseName);
  }

  async ensureCollection(spec: CollectionSpec): Promise<void> {
    await this.createCollectionIfMissing(spec.name);
    const collection = this.raw(spec.name);
    const wanted = new Map((spec.indexes ?? []).map((index) => [index.unique ? uniqueIndexName(indexKey(index)) : indexName(indexKey(index)), index] as const));
    // Dropped first: an index of the same keys under another name (unique before, not now) would refuse the new one.
    for (const existing of await collection.listIndexes().toArray()) {
      const name = String(existing.name);
      if (name !== '_id_' && /_1(_unique)?$/.test(name) && !wanted.has(name)) await collection.dropIndex(name);
    }
    for (const [name, index] of wanted) {
      await collection.createIndex(
        keyPattern(indexKey(index)),
        index.unique ? { name, unique: true, partialFilterExpression: { [index.field]: { $type: NON_NULL_TYPES } } } : { name },
      );
    }
    this.declared.set(spec.name, new Set((spec.indexes ?? []).flatMap(indexFields)));
  }

  async dropCollection(name: string): Promise<void> {
    this.declared.delete(name);
    try {
      await this.db.dropCollection(name);
    } catch (error) {
      if (!hasCode(error, NAMESPACE_NOT_FOUND)) throw error;
    }
  }

  collection<T extends Document = Document>(name: string): Collection<T> {
    return new MongoDocumentCollection<T>(this, name);
  }

  async commitProjection(commit: ProjectionCommit): Promise<void> {
    // Checked before anything is written, as the embedded store refuses such a batch whole.
    for (const operation of commit.operations) if (isWhereOperation(operation)) await this.checkDeclared(operation.collection, Object.keys(operation.where));
    const session = this.client.startSession();
    try {
      await session.withTransaction(
        async () => {
          const stored = await this.states().findOne({ _id: commit.projection }, { session });
          // The lease first: a process that lost it stands by rather than reloading to try again.
          checkLeaseHolder(commit.projection, stored, commit.holder);
          const actual = stored?.checkpoint ?? 0;
          if (actual !== commit.expectedCheckpoint) {
            throw new CheckpointConflictError(commit.projection, commit.expectedCheckpoint, actual);
          }
          for (const run of runsByCollection(commit.operations)) {
            const models = run.operations.map((operation) => toWriteModel(operation, commit.state.checkpoint));
            try {
              await this.raw(run.collection).bulkWrite(models, { session, ordered: true });
            } catch (error) {
              // Other errors are rethrown untouched: their labels tell the driver whether to retry.
              throw mapDuplicateKey(error, run.collection);
            }
          }
          await this.states().updateOne({ _id: commit.projection }, { $set: stateBody(commit.state) }, { session, upsert: true });
        },
        { readConcern: { level: 'snapshot' }, writeConcern: { w: 'majority' }, readPreference: 'primary' },
      );
    } finally {
      await session.endSession();
    }
  }

  async getProjectionState(projection: string): Promise<ProjectionState | null> {
    const stored = await this.states().findOne({ _id: projection });
    return stored ? toProjectionState(stored) : null;
  }

  async putProjectionState(state: ProjectionState, options: { holder?: string } = {}): Promise<void> {
    if (options.holder === undefined) {
      await this.states().updateOne({ _id: state.name }, { $set: stateBody(state) }, { upsert: true });
      return;
    }
    const updated = await this.states().updateOne({ _id: state.name, 'lease.holder': options.holder }, { $set: stateBody(state) });
    if (updated.matchedCount === 0) throw new LeaseLostError(state.name, options.holder, (await this.currentLease(state.name))?.holder ?? null);
  }

  async listProjectionStates(): Promise<ProjectionState[]> {
    const stored = await this.states().find({}).sort({ _id: 1 }).toArray();
    return stored.map(toProjectionState);
  }

  async promoteShadow(promotion: ShadowPromotion): Promise<void> {
    if (promotion.holder !== undefined) {
      const current = await this.currentLease(promotion.projection);
      if (current?.holder !== promotion.holder) throw new LeaseLostError(promotion.projection, promotion.holder, current?.holder ?? null);
    }
    for (const { shadow, live } of promotion.collections) {
      try {
        await this.db.renameCollection(shadow, live, { dropTarget: true });
      } catch (error) {
        if (!hasCode(error, NAMESPACE_NOT_FOUND)) throw error;
      }
      const fields = this.declared.get(shadow);
      if (fields) this.declared.set(live, fields);
      else this.declared.delete(live);
      this.declared.delete(shadow);
    }
    await this.putProjectionState(promotion.state, { holder: promotion.holder });
  }

  async acquireLease(request: LeaseRequest & { version: number }): Promise<ProjectionLease | null> {
    const lease = leaseUntil(request);
    const takeable: Filter<StoredProjectionState> = {
      _id: request.projection,
      $or: [
        { lease: null },
        { 'lease.expires_at': { $lte: request.now.toISOString() } },
        { 'lease.holder': request.holder },
        ...(request.replacing !== undefined ? [{ 'lease.holder': request.replacing }] : []),
      ],
    };
    try {
      const taken = await this.states().findOneAndUpdate(
        takeable,
        {
          $set: { lease },
          $setOnInsert: { name: request.projection, version: request.version, checkpoint: 0, status: 'stopped', error: null, updated_at: request.now.toISOString() },
        },
        { upsert: true, returnDocument: 'after' },
      );
      if (taken?.lease?.holder === request.holder) return taken.lease;
    } catch (error) {
      // The filter missed an existing document (someone else's live lease), so the upsert
      // tried to insert a second one with the same _id.
      if (!hasCode(error, DUPLICATE_KEY)) throw error;
    }
    // Null when it was released between the two steps: the next attempt takes it.
    return this.currentLease(request.projection);
  }

  async renewLease(request: LeaseRequest): Promise<ProjectionLease | null> {
    const lease = leaseUntil(request);
    const renewed = await this.states().findOneAndUpdate({ _id: request.projection, 'lease.holder': request.holder }, { $set: { lease } }, { returnDocument: 'after' });
    return renewed ? lease : this.currentLease(request.projection);
  }

  async releaseLease(projection: string, holder: string): Promise<void> {
    await this.states().updateOne({ _id: projection, 'lease.holder': holder }, { $set: { lease: null } });
  }

  private async currentLease(projection: string): Promise<ProjectionLease | null> {
    const stored = await this.states().findOne({ _id: projection }, { projection: { lease: 1 } });
    return stored?.lease ?? null;
  }

  async ping(): Promise<boolean> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<boolean>((resolve) => {
      timer = setTimeout(() => resolve(false), PING_TIMEOUT_MS);
    });
    const answer = this.db.command({ ping: 1 }).then(
      () => true,
      () => false,
    );
    try {
      return await Promise.race([answer, timeout]);
    } finally {
      clearTimeout(timer);
    }
  }

  async close(): Promise<void> {
    await this.client.close();
  }

  /** The collection of projection states; created up front so transactions never create it. */
  async createStateCollection(): Promise<void> {
    await this.createCollectionIfMissing(PROJECTIONS);
  }

  raw(name: string): MongoCollection<StoredDocument> {
    return this.db.collection<StoredDocument>(name);
  }

  /** Fields that may be filtered or sorted on, besides `id`. */
  async declaredFields(name: string): Promise<Set<string>> {
    const known = this.declared.get(name);
    if (known) return known;
    try {
      const indexes = await this.raw(name).listIndexes().toArray();
      const fields = new Set<string>();
      for (const index of indexes) {
        for (const field of Object.keys((index.key ?? {}) as Record<string, unknown>)) if (field !== '_id') fields.add(field);
      }
      this.declared.set(name, fields);
      return fields;
    } catch (error) {
      // Not created yet: nothing declared, and nothing cached so a later declaration counts.
      if (hasCode(error, NAMESPACE_NOT_FOUND)) return new Set();
      throw error;
    }
  }

  /** UndeclaredFieldError unless every field (but `id`) may be filtered on. */
  async checkDeclared(name: string, fields: readonly string[]): Promise<void> {
    const toCheck = fields.filter((field) => field !== 'id');
    if (toCheck.length === 0) return;
    const declared = await this.declaredFields(name);
    for (const field of toCheck) {
      if (!declared.has(field)) throw new UndeclaredFieldError(name, field);
    }
  }

  private states(): MongoCollection<StoredProjectionState> {
    return this.db.collection<StoredProjectionState>(PROJECTIONS);
  }

  private async createCollectionIfMissing(name: string): Promise<void> {
    try {
      await this.db.createCollection(name);
    } catch (error) {
      if (!hasCode(error, NAMESPACE_EXISTS)) throw error;
    }
  }
}

/** Connects to MongoDB; the database is `databaseName`, else the URL's path, else `svc`. */
export async function connectMongoReadStore(url: string, databaseName?: string): Promise<MongoReadStore> {
  const client = new MongoClient(url, { ignoreUndefined: true });
  await client.connect();
  try {
    const store = new MongoReadStore(client, databaseName ?? databaseFromUrl(url) ?? DEFAULT_DATABASE);
    await store.createStateCollection();
    return store;
  } catch (error) {
    await client.close();
    throw error;
  }
}

class MongoDocumentCollection<T extends Document> implements Collection<T> {
  constructor(
    private readonly store: MongoReadStore,
    private readonly name: string,
  ) {}

  async get(id: string): Promise<T | null> {
    const stored = await this.store.raw(this.name).findOne({ _id: id });
    return stored ? (toDocument(stored) as T) : null;
  }

  async put(doc: T): Promise<void> {
    try {
      await this.store.raw(this.name).replaceOne({ _id: doc.id }, documentBody(doc), { upsert: true });
    } catch (error) {
      throw mapDuplicateKey(error, this.name);
    }
  }

  async patch(id: string, changes: Partial<T>): Promise<T | null> {
    const update = patchUpdate(changes);
    if (!update) return this.get(id);
    try {
      const updated = await this.store.raw(this.name).findOneAndUpdate({ _id: id }, update, { returnDocument: 'after' });
      return updated ? (toDocument(updated) as T) : null;
    } catch (error) {
      throw mapDuplicateKey(error, this.name);
    }
  }

  async delete(id: string): Promise<boolean> {
    const result = await this.store.raw(this.name).deleteOne({ _id: id });
    return result.deletedCount === 1;
  }

  async find(options: FindOptions = {}): Promise<Page<T>> {
    const sort = options.sort ?? { field: 'id', direction: 'asc' as const };
    // A hint names an index by its keys (`sequence_key,sequence_n`): each of them is declared.
    await this.checkDeclared([...Object.keys(options.where ?? {}), sort.field, ...(options.index === undefined ? [] : keyFields(options.index))]);
    const limit = Math.min(MAX_PAGE_SIZE, Math.max(1, Math.floor(options.limit ?? DEFAULT_PAGE_SIZE)));
    const queryKey = queryKeyOf(this.name, options);
    const field = storedField(sort.field);
    const direction = sort.direction === 'desc' ? -1 : 1;
    const conditions: Record<string, unknown>[] = [whereFilter(options.where)];
    if (options.cursor !== undefined) {
      const { sortValue, id } = decodeCursor(queryKey, options.cursor);
      conditions.push(afterCursor(field, sort.direction, sortValue, id));
    }
    const order: MongoSort = field === '_id' ? { _id: direction } : { [field]: direction, _id: direction };
    const stored = await this.store
      .raw(this.name)
      .find({ $and: conditions } as Filter<StoredDocument>, options.index === undefined ? {} : { hint: keyPattern(options.index) })
      .sort(order)
      .limit(limit + 1)
      .toArray();
    const pageItems = stored.slice(0, limit);
    const last = pageItems[pageItems.length - 1];
    const next_cursor =
      stored.length > limit && last
        ? encodeCursor(queryKey, field === '_id' ? last._id : (fieldValue(last, field) ?? null), last._id)
        : null;
    // Each read's documents are its own here: frozen only so that a shared read behaves alike on both stores.
    const items = pageItems.map((item) => toDocument(item) as T);
    return { items: options.shared ? items.map(deepFreeze) : items, next_cursor };
  }

  async count(where?: Where): Promise<number> {
    await this.checkDeclared(Object.keys(where ?? {}));
    return this.store.raw(this.name).countDocuments(whereFilter(where) as Filter<StoredDocument>);
  }

  private checkDeclared(fields: readonly string[]): Promise<void> {
    return this.store.checkDeclared(this.name, fields);
  }
}

/** `tenant_id,seq` -> `{tenant_id: 1, seq: 1}`. */
function keyPattern(key: string): Record<string, 1> {
  return Object.fromEntries(keyFields(key).map((field) => [field, 1]));
}

function indexName(key: string): string {
  return keyFields(key)
    .map((field) => `${field}_1`)
    .join('_');
}

function uniqueIndexName(key: string): string {
  return `${indexName(key)}_unique`;
}

/** The key an index (named by us) covers, as indexKey writes it: the inverse of indexName/uniqueIndexName. */
function fieldOfIndex(name: string): string {
  if (name === '_id_') return 'id';
  const plain = name.endsWith('_unique') ? name.slice(0, -'_unique'.length) : name;
  return plain.endsWith('_1') ? plain.slice(0, -'_1'.length).split('_1_').join(',') : name;
}

function storedField(field: string): string {
  return field === 'id' ? '_id' : field;
}

/** The stored body of a document: everything but its id (which becomes `_id`). */
function documentBody(doc: Document): Record<string, unknown> {
  const { id: _id, _id: _ignored, [POSITION_FIELD]: _position, ...body } = doc as Document & Record<string, unknown>;
  return body;
}

function toDocument(stored: StoredDocument): Document {
  const { _id, [POSITION_FIELD]: _position, ...fields } = stored;
  return { id: _id, ...fields };
}

/** A shallow merge as $set, with undefined values removed as in JSON; null when nothing changes. */
function patchUpdate(changes: Record<string, unknown>, position?: number): UpdateFilter<StoredDocument> | null {
  const set: Record<string, unknown> = {};
  const unset: Record<string, ''> = {};
  for (const [key, value] of Object.entries(changes)) {
    if (key === 'id' || key === '_id' || key === POSITION_FIELD) continue;
    if (value === undefined) unset[key] = '';
    else set[key] = value;
  }
  if (position !== undefined) set[POSITION_FIELD] = position;
  const update: Record<string, unknown> = {};
  if (Object.keys(set).length > 0) update.$set = set;
  if (Object.keys(unset).length > 0) update.$unset = unset;
  return Object.keys(update).length > 0 ? (update as UpdateFilter<StoredDocument>) : null;
}

function toWriteModel(operation: WriteOperation, position: number): AnyBulkWriteOperation<StoredDocument> {
  switch (operation.kind) {
    case 'put':
      return {
        replaceOne: {
          filter: { _id: operation.doc.id },
          replacement: { ...documentBody(operation.doc), [POSITION_FIELD]: position },
          upsert: true,
        },
      };
    case 'patch':
      // Never null: the position is always set.
      return { updateOne: { filter: { _id: operation.id }, update: patchUpdate(operation.changes, position)! } };
    case 'delete':
      return { deleteOne: { filter: { _id: operation.id } } };
    case 'deleteWhere':
      return { deleteMany: { filter: whereFilter(operation.where) } };
    case 'patchWhere':
      return { updateMany: { filter: whereFilter(operation.where), update: patchUpdate(operation.changes, position)! } };
  }
}

/** Consecutive operations on one collection, in order: one bulkWrite each. */
function runsByCollection(operations: readonly WriteOperation[]): Array<{ collection: string; operations: WriteOperation[] }> {
  const runs: Array<{ collection: string; operations: WriteOperation[] }> = [];
  for (const operation of operations) {
    const last = runs[runs.length - 1];
    if (last && last.collection === operation.collection) last.operations.push(operation);
    else runs.push({ collection: operation.collection, operations: [operation] });
  }
  return runs;
}

function whereFilter(where: Where | undefined): Record<string, unknown> {
  const filter: Record<string, unknown> = {};
  for (const [field, condition] of Object.entries(where ?? {})) {
    filter[storedField(field)] = fieldFilter(condition);
  }
  return filter;
}

const OPERATORS = { eq: '$eq', ne: '$ne', gt: '$gt', gte: '$gte', lt: '$lt', lte: '$lte' } as const;

function fieldFilter(condition: FieldCondition): unknown {
  if (condition === null || typeof condition !== 'object') return condition;
  const filter: Record<string, unknown> = {};
  for (const [name, operator] of Object.entries(OPERATORS)) {
    const value = condition[name as keyof typeof OPERATORS];
    if (value !== undefined) filter[operator] = value;
  }
  if (condition.in !== undefined) filter.$in = [...condition.in];
  return filter;
}

/** Items after the cursor's (value, id) in the sort order; see the header on nulls. */
function afterCursor(field: string, direction: 'asc' | 'desc', value: unknown, id: string): Record<string, unknown> {
  const beyond = direction === 'asc' ? '$gt' : '$lt';
  if (field === '_id') return { _id: { [beyond]: id } };
  const sameValue = { [field]: value ?? null, _id: { [beyond]: id } };
  if (value === null || value === undefined) {
    // Nulls sort first ascending (everything non-null follows) and last descending.
    return direction === 'asc' ? { $or: [{ [field]: { $ne: null } }, sameValue] } : sameValue;
  }
  return direction === 'asc'
    ? { $or: [{ [field]: { $gt: value } }, sameValue] }
    : { $or: [{ [field]: { $lt: value } }, sameValue, { [field]: null }] };
}

function stateBody(state: ProjectionState): ProjectionState {
  return {
    name: state.name,
    version: state.version,
    checkpoint: state.checkpoint,
    status: state.status,
    error: state.error,
    updated_at: state.updated_at,
  };
}

function toProjectionState(stored: StoredProjectionState): ProjectionState {
  const { _id, ...state } = stored;
  return { ...stateBody({ ...state, name: state.name ?? _id }), lease: state.lease ?? null };
}


/** The one place MongoDB's duplicate-key error becomes ours. */
function mapDuplicateKey(error: unknown, collection: string): unknown {
  if (!(error instanceof MongoServerError)) return error;
  const candidates: Array<{ code?: unknown; message?: unknown; errmsg?: unknown; keyPattern?: unknown }> = [error];
  if (error instanceof MongoBulkWriteError) {
    const writeErrors = error.writeErrors;
    candidates.push(...(Array.isArray(writeErrors) ? writeErrors : [writeErrors]));
  }
  for (const candidate of candidates) {
    if (candidate.code !== DUPLICATE_KEY) continue;
    const text = [candidate.errmsg, candidate.message].filter((part) => typeof part === 'string').join(' ');
    const index = /index: (\S+) dup key/.exec(text)?.[1];
    if (index) return new UniqueConstraintError(collection, fieldOfIndex(index));
    const keyPattern = candidate.keyPattern;
    const field = keyPattern && typeof keyPattern === 'object' ? Object.keys(keyPattern)[0] : undefined;
    return new UniqueConstraintError(collection, field === undefined || field === '_id' ? 'id' : field);
  }
  return error;
}

function hasCode(error: unknown, code: number): boolean {
  return error instanceof MongoServerError && error.code === code;
}

function databaseFromUrl(url: string): string | undefined {
  const path = /^mongodb(?:\+srv)?:\/\/[^/]*\/([^?]*)/.exec(url)?.[1];
  return path ? decodeURIComponent(path) : undefined;
}
