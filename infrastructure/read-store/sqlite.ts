// The embedded read store: each collection is a table of JSON documents. Each declared
// field is also a real column (`f_<field>`, dots as `__`), written with the document and
// indexed, so filters and sorts never parse JSON. By default it lives in the same SQLite
// file as the events, on the same connection.
//
// A collection's table is an ordinary rowid table with `id` unique. Until 2026-11 they were
// WITHOUT ROWID tables keyed by `id`; SQLite advises against that layout for rows larger than
// about a twentieth of a page, and documents are larger (an audit entry is about 700 bytes):
// a random id put the whole document in a random leaf of the key's b-tree, which split and
// rewrote far more pages per write (a measured 2.8x per insert, docs/performance-history.md). A table
// of the old layout is copied into the new one the first time its collection is ensured.
//
// Index names carry a random suffix and are recorded in `_read_indexes`, so that a rebuilt
// shadow table can take its live name (ALTER TABLE RENAME) while a later shadow of the
// same name still gets indexes of its own. A row's `field` is the index's key (`indexKey`:
// the fields comma-joined, one for most); a sparse index is a partial index of the rows
// whose first key is not null.

import { randomBytes } from 'node:crypto';
import {
  CheckpointConflictError,
  type Collection,
  type CollectionSpec,
  DEFAULT_PAGE_SIZE,
  type Document,
  type FieldCondition,
  type FieldEqualities,
  checkLeaseHolder,
  leaseUntil,
  type LeaseRequest,
  type FindOptions,
  type IndexSpec,
  indexFields,
  indexKey,
  keyFields,
  MAX_PAGE_SIZE,
  type Page,
  type ProjectionCommit,
  type ProjectionLease,
  type ProjectionState,
  type ReadStore,
  type Scalar,
  type ShadowPromotion,
  UndeclaredFieldError,
  UniqueConstraintError,
  type Where,
  type WhereOperation,
  type WriteOperation,
  decodeCursor,
  leaseIsLive,
  encodeCursor,
  fieldValue,
  isWhereOperation,
  queryKeyOf,
} from '../../application/ports/read-store';
import { deepFreeze } from '../../application/shared/immutable';
import type Database from 'better-sqlite3';
import { CommitGroup } from '../sqlite/commit-group';
import type { SqliteDatabase } from '../sqlite/database';
import { type Loaded, ReadCache } from './read-cache';

type Statement = Database.Statement<unknown[], unknown>;

const SCHEMA = `
CREATE TABLE IF NOT EXISTS _read_indexes (
  collection TEXT NOT NULL,
  field TEXT NOT NULL,
  is_unique INTEGER NOT NULL,
  index_name TEXT NOT NULL UNIQUE,
  is_sparse INTEGER NOT NULL DEFAULT 0,
  PRIMARY KEY (collection, field)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS _projections (
  name TEXT PRIMARY KEY,
  state TEXT NOT NULL
) WITHOUT ROWID;
`;

/** A collection table's own columns; each declared field adds one. */
const DOCUMENT_COLUMNS = 'id TEXT NOT NULL UNIQUE, doc TEXT NOT NULL';

const COLLECTION_NAME = /^[a-z][a-z0-9_]*$/;
const FIELD_PATH = /^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*$/;

type SqlValue = string | number | null;

interface PendingCommit {
  commit: ProjectionCommit;
  resolve: () => void;
  reject: (error: unknown) => void;
}

type CommitOutcome = { ok: true } | { ok: false; error: unknown };

interface IndexRow {
  collection: string;
  /** The index's key: its fields comma-joined. */
  field: string;
  is_unique: number;
  is_sparse: number;
  index_name: string;
}

/** What a collection's indexes declare: the rows by key, and every field any of them names. */
interface Declared {
  indexes: Map<string, IndexRow>;
  fields: string[];
}

/** Prepared statements kept per store; beyond it the least recently used is finalized. */
export const PREPARED_STATEMENT_LIMIT = 500;

/**
 * Placeholders for an `IN` list of `count` values: the next power of two up to 256 (so lists
 * of any length up to it take nine statement shapes, not 256), the exact count beyond.
 */
export function inListLength(count: number): number {
  if (count <= 1 || count > 256) return count;
  return 2 ** Math.ceil(Math.log2(count));
}

function indexSql(table: string, row: IndexRow): string {
  const fields = keyFields(row.field);
  const columns = fields.map((field) => `"${columnName(field)}"`).join(', ');
  const partial = row.is_sparse ? ` WHERE "${columnName(fields[0]!)}" IS NOT NULL` : '';
  return `CREATE ${row.is_unique ? 'UNIQUE ' : ''}INDEX "${row.index_name}" ON ${table} (${columns})${partial}`;
}

export class SqliteReadStore implements ReadStore {
  /** Declared indexes and fields per collection, from `_read_indexes`. */
  private readonly declared = new Map<string, Declared>();
  /** Prepared statements by SQL, the most recently used last; emptied whenever the schema changes. */
  private readonly statements = new Map<string, Statement>();

