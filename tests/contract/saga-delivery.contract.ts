// The SagaDelivery contract, run against every adapter: where a new consumer group starts,
// that an existing one resumes, that streams are handled side by side and each stream in
// order, and that a throwing handler gets its event again. Written to pass on a shared,
// non-empty store: groups and streams are unique per test, and since sagas take declared
// event types only, each test marks its events (a unique tenant) and ignores the rest.

import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import type { EventStore, RecordedEvent } from '../../application/ports/event-store';
import type { DeliverEvent, SagaDelivery, SagaSubscription, SagaSubscriptionOptions } from '../../application/ports/saga-delivery';
import { newEvent, uniqueStream } from '../support/events';
import { eventually } from '../support/stores';

export interface SagaDeliveryFixture {
  eventStore: EventStore;
  delivery: SagaDelivery;
  dispose(): Promise<void>;
}

export function sagaDeliveryContract(makeFixture: () => Promise<SagaDeliveryFixture>): void {
  let fixture: SagaDeliveryFixture;
  let subscriptions: SagaSubscription[];

  beforeEach(async () => {
    fixture = await makeFixture();
    subscriptions = [];
  });
  afterEach(async () => {
    await Promise.all(subscriptions.map((subscription) => subscription.stop()));
    await fixture.dispose();
  });

  const CONTRACTED = 'WorkspaceRenamed';
  /** A run of one test: its events carry it, and its subscriptions see only those. */
  const uniqueRun = (): string => `contract-${randomUUID()}`;
  const runOfGroup = new Map<string, string>();
  const contracted = (run: string, data: { label: string }) => newEvent(CONTRACTED, { tenant_id: run, workspace_id: 'w', name: data.label });
  const optionsFor = (run: string, overrides: Partial<SagaSubscriptionOptions> = {}): SagaSubscriptionOptions => {
    const group = `contract-${randomUUID()}`;
    runOfGroup.set(group, run);
    return { group, filter: { kind: 'event_type', types: [CONTRACTED] }, startFrom: 'head', concurrency: 4, maxAttempts: 3, backoffMs: () => 0, ...overrides };
  };
  const subscribe = async (options: SagaSubscriptionOptions, deliver: DeliverEvent): Promise<SagaSubscription> => {
    const run = runOfGroup.get(options.group);
    const subscription = await fixture.delivery.subscribe(options, async (event, attempt) => {
      if (event.metadata.tenant_id === run || (event.data as { tenant_id?: string }).tenant_id === run) await deliver(event, attempt);
    });
    subscriptions.push(subscription);
    return subscription;
  };
  /** Stops a subscription: the events it took are handled by the time this resolves. */
  const stop = async (subscription: SagaSubscription): Promise<void> => {
    await subscription.stop();
    subscriptions = subscriptions.filter((other) => other !== subscription);
  };
  const labelOf = (event: RecordedEvent): string => (event.data as { name: string }).name;

  it('starts a new group at the head of $all: events from before it are not delivered', async () => {
    const type = uniqueRun();
    await fixture.eventStore.appendToStream(uniqueStream(), [contracted(type, { label: 'before' })]);
    const seen: string[] = [];
    const subscription = await subscribe(optionsFor(type), async (event) => {
      seen.push(labelOf(event));
    });
    await fixture.eventStore.appendToStream(uniqueStream(), [contracted(type, { label: 'after' })]);
    await eventually(() => seen.includes('after'), 10_000, 'the event appended after the group began');
    await stop(subscription);
    expect(seen).to.deep.equal(['after']);
  });

  it('starts a group that asks for history at the beginning of $all', async () => {
    const type = uniqueRun();
    await fixture.eventStore.appendToStream(uniqueStream(), [contracted(type, { label: 'before' })]);
    const seen: string[] = [];
    await subscribe(optionsFor(type, { startFrom: 'history' }), async (event) => {
      seen.push(labelOf(event));
    });
    await fixture.eventStore.appendToStream(uniqueStream(), [contracted(type, { label: 'after' })]);
    await eventually(() => seen.includes('after'), 10_000, 'the event appended after the group began');
    expect(seen).to.include('before');
  });

  it('resumes an existing group where it stopped, whatever its start', async () => {
    const type = uniqueRun();
    const options = optionsFor(type);
    const seen: string[] = [];
    const deliver: DeliverEvent = async (event) => {
      seen.push(labelOf(event));
    };
    const first = await subscribe(options, deliver);
    await fixture.eventStore.appendToStream(uniqueStream(), [contracted(type, { label: 'one' })]);
    await eventually(() => seen.includes('one'), 10_000, 'the first event');
    await stop(first);
    await fixture.eventStore.appendToStream(uniqueStream(), [contracted(type, { label: 'while stopped' })]);
    await subscribe(options, deliver);
    await fixture.eventStore.appendToStream(uniqueStream(), [contracted(type, { label: 'two' })]);
    await eventually(() => seen.includes('two'), 10_000, 'the event after the restart');
    expect(seen).to.include('while stopped');
  });

  it('handles another stream while one stream waits on a slow call, and one stream in order', async () => {
    const type = uniqueRun();
    let release!: () => void;
    const slowCall = new Promise<void>((resolve) => {
      release = resolve;
    });
    const log: string[] = [];
    await subscribe(optionsFor(type), async (event) => {
      const label = labelOf(event);
      log.push(`start ${label}`);
      if (label === 'A1') await slowCall;
      log.push(`end ${label}`);
    });
    try {
      await fixture.eventStore.appendToStream(uniqueStream('slow'), [contracted(type, { label: 'A1' }), contracted(type, { label: 'A2' })]);
      await fixture.eventStore.appendToStream(uniqueStream('quick'), [contracted(type, { label: 'B1' })]);
      await eventually(() => log.includes('end B1'), 10_000, 'the other stream handled');
      // A2 is behind A1 in its stream: it cannot have started while A1 waits.
      expect(log).to.include('start A1').and.not.include('start A2');
    } finally {
      release();
    }
    await eventually(() => log.includes('end A2'), 10_000, 'the slow stream finished');
    expect(log.filter((line) => line.endsWith('A1') || line.endsWith('A2'))).to.deep.equal(['start A1', 'end A1', 'start A2', 'end A2']);
  });

  it('delivers an event again, with the next attempt number, when its handler throws', async () => {
    const type = uniqueRun();
    const attempts: number[] = [];
    await subscribe(optionsFor(type), async (_event, attempt) => {
      attempts.push(attempt);
      if (attempt === 1) throw new Error('the store was unreachable');
    });
    await fixture.eventStore.appendToStream(uniqueStream(), [contracted(type, { label: 'x' })]);
    await eventually(() => attempts.length === 2, 10_000, 'the second attempt');
    expect(attempts).to.deep.equal([1, 2]);
  });
}
