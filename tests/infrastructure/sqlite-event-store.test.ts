// The embedded event store's tail: live subscribers read the last commits from memory. What
// they are given must be exactly what a read of `$all` gives, whatever else happens: appends
// of another process in between, refused appends in a group, a subscriber further behind
// than the tail holds.

import { expect } from 'chai';
import { type AllFilter, type RecordedEvent, type SubscriptionMessage, WrongExpectedRevisionError } from '../../application/ports/event-store';
import { SqliteEventStore } from '../../infrastructure/event-store/sqlite';
import { openSqliteDatabase } from '../../infrastructure/sqlite/database';
import { newEvent, uniqueStream } from '../support/events';
import { sqliteFixture } from '../support/files';

/** Collects a subscription's events until `count` have come. */
async function collect(store: SqliteEventStore, filter: AllFilter | undefined, count: number, whileRunning: () => Promise<void>): Promise<RecordedEvent[]> {
  const subscription = store.subscribeToAll({ fromPosition: 0, ...(filter ? { filter } : {}) });
  const iterator = subscription[Symbol.asyncIterator]();
  const events: RecordedEvent[] = [];
  const reading = (async () => {
    while (events.length < count) {
      const next: IteratorResult<SubscriptionMessage> = await iterator.next();
      if (next.done) break;
      if (next.value.kind === 'event') events.push(next.value.event);
    }
  })();
  try {
    await whileRunning();
    await reading;
  } finally {
    await subscription.stop();
  }
  return events;
}

const summary = (events: RecordedEvent[]) => events.map((event) => `${event.position} ${event.stream} ${event.type} ${JSON.stringify(event.data)}`);