  private readonly cache: ReadCache;
  /** SQLite's count of other connections' commits, as of the last read of projection states. */
  private dataVersion = -1;
  /** Projection commits waiting for the next group (commitProjection). */
  private readonly pendingCommits: PendingCommit[] = [];
  private readonly group: CommitGroup;

  /** `cacheTtlMs` 0 turns the read cache off (see read-cache.ts). */
  constructor(
    private readonly db: SqliteDatabase,
    options: { cacheTtlMs?: number } = {},
  ) {
    this.cache = new ReadCache(options.cacheTtlMs ?? 0);
    this.group = CommitGroup.of(db);
    this.group.join<PendingCommit[], CommitOutcome[]>({
      take: () => (this.pendingCommits.length === 0 ? null : this.pendingCommits.splice(0, this.pendingCommits.length)),
      write: (group, alone) => this.writeCommits(group, alone),
      settle: (group, result) => this.settleCommits(group, result),
    });
    db.exec(SCHEMA);
    // A file made before sparse indexes: its table gains the column, under the write lock so
    // that two processes starting on it at once do not both add it.
    db.transaction(() => {
      const columns = db.prepare<[], { name: string }>("SELECT name FROM pragma_table_info('_read_indexes')").all();
      if (!columns.some((column) => column.name === 'is_sparse')) db.exec('ALTER TABLE _read_indexes ADD COLUMN is_sparse INTEGER NOT NULL DEFAULT 0');
    }).immediate();
    this.loadIndexes();
  }

  private prepared(sql: string): Statement {
    let statement = this.statements.get(sql);
    if (statement) {
      this.statements.delete(sql);
    } else {
      statement = this.db.prepare(sql);
      // Queries differ in their filters' shapes; bound what the process keeps for the rare ones.
      if (this.statements.size >= PREPARED_STATEMENT_LIMIT) this.statements.delete(this.statements.keys().next().value as string);
    }
    this.statements.set(sql, statement);
    return statement;
  }

  /** How many prepared statements the store keeps (at most PREPARED_STATEMENT_LIMIT). */
  get preparedStatementCount(): number {
    return this.statements.size;
  }

  private loadIndexes(): void {
    this.statements.clear();
    this.cache.invalidateAll();
    this.declared.clear();
    for (const row of this.db.prepare<[], IndexRow>('SELECT collection, field, is_unique, is_sparse, index_name FROM _read_indexes').all()) {
      this.indexesOf(row.collection).set(row.field, row);
    }
    for (const collection of this.declared.keys()) this.refreshFields(collection);
  }

  private indexesOf(collection: string): Map<string, IndexRow> {
    let declared = this.declared.get(collection);
    if (!declared) {
      declared = { indexes: new Map(), fields: [] };
      this.declared.set(collection, declared);
    }
    return declared.indexes;
  }

  private refreshFields(collection: string): void {
    const declared = this.declared.get(collection);
    if (declared) declared.fields = [...new Set([...declared.indexes.keys()].flatMap(keyFields))].sort();
  }

  private fieldsOf(collection: string): readonly string[] {
    return this.declared.get(collection)?.fields ?? [];
  }

  async ensureCollection(spec: CollectionSpec): Promise<void> {
    const table = tableName(spec.name);
    this.statements.clear();
    this.cache.invalidate(spec.name);
    this.db
      .transaction(() => {
        // Another process may have declared indexes since this one opened the file: read them
        // again now that this transaction holds the write lock.
        this.loadIndexes();
        this.db.exec(`CREATE TABLE IF NOT EXISTS ${table} (${DOCUMENT_COLUMNS})`);
        this.migrateToRowidLayout(spec.name);
        const columns = new Set(this.db.prepare<[], { name: string }>(`SELECT name FROM pragma_table_info('rm_${spec.name}')`).all().map((c) => c.name));
        const wanted = new Map<string, IndexSpec>();
        for (const index of spec.indexes ?? []) {
          for (const field of indexFields(index)) {
            if (!FIELD_PATH.test(field)) throw new Error(`invalid index field ${field}`);
            const column = columnName(field);
            if (columns.has(column)) continue;
            // A field declared after documents exist: add its column and fill it from them.
            this.db.exec(`ALTER TABLE ${table} ADD COLUMN "${column}"`);
            this.db.exec(`UPDATE ${table} SET "${column}" = json_extract(doc, '$.${field}')`);
            columns.add(column);
          }
          wanted.set(indexKey(index), index);
        }
        const indexes = this.indexesOf(spec.name);
        for (const [key, known] of [...indexes]) {
          const index = wanted.get(key);
          if (index && Boolean(known.is_unique) === Boolean(index.unique) && Boolean(known.is_sparse) === Boolean(index.sparse)) continue;
          // No longer declared, or declared otherwise: an index nobody reads would only cost its writes.
          this.db.exec(`DROP INDEX IF EXISTS "${known.index_name}"`);
          this.db.prepare('DELETE FROM _read_indexes WHERE index_name = ?').run(known.index_name);
          indexes.delete(key);
        }
        for (const [key, index] of wanted) {
          if (indexes.has(key)) continue;
          const row: IndexRow = {
            collection: spec.name,
            field: key,
            is_unique: index.unique ? 1 : 0,
            is_sparse: index.sparse ? 1 : 0,
            index_name: `ix_${spec.name}_${randomBytes(4).toString('hex')}`,
          };
          this.db.exec(indexSql(table, row));
          this.db.prepare('INSERT INTO _read_indexes (collection, field, is_unique, is_sparse, index_name) VALUES (@collection, @field, @is_unique, @is_sparse, @index_name)').run(row);
          indexes.set(key, row);
        }
        this.refreshFields(spec.name);
      })
      .immediate();
  }

