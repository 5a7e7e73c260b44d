// The projection runner: keeps every read model up to date with `$all`.
//
// - Each projection follows a catch-up subscription from its checkpoint, applies events in
//   batches, and commits the batch's writes together with the new checkpoint; a crash
//   between batches loses nothing and applies nothing twice.
// - One process at a time follows a projection: the holder of its lease (see
//   application/shared/lease.ts). The others stand by, trying to take the lease as it lapses;
//   the holder's commits name it, so a holder that lost its lease cannot write.
// - The commit checks the stored checkpoint (compare-and-set), so a second writer (the
//   operator's rebuild in the CLI) never interleaves with the holder: the loser reloads.
// - Rebuild: a new version, or an operator's command, builds into shadow collections from
//   position 0 while the live ones keep serving, then swaps them in. A new version is
//   rebuilt by the lease holder only, so N processes rebuild it once.
// - `waitFor(position)` gives read-your-writes: the HTTP layer waits, bounded, until the
//   projections it reads from have passed the position its write returned. For a projection
//   another process holds, that is its stored checkpoint, polled while someone waits.

import { type DomainEventStore, type DomainRecordedEvent, EventDecodingError } from '../application/ports/domain-event-store';
import type { EventSubscription, RecordedEvent, SubscriptionMessage } from '../application/ports/event-store';
import type { Clock } from '../application/ports/clock';
import { type Logger, silentLogger } from '../application/ports/logger';
import {
  CheckpointConflictError,
  type Document,
  type FieldEqualities,
  LeaseLostError,
  type ProjectionState,
  type ProjectionStatus,
  type ReadStore,
  type WriteOperation,
  leaseIsLive,
  matchesEqualities,
} from '../application/ports/read-store';
import { Batches } from '../application/shared/batches';
import { DEFAULT_LEASE_TTL_MS, Lease, pause, processHolderId } from '../application/shared/lease';
import type { Projection, ProjectionView } from './projection';
import { messageOf } from '../domain/shared/errors';

export interface ProjectionRunnerOptions {
  batchSize?: number;
  /** How often a checkpoint that moved only past skipped events is stored. */
  idleCheckpointMs?: number;
  /** Delay before a failed projection tries its batch again. */
  retryDelayMs?: number;
  /** This process's id as a lease holder; default `hostname:pid:random`, new per runner. */
  leaseHolder?: string;
  /** How long a lease lasts without renewal; it is renewed every third of it. */
  leaseTtlMs?: number;
  /** True for a holder known to run no more, whose leases are taken at once (LeaseSettings.holderIsGone); default none. */
  leaseHolderIsGone?: (holder: string) => boolean;
  /** How often a read-your-writes wait reads the checkpoints of projections held elsewhere. */
  standbyPollMs?: number;
  /**
   * Projections another thread of this process builds (infrastructure/sqlite/projection-thread.ts):
   * this runner never takes their lease; their progress comes from that thread (`observe`).
   */
  followedElsewhere?: readonly string[];
  /** Rebuilds one of those, where it is built (the projection thread). */
  rebuildElsewhere?: (name: string) => Promise<{ events: number; checkpoint: number }>;
}

/** Where a projection built by another thread of this process stands, as that thread tells it. */
export interface ProjectionProgress {
  name: string;
  checkpoint: number;
  status: ProjectionRunState;
  error: string | null;
  /** It fails at its checkpoint again and again (LiveProjection.stuck). */
  stuck: boolean;
}

/** `standby`: another process holds the projection's lease; this one is ready to take over. */
export type ProjectionRunState = ProjectionStatus | 'standby';

export interface ProjectionReport {
  name: string;
  version: number;
  checkpoint: number;
  head: number;
  lag: number;
  status: ProjectionRunState;
  error: string | null;
  /** The process holding the lease (null when nobody does, or it lapsed). */
  holder: string | null;
}

export interface ProjectionRunnerDependencies {
  /** Decodes what it reads: projections see events in their current shape. */
  eventStore: DomainEventStore;
  readStore: ReadStore;
  clock: Clock;
  logger?: Logger;
}

