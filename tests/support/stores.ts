// Embedded stores in a temporary directory, as the platform uses them (one SQLite file).

import { randomBytes } from 'node:crypto';
import { DecodingEventStore } from '../../application/events/decoding-event-store';
import type { Clock } from '../../application/ports/clock';
import type { ReservationDependencies } from '../../application/reservation/reservations';
import { AesGcmSecrets } from '../../infrastructure/crypto/secrets';
import { SqliteEventStore } from '../../infrastructure/event-store/sqlite';
import { SqliteReadStore } from '../../infrastructure/read-store/sqlite';
import { SqliteSubjectKeyTable } from '../../infrastructure/personal-data/sqlite';
import { KeyedPersonalDataVault } from '../../infrastructure/personal-data/vault';
import type { Projection } from '../../projections/projection';
import { ProjectionRunner } from '../../projections/runner';
import { type SqliteDatabase, openSqliteDatabase } from '../../infrastructure/sqlite/database';
import { systemClock, uuidGenerator } from '../../infrastructure/system';
import { temporaryDirectory } from './files';

export interface EmbeddedStores {
  /** The store as written: tests append events of any shape straight to it. */
  eventStore: SqliteEventStore;
  /** The same log read as the platform reads it: decoded and upcast, personal data sealed and opened with a vault on the same file. */
  events: DecodingEventStore;
  readStore: SqliteReadStore;
  /** The keys the store seals personal data with (a table of the same file). */
  personalData: KeyedPersonalDataVault;
  /** The SQLite file's connection, for other embedded adapters (the search index). */
  db: SqliteDatabase;
  /** Command handling over `events`, with a keyed digest for reservation streams. */
  commands: ReservationDependencies;
  clock: Clock;
  /** Closes the stores and reopens them on the same file, as a restarted process would. */
  reopen(): EmbeddedStores;
  dispose(): Promise<void>;
}

export function embeddedStores(clock: Clock = systemClock): EmbeddedStores {
  const dir = temporaryDirectory();
  const secrets = new AesGcmSecrets(randomBytes(32));
  const open = (): EmbeddedStores => {
    const db = openSqliteDatabase(`${dir.path}/platform.db`, { synchronous: 'normal' });
    const eventStore = new SqliteEventStore(db, { pollIntervalMs: 20, now: () => clock.now() });
    const readStore = new SqliteReadStore(db);
    const subjectKeys = new SqliteSubjectKeyTable(openSqliteDatabase(`${dir.path}/platform.db`, { synchronous: 'normal' }));
    const vault = new KeyedPersonalDataVault(subjectKeys, secrets, clock);
    const events = new DecodingEventStore(eventStore, vault);
    const close = async (): Promise<void> => {
      await eventStore.close();
      await subjectKeys.close();
      db.close();
    };
    return {
      eventStore,
      events,
      readStore,
      personalData: vault,
      db,
      clock,
      commands: { eventStore: events, clock, ids: uuidGenerator, secrets },
      reopen() {
        void close();
        return open();
      },
      async dispose() {
        await close();
        dir.remove();
      },
    };
  };
  return open();
}

/** A clock tests move by hand. */
/** A runner of `projections` over the stores as the projection tests use one: quick retries, no idle checkpoints. */
export function projectionRunnerOver(stores: EmbeddedStores, projections: readonly Projection[]): ProjectionRunner {
  return new ProjectionRunner({ eventStore: stores.events, readStore: stores.readStore, clock: stores.clock }, projections, { retryDelayMs: 20, idleCheckpointMs: 0 });
}

/**
 * Fresh embedded stores and a running runner of `projections` for each test of the calling
 * `describe` (its beforeEach and afterEach); `caughtUp()` waits until the runner has passed the head.
 */
export function runningProjections(projections: readonly Projection[]): { readonly stores: EmbeddedStores; caughtUp(): Promise<boolean> } {
  let stores: EmbeddedStores | undefined;
  let runner: ProjectionRunner | undefined;
  beforeEach(async () => {
    stores = embeddedStores();
    runner = projectionRunnerOver(stores, projections);
    await runner.start();
  });
  afterEach(async () => {
    await runner?.stop();
    await stores?.dispose();
  });
  return {
    get stores() {
      return stores!;
    },
    caughtUp: async () => runner!.waitFor(await stores!.eventStore.headPosition(), { timeoutMs: 5000 }),
  };
}

export class ManualClock implements Clock {
  /** How many times the time was read: a sentinel that a polling loop has run. */
  reads = 0;
  constructor(private current = new Date('2026-11-22T10:00:00.000Z')) {}
  now(): Date {
    this.reads += 1;
    return new Date(this.current);
  }
  advance(ms: number): void {
    this.current = new Date(this.current.getTime() + ms);
  }
}

/** Polls until `check` holds, failing after `timeoutMs`. */
export async function eventually(check: () => Promise<boolean> | boolean, timeoutMs = 5000, what = 'condition'): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}