  /**
   * Copies a collection kept in the old WITHOUT ROWID layout into the rowid layout, in the
   * caller's transaction: same columns, same documents, its indexes made again under their
   * recorded names (so `_read_indexes` stays true).
   */
  private migrateToRowidLayout(collection: string): void {
    const table = `rm_${collection}`;
    const definition = this.db.prepare<[string], { sql: string }>("SELECT sql FROM sqlite_master WHERE type = 'table' AND name = ?").get(table);
    if (!definition || !/WITHOUT\s+ROWID\s*$/i.test(definition.sql)) return;
    const fieldColumns = this.db
      .prepare<[string], { name: string }>('SELECT name FROM pragma_table_info(?)')
      .all(table)
      .map((column) => column.name)
      .filter((name) => name !== 'id' && name !== 'doc')
      .map((name) => `"${name}"`);
    const moving = `${table}__rowid`;
    const columns = ['id', 'doc', ...fieldColumns].join(', ');
    this.db.exec(`DROP TABLE IF EXISTS "${moving}"`);
    this.db.exec(`CREATE TABLE "${moving}" (${DOCUMENT_COLUMNS}${fieldColumns.map((column) => `, ${column}`).join('')})`);
    this.db.exec(`INSERT INTO "${moving}" (${columns}) SELECT ${columns} FROM "${table}" ORDER BY id`);
    this.db.exec(`DROP TABLE "${table}"`);
    this.db.exec(`ALTER TABLE "${moving}" RENAME TO "${table}"`);
    for (const row of this.indexesOf(collection).values()) this.db.exec(indexSql(`"${table}"`, row));
  }

  async dropCollection(name: string): Promise<void> {
    this.dropCollections([name]);
  }

  /** Drops the collections' tables and index records in one transaction, and forgets what this store knew of them. */
  private dropCollections(names: readonly string[], alsoInTransaction: () => void = () => undefined): void {
    this.statements.clear();
    this.db
      .transaction(() => {
        for (const name of names) {
          this.db.exec(`DROP TABLE IF EXISTS ${tableName(name)}`);
          this.db.prepare('DELETE FROM _read_indexes WHERE collection = ?').run(name);
        }
        alsoInTransaction();
      })
      .immediate();
    for (const name of names) {
      this.cache.invalidate(name);
      this.declared.delete(name);
    }
  }