const shadowName = (collection: string): string => `${collection}__rebuild`;
const rebuildStateName = (projection: string): string => `${projection}__rebuild`;

/** What a batch did to a document it has not read whole: steps laid over the stored one, in order. */
type OverlayStep = { changes: Record<string, unknown> } | { deleteIf: FieldEqualities } | { patchIf: FieldEqualities; changes: Record<string, unknown> };

/** A document after one step of the overlay. */
function laidOver<T extends Document>(doc: T | null, step: OverlayStep, id: string): T | null {
  if (doc === null) return null;
  if ('deleteIf' in step) return matchesEqualities(doc, step.deleteIf) ? null : doc;
  if ('patchIf' in step && !matchesEqualities(doc, step.patchIf)) return doc;
  return { ...doc, ...step.changes, id };
}

/** Buffers a batch's writes; reads see them before they are committed. */
class BatchView implements ProjectionView {
  readonly operations: WriteOperation[] = [];
  /** Per collection, per document: its whole new value, or the steps waiting to be laid over the stored one. */
  private readonly overlay = new Map<string, Map<string, { doc: Document | null } | { steps: OverlayStep[] }>>();
  /** Per collection: the batch's `deleteWhere`s and `patchWhere`s so far, which every stored document read later passes through. */
  private readonly changedWhere = new Map<string, OverlayStep[]>();

  constructor(
    private readonly readStore: ReadStore,
    private readonly rename: (collection: string) => string,
  ) {}

  async get<T extends Document = Document>(collection: string, id: string): Promise<T | null> {
    const entry = this.overlay.get(collection)?.get(id);
    if (entry && 'doc' in entry) return entry.doc as T | null;
    const stored = await this.readStore.collection<T>(this.rename(collection)).get(id);
    const steps = entry?.steps ?? this.earlierWheres(collection);
    if (steps.length === 0) return stored;
    return steps.reduce<T | null>((doc, step) => laidOver(doc, step, id), stored);
  }

  put(collection: string, doc: Document): void {
    this.documents(collection).set(doc.id, { doc });
    this.operations.push({ kind: 'put', collection: this.rename(collection), doc });
  }

  patch(collection: string, id: string, changes: Record<string, unknown>): void {
    const documents = this.documents(collection);
    const entry = documents.get(id);
    if (!entry) documents.set(id, { steps: [...this.earlierWheres(collection), { changes }] });
    else if ('steps' in entry) entry.steps.push({ changes });
    else if (entry.doc) documents.set(id, { doc: { ...entry.doc, ...changes, id } });
    this.operations.push({ kind: 'patch', collection: this.rename(collection), id, changes });
  }

  delete(collection: string, id: string): void {
    this.documents(collection).set(id, { doc: null });
    this.operations.push({ kind: 'delete', collection: this.rename(collection), id });
  }

  deleteWhere(collection: string, where: FieldEqualities): void {
    this.layOverAll(collection, { deleteIf: where });
    this.operations.push({ kind: 'deleteWhere', collection: this.rename(collection), where });
  }

  patchWhere(collection: string, where: FieldEqualities, changes: Record<string, unknown>): void {
    this.layOverAll(collection, { patchIf: where, changes });
    this.operations.push({ kind: 'patchWhere', collection: this.rename(collection), where, changes });
  }

  /** A step over every document of the collection: those the batch holds now, and those it reads later. */
  private layOverAll(collection: string, step: OverlayStep): void {
    const documents = this.documents(collection);
    for (const [id, entry] of documents) {
      if ('steps' in entry) entry.steps.push(step);
      else documents.set(id, { doc: laidOver(entry.doc, step, id) });
    }
    this.changedWhere.set(collection, [...(this.changedWhere.get(collection) ?? []), step]);
  }

