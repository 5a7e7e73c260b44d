// Two platform processes on one embedded store (tests/e2e/fixtures/leased-process.ts): each
// projection and the saga group run in exactly one of them, the other takes over when the
// holder is killed (after its lease lapses) with nothing lost or applied twice, and a new
// projection version is rebuilt once, not once per process.

import { expect } from 'chai';
import { type ChildProcess, spawn } from 'node:child_process';
import path from 'node:path';
import readline from 'node:readline';
import type { NewEvent } from '../../application/ports/event-store';
import { SqliteEventStore } from '../../infrastructure/event-store/sqlite';
import { SqliteReadStore } from '../../infrastructure/read-store/sqlite';
import { type SqliteDatabase, openSqliteDatabase } from '../../infrastructure/sqlite/database';
import type { CounterDocument } from '../support/counting-projection';
import { newEvent } from '../support/events';
import { temporaryDirectory } from '../support/files';
import { eventually } from '../support/stores';
import { LEASED_EVENT, LEASED_PROJECTIONS, leasedEventData } from './fixtures/leased-process';

const SAGA_STATE = 'saga:tally-v1';
const LEASE_TTL_MS = '3000';

interface PlatformProcess {
  holder: string;
  lines: string[];
  child: ChildProcess;
  exited: Promise<void>;
}

function startProcess(dataDir: string, version: number, leaseTtlMs = LEASE_TTL_MS): Promise<PlatformProcess> {
  const child = spawn(process.execPath, [path.join(__dirname, 'fixtures', 'leased-process.js'), dataDir, String(version)], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, LEASE_TTL_MS: leaseTtlMs },
  });
  const lines: string[] = [];
  let stderr = '';
  child.stderr!.on('data', (chunk) => (stderr += String(chunk)));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  return new Promise((resolve, reject) => {
    readline.createInterface({ input: child.stdout! }).on('line', (line) => {
      lines.push(line);
      if (line.startsWith('READY ')) resolve({ holder: line.slice('READY '.length), lines, child, exited });
    });
    void exited.then(() => reject(new Error(`process exited before it was ready: ${stderr}`)));
  });
}

/** Positions a process applied to a projection, in order. */
const applied = (platform: PlatformProcess, projection: string): number[] =>
  platform.lines.filter((line) => line.startsWith(`APPLY ${projection} `)).map((line) => Number(line.split(' ')[2]));

/**
 * Waits until `count` APPLY lines of each projection arrived from the processes: a process
 * prints them before it commits, but they reach this one through a pipe, and the commit may
 * be seen in the store first.
 */
const appliedLinesArrived = (processes: PlatformProcess[], count: number): Promise<void> =>
  eventually(() => LEASED_PROJECTIONS.every((name) => processes.reduce((sum, platform) => sum + applied(platform, name).length, 0) >= count), 30_000, 'the APPLY lines');

const delivered = (platform: PlatformProcess): string[] => platform.lines.filter((line) => line.startsWith('DELIVER ')).map((line) => line.split(' ')[1]);