  /**
   * Drops a projection's collections (and their rebuild shadows) and state from this file: its
   * read model now lives in another (the projection file, composition-root.ts) and is built
   * there from the events. True when there was something to drop.
   */
  forgetProjection(projection: { name: string; collections: readonly CollectionSpec[] }): boolean {
    const names = projection.collections.flatMap((spec) => [spec.name, `${spec.name}__rebuild`]);
    const states = [projection.name, `${projection.name}__rebuild`];
    const tables = this.db.prepare<[], { name: string }>("SELECT name FROM sqlite_master WHERE type = 'table'").all().map((row) => row.name);
    const present = names.filter((name) => tables.includes(tableName(name).replace(/"/g, '')));
    const stored = states.filter((name) => this.prepared('SELECT 1 FROM _projections WHERE name = ?').get(name) !== undefined);
    if (present.length === 0 && stored.length === 0) return false;
    this.dropCollections(names, () => {
      for (const name of states) this.db.prepare('DELETE FROM _projections WHERE name = ?').run(name);
    });
    return true;
  }

  collection<T extends Document = Document>(name: string): Collection<T> {
    return new SqliteCollection<T>(this, name);
  }

  /** Runs `work` in one transaction on the shared connection. */
  transaction<R>(work: () => R): R {
    try {
      return this.db.transaction(work).immediate();
    } catch (error) {
      // Reads inside the transaction may have cached what the rollback just undid.
      this.cache.invalidateAll();
      throw error;
    }
  }

  getDoc(collection: string, id: string): Document | null {
    const doc = this.cache.read(collection, 'get', id, (): Loaded<Document | null> => {
      const row = this.prepared(`SELECT doc FROM ${tableName(collection)} WHERE id = ?`).get(id) as { doc: string } | undefined;
      return row ? { value: JSON.parse(row.doc) as Document, bytes: row.doc.length * 2 } : { value: null, bytes: 16 };
    });
    return doc === null ? null : copyDocument(doc);
  }

  putDoc(collection: string, doc: Document): void {
    if (typeof doc.id !== 'string' || doc.id === '') throw new Error(`${collection}: a document needs a string id`);
    const fields = this.fieldsOf(collection);
    const columns = fields.map((field) => `"${columnName(field)}"`);
    const sql = `INSERT INTO ${tableName(collection)} (id, doc${columns.map((c) => `, ${c}`).join('')}) VALUES (?, ?${columns.map(() => ', ?').join('')})
      ON CONFLICT (id) DO UPDATE SET doc = excluded.doc${columns.map((c) => `, ${c} = excluded.${c}`).join('')}`;
    const json = JSON.stringify(doc);
    try {
      this.prepared(sql).run(doc.id, json, ...fields.map((field) => columnValue(fieldValue(doc, field))));
    } catch (error) {
      throw this.mapUniqueViolation(collection, error);
    }
    this.cache.wrote(collection, doc.id, () => jsonCopy(doc), json.length * 2);
  }

  patchDoc(collection: string, id: string, changes: Record<string, unknown>): Document | null {
    const current = this.getDoc(collection, id);
    if (!current) return null;
    const next = { ...current, ...changes, id };
    // Only the declared fields whose values change are written besides the document: an index
    // whose column is not set is left alone, where setting every column rewrote every index
    // on every patch (a status change touched all eleven of an orchestration event's).
    const changed = this.fieldsOf(collection).filter((field) => columnValue(fieldValue(current, field)) !== columnValue(fieldValue(next, field)));
    const sql = `UPDATE ${tableName(collection)} SET doc = ?${changed.map((field) => `, "${columnName(field)}" = ?`).join('')} WHERE id = ?`;
    const json = JSON.stringify(next);
    try {
      this.prepared(sql).run(json, ...changed.map((field) => columnValue(fieldValue(next, field))), id);
    } catch (error) {
      throw this.mapUniqueViolation(collection, error);
    }
    this.cache.wrote(collection, id, () => jsonCopy(next), json.length * 2);
    return next;
  }

  deleteDoc(collection: string, id: string): boolean {
    const deleted = this.prepared(`DELETE FROM ${tableName(collection)} WHERE id = ?`).run(id).changes > 0;
    this.cache.wrote(collection, id, () => null, 16);
    return deleted;
  }

  applyOperation(operation: WriteOperation): void {
    switch (operation.kind) {
      case 'put':
        this.putDoc(operation.collection, operation.doc);
        return;
      case 'patch':
        this.patchDoc(operation.collection, operation.id, operation.changes);
        return;
      case 'delete':
        this.deleteDoc(operation.collection, operation.id);
        return;
      case 'deleteWhere':
        this.deleteMatching(operation.collection, operation.where);
        return;
      case 'patchWhere':
        this.patchMatching(operation.collection, operation.where, operation.changes);
        return;
    }
  }

  /** Each matching document patched as one `patch` would (its declared columns kept in step). */
  private patchMatching(collection: string, where: FieldEqualities, changes: Record<string, unknown>): void {
    const { clauses, params } = this.whereSql(collection, where);
    const ids = this.prepared(`SELECT id FROM ${tableName(collection)}${clauses.length > 0 ? ` WHERE ${clauses.join(' AND ')}` : ''}`)
      .all(...params)
      .map((row) => (row as { id: string }).id);
    for (const id of ids) this.patchDoc(collection, id, changes);
  }

  private deleteMatching(collection: string, where: FieldEqualities): void {
    const { clauses, params } = this.whereSql(collection, where);
    this.prepared(`DELETE FROM ${tableName(collection)}${clauses.length > 0 ? ` WHERE ${clauses.join(' AND ')}` : ''}`).run(...params);
    this.cache.invalidate(collection);
  }

  findDocs(collection: string, options: FindOptions): Page<Document> {
    // Keyed by the options themselves, so a repeated query skips building its SQL too.
    const page = this.cache.read(collection, 'find', findOptionsKey(options), () => this.queryPage(collection, options));
    // Shared: the cached documents themselves, frozen once (the copies other readers get are their own).
    if (options.shared) return { items: page.items.map(deepFreeze), next_cursor: page.next_cursor };
    return { items: page.items.map(copyDocument), next_cursor: page.next_cursor };
  }

  private queryPage(collection: string, options: FindOptions): Loaded<Page<Document>> {
    const limit = Math.min(Math.max(options.limit ?? DEFAULT_PAGE_SIZE, 1), MAX_PAGE_SIZE);
    const sort = options.sort ?? { field: 'id', direction: 'asc' as const };
    const sortSql = this.columnSql(collection, sort.field);
    const { clauses, params } = this.whereSql(collection, options.where);
    if (options.cursor) {
      const cursor = decodeCursor(queryKeyOf(collection, options), options.cursor);
      const keyset = keysetSql(sortSql, sort.direction, toSqlValue(cursor.sortValue as Scalar), cursor.id);
      clauses.push(keyset.sql);
      params.push(...keyset.params);
    }
    const direction = sort.direction === 'desc' ? 'DESC' : 'ASC';
    const order = sort.field === 'id' ? `id ${direction}` : `${sortSql} ${direction}, id ${direction}`;
    const sql = `SELECT doc FROM ${tableName(collection)}${this.indexedBy(collection, options.index, options.where)} ${clauses.length ? `WHERE ${clauses.join(' AND ')}` : ''}
      ORDER BY ${order} LIMIT ?`;
    const rows = this.prepared(sql).all(...params, limit + 1) as Array<{ doc: string }>;
    const items = rows.slice(0, limit).map((row) => JSON.parse(row.doc) as Document);
    const last = items[items.length - 1];
    const next_cursor =
      rows.length > limit && last ? encodeCursor(queryKeyOf(collection, options), fieldValue(last, sort.field) ?? null, last.id) : null;
    return { value: { items, next_cursor }, bytes: rows.reduce((total, row) => total + row.doc.length * 2, 64) };
  }

  countDocs(collection: string, where: Where | undefined): number {
    const { clauses, params } = this.whereSql(collection, where);
    const sql = `SELECT count(*) AS n FROM ${tableName(collection)} ${clauses.length ? `WHERE ${clauses.join(' AND ')}` : ''}`;
    return (this.prepared(sql).get(...params) as { n: number } | undefined)?.n ?? 0;
  }

  /**
   * `INDEXED BY` the index with this key (FindOptions.index); nothing without one. A sparse
   * index holds only the rows whose first key is set, so it is read only for a query that asks
   * for a value of it (SQLite refuses the query otherwise); without one the hint is dropped.
   */
  private indexedBy(collection: string, key: string | undefined, where: Where | undefined): string {
    if (key === undefined) return '';
    const row = this.declared.get(collection)?.indexes.get(key);
    if (!row) {
      for (const field of keyFields(key)) if (!this.fieldsOf(collection).includes(field)) throw new UndeclaredFieldError(collection, field);
      throw new Error(`${collection}: no index has the key ${key}`);
    }
    if (row.is_unique) throw new Error(`${collection}: the index hint ${key} is a unique index's (an equality on it needs no hint)`);
    if (row.is_sparse && !asksForValue(where?.[keyFields(key)[0]!])) return '';
    return ` INDEXED BY "${row.index_name}"`;
  }

  private columnSql(collection: string, field: string): string {
    if (field === 'id') return 'id';
    if (!this.fieldsOf(collection).includes(field)) throw new UndeclaredFieldError(collection, field);
    return `"${columnName(field)}"`;
  }

  private whereSql(collection: string, where: Where | undefined): { clauses: string[]; params: SqlValue[] } {
    const clauses: string[] = [];
    const params: SqlValue[] = [];
    for (const [field, condition] of Object.entries(where ?? {})) {
      const column = this.columnSql(collection, field);
      for (const [operator, value] of conditionEntries(condition)) {
        if (operator === 'in') {
          const values = (value as readonly Scalar[]).map(toSqlValue);
          const present = values.filter((item) => item !== null);
          // As in MongoDB, a null in the list matches documents without a value.
          const placeholders = inListLength(present.length);
          const alternatives = [...(present.length > 0 ? [`${column} IN (${Array.from({ length: placeholders }, () => '?').join(', ')})`] : []), ...(present.length < values.length ? [`${column} IS NULL`] : [])];
          clauses.push(alternatives.length === 0 ? '0' : alternatives.length === 1 ? alternatives[0] : `(${alternatives.join(' OR ')})`);
          params.push(...present);
          // Repeating the last value changes no match and lets lists of near lengths share a statement.
          for (let padding = present.length; padding < placeholders; padding += 1) params.push(present[present.length - 1]!);
          continue;
        }
        const sqlValue = toSqlValue(value as Scalar);
        if (sqlValue === null) {
          if (operator === 'eq') clauses.push(`${column} IS NULL`);
          else if (operator === 'ne') clauses.push(`${column} IS NOT NULL`);
          else clauses.push('0');
          continue;
        }
        const sqlOperator = { eq: '=', ne: 'IS NOT', gt: '>', gte: '>=', lt: '<', lte: '<=' }[operator];
        clauses.push(`${column} ${sqlOperator} ?`);
        params.push(sqlValue);
      }
    }
    return { clauses, params };
  }

  private mapUniqueViolation(collection: string, error: unknown): unknown {
    const message = error instanceof Error ? error.message : '';
    if (!message.includes('UNIQUE constraint failed')) return error;
    for (const row of this.declared.get(collection)?.indexes.values() ?? []) {
      if (row.is_unique && (message.includes(row.index_name) || message.includes(`.${columnName(keyFields(row.field)[0]!)}`))) return new UniqueConstraintError(collection, row.field);
    }
    return new UniqueConstraintError(collection, 'id');
  }

  /**
   * Group commit, with the event store's appends: the projection and saga checkpoint commits
   * that arrive in the same turn of the event loop share one transaction and one WAL sync,
   * the connection's commit group (../sqlite/commit-group.ts), with the appends of that turn.
   * Each is still checked and applied on its own (in a savepoint, so one that is refused, a
   * lost lease or a moved checkpoint, leaves the others of the group untouched), and each
   * caller's promise settles only once the group is on disk. An appended event wakes every
   * projection and saga at once, so their commits meet here instead of syncing one by one.
   */
  commitProjection(commit: ProjectionCommit): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      this.pendingCommits.push({ commit, resolve, reject });
      this.group.schedule();
    });
  }