  private documents(collection: string): Map<string, { doc: Document | null } | { steps: OverlayStep[] }> {
    let documents = this.overlay.get(collection);
    if (!documents) {
      documents = new Map();
      this.overlay.set(collection, documents);
    }
    return documents;
  }

  private earlierWheres(collection: string): OverlayStep[] {
    return [...(this.changedWhere.get(collection) ?? [])];
  }
}

/** How the runner reads a projection's events and hands them to it. */
interface ProjectionFeed {
  subscribe(fromPosition: number): EventSubscription;
  read(fromPosition: number, maxCount: number): Promise<RecordedEvent[]>;
  apply(event: RecordedEvent, view: ProjectionView): Promise<void> | void;
}

/**
 * A projection of declared types reads only those, decoded (an event it cannot read stops
 * it); a projection of the whole log reads everything. Each feed hands a projection only
 * what its own reads returned.
 */
function feedOf(projection: Projection, eventStore: DomainEventStore): ProjectionFeed {
  if (projection.handles === 'all') {
    const whole = projection;
    return {
      subscribe: (fromPosition) => eventStore.subscribeToAllAsStored({ fromPosition }),
      read: (fromPosition, maxCount) => eventStore.readAllAsStored({ fromPosition, maxCount }),
      apply: (event, view) => whole.apply(event, view),
    };
  }
  const filter = { kind: 'event_type', types: projection.handles } as const;
  const typed = projection;
  return {
    subscribe: (fromPosition) => eventStore.subscribeToAll({ fromPosition, filter }),
    read: (fromPosition, maxCount) => eventStore.readAll({ fromPosition, maxCount, filter }),
    apply(event: DomainRecordedEvent, view: ProjectionView) {
      return typed.apply(event, view);
    },
  };
}

/** Applies events through the projection and returns the writes to commit. */
async function project(feed: ProjectionFeed, events: readonly RecordedEvent[], readStore: ReadStore, rename: (c: string) => string): Promise<WriteOperation[]> {
  const view = new BatchView(readStore, rename);
  for (const event of events) await feed.apply(event, view);
  return view.operations;
}

/** One projection kept live: lease, subscription, batches, commits, failures and retries. */
class LiveProjection {
  checkpoint = 0;
  status: ProjectionRunState = 'stopped';
  error: string | null = null;
  /** The checkpoint its last failed attempts started from (-1: none), and how many in a row failed there. */
  private failedAt = -1;
  private failuresThere = 0;
  readonly lease: Lease;
  private stored = 0;
  private storedAt = 0;
  /** The version of the documents being served: the stored one until a rebuild swaps. */
  private servedVersion: number;
  private running = new AbortController();
  private subscription: { stop(): Promise<void> } | null = null;
  private loop: Promise<void> | null = null;
  readonly feed: ProjectionFeed;
  private newerVersionLogged = false;

  constructor(
    readonly projection: Projection,
    private readonly deps: Required<ProjectionRunnerDependencies>,
    private readonly options: Required<ProjectionRunnerOptions>,
    private readonly onProgress: () => void,
    /** The stored version is older than the code's: the runner rebuilds (once). */
    private readonly onStaleVersion: () => void,
  ) {
    this.servedVersion = projection.version;
    this.feed = feedOf(projection, deps.eventStore);
    this.lease = new Lease(
      { readStore: deps.readStore, clock: deps.clock, logger: deps.logger },
      projection.name,
      projection.version,
      { holder: options.leaseHolder, ttlMs: options.leaseTtlMs, holderIsGone: options.leaseHolderIsGone },
      () => void this.subscription?.stop(),
    );
  }

  start(): void {
    this.running = new AbortController();
    this.loop = this.run(this.running.signal);
  }

  /** Stops following; gives the lease up unless `keepLease` (a rebuild pausing its follower). */
  async stop(options: { keepLease?: boolean } = {}): Promise<void> {
    this.running.abort();
    await this.subscription?.stop();
    await this.loop;
    this.loop = null;
    this.status = 'stopped';
    if (!options.keepLease) await this.lease.release();
  }

