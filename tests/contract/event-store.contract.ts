// The EventStore contract: EventStoreDB's semantics, run against every adapter. Written to
// pass on a shared, non-empty store: streams are unique per test and `$all` reads start at
// the head seen when the test began.

import { expect } from 'chai';
import { randomUUID } from 'node:crypto';
import {
  type EventStore,
  type RecordedEvent,
  type SubscriptionMessage,
  WrongExpectedRevisionError,
} from '../../application/ports/event-store';
import { newEvent, uniqueStream } from '../support/events';

export interface EventStoreFixture {
  store: EventStore;
  /** Releases whatever the fixture created. */
  dispose(): Promise<void>;
}

async function rejection(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error('expected a rejection');
}

async function take(iterator: AsyncIterator<SubscriptionMessage>, count: number, accept: (m: SubscriptionMessage) => boolean): Promise<SubscriptionMessage[]> {
  const taken: SubscriptionMessage[] = [];
  while (taken.length < count) {
    const next = await iterator.next();
    if (next.done) break;
    if (accept(next.value)) taken.push(next.value);
  }
  return taken;
}

const isEvent = (message: SubscriptionMessage): message is { kind: 'event'; event: RecordedEvent } => message.kind === 'event';

export function eventStoreContract(createFixture: () => Promise<EventStoreFixture>): void {
  let fixture: EventStoreFixture;
  let store: EventStore;

  beforeEach(async () => {
    fixture = await createFixture();
    store = fixture.store;
  });

  afterEach(async () => {
    await fixture.dispose();
  });

  describe('appending with an expected revision', () => {
    it('appends to a new stream with no_stream and reads the events back in order', async () => {
      const stream = uniqueStream();
      const result = await store.appendToStream(stream, [newEvent('A', { n: 1 }), newEvent('B', { n: 2 })], { expectedRevision: 'no_stream' });
      expect(result.nextExpectedRevision).to.equal(1);
      const events = await store.readStream(stream);
      expect(events.map((e) => [e.type, e.revision, e.data])).to.deep.equal([
        ['A', 0, { n: 1 }],
        ['B', 1, { n: 2 }],
      ]);
      expect(events[1].position).to.equal(result.position);
      expect(events[0].position).to.be.lessThan(events[1].position);
      expect(events[0].stream).to.equal(stream);
      expect(events[0].metadata.actor).to.deep.equal({ kind: 'system', id: 'test' });
      expect(Date.parse(events[0].recorded_at)).to.not.be.NaN;
    });

    it('rejects no_stream on an existing stream with a typed conflict', async () => {
      const stream = uniqueStream();
      await store.appendToStream(stream, [newEvent('A')], { expectedRevision: 'no_stream' });
      const error = await rejection(store.appendToStream(stream, [newEvent('B')], { expectedRevision: 'no_stream' }));
      expect(error).to.be.instanceOf(WrongExpectedRevisionError);
      expect((error as WrongExpectedRevisionError).actual).to.equal(0);
      expect(await store.readStream(stream)).to.have.length(1);
    });

    it('accepts the exact revision and rejects a stale one', async () => {
      const stream = uniqueStream();
      await store.appendToStream(stream, [newEvent('A'), newEvent('B')], { expectedRevision: 'no_stream' });
      const ok = await store.appendToStream(stream, [newEvent('C')], { expectedRevision: 1 });
      expect(ok.nextExpectedRevision).to.equal(2);
      const error = await rejection(store.appendToStream(stream, [newEvent('D')], { expectedRevision: 1 }));
      expect(error).to.be.instanceOf(WrongExpectedRevisionError);
      expect((error as WrongExpectedRevisionError).expected).to.equal(1);
      expect((error as WrongExpectedRevisionError).actual).to.equal(2);
    });

    it('checks stream_exists and a numeric revision against a missing stream', async () => {
      const stream = uniqueStream();
      expect(await rejection(store.appendToStream(stream, [newEvent('A')], { expectedRevision: 'stream_exists' }))).to.be.instanceOf(
        WrongExpectedRevisionError,
      );
      const numeric = await rejection(store.appendToStream(stream, [newEvent('A')], { expectedRevision: 0 }));
      expect((numeric as WrongExpectedRevisionError).actual).to.equal('no_stream');
      await store.appendToStream(stream, [newEvent('A')], { expectedRevision: 'no_stream' });
      const result = await store.appendToStream(stream, [newEvent('B')], { expectedRevision: 'stream_exists' });
      expect(result.nextExpectedRevision).to.equal(1);
    });

    it('appends with any whatever the stream holds', async () => {
      const stream = uniqueStream();
      await store.appendToStream(stream, [newEvent('A')], { expectedRevision: 'any' });
      const result = await store.appendToStream(stream, [newEvent('B')]);
      expect(result.nextExpectedRevision).to.equal(1);
    });

    it('is idempotent for the same event ids', async () => {
      const start = await store.headPosition();
      const stream = uniqueStream();
      const events = [newEvent('A'), newEvent('B')];
      const first = await store.appendToStream(stream, events, { expectedRevision: 'no_stream' });
      const again = await store.appendToStream(stream, events, { expectedRevision: 'no_stream' });
      expect(again).to.deep.equal(first);
      expect(await store.readStream(stream)).to.have.length(2);
      const readFromAll = await store.readAll({ fromPosition: start, filter: { kind: 'stream_prefix', prefixes: [stream] } });
      expect(readFromAll).to.have.length(2);
    });

    it('keeps the positions of $all in commit order across streams', async () => {
      const [one, two] = [uniqueStream(), uniqueStream()];
      const a = await store.appendToStream(one, [newEvent('A')]);
      const b = await store.appendToStream(two, [newEvent('B')]);
      const c = await store.appendToStream(one, [newEvent('C')]);
      expect(a.position).to.be.lessThan(b.position);
      expect(b.position).to.be.lessThan(c.position);
      expect(await store.headPosition()).to.be.at.least(c.position);
    });
  });

  describe('appending to several streams', () => {
    it('appends to each stream in the order given, with a result for each', async () => {
      const [first, second] = [uniqueStream(), uniqueStream()];
      await store.appendToStream(second, [newEvent('Opened')]);
      const results = await store.appendToStreams([
        { stream: first, events: [newEvent('FollowOn')], expectedRevision: 'no_stream' },
        { stream: second, events: [newEvent('Recorded'), newEvent('Ended')], expectedRevision: 0 },
      ]);
      expect(results.map((result) => result.nextExpectedRevision)).to.deep.equal([0, 2]);
      expect(results[0].position).to.be.lessThan(results[1].position);
      expect((await store.readStream(first)).map((event) => event.type)).to.deep.equal(['FollowOn']);
      expect((await store.readStream(second)).map((event) => event.type)).to.deep.equal(['Opened', 'Recorded', 'Ended']);
    });

    it('appends none when the first is refused', async () => {
      const [first, second] = [uniqueStream(), uniqueStream()];
      await store.appendToStream(first, [newEvent('There')]);
      const error = await rejection(
        store.appendToStreams([
          { stream: first, events: [newEvent('Stale')], expectedRevision: 'no_stream' },
          { stream: second, events: [newEvent('Never')] },
        ]),
      );
      expect(error).to.be.instanceOf(WrongExpectedRevisionError);
      expect((await store.readStream(first)).map((event) => event.type)).to.deep.equal(['There']);
      expect(await store.readStream(second)).to.deep.equal([]);
    });
  });

  describe('concurrency', () => {
    it('lets exactly one of two appends racing on one revision win', async () => {
      const stream = uniqueStream();
      await store.appendToStream(stream, [newEvent('Opened')], { expectedRevision: 'no_stream' });
      const outcomes = await Promise.allSettled([
        store.appendToStream(stream, [newEvent('Left')], { expectedRevision: 0 }),
        store.appendToStream(stream, [newEvent('Right')], { expectedRevision: 0 }),
      ]);
      const fulfilled = outcomes.filter((o) => o.status === 'fulfilled');
      const rejected = outcomes.filter((o): o is PromiseRejectedResult => o.status === 'rejected');
      expect(fulfilled).to.have.length(1);
      expect(rejected).to.have.length(1);
      expect(rejected[0].reason).to.be.instanceOf(WrongExpectedRevisionError);
      expect(await store.readStream(stream)).to.have.length(2);
    });

    it('lets exactly one of many racing creators create a stream', async () => {
      const stream = uniqueStream('reservation');
      const outcomes = await Promise.allSettled(
        Array.from({ length: 20 }, (_, index) => store.appendToStream(stream, [newEvent('Reserved', { by: index })], { expectedRevision: 'no_stream' })),
      );
      expect(outcomes.filter((o) => o.status === 'fulfilled')).to.have.length(1);
      expect(await store.readStream(stream)).to.have.length(1);
    });

    it('checks each concurrent append against its own revision', async () => {
      const streams = Array.from({ length: 10 }, () => uniqueStream());
      const appends = streams.map((stream, index) =>
        store.appendToStream(stream, [newEvent('A')], { expectedRevision: index === 3 ? 5 : 'no_stream' }),
      );
      const outcomes = await Promise.allSettled(appends);
      outcomes.forEach((outcome, index) => expect(outcome.status).to.equal(index === 3 ? 'rejected' : 'fulfilled'));
      for (const [index, stream] of streams.entries()) {
        expect(await store.readStream(stream)).to.have.length(index === 3 ? 0 : 1);
      }
    });
  });

  describe('reading a stream', () => {
    let stream: string;
    beforeEach(async () => {
      stream = uniqueStream();
      await store.appendToStream(stream, ['A', 'B', 'C', 'D'].map((type) => newEvent(type)));
    });

    it('reads forwards from a revision with a max count', async () => {
      const events = await store.readStream(stream, { fromRevision: 1, maxCount: 2 });
      expect(events.map((e) => e.type)).to.deep.equal(['B', 'C']);
    });

    it('reads backwards from the end and from a revision', async () => {
      expect((await store.readStream(stream, { direction: 'backwards', maxCount: 2 })).map((e) => e.type)).to.deep.equal(['D', 'C']);
      expect((await store.readStream(stream, { direction: 'backwards', fromRevision: 1 })).map((e) => e.type)).to.deep.equal(['B', 'A']);
    });

    it('reads a missing stream as empty', async () => {
      expect(await store.readStream(uniqueStream())).to.deep.equal([]);
      expect(await store.streamRevision(uniqueStream())).to.equal(null);
      expect(await store.streamRevision(stream)).to.equal(3);
    });
  });

  describe('reading $all', () => {
    it('reads forwards after a position, exclusive, and backwards before one', async () => {
      const start = await store.headPosition();
      const stream = uniqueStream();
      await store.appendToStream(stream, [newEvent('A'), newEvent('B'), newEvent('C')]);
      const forwards = await store.readAll({ fromPosition: start, filter: { kind: 'stream_prefix', prefixes: [stream] } });
      expect(forwards.map((e) => e.type)).to.deep.equal(['A', 'B', 'C']);
      const afterFirst = await store.readAll({ fromPosition: forwards[0].position, maxCount: 1, filter: { kind: 'stream_prefix', prefixes: [stream] } });
      expect(afterFirst.map((e) => e.type)).to.deep.equal(['B']);
      const backwards = await store.readAll({
        direction: 'backwards',
        fromPosition: forwards[2].position,
        maxCount: 2,
        filter: { kind: 'stream_prefix', prefixes: [stream] },
      });
      expect(backwards.map((e) => e.type)).to.deep.equal(['B', 'A']);
    });

    it('filters by event type, event type prefix and stream prefix', async () => {
      const start = await store.headPosition();
      const tag = randomUUID().replace(/-/g, '').slice(0, 8);
      const orders = `order${tag}-1`;
      const invoices = `invoice${tag}-1`;
      await store.appendToStream(orders, [newEvent(`OrderPlaced${tag}`), newEvent(`OrderShipped${tag}`)]);
      await store.appendToStream(invoices, [newEvent(`InvoiceSent${tag}`)]);
      const byType = await store.readAll({ fromPosition: start, filter: { kind: 'event_type', types: [`OrderShipped${tag}`, `InvoiceSent${tag}`] } });
      expect(byType.map((e) => e.type)).to.deep.equal([`OrderShipped${tag}`, `InvoiceSent${tag}`]);
      const byTypePrefix = await store.readAll({ fromPosition: start, filter: { kind: 'event_type_prefix', prefixes: ['Order'] } });
      expect(byTypePrefix.filter((e) => e.type.endsWith(tag)).map((e) => e.type)).to.deep.equal([`OrderPlaced${tag}`, `OrderShipped${tag}`]);
      const byStream = await store.readAll({ fromPosition: start, filter: { kind: 'stream_prefix', prefixes: [`invoice${tag}-`] } });
      expect(byStream.map((e) => e.stream)).to.deep.equal([invoices]);
    });
  });

  describe('subscribing to $all', () => {
    it('delivers historical events, then reports caught up, then delivers live ones', async () => {
      const start = await store.headPosition();
      const stream = uniqueStream();
      await store.appendToStream(stream, [newEvent('Old1'), newEvent('Old2')]);
      const subscription = store.subscribeToAll({ fromPosition: start, filter: { kind: 'stream_prefix', prefixes: [stream] } });
      const iterator = subscription[Symbol.asyncIterator]();
      try {
        const historical = await take(iterator, 2, isEvent);
        expect(historical.map((m) => isEvent(m) && m.event.type)).to.deep.equal(['Old1', 'Old2']);
        await take(iterator, 1, (m) => m.kind === 'caught_up');
        await store.appendToStream(stream, [newEvent('Live')]);
        const live = await take(iterator, 1, isEvent);
        expect(live.map((m) => isEvent(m) && m.event.type)).to.deep.equal(['Live']);
      } finally {
        await subscription.stop();
      }
      expect((await iterator.next()).done).to.equal(true);
    });

    it('reports checkpoints past events its filter skips', async () => {
      const start = await store.headPosition();
      const skipped = await store.appendToStream(uniqueStream(), [newEvent('Skipped')]);
      const subscription = store.subscribeToAll({ fromPosition: start, filter: { kind: 'event_type', types: [`Never${randomUUID()}`] } });
      const iterator = subscription[Symbol.asyncIterator]();
      try {
        const [checkpoint] = await take(iterator, 1, (m) => m.kind === 'checkpoint' || m.kind === 'caught_up');
        expect((checkpoint as { position: number }).position).to.be.at.least(skipped.position);
      } finally {
        await subscription.stop();
      }
    });
  });

  describe('stream deletion and metadata', () => {
    it('soft-deletes a stream: reads come back empty, a later append continues the revisions', async () => {
      const stream = uniqueStream();
      await store.appendToStream(stream, [newEvent('A'), newEvent('B')]);
      await store.deleteStream(stream, { expectedRevision: 1 });
      expect(await store.readStream(stream)).to.deep.equal([]);
      expect(await store.streamRevision(stream)).to.equal(null);
      const result = await store.appendToStream(stream, [newEvent('C')], { expectedRevision: 'no_stream' });
      expect(result.nextExpectedRevision).to.equal(2);
      expect((await store.readStream(stream)).map((e) => e.type)).to.deep.equal(['C']);
    });

    it('refuses to delete with a stale revision', async () => {
      const stream = uniqueStream();
      await store.appendToStream(stream, [newEvent('A'), newEvent('B')]);
      expect(await rejection(store.deleteStream(stream, { expectedRevision: 0 }))).to.be.instanceOf(WrongExpectedRevisionError);
      expect(await store.readStream(stream)).to.have.length(2);
    });

    it('stores metadata and honours truncateBefore and maxCount on reads', async () => {
      const stream = uniqueStream();
      await store.appendToStream(stream, ['A', 'B', 'C', 'D'].map((type) => newEvent(type)));
      await store.setStreamMetadata(stream, { truncateBefore: 1, custom: { owner: 'tests' } });
      expect(await store.getStreamMetadata(stream)).to.deep.include({ truncateBefore: 1, custom: { owner: 'tests' } });
      expect((await store.readStream(stream)).map((e) => e.type)).to.deep.equal(['B', 'C', 'D']);
      await store.setStreamMetadata(stream, { maxCount: 2 });
      expect((await store.readStream(stream)).map((e) => e.type)).to.deep.equal(['C', 'D']);
    });
  });
}