  /** Applies a group of projection commits inside the connection's group transaction, each on its own unless it is alone there. */
  private writeCommits(group: PendingCommit[], alone: boolean): CommitOutcome[] {
    return group.map(({ commit }) => {
      if (alone && group.length === 1) {
        this.commitOne(commit);
        return { ok: true as const };
      }
      try {
        // Nested in the group's transaction, better-sqlite3 makes this a savepoint.
        this.db.transaction(() => this.commitOne(commit))();
        return { ok: true as const };
      } catch (error) {
        // Reads in the rolled-back savepoint may have cached what it undid.
        this.cache.invalidateAll();
        return { ok: false as const, error };
      }
    });
  }

  private settleCommits(group: PendingCommit[], result: { ok: true; outcomes: CommitOutcome[] } | { ok: false; error: unknown }): void {
    if (!result.ok) {
      // Reads inside the transaction may have cached what the rollback just undid.
      this.cache.invalidateAll();
      for (const pending of group) pending.reject(result.error);
      return;
    }
    group.forEach((pending, index) => {
      const outcome = result.outcomes[index];
      if (outcome.ok) pending.resolve();
      else pending.reject(outcome.error);
    });
  }

  private commitOne(commit: ProjectionCommit): void {
    const stored = this.readState(commit.projection);
    // The lease first: a process that lost it stands by rather than reloading to try again.
    checkLeaseHolder(commit.projection, stored, commit.holder);
    const actual = stored?.checkpoint ?? 0;
    if (actual !== commit.expectedCheckpoint) {
      throw new CheckpointConflictError(commit.projection, commit.expectedCheckpoint, actual);
    }
    for (const operation of coalesceWrites(commit.operations, (collection) => this.hasUniqueField(collection))) this.applyOperation(operation);
    this.writeState(commit.state, stored);
  }