  private async run(signal: AbortSignal): Promise<void> {
    const { readStore, logger } = this.deps;
    while (!signal.aborted) {
      if (!this.lease.held) {
        this.status = 'standby';
        this.error = null;
        this.onProgress();
        if (!(await this.takeLease(signal))) break;
      }
      try {
        const state = await readStore.getProjectionState(this.projection.name);
        this.stored = state?.checkpoint ?? 0;
        this.servedVersion = state?.version ?? this.projection.version;
        this.storedAt = this.deps.clock.now().getTime();
        this.checkpoint = Math.max(this.checkpoint, this.stored);
        if (this.servedVersion > this.projection.version) {
          // A newer version took its place meanwhile: leave it to the processes running that.
          await this.lease.release();
          continue;
        }
        this.status = 'running';
        this.error = null;
        this.onProgress();
        if (this.servedVersion < this.projection.version) this.onStaleVersion();
        const subscription = this.feed.subscribe(this.stored);
        this.subscription = subscription;
        if (signal.aborted || !this.lease.held) await subscription.stop();
        for await (const batch of new Batches<SubscriptionMessage>(subscription, this.options.batchSize)) {
          await this.applyBatch(batch);
          if (signal.aborted || !this.lease.held) break;
        }
        await subscription.stop();
      } catch (error) {
        await this.subscription?.stop();
        if (error instanceof CheckpointConflictError) {
          logger.info({ projection: this.projection.name }, 'checkpoint moved elsewhere; reloading');
          this.checkpoint = 0;
          continue;
        }
        if (error instanceof LeaseLostError) {
          this.lease.lost(error.actual);
          continue;
        }
        this.status = 'failed';
        this.error = messageOf(error);
        this.failuresThere = this.failedAt === this.checkpoint ? this.failuresThere + 1 : 1;
        this.failedAt = this.checkpoint;
        if (error instanceof EventDecodingError) this.failuresThere = Number.POSITIVE_INFINITY;
        this.onProgress();
        if (error instanceof EventDecodingError) {
          // Retrying cannot help: the event reads the same until a release declares its shape
          // (an upcaster). Stop here, before it, rather than skip it and build a wrong model.
          logger.error({ projection: this.projection.name, err: error }, 'projection stopped at an event it cannot read');
          await this.persistFailure();
          return;
        }
        logger.error({ projection: this.projection.name, err: error }, 'projection failed; retrying');
        await this.persistFailure();
        await pause(this.options.retryDelayMs, signal);
      }
    }
  }

  /**
   * Stands by until this process holds the lease (true) or stops (false). A process whose
   * code is older than the stored version does not take it: versions move forward by
   * themselves only, so two versions running side by side (a rolling deploy) never rebuild
   * each other's read models back and forth. Going back is an operator's rebuild.
   */
  private async takeLease(signal: AbortSignal): Promise<boolean> {
    while (!signal.aborted) {
      try {
        const stored = await this.deps.readStore.getProjectionState(this.projection.name);
        if (stored && stored.version > this.projection.version) {
          if (!this.newerVersionLogged) {
            this.deps.logger.warn({ projection: this.projection.name, stored: stored.version, code: this.projection.version }, 'stored version is newer than this code; standing by');
            this.newerVersionLogged = true;
          }
        } else if (await this.lease.tryAcquire()) {
          return true;
        }
      } catch (error) {
        this.deps.logger.warn({ projection: this.projection.name, err: error }, 'could not try the lease');
      }
      await pause(Math.max(1, Math.floor(this.options.leaseTtlMs / 3)), signal);
    }
    return false;
  }

  /**
   * It failed at the same checkpoint twice in a row (or at an event it cannot read) and has not
   * moved since: a retry fails the same way until the cause is mended (a handler's bug, a read
   * model refusing a write). One failure is not enough: a passing one (a busy database) is
   * mended by the retry a second later. The retry in between shows `running` for a moment; this
   * does not flicker with it.
   */
  get stuck(): boolean {
    return this.failedAt === this.checkpoint && this.failuresThere >= 2;
  }