describe('SQLite event store: the tail of the last commits', () => {
  let fixture: ReturnType<typeof sqliteFixture<SqliteEventStore>>;

  beforeEach(() => {
    fixture = sqliteFixture((db) => new SqliteEventStore(db, { pollIntervalMs: 20, tailCapacity: 16 }));
  });

  afterEach(() => fixture.dispose());

  it('gives live subscribers, each with its filter, what a read of $all gives', async () => {
    const store = fixture.store;
    const orders = uniqueStream('order');
    const carts = uniqueStream('cart');
    const filters: Array<AllFilter | undefined> = [
      undefined,
      { kind: 'event_type', types: ['OrderPlaced', 'CartEmptied'] },
      { kind: 'event_type_prefix', prefixes: ['Cart'] },
      { kind: 'stream_prefix', prefixes: ['order-'] },
    ];
    const appendAll = async (): Promise<void> => {
      await store.appendToStream(orders, [newEvent('OrderOpened')]);
      for (let round = 0; round < 12; round += 1) {
        // One group: a refused append among accepted ones, and a system stream the subscribers skip.
        const refused = store.appendToStream(orders, [newEvent('Never')], { expectedRevision: 'no_stream' });
        await Promise.all([
          store.appendToStream(orders, [newEvent('OrderPlaced', { round }), newEvent('OrderPaid', { round })]),
          store.appendToStream(carts, [newEvent('CartFilled', { round })]),
          store.appendToStream(`$system-${round}`, [newEvent('Internal')]),
          store.appendToStream(carts, [newEvent('CartEmptied', { round })]),
          refused.then(
            () => expect.fail('appended on an existing stream with no_stream'),
            (error: unknown) => expect(error).to.be.instanceOf(WrongExpectedRevisionError),
          ),
        ]);
      }
    };
    const expected = [49, 24, 24, 25];
    const [everything, typed, prefixed, byStream] = await Promise.all(filters.map((filter, index) => collect(store, filter, expected[index], index === 0 ? appendAll : async () => undefined)));
    expect(everything).to.have.length(49);
    for (const [filter, got] of [
      [filters[0], everything],
      [filters[1], typed],
      [filters[2], prefixed],
      [filters[3], byStream],
    ] as const) {
      expect(summary(got)).to.deep.equal(summary(await store.readAll(filter ? { filter } : {})));
    }
  });

  it('gives a subscriber what another process appended between its own commits, once, in order', async () => {
    const store = fixture.store;
    const other = openSqliteDatabase(fixture.path);
    const otherStore = new SqliteEventStore(other, { pollIntervalMs: 20 });
    try {
      const stream = uniqueStream();
      const events = await collect(store, undefined, 30, async () => {
        for (let round = 0; round < 10; round += 1) {
          await store.appendToStream(stream, [newEvent('Here', { round })]);
          await otherStore.appendToStream(uniqueStream('elsewhere'), [newEvent('There', { round })]);
          await store.appendToStream(stream, [newEvent('HereAgain', { round })]);
        }
      });
      expect(summary(events)).to.deep.equal(summary(await store.readAll()));
      expect(events.map((event) => event.position)).to.deep.equal(Array.from({ length: 30 }, (_, index) => index + 1));
    } finally {
      await otherStore.close();
      other.close();
    }
  });

  it('reads SQLite for a subscriber further behind than the tail holds', async () => {
    const store = fixture.store;
    const stream = uniqueStream();
    for (let batch = 0; batch < 5; batch += 1) {
      await store.appendToStream(stream, Array.from({ length: 10 }, (_, index) => newEvent('Counted', { n: batch * 10 + index })));
    }
    // Only the last 16 of these 50 are in memory; the subscription starts at 0.
    const events = await collect(store, undefined, 52, async () => {
      await store.appendToStream(stream, [newEvent('Counted', { n: 50 }), newEvent('Counted', { n: 51 })]);
    });
    expect(events.map((event) => (event.data as { n: number }).n)).to.deep.equal(Array.from({ length: 52 }, (_, index) => index));
  });

  it('reads $all forwards from memory as SQLite would answer it, whatever the bounds and filter', async () => {
    const store = fixture.store;
    const orders = uniqueStream('order');
    for (let round = 0; round < 6; round += 1) {
      await Promise.all([
        store.appendToStream(orders, [newEvent('OrderPlaced', { round }), newEvent('OrderPaid', { round })]),
        store.appendToStream(`$system-${round}`, [newEvent('Internal')]),
      ]);
    }
    // Another connection on the file keeps nothing in memory: every read goes to SQLite.
    const other = openSqliteDatabase(fixture.path);
    const elsewhere = new SqliteEventStore(other);
    const head = await store.headPosition();
    const filters: Array<AllFilter | undefined> = [undefined, { kind: 'event_type', types: ['OrderPaid'] }];
    for (const filter of filters) {
      for (const fromPosition of [undefined, 0, head - 10, head - 3, head]) {
        for (const maxCount of [undefined, 0, 1, 4]) {
          for (const includeSystem of [false, true]) {
            const options = { fromPosition, maxCount, filter, includeSystem };
            expect(summary(await store.readAll(options)), JSON.stringify(options)).to.deep.equal(summary(await elsewhere.readAll(options)));
          }
        }
      }
    }
    await elsewhere.close();
    other.close();
  });

  it('forgets what it keeps in memory once another connection writes the file: a row edited there is read as edited', async () => {
    const store = fixture.store;
    const stream = uniqueStream();
    await store.appendToStream(stream, [newEvent('Kept', { value: 'as appended' })]);
    expect((await store.readStream(stream))[0].data).to.deep.equal({ value: 'as appended' });
    const other = openSqliteDatabase(fixture.path);
    try {
      other.prepare("UPDATE events SET data = json_set(data, '$.value', 'edited') WHERE stream = ?").run(stream);
    } finally {
      other.close();
    }
    await new Promise((resolve) => setImmediate(resolve));
    expect((await store.readStream(stream))[0].data).to.deep.equal({ value: 'edited' });
    expect((await store.readAll()).find((event) => event.stream === stream)?.data).to.deep.equal({ value: 'edited' });
    const [live] = await collect(store, { kind: 'stream_prefix', prefixes: [stream] }, 1, async () => undefined);
    expect(live.data).to.deep.equal({ value: 'edited' });
  });

  it('shares one frozen event among the subscribers that read it from memory: one that tries to change it fails, and no reader sees a change', async () => {
    const store = fixture.store;
    const stream = uniqueStream();
    const [first, second] = await Promise.all([
      collect(store, undefined, 1, () => store.appendToStream(stream, [newEvent('Shared', { items: [1] })]).then(() => undefined)),
      collect(store, undefined, 1, async () => undefined),
    ]);
    expect(first[0]).to.equal(second[0]);
    expect(() => (first[0].data as { items: number[] }).items.push(2)).to.throw(TypeError);
    expect(() => {
      (first[0].metadata as unknown as Record<string, unknown>).tenant_id = 'another';
    }).to.throw(TypeError);
    expect(second[0].data).to.deep.equal({ items: [1] });
  });

  it('gives the first reader of a stream read from SQLite its own events, and shares them frozen from the next read of the stream on', async () => {
    const store = fixture.store;
    const stream = uniqueStream();
    const other = openSqliteDatabase(fixture.path);
    const elsewhere = new SqliteEventStore(other);
    try {
      // Appended by another process: this one reads the stream from SQLite, and keeps it.
      await elsewhere.appendToStream(stream, [newEvent('Kept', { items: [1] })]);
      await new Promise((resolve) => setImmediate(resolve));
      const [own] = await store.readStream(stream);
      expect(Object.isFrozen(own)).to.equal(false);
      (own.data as { items: number[] }).items.push(2);
      const [shared] = await store.readStream(stream);
      expect(shared.data).to.deep.equal({ items: [1] });
      expect(Object.isFrozen(shared)).to.equal(true);
      expect((await store.readStream(stream))[0]).to.equal(shared);
    } finally {
      await elsewhere.close();
      other.close();
    }
  });
});