  private hasUniqueField(collection: string): boolean {
    for (const row of this.declared.get(collection)?.indexes.values() ?? []) if (row.is_unique) return true;
    return false;
  }

  private readState(projection: string): ProjectionState | null {
    const row = this.prepared('SELECT state FROM _projections WHERE name = ?').get(projection) as { state: string } | undefined;
    return row ? parseState(row.state) : null;
  }

  /** Writes `state` with the lease of `stored` (the row as read in the same transaction). */
  private writeState(state: ProjectionState, stored: ProjectionState | null, lease: ProjectionLease | null = stored?.lease ?? null): void {
    const { lease: _ignored, ...fields } = state;
    this.prepared('INSERT INTO _projections (name, state) VALUES (?, ?) ON CONFLICT (name) DO UPDATE SET state = excluded.state').run(
      state.name,
      JSON.stringify({ ...fields, lease }),
    );
  }

  /**
   * Another process on the same file (a lease holder, the CLI) changes read models behind
   * this process's read cache. Every read of projection states asks SQLite whether any
   * other connection committed since the last one, and if so empties the cache: a process
   * that waited for another's checkpoint, or that takes a projection over, then reads
   * documents as they are stored.
   */
  private noticeOtherWriters(): void {
    const version = this.prepared('PRAGMA data_version').pluck().get() as number;
    if (version !== this.dataVersion) this.cache.invalidateAll();
    this.dataVersion = version;
  }

  async getProjectionState(projection: string): Promise<ProjectionState | null> {
    this.noticeOtherWriters();
    return this.readState(projection);
  }

  async putProjectionState(state: ProjectionState, options: { holder?: string } = {}): Promise<void> {
    this.transaction(() => {
      const stored = this.readState(state.name);
      checkLeaseHolder(state.name, stored, options.holder);
      this.writeState(state, stored);
    });
  }

  async listProjectionStates(): Promise<ProjectionState[]> {
    this.noticeOtherWriters();
    return this.db
      .prepare<[], { state: string }>('SELECT state FROM _projections ORDER BY name')
      .all()
      .map((row) => parseState(row.state));
  }

  async promoteShadow(promotion: ShadowPromotion): Promise<void> {
    this.transaction(() => {
      const stored = this.readState(promotion.projection);
      checkLeaseHolder(promotion.projection, stored, promotion.holder);
      for (const { shadow, live } of promotion.collections) {
        this.db.exec(`DROP TABLE IF EXISTS ${tableName(live)}`);
        this.db.prepare('DELETE FROM _read_indexes WHERE collection = ?').run(live);
        this.db.exec(`ALTER TABLE ${tableName(shadow)} RENAME TO ${tableName(live)}`);
        this.db.prepare('UPDATE _read_indexes SET collection = ? WHERE collection = ?').run(live, shadow);
      }
      this.writeState(promotion.state, stored);
    });
    this.loadIndexes();
  }

  async acquireLease(request: LeaseRequest & { version: number }): Promise<ProjectionLease | null> {
    // An immediate transaction holds SQLite's write lock from the read on: no other process
    // can take the lease between the check and the write.
    return this.transaction(() => {
      const stored = this.readState(request.projection);
      const current = stored?.lease ?? null;
      if (leaseIsLive(current, request.now) && current.holder !== request.holder && current.holder !== request.replacing) return current;
      const lease = leaseUntil(request);
      const state: ProjectionState = stored ?? {
        name: request.projection,
        version: request.version,
        checkpoint: 0,
        status: 'stopped',
        error: null,
        updated_at: request.now.toISOString(),
      };
      this.writeState(state, stored, lease);
      return lease;
    });
  }