  /** What the thread that builds it reports (ProjectionRunner.observe). */
  reportStuck(stuck: boolean): void {
    this.failedAt = stuck ? this.checkpoint : -1;
    this.failuresThere = stuck ? 2 : 0;
  }

  private async applyBatch(batch: readonly SubscriptionMessage[]): Promise<void> {
    const events: RecordedEvent[] = [];
    let reached = this.checkpoint;
    for (const message of batch) {
      if (message.kind === 'event') {
        events.push(message.event);
        reached = Math.max(reached, message.event.position);
      } else {
        reached = Math.max(reached, message.position);
      }
    }
    const now = this.deps.clock.now();
    if (events.length === 0) {
      this.checkpoint = reached;
      // Skipped events move the checkpoint in memory at once, on disk now and then.
      if (reached > this.stored && now.getTime() - this.storedAt >= this.options.idleCheckpointMs) await this.commit([], reached, now);
    } else {
      const operations = await project(this.feed, events, this.deps.readStore, (c) => c);
      await this.commit(operations, reached, now);
    }
    this.onProgress();
  }

  private async commit(operations: WriteOperation[], checkpoint: number, now: Date): Promise<void> {
    await this.deps.readStore.commitProjection({
      projection: this.projection.name,
      expectedCheckpoint: this.stored,
      operations,
      state: this.stateAt(checkpoint, now),
      holder: this.lease.holder,
    });
    this.stored = checkpoint;
    this.storedAt = now.getTime();
    this.checkpoint = checkpoint;
  }

  private stateAt(checkpoint: number, now: Date): ProjectionState {
    return {
      name: this.projection.name,
      version: this.servedVersion,
      checkpoint,
      status: 'running',
      error: null,
      updated_at: now.toISOString(),
    };
  }

  private async persistFailure(): Promise<void> {
    try {
      await this.deps.readStore.putProjectionState(
        {
          ...this.stateAt(this.stored, this.deps.clock.now()),
          status: 'failed',
          error: this.error,
        },
        { holder: this.lease.holder },
      );
    } catch {
      // The store itself may be what failed, or the lease moved on; the in-memory status still reports it.
    }
  }
}

export class ProjectionRunner {
  private readonly live = new Map<string, LiveProjection>();
  /** Projections built by another thread of this process: their progress is observed, not made here. */
  private readonly elsewhere: ReadonlySet<string>;
  private readonly progressListeners = new Set<(progress: ProjectionProgress[]) => void>();
  private readonly rebuilding = new Set<string>();
  /** Each read-your-writes wait: its check, and what it waits for. */
  private readonly waiters = new Map<() => void, { position: number; names: readonly string[] }>();
  private readonly deps: Required<ProjectionRunnerDependencies>;
  private readonly options: Required<ProjectionRunnerOptions>;
  private started = false;
  private polling: Promise<void> | null = null;

  constructor(
    deps: ProjectionRunnerDependencies,
    readonly projections: readonly Projection[],
    options: ProjectionRunnerOptions = {},
  ) {
    this.deps = { logger: silentLogger, ...deps };
    this.options = {
      batchSize: 500,
      idleCheckpointMs: 1000,
      retryDelayMs: 1000,
      leaseHolder: processHolderId(),
      leaseTtlMs: DEFAULT_LEASE_TTL_MS,
      leaseHolderIsGone: () => false,
      standbyPollMs: 20,
      followedElsewhere: [],
      rebuildElsewhere: (name) => Promise.reject(new Error(`projection ${name} is built elsewhere; rebuild it there`)),
      ...options,
    };
    this.elsewhere = new Set(this.options.followedElsewhere);
    const names = new Set<string>();
    for (const projection of projections) {
      if (names.has(projection.name)) throw new Error(`two projections are named ${projection.name}`);
      names.add(projection.name);
      this.live.set(
        projection.name,
        new LiveProjection(projection, this.deps, this.options, () => this.notify(), () => this.rebuildNewVersion(projection.name)),
      );
    }
  }