describe('SQLite event store: streams kept for the commands that read them again', () => {
  let fixture: ReturnType<typeof sqliteFixture<SqliteEventStore>>;

  beforeEach(() => {
    fixture = sqliteFixture((db) => new SqliteEventStore(db, { pollIntervalMs: 20 }));
  });

  afterEach(() => fixture.dispose());

  it('reads every stream as a store that keeps nothing does, through appends, deletion, truncation and another process', async () => {
    const store = fixture.store;
    const other = openSqliteDatabase(fixture.path);
    // A second process: its own connection and nothing in memory; it also appends.
    const elsewhere = new SqliteEventStore(other);
    const stream = uniqueStream();
    const reads = [
      {},
      { direction: 'backwards' as const },
      { fromRevision: 2 },
      { direction: 'backwards' as const, fromRevision: 3, maxCount: 2 },
      { maxCount: 1 },
    ];
    const same = async (step: string): Promise<void> => {
      for (const options of reads) {
        expect(summary(await store.readStream(stream, options)), `${step} ${JSON.stringify(options)}`).to.deep.equal(summary(await elsewhere.readStream(stream, options)));
      }
    };
    try {
      await store.appendToStream(stream, [newEvent('A'), newEvent('B')]);
      await same('created');
      await store.readStream(stream);
      await store.appendToStream(stream, [newEvent('C')]);
      await same('appended here');
      await elsewhere.appendToStream(stream, [newEvent('D')]);
      await same('appended by another process');
      await store.appendToStream(stream, [newEvent('E'), newEvent('F')]);
      await same('appended here again');
      await store.setStreamMetadata(stream, { maxCount: 3 });
      await same('max count');
      await store.setStreamMetadata(stream, {});
      await same('max count lifted');
      await store.deleteStream(stream);
      expect(await store.readStream(stream)).to.deep.equal([]);
      await store.appendToStream(stream, [newEvent('G')]);
      await same('appended after deletion');
      expect((await store.readStream(stream)).map((event) => event.type)).to.deep.equal(['G']);
    } finally {
      await elsewhere.close();
      other.close();
    }
  });
});