  async renewLease(request: LeaseRequest): Promise<ProjectionLease | null> {
    return this.transaction(() => {
      const stored = this.readState(request.projection);
      if (!stored || stored.lease?.holder !== request.holder) return stored?.lease ?? null;
      const lease = leaseUntil(request);
      this.writeState(stored, stored, lease);
      return lease;
    });
  }

  async releaseLease(projection: string, holder: string): Promise<void> {
    this.transaction(() => {
      const stored = this.readState(projection);
      if (stored && stored.lease?.holder === holder) this.writeState(stored, stored, null);
    });
  }

  async ping(): Promise<boolean> {
    try {
      this.db.prepare('SELECT 1').get();
      return true;
    } catch {
      return false;
    }
  }

  async close(): Promise<void> {
    // The connection belongs to whoever opened it (the composition root closes it).
  }
}

class SqliteCollection<T extends Document> implements Collection<T> {
  constructor(
    private readonly store: SqliteReadStore,
    private readonly name: string,
  ) {
    tableName(name);
  }

  async get(id: string): Promise<T | null> {
    return this.store.getDoc(this.name, id) as T | null;
  }

  async put(doc: T): Promise<void> {
    this.store.putDoc(this.name, doc);
  }

  async patch(id: string, changes: Partial<T>): Promise<T | null> {
    return this.store.transaction(() => this.store.patchDoc(this.name, id, changes)) as T | null;
  }

  async delete(id: string): Promise<boolean> {
    return this.store.deleteDoc(this.name, id);
  }

  async find(options: FindOptions = {}): Promise<Page<T>> {
    return this.store.findDocs(this.name, options) as Page<T>;
  }

  async count(where?: Where): Promise<number> {
    return this.store.countDocs(this.name, where);
  }
}

function parseState(text: string): ProjectionState {
  const state = JSON.parse(text) as ProjectionState;
  return { ...state, lease: state.lease ?? null };
}


/**
 * One write per document instead of one per event: a batch's successive writes to one
 * document (an audit chain's head is put once per entry, an orchestration event patched once
 * per step) are folded into the write they amount to, made where the first one stood. Only
 * for collections without a unique field: there the order of writes to different documents
 * can matter (one frees a value another takes), so their writes are kept as they are.
 */
export function coalesceWrites(operations: readonly WriteOperation[], hasUniqueField: (collection: string) => boolean): WriteOperation[] {
  if (operations.length < 2) return [...operations];
  const folded: WriteOperation[] = [];
  const slotOf = new Map<string, { slot: number; write: DocumentWrite }>();
  for (const operation of operations) {
    if (hasUniqueField(operation.collection)) {
      folded.push(operation);
      continue;
    }
    if (isWhereOperation(operation)) {
      // A barrier: writes before it stay before it, and a later write of the same document is a write of its own.
      for (const key of slotOf.keys()) if (key.startsWith(`${operation.collection}\u0000`)) slotOf.delete(key);
      folded.push(operation);
      continue;
    }
    const id = operation.kind === 'put' ? operation.doc.id : operation.id;
    const key = `${operation.collection}\u0000${id}`;
    const earlier = slotOf.get(key);
    if (earlier === undefined) {
      slotOf.set(key, { slot: folded.length, write: operation });
      folded.push(operation);
    } else {
      earlier.write = foldWrite(earlier.write, operation);
      folded[earlier.slot] = earlier.write;
    }
  }
  return folded;
}

type DocumentWrite = Exclude<WriteOperation, WhereOperation>;

/** The one write that `earlier` then `later` (of the same document) amount to. */
function foldWrite(earlier: DocumentWrite, later: DocumentWrite): DocumentWrite {
  if (later.kind !== 'patch') return later;
  switch (earlier.kind) {
    case 'put':
      return { kind: 'put', collection: earlier.collection, doc: { ...earlier.doc, ...later.changes, id: earlier.doc.id } };
    case 'patch':
      return { kind: 'patch', collection: earlier.collection, id: earlier.id, changes: { ...earlier.changes, ...later.changes } };
    case 'delete':
      // A patch of a document that is not there changes nothing.
      return earlier;
  }
}

function tableName(collection: string): string {
  if (!COLLECTION_NAME.test(collection)) throw new Error(`invalid collection name ${collection}`);
  return `"rm_${collection}"`;
}

function columnName(field: string): string {
  return `f_${field.replace(/\./g, '__')}`;
}

/** What the column holds: as json_extract would give it (booleans 1/0, objects as JSON). */
function columnValue(value: unknown): SqlValue {
  if (value === undefined || value === null) return null;
  if (typeof value === 'boolean') return value ? 1 : 0;
  if (typeof value === 'number' || typeof value === 'string') return value;
  return JSON.stringify(value);
}

/** better-sqlite3 binds no booleans; json_extract reads JSON true/false as 1/0. */
function toSqlValue(value: Scalar): SqlValue {
  if (typeof value === 'boolean') return value ? 1 : 0;
  return value ?? null;
}