  /** This process's id as a lease holder. */
  get holder(): string {
    return this.options.leaseHolder;
  }

  /**
   * Creates collections and follows every projection whose lease this process can take,
   * standing by for the others. The holder of a projection whose version changed rebuilds it.
   */
  async start(): Promise<void> {
    if (this.started) return;
    this.started = true;
    for (const projection of this.projections) {
      const live = this.projectionOf(projection.name);
      if (this.elsewhere.has(projection.name)) {
        live.status = 'standby';
        continue;
      }
      for (const spec of projection.collections) await this.deps.readStore.ensureCollection(spec);
      live.start();
    }
  }

  /** Progress of projections another thread of this process builds (`followedElsewhere`): waits on them end as they pass. */
  observe(progress: readonly ProjectionProgress[]): void {
    for (const { name, checkpoint, status, error, stuck } of progress) {
      const live = this.live.get(name);
      if (!live || !this.elsewhere.has(name)) continue;
      live.checkpoint = Math.max(live.checkpoint, checkpoint);
      live.status = status;
      live.error = error;
      live.reportStuck(stuck);
    }
    this.notify();
  }

  /** Calls `listener` with every projection's progress whenever one moves or fails (the projection thread reports to the serving one). */
  onProgress(listener: (progress: ProjectionProgress[]) => void): () => void {
    this.progressListeners.add(listener);
    return () => this.progressListeners.delete(listener);
  }

  private rebuildNewVersion(name: string): void {
    if (this.rebuilding.has(name)) return;
    const projection = this.projectionOf(name).projection;
    this.deps.logger.info({ projection: name, to: projection.version }, 'projection version changed; rebuilding');
    void this.rebuild(name).catch((error) => this.deps.logger.error({ projection: name, err: error }, 'rebuild failed'));
  }

  /** Stops every follower and gives their leases up, so a standing-by process takes over at once. */
  async stop(): Promise<void> {
    this.started = false;
    await Promise.all(
      [...this.live.values()].map(async (projection) => {
        if (!this.elsewhere.has(projection.projection.name)) return projection.stop();
        projection.status = 'stopped';
      }),
    );
    this.notify();
  }

  private projectionOf(name: string): LiveProjection {
    const projection = this.live.get(name);
    if (!projection) throw new Error(`no projection named ${name}; known: ${[...this.live.keys()].join(', ')}`);
    return projection;
  }

  /**
   * Checkpoint, head, lag, state and lease holder of every projection. A projection that
   * another process holds is `standby` here, with the checkpoint and error that process stored.
   */
  async status(): Promise<ProjectionReport[]> {
    const head = await this.deps.eventStore.headPosition();
    const stored = new Map((await this.deps.readStore.listProjectionStates()).map((state) => [state.name, state]));
    const now = this.deps.clock.now();
    return Promise.all(this.projections.map(async (projection) => {
      const live = this.projectionOf(projection.name);
      const state = stored.get(projection.name);
      const runsHere = this.started && live.status !== 'standby';
      // Held elsewhere (or by no process): as far as the holder's read model truly is, as waitFor sees it.
      const checkpoint = runsHere ? live.checkpoint : await this.positionPastSkipped(live, state?.checkpoint ?? 0, head);
      // Not run here (the operator CLI): the stored status moves only with commits and failures,
      // so a live lease elsewhere is what says it runs (standby, as a standing-by server shows it).
      const status: ProjectionRunState = this.rebuilding.has(projection.name)
        ? 'rebuilding'
        : this.started
          ? live.status
          : state?.status === 'failed' || state?.status === 'rebuilding'
            ? state.status
            : leaseIsLive(state?.lease, now)
              ? 'standby'
              : 'stopped';
      return {
        name: projection.name,
        version: projection.version,
        checkpoint,
        head,
        lag: Math.max(0, head - checkpoint),
        status,
        error: runsHere ? live.error : (state?.error ?? null),
        holder: leaseIsLive(state?.lease, now) ? state.lease.holder : null,
      };
    }));
  }