describe('SQLite event store: live subscribers waiting for the next commit', () => {
  // A poll interval far longer than the test: what it sees is the commit's wake and the stop's.
  let fixture: ReturnType<typeof sqliteFixture<SqliteEventStore>>;

  beforeEach(() => {
    fixture = sqliteFixture((db) => new SqliteEventStore(db, { pollIntervalMs: 60_000 }));
  });

  afterEach(() => fixture.dispose());

  /** The subscription's messages after it caught up, read in the background. */
  function follow(store: SqliteEventStore, filter?: AllFilter) {
    const subscription = store.subscribeToAll({ fromPosition: 0, ...(filter ? { filter } : {}) });
    const seen: SubscriptionMessage[] = [];
    let caughtUp!: () => void;
    const ready = new Promise<void>((resolve) => (caughtUp = resolve));
    const done = (async () => {
      for await (const message of subscription) {
        if (message.kind === 'caught_up') caughtUp();
        else seen.push(message);
      }
    })();
    return { subscription, seen, ready, done };
  }

  it('wakes every waiting subscriber with one commit, each once, filtered as it asked', async () => {
    const store = fixture.store;
    const followers = [
      ...Array.from({ length: 30 }, () => follow(store)),
      follow(store, { kind: 'event_type', types: ['Other'] }),
    ];
    await Promise.all(followers.map((follower) => follower.ready));
    const { position } = await store.appendToStream(uniqueStream(), [newEvent('Woken')]);
    const until = Date.now() + 5_000;
    while (followers.some((follower) => follower.seen.length === 0) && Date.now() < until) await new Promise((resolve) => setTimeout(resolve, 5));
    for (const follower of followers.slice(0, 30)) {
      expect(follower.seen.map((message) => (message.kind === 'event' ? `${message.event.type} ${message.event.position}` : message.kind))).to.deep.equal([`Woken ${position}`]);
    }
    // Filtered out, the event still moves the subscriber on: its checkpoint passes it.
    expect(followers[30].seen).to.deep.equal([{ kind: 'checkpoint', position }]);
    await Promise.all(followers.map((follower) => follower.subscription.stop()));
    await Promise.all(followers.map((follower) => follower.done));
  });

  it('gives a subscriber what was committed while its consumer was busy, without waiting for a poll', async () => {
    const store = fixture.store;
    const subscription = store.subscribeToAll({ fromPosition: 0 });
    const iterator = subscription[Symbol.asyncIterator]();
    expect((await iterator.next()).value).to.deep.equal({ kind: 'caught_up', position: 0 });
    // The consumer has not asked for more yet: the commit wakes nobody for this subscriber.
    const { position } = await store.appendToStream(uniqueStream(), [newEvent('WhileBusy')]);
    const next = (await iterator.next()).value as SubscriptionMessage;
    expect(next.kind === 'event' ? `${next.event.type} ${next.event.position}` : next.kind).to.equal(`WhileBusy ${position}`);
    await subscription.stop();
  });

  it("wakes a subscriber of another connection told of that connection's commit (the projection thread), and tells that commit's head", async () => {
    const heads: number[] = [];
    const writerDb = openSqliteDatabase(fixture.path);
    const writer = new SqliteEventStore(writerDb, { pollIntervalMs: 60_000, onCommitted: (head) => heads.push(head) });
    try {
      const follower = follow(fixture.store);
      await follower.ready;
      const { position } = await writer.appendToStream(uniqueStream(), [newEvent('Elsewhere')]);
      expect(heads).to.deep.equal([position]);
      // Not told, it would wait for its poll (a minute); told, it reads on at once.
      fixture.store.appendedElsewhere(position);
      const until = Date.now() + 5_000;
      while (follower.seen.length === 0 && Date.now() < until) await new Promise((resolve) => setTimeout(resolve, 5));
      expect(follower.seen.map((message) => (message.kind === 'event' ? `${message.event.type} ${message.event.position}` : message.kind))).to.deep.equal([`Elsewhere ${position}`]);
      await follower.subscription.stop();
      await follower.done;
    } finally {
      await writer.close();
      writerDb.close();
    }
  });

  it("reads another connection's commit once, when told of it: its subscribers share each event, parsed once, and get what SQLite has", async () => {
    const writerDb = openSqliteDatabase(fixture.path);
    const writer = new SqliteEventStore(writerDb, { pollIntervalMs: 60_000 });
    try {
      const { position: before } = await writer.appendToStream(uniqueStream(), [newEvent('Before')]);
      fixture.store.appendedElsewhere(before);
      const followers = [follow(fixture.store), follow(fixture.store), follow(fixture.store, { kind: 'event_type', types: ['Second'] })];
      await Promise.all(followers.map((follower) => follower.ready));
      await writer.appendToStreams([
        { stream: '$system-1', events: [newEvent('Hidden')] },
        { stream: uniqueStream(), events: [newEvent('First'), newEvent('Second')] },
      ]);
      fixture.store.appendedElsewhere(await writer.headPosition());
      const until = Date.now() + 5_000;
      while (followers.some((follower) => follower.seen.filter((message) => message.kind === 'event').length < (follower === followers[2] ? 1 : 3)) && Date.now() < until) await new Promise((resolve) => setTimeout(resolve, 5));
      const eventsOf = (follower: (typeof followers)[number]) => follower.seen.flatMap((message) => (message.kind === 'event' ? [message.event] : []));
      expect(eventsOf(followers[0]).map((event) => event.type)).to.deep.equal(['Before', 'First', 'Second']);
      expect(eventsOf(followers[2]).map((event) => event.type)).to.deep.equal(['Second']);
      // One object per event: read from memory, not once per subscriber from SQLite.
      expect(eventsOf(followers[0])[2]).to.equal(eventsOf(followers[1])[2]);
      expect(eventsOf(followers[0])[2]).to.equal(eventsOf(followers[2])[0]);
      expect(eventsOf(followers[0]).slice(1)).to.deep.equal(await fixture.store.readAll({ fromPosition: before }));
      for (const follower of followers) await follower.subscription.stop();
      await Promise.all(followers.map((follower) => follower.done));
    } finally {
      await writer.close();
      writerDb.close();
    }
  });

  it('ends a waiting subscriber at once when it is stopped, and every one when the store closes', async () => {
    const store = fixture.store;
    const stopped = follow(store);
    const left = follow(store);
    await Promise.all([stopped.ready, left.ready]);
    // Waiting for the poll instead, either would outlast the test's timeout.
    await stopped.subscription.stop();
    await stopped.done;
    await store.close();
    await left.done;
    expect([...stopped.seen, ...left.seen]).to.deep.equal([]);
  });
});