type Operator = 'eq' | 'ne' | 'gt' | 'gte' | 'lt' | 'lte' | 'in';

/**
 * A text that only equal find options share. Every value is written with its type and
 * every string with its length, so no two different options (undefined and absent, NaN
 * and null, "1" and 1) can be written alike.
 */
function findOptionsKey(options: FindOptions): string {
  let where = '';
  for (const field in options.where) where += `${textKey(field)}${conditionKey(options.where[field])}`;
  const sort = options.sort ? `${textKey(options.sort.field)}${textKey(options.sort.direction)}` : '-';
  return `${where}|${sort}|${valueKey(options.limit)}|${valueKey(options.cursor)}|${valueKey(options.index)}`;
}

function conditionKey(condition: FieldCondition | undefined): string {
  if (condition === null || typeof condition !== 'object') return valueKey(condition);
  let key = '{';
  for (const operator in condition) {
    const value = (condition as Record<string, unknown>)[operator];
    key += `${textKey(operator)}${Array.isArray(value) ? `[${value.length}:${value.map(valueKey).join('')}` : valueKey(value)}`;
  }
  return `${key}}`;
}

const textKey = (text: string): string => `${text.length}:${text}`;

function valueKey(value: unknown): string {
  switch (typeof value) {
    case 'string':
      return `s${textKey(value)}`;
    case 'number':
      return `n${value};`;
    case 'boolean':
      return value ? 't' : 'f';
    case 'undefined':
      return 'u';
    default:
      return value === null ? 'z' : `j${textKey(JSON.stringify(value) ?? '')}`;
  }
}

/** A deep copy of a parsed document: several times faster than parsing its JSON again. */
function copyJson(value: unknown): unknown {
  if (typeof value !== 'object' || value === null) return value;
  if (Array.isArray(value)) return value.map(copyJson);
  // Spreading defines each field as an own property, so a "__proto__" field stays a field
  // (and later assignments to it hit that field, not the prototype); only nested objects
  // need another pass.
  const copy: Record<string, unknown> = { ...value };
  for (const key of Object.keys(copy)) {
    const field = copy[key];
    if (typeof field === 'object' && field !== null) copy[key] = copyJson(field);
  }
  return copy;
}

const copyDocument = (doc: Document): Document => copyJson(doc) as Document;

/**
 * What JSON.parse(JSON.stringify(value)) gives, without the text: undefined, functions and
 * symbols dropped (null in arrays), non-finite numbers null, toJSON() used (a Date its ISO
 * text). A written document is kept in the read cache as a read would load it.
 */
function jsonCopy(value: unknown): unknown {
  if (value === null) return null;
  switch (typeof value) {
    case 'string':
    case 'boolean':
      return value;
    case 'number':
      return Number.isFinite(value) ? value : null;
    case 'object':
      break;
    default:
      return undefined;
  }
  const object = value as Record<string, unknown> & { toJSON?: unknown };
  if (typeof object.toJSON === 'function') return jsonCopy((object.toJSON as () => unknown)());
  if (Array.isArray(value)) return value.map((item) => jsonCopy(item) ?? null);
  const copy: Record<string, unknown> = {};
  for (const key of Object.keys(object)) {
    const field = jsonCopy(object[key]);
    if (field === undefined) continue;
    // As JSON.parse does, a "__proto__" key is an own field, never the prototype.
    if (key === '__proto__') Object.defineProperty(copy, key, { value: field, enumerable: true, writable: true, configurable: true });
    else copy[key] = field;
  }
  return copy;
}

/** Whether a condition matches only documents where the field has a value (not absent, not null). */
function asksForValue(condition: FieldCondition | undefined): boolean {
  if (condition === undefined) return false;
  return conditionEntries(condition).some(([operator, value]) =>
    operator === 'in' ? Array.isArray(value) && value.length > 0 && value.every((item) => item !== null) : operator !== 'ne' && value !== null,
  );
}

function conditionEntries(condition: FieldCondition): Array<[Operator, unknown]> {
  if (condition === null || typeof condition !== 'object') return [['eq', condition]];
  return Object.entries(condition).filter(([, value]) => value !== undefined) as Array<[Operator, unknown]>;
}

/** Keyset pagination after (value, id); NULLs sort first ascending, as in MongoDB. */
function keysetSql(column: string, direction: 'asc' | 'desc', value: SqlValue, id: string): { sql: string; params: SqlValue[] } {
  if (column === 'id') return { sql: direction === 'asc' ? 'id > ?' : 'id < ?', params: [id] };
  if (direction === 'asc') {
    return value === null
      ? { sql: `((${column} IS NULL AND id > ?) OR ${column} IS NOT NULL)`, params: [id] }
      : { sql: `(${column} > ? OR (${column} = ? AND id > ?))`, params: [value, value, id] };
  }
  return value === null
    ? { sql: `(${column} IS NULL AND id < ?)`, params: [id] }
    : { sql: `(${column} < ? OR (${column} = ? AND id < ?) OR ${column} IS NULL)`, params: [value, value, id] };
}