  /**
   * Where a projection's read model is, given its stored checkpoint: its holder stores a
   * checkpoint that moved only past events the projection does not handle now and then, so
   * up to the event before the next one it handles (the head when there is none) it is as of
   * the stored checkpoint already.
   */
  private async positionPastSkipped(live: LiveProjection, stored: number, head: number): Promise<number> {
    const [next] = await live.feed.read(stored, 1);
    return Math.max(stored, next ? next.position - 1 : head);
  }

  /**
   * True once the named projections (default: all) have passed `position`; false on timeout.
   * A wait for all of them does not wait for one stuck at an event it fails on (`stuck`): it
   * would not pass in time, and every write would wait the whole timeout for the one read model
   * that is down; it answers false once the others have passed. A caller that names the
   * projections it reads waits for them, stuck or not.
   */
  waitFor(position: number | null, options: { timeoutMs?: number; projections?: readonly string[] } = {}): Promise<boolean> {
    if (position === null) return Promise.resolve(true);
    const names = options.projections ?? [...this.live.keys()];
    const skipsStuck = options.projections === undefined;
    const reached = (): boolean => names.every((name) => this.projectionOf(name).checkpoint >= position);
    const settled = (): boolean =>
      names.every((name) => {
        const live = this.projectionOf(name);
        return live.checkpoint >= position || (skipsStuck && live.stuck);
      });
    if (reached()) return Promise.resolve(true);
    if (settled()) return Promise.resolve(false);
    return new Promise((resolve) => {
      const check = (): void => {
        if (!settled() && this.started) return;
        finish(reached());
      };
      const finish = (result: boolean): void => {
        clearTimeout(timer);
        this.waiters.delete(check);
        resolve(result);
      };
      const timer = setTimeout(() => finish(reached()), options.timeoutMs ?? 5000);
      this.waiters.set(check, { position, names });
      this.pollStoredCheckpoints();
    });
  }

  private notify(): void {
    for (const waiter of [...this.waiters.keys()]) waiter();
    if (this.progressListeners.size === 0) return;
    const progress = [...this.live.values()].map((live) => ({ name: live.projection.name, checkpoint: live.checkpoint, status: live.status, error: live.error, stuck: live.stuck }));
    for (const listener of this.progressListeners) listener(progress);
  }

  /**
   * While someone waits, a projection this process stands by for advances only in the store
   * (its holder is another process). Its position there is its stored checkpoint, or more:
   * the holder stores a checkpoint that moved past events it does not handle only now and
   * then, so when no event it handles lies between its stored checkpoint and the head, its
   * read model already is as of the head.
   */
  private pollStoredCheckpoints(): void {
    if (this.polling) return;
    this.polling = (async () => {
      while (this.waiters.size > 0 && this.started) {
        const behind = this.standbyBehind();
        if (behind.length > 0) {
          try {
            const head = await this.deps.eventStore.headPosition();
            const stored = new Map((await this.deps.readStore.listProjectionStates()).map((state) => [state.name, state.checkpoint]));
            for (const live of behind) {
              live.checkpoint = Math.max(live.checkpoint, await this.positionPastSkipped(live, stored.get(live.projection.name) ?? 0, head));
            }
            this.notify();
          } catch (error) {
            // The wait's own timeout bounds it.
            this.deps.logger.warn({ err: error }, 'could not read the stored checkpoints');
          }
        }
        await pause(this.options.standbyPollMs);
      }
    })().finally(() => (this.polling = null));
  }

  /** Projections held elsewhere that someone waits for and that are not known to have passed it. */
  private standbyBehind(): LiveProjection[] {
    const wanted = new Map<string, number>();
    for (const { position, names } of this.waiters.values()) {
      for (const name of names) wanted.set(name, Math.max(wanted.get(name) ?? 0, position));
    }
    return [...wanted]
      .map(([name, position]) => ({ live: this.live.get(name), position }))
      // One the projection thread builds is behind only when that thread stands by too: another process holds it.
      .filter(({ live, position }) => live !== undefined && (this.elsewhere.has(live.projection.name) ? live.status === 'standby' : !live.lease.held) && live.checkpoint < position)
      .map(({ live }) => live!);
  }

