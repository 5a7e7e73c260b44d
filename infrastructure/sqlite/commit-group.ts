// Group commit across the writers of one SQLite connection. The embedded event store and read
// store share a connection (database.ts); each used to group its own writes into one
// transaction per turn of the event loop, so a turn cost two commits: the appends, then the
// projection and saga-checkpoint commits they woke. A commit's price is mostly fixed (the WAL
// sync, and every index's last page written again), so the writers of a connection now share
// one transaction per turn: one commit where there were two, each writer's items still
// applied and refused one by one (in savepoints) and settled only once the whole group is on
// disk.

import type { SqliteDatabase } from './database';

/** One writer taking part in its connection's group commits. */
export interface GroupWriter<Batch, Outcomes> {
  /** Takes what is pending, outside the transaction; null when nothing is. */
  take(): Batch | null;
  /**
   * Writes the batch inside the group's transaction. Must not throw for one item's failure
   * (each item in a savepoint) unless `alone`: no other writer shares the transaction.
   */
  write(batch: Batch, alone: boolean): Outcomes;
  /** After the commit, with what `write` returned; or with the error that undid the whole transaction. */
  settle(batch: Batch, result: { ok: true; outcomes: Outcomes } | { ok: false; error: unknown }): void;
}

type AnyWriter = GroupWriter<unknown, unknown>;

const groups = new WeakMap<SqliteDatabase, CommitGroup>();

export class CommitGroup {
  private readonly writers: AnyWriter[] = [];
  private scheduled = false;

  private constructor(private readonly db: SqliteDatabase) {}

  /** The connection's one group. */
  static of(db: SqliteDatabase): CommitGroup {
    let group = groups.get(db);
    if (!group) {
      group = new CommitGroup(db);
      groups.set(db, group);
    }
    return group;
  }

  join<Batch, Outcomes>(writer: GroupWriter<Batch, Outcomes>): void {
    this.writers.push(writer as AnyWriter);
  }

  /** Commits at the end of this turn of the event loop, with whatever else is pending by then. */
  schedule(): void {
    if (this.scheduled) return;
    this.scheduled = true;
    setImmediate(() => this.flush());
  }

  /** Commits what is pending now (a writer closing). */
  flush(): void {
    this.scheduled = false;
    const taken: Array<{ writer: AnyWriter; batch: unknown }> = [];
    for (const writer of this.writers) {
      const batch = writer.take();
      if (batch !== null) taken.push({ writer, batch });
    }
    if (taken.length === 0) return;
    let outcomes: unknown[];
    try {
      outcomes = this.db.transaction(() => taken.map(({ writer, batch }) => writer.write(batch, taken.length === 1))).immediate();
    } catch (error) {
      for (const { writer, batch } of taken) writer.settle(batch, { ok: false, error });
      return;
    }
    taken.forEach(({ writer, batch }, index) => writer.settle(batch, { ok: true, outcomes: outcomes[index] }));
  }
}
