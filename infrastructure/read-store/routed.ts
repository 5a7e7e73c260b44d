// Two read stores behind one port: the read models of some projections kept in a store of
// their own (the embedded store's projection file, built on its own thread:
// infrastructure/sqlite/projection-thread.ts), everything else in the main one. A collection
// goes by its name, a projection's state and lease by the projection's name, a rebuild's
// shadow collections and state (`<name>__rebuild`) with what they shadow. Nothing spans the
// two: a projection's commit writes only its own collections, so it lands in one store whole.

import type { Collection, CollectionSpec, Document, LeaseRequest, ProjectionCommit, ProjectionLease, ProjectionState, ReadStore, ShadowPromotion } from '../../application/ports/read-store';

const REBUILD_SUFFIX = '__rebuild';

/** What lives in the other store: these projections, their states and leases, and their collections. */
export interface RoutedProjections {
  projections: ReadonlyArray<{ name: string; collections: readonly CollectionSpec[] }>;
}

export class RoutedReadStore implements ReadStore {
  private readonly names: ReadonlySet<string>;
  private readonly collections: ReadonlySet<string>;

  constructor(
    private readonly main: ReadStore,
    private readonly other: ReadStore,
    routed: RoutedProjections,
  ) {
    this.names = new Set(routed.projections.map((projection) => projection.name));
    this.collections = new Set(routed.projections.flatMap((projection) => projection.collections.map((spec) => spec.name)));
  }

  private byCollection(name: string): ReadStore {
    return this.collections.has(unshadowed(name)) ? this.other : this.main;
  }

  private byProjection(name: string): ReadStore {
    return this.names.has(unshadowed(name)) ? this.other : this.main;
  }

  ensureCollection(spec: CollectionSpec): Promise<void> {
    return this.byCollection(spec.name).ensureCollection(spec);
  }

  dropCollection(name: string): Promise<void> {
    return this.byCollection(name).dropCollection(name);
  }

  collection<T extends Document = Document>(name: string): Collection<T> {
    return this.byCollection(name).collection<T>(name);
  }

  commitProjection(commit: ProjectionCommit): Promise<void> {
    const store = this.byProjection(commit.projection);
    const stray = commit.operations.find((operation) => this.byCollection(operation.collection) !== store);
    // A programming error, not a user's: the commit would be split across two files.
    if (stray) throw new Error(`projection ${commit.projection} writes ${stray.collection}, which lives in the other read store`);
    return store.commitProjection(commit);
  }

  getProjectionState(projection: string): Promise<ProjectionState | null> {
    return this.byProjection(projection).getProjectionState(projection);
  }

  putProjectionState(state: ProjectionState, options?: { holder?: string }): Promise<void> {
    return this.byProjection(state.name).putProjectionState(state, options);
  }

  async listProjectionStates(): Promise<ProjectionState[]> {
    const [main, other] = await Promise.all([this.main.listProjectionStates(), this.other.listProjectionStates()]);
    // Each store's own only: a state left behind in the other one (before the move) is not the projection's.
    return [...main.filter((state) => !this.names.has(unshadowed(state.name))), ...other.filter((state) => this.names.has(unshadowed(state.name)))].sort((a, b) => a.name.localeCompare(b.name));
  }

  promoteShadow(promotion: ShadowPromotion): Promise<void> {
    return this.byProjection(promotion.projection).promoteShadow(promotion);
  }

  acquireLease(request: LeaseRequest & { version: number }): Promise<ProjectionLease | null> {
    return this.byProjection(request.projection).acquireLease(request);
  }

  renewLease(request: LeaseRequest): Promise<ProjectionLease | null> {
    return this.byProjection(request.projection).renewLease(request);
  }

  releaseLease(projection: string, holder: string): Promise<void> {
    return this.byProjection(projection).releaseLease(projection, holder);
  }

  async ping(): Promise<boolean> {
    const [main, other] = await Promise.all([this.main.ping(), this.other.ping()]);
    return main && other;
  }

  async close(): Promise<void> {
    await this.main.close();
    await this.other.close();
  }
}

function unshadowed(name: string): string {
  return name.endsWith(REBUILD_SUFFIX) ? name.slice(0, -REBUILD_SUFFIX.length) : name;
}