describe('several processes on one embedded store (leases)', function () {
  this.timeout(90_000);

  let dir: { path: string; remove(): void };
  let db: SqliteDatabase;
  let eventStore: SqliteEventStore;
  let readStore: SqliteReadStore;
  let running: PlatformProcess[];

  const start = async (version: number, leaseTtlMs?: string): Promise<PlatformProcess> => {
    const started = await startProcess(dir.path, version, leaseTtlMs);
    running.push(started);
    return started;
  };
  const stop = async (platform: PlatformProcess, signal: NodeJS.Signals): Promise<void> => {
    platform.child.kill(signal);
    await platform.exited;
  };

  /** Appends `count` events over five streams; returns them. */
  const append = async (count: number): Promise<NewEvent[]> => {
    const events: NewEvent[] = [];
    for (let index = 0; index < count; index += 1) {
      const event = newEvent(LEASED_EVENT, leasedEventData(index));
      await eventStore.appendToStream(`thing-${index % 5}`, [event]);
      events.push(event);
    }
    return events;
  };

  const state = (name: string) => readStore.getProjectionState(name);

  const everyProjectionAt = async (head: number, check: (holder: string | undefined, version: number) => boolean = () => true): Promise<boolean> => {
    for (const name of LEASED_PROJECTIONS) {
      const stored = await state(name);
      if (!stored || stored.checkpoint < head || !check(stored.lease?.holder, stored.version)) return false;
    }
    return true;
  };

  /** Each projection's counters add up to the events of each stream, exactly. */
  const expectCounted = async (): Promise<void> => {
    for (const name of LEASED_PROJECTIONS) {
      for (let stream = 0; stream < 5; stream += 1) {
        const events = await eventStore.readStream(`thing-${stream}`);
        const counter = await readStore.collection<CounterDocument>(name).get(`thing-${stream}`);
        expect(counter?.count, `${name} thing-${stream}`).to.equal(events.length);
      }
    }
  };

  beforeEach(() => {
    dir = temporaryDirectory();
    db = openSqliteDatabase(path.join(dir.path, 'platform.db'), { synchronous: 'normal' });
    eventStore = new SqliteEventStore(db);
    readStore = new SqliteReadStore(db);
    running = [];
  });

  afterEach(async () => {
    for (const platform of running) if (platform.child.exitCode === null && platform.child.signalCode === null) await stop(platform, 'SIGKILL');
    await eventStore.close();
    db.close();
    dir.remove();
  });

  it('runs each projection and the saga group in exactly one of two processes', async () => {
    const [one, two] = await Promise.all([start(1), start(1)]);
    const events = await append(30);
    const head = await eventStore.headPosition();
    await eventually(() => everyProjectionAt(head), 30_000, 'every projection at the head');
    await eventually(() => delivered(one).length + delivered(two).length >= events.length, 30_000, 'every saga delivery');

    // The platform's own events (the plan catalogue seeded on start) are not the projections' type.
    const positions = (await eventStore.readAll({ fromPosition: 0, maxCount: 1000 })).filter((event) => event.type === LEASED_EVENT).map((event) => event.position);
    await appliedLinesArrived([one, two], positions.length);
    for (const name of LEASED_PROJECTIONS) {
      const holder = (await state(name))?.lease?.holder;
      expect([one.holder, two.holder], `${name} holder`).to.include(holder);
      const [holding, standing] = holder === one.holder ? [one, two] : [two, one];
      expect(applied(standing, name), `${name} applied by the process without its lease`).to.deep.equal([]);
      expect(applied(holding, name), `${name}: every event applied once`).to.deep.equal(positions);
    }
    const sagaHolder = (await state(SAGA_STATE))?.lease?.holder;
    const [delivering, idle] = sagaHolder === one.holder ? [one, two] : [two, one];
    expect([one.holder, two.holder]).to.include(sagaHolder);
    expect(delivered(idle)).to.deep.equal([]);
    expect(delivered(delivering)).to.deep.equal(events.map((event) => event.id));
    await expectCounted();
  });

  it('hands the work of a killed holder to the other process once its lease lapses, losing and doubling nothing', async () => {
    const [one, two] = await Promise.all([start(1), start(1)]);
    const before = await append(20);
    await eventually(async () => everyProjectionAt(await eventStore.headPosition()), 30_000, 'every projection at the head');

    const victim = (await state('alpha'))?.lease?.holder === one.holder ? one : two;
    const survivor = victim === one ? two : one;
    await stop(victim, 'SIGKILL');
    const after = await append(20);
    const head = await eventStore.headPosition();
    await eventually(() => everyProjectionAt(head, (holder) => holder === survivor.holder), 30_000, 'the survivor holding every projection, at the head');
    const all = [...before, ...after].map((event) => event.id);
    // Saga delivery is at least once: the killed process may have delivered an event it had not acknowledged.
    await eventually(() => all.every((id) => delivered(one).includes(id) || delivered(two).includes(id)), 30_000, 'every saga delivery');
    expect((await state(SAGA_STATE))?.lease?.holder).to.equal(survivor.holder);
    await appliedLinesArrived([survivor], after.length);
    expect(applied(survivor, 'alpha').length, 'the survivor applied what came after the kill').to.be.at.least(after.length);
    await expectCounted();
  });

  it('a process restarted after a kill -9 takes the dead one\'s leases at once, long before they lapse', async () => {
    // Ten minutes: far longer than this test may take, so only knowing the holder is gone can explain a takeover.
    const TEN_MINUTES = String(10 * 60_000);
    const crashed = await start(1, TEN_MINUTES);
    const before = await append(10);
    await eventually(async () => everyProjectionAt(await eventStore.headPosition(), (holder) => holder === crashed.holder), 30_000, 'the first process at the head');
    await stop(crashed, 'SIGKILL');
    const leasesUntil = Date.parse((await state('alpha'))!.lease!.expires_at);

    const restarted = await start(1, TEN_MINUTES);
    const after = await append(10);
    const head = await eventStore.headPosition();
    await eventually(() => everyProjectionAt(head, (holder) => holder === restarted.holder), 30_000, 'the restarted process holding every projection, at the head');
    expect(Date.now(), 'taken over before the dead holder\'s lease lapsed').to.be.below(leasesUntil);
    const all = [...before, ...after].map((event) => event.id);
    await eventually(() => all.every((id) => delivered(crashed).includes(id) || delivered(restarted).includes(id)), 30_000, 'every saga delivery');
    expect((await state(SAGA_STATE))?.lease?.holder).to.equal(restarted.holder);
    await expectCounted();
  });

  it('rebuilds a new projection version once, in the process holding its lease', async () => {
    const old = await Promise.all([start(1), start(1)]);
    const events = await append(25);
    const head = await eventStore.headPosition();
    await eventually(() => everyProjectionAt(head), 30_000, 'version 1 at the head');
    for (const platform of old) await stop(platform, 'SIGTERM');

    const [one, two] = await Promise.all([start(2), start(2)]);
    await eventually(() => everyProjectionAt(head, (_holder, version) => version === 2), 30_000, 'version 2 in place');
    await appliedLinesArrived([one, two], events.length);
    for (const name of LEASED_PROJECTIONS) {
      const holder = (await state(name))?.lease?.holder;
      const [holding, standing] = holder === one.holder ? [one, two] : [two, one];
      expect([one.holder, two.holder], `${name} holder`).to.include(holder);
      expect(applied(standing, name), `${name} rebuilt by the process without its lease`).to.deep.equal([]);
      expect(applied(holding, name), `${name} rebuilt once`).to.have.length(events.length);
    }
    await expectCounted();
  });
});