describe('SQLite event store: appending to several streams', () => {
  let fixture: ReturnType<typeof sqliteFixture<SqliteEventStore>>;

  beforeEach(() => {
    fixture = sqliteFixture((db) => new SqliteEventStore(db));
  });

  afterEach(() => fixture.dispose());

  it('appends all or none: a later part refused undoes the earlier ones, and the rest of the group stands', async () => {
    const store = fixture.store;
    const [followOn, cause, other] = [uniqueStream(), uniqueStream(), uniqueStream()];
    await store.appendToStream(cause, [newEvent('Queued')]);
    const [refused, alongside] = await Promise.allSettled([
      store.appendToStreams([
        { stream: followOn, events: [newEvent('FollowOn')], expectedRevision: 'no_stream' },
        { stream: cause, events: [newEvent('Recorded')], expectedRevision: 'no_stream' },
      ]),
      store.appendToStream(other, [newEvent('SameGroup')]),
    ]);
    expect(refused.status).to.equal('rejected');
    expect((refused as PromiseRejectedResult).reason).to.be.instanceOf(WrongExpectedRevisionError);
    expect(alongside.status).to.equal('fulfilled');
    expect(await store.readStream(followOn)).to.deep.equal([]);
    expect((await store.readStream(cause)).map((event) => event.type)).to.deep.equal(['Queued']);
    expect((await store.readAll({ direction: 'backwards', maxCount: 1 })).map((event) => event.type)).to.deep.equal(['SameGroup']);
  });
});