  /**
   * Rebuilds a projection from the start of `$all` into shadow collections while the live
   * ones keep serving, then stops the live follower briefly, catches up the last events,
   * swaps the shadows in and resumes.
   */
  async rebuild(name: string): Promise<{ events: number; checkpoint: number }> {
    const live = this.projectionOf(name);
    if (this.elsewhere.has(name)) return this.options.rebuildElsewhere(name);
    if (this.rebuilding.has(name)) throw new Error(`projection ${name} is already rebuilding`);
    this.rebuilding.add(name);
    // Started by the lease holder (a new version), the rebuild is fenced by the lease: if it
    // moves to another process, that one rebuilds and this one stops. An operator's rebuild
    // in a process without the lease is fenced by the checkpoint instead.
    const holder = live.lease.held ? live.lease.holder : undefined;
    const fence = (): void => {
      if (holder !== undefined && !live.lease.held) throw new LeaseLostError(name, holder, null);
    };
    try {
      const projection = live.projection;
      const { readStore } = this.deps;
      for (const spec of projection.collections) {
        await readStore.dropCollection(shadowName(spec.name));
        await readStore.ensureCollection({ ...spec, name: shadowName(spec.name) });
      }
      const stateName = rebuildStateName(name);
      const now = this.deps.clock.now().toISOString();
      await readStore.putProjectionState({ name: stateName, version: projection.version, checkpoint: 0, status: 'rebuilding', error: null, updated_at: now });
      let progress = await this.catchUpShadow(live, { checkpoint: 0, events: 0 }, fence);
      const wasRunning = this.started;
      if (wasRunning) await live.stop({ keepLease: true });
      try {
        const head = await this.deps.eventStore.headPosition();
        progress = await this.catchUpShadow(live, progress, fence);
        const checkpoint = Math.max(progress.checkpoint, head);
        await readStore.promoteShadow({
          projection: name,
          collections: projection.collections.map((spec) => ({ shadow: shadowName(spec.name), live: spec.name })),
          state: { name, version: projection.version, checkpoint, status: 'running', error: null, updated_at: this.deps.clock.now().toISOString() },
          holder,
        });
        await readStore.putProjectionState({ name: stateName, version: projection.version, checkpoint, status: 'stopped', error: null, updated_at: now });
        live.checkpoint = checkpoint;
        this.deps.logger.info({ projection: name, events: progress.events, checkpoint }, 'projection rebuilt');
        return { events: progress.events, checkpoint };
      } finally {
        // Not when the runner stopped meanwhile (its stop released the lease).
        if (wasRunning && this.started) live.start();
      }
    } finally {
      this.rebuilding.delete(name);
      this.notify();
    }
  }

  /** Reads `$all` page by page into the shadow collections until a page comes back empty. */
  private async catchUpShadow(live: LiveProjection, from: { checkpoint: number; events: number }, fence: () => void): Promise<{ checkpoint: number; events: number }> {
    const { readStore } = this.deps;
    const { projection, feed } = live;
    const stateName = rebuildStateName(projection.name);
    let { checkpoint, events } = from;
    for (;;) {
      fence();
      const page = await feed.read(checkpoint, this.options.batchSize);
      if (page.length === 0) return { checkpoint, events };
      const operations = await project(feed, page, readStore, shadowName);
      const next = page[page.length - 1].position;
      await readStore.commitProjection({
        projection: stateName,
        expectedCheckpoint: checkpoint,
        operations,
        state: { name: stateName, version: projection.version, checkpoint: next, status: 'rebuilding', error: null, updated_at: this.deps.clock.now().toISOString() },
      });
      checkpoint = next;
      events += page.length;
    }
  }
}
