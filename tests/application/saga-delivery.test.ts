import { expect } from 'chai';
import type { RecordedEvent } from '../../application/ports/event-store';
import { CheckpointedSagaDelivery } from '../../application/sagas/checkpointed-delivery';
import type { Saga } from '../../application/sagas/saga';
import { SagaRunner } from '../../application/sagas/saga-runner';
import { silentLogger } from '../../application/ports/logger';
import { newEvent } from '../support/events';
import { type EmbeddedStores, ManualClock, embeddedStores, eventually } from '../support/stores';

/** A declared event the recording saga reacts to. */
const ordered = () => newEvent('WorkspaceRenamed', { tenant_id: 't1', workspace_id: 'w1', name: 'Orders' });

describe('saga delivery (embedded, checkpointed)', () => {
  let stores: EmbeddedStores;
  let clock: ManualClock;
  let runner: SagaRunner | null;

  beforeEach(() => {
    clock = new ManualClock();
    stores = embeddedStores(clock);
    runner = null;
  });
  afterEach(async () => {
    await runner?.stop();
    await stores.dispose();
  });

  function start(saga: Saga, maxAttempts = 3): { delivery: CheckpointedSagaDelivery; runner: SagaRunner } {
    const delivery = new CheckpointedSagaDelivery({ eventStore: stores.events, readStore: stores.readStore, clock }, { retryPollMs: 10, idleCheckpointMs: 0 });
    runner = new SagaRunner(delivery, [saga], silentLogger, { maxAttempts, backoffMs: (attempt) => attempt * 1000 });
    return { delivery, runner };
  }

  function recordingSaga(behaviour: (event: RecordedEvent, attempt: number) => void = () => undefined) {
    const calls: Array<{ type: string; key: string; attempt: number }> = [];
    const saga: Saga = {
      name: 'recorder',
      version: 1,
      filter: { kind: 'event_type', types: ['WorkspaceRenamed'] },
      async handle(event, context) {
        calls.push({ type: event.type, key: context.idempotencyKey, attempt: context.attempt });
        behaviour(event, context.attempt);
      },
    };
    return { saga, calls };
  }

  it('delivers each matching event once with a stable idempotency key', async () => {
    const { saga, calls } = recordingSaga();
    const started = start(saga);
    await started.runner.start();
    const event = ordered();
    await stores.eventStore.appendToStream('order-1', [event, newEvent('Ignored')]);
    await eventually(() => calls.length === 1, 5000, 'delivery');
    expect(calls).to.deep.equal([{ type: 'WorkspaceRenamed', key: `recorder:${event.id}`, attempt: 1 }]);
  });

  it('does not deliver again after a restart', async () => {
    const { saga, calls } = recordingSaga();
    let started = start(saga);
    await started.runner.start();
    const first = ordered();
    await stores.eventStore.appendToStream('order-1', [first]);
    await eventually(() => calls.length === 1, 5000, 'first delivery');
    await started.runner.stop();
    started = start(saga);
    await started.runner.start();
    // The sentinel: an event after the first. A redelivery of the first would reach the
    // handler before it, since the group resumes in log order.
    const second = ordered();
    await stores.eventStore.appendToStream('order-2', [second]);
    await eventually(() => calls.some((call) => call.key === `recorder:${second.id}`), 5000, 'second delivery');
    expect(calls.map((call) => call.key)).to.deep.equal([`recorder:${first.id}`, `recorder:${second.id}`]);
  });

  it('starts a new group at the head: a new saga, or a new version, does not act on earlier events', async () => {
    await stores.eventStore.appendToStream('order-old', [ordered()]);
    const { saga, calls } = recordingSaga();
    const first = start(saga);
    await first.runner.start();
    const sentinel = ordered();
    await stores.eventStore.appendToStream('order-new', [sentinel]);
    await eventually(() => calls.length > 0, 5000, 'the event after the start');
    await first.runner.stop();
    expect(calls.map((call) => call.key)).to.deep.equal([`recorder:${sentinel.id}`]);

    const next = recordingSaga();
    const second = start({ ...next.saga, version: 2 });
    await second.runner.start();
    const later = ordered();
    await stores.eventStore.appendToStream('order-later', [later]);
    await eventually(() => next.calls.length > 0, 5000, 'the event after version 2 started');
    await second.runner.stop();
    expect(next.calls.map((call) => call.key)).to.deep.equal([`recorder:${later.id}`]);
  });

  it('starts at the beginning of $all a saga that declares it needs history', async () => {
    const old = ordered();
    await stores.eventStore.appendToStream('order-old', [old]);
    const { saga, calls } = recordingSaga();
    const started = start({ ...saga, startFrom: 'history' });
    await started.runner.start();
    await eventually(() => calls.length === 1, 5000, 'the earlier event');
    expect(calls[0].key).to.equal(`recorder:${old.id}`);
  });

  it('keeps the checkpoint before an unfinished event while later ones finish, then passes them all', async () => {
    let release!: () => void;
    const slowCall = new Promise<void>((resolve) => {
      release = resolve;
    });
    const handled: string[] = [];
    const saga: Saga = {
      name: 'recorder',
      version: 1,
      filter: { kind: 'event_type', types: ['WorkspaceRenamed'] },
      async handle(event) {
        if (event.stream === 'order-slow') await slowCall;
        handled.push(event.stream);
      },
    };
    const started = start(saga);
    await started.runner.start();
    try {
      const slow = await stores.eventStore.appendToStream('order-slow', [ordered()]);
      const quick = await stores.eventStore.appendToStream('order-quick', [ordered(), ordered()]);
      await eventually(() => handled.length === 2, 5000, 'the quick stream');
      const checkpoint = async (): Promise<number> => (await stores.readStore.getProjectionState('saga:recorder-v1'))!.checkpoint;
      // A crash now must hand the slow event to the next process.
      expect(await checkpoint()).to.be.lessThan(slow.position);
      release();
      await eventually(async () => (await checkpoint()) >= quick.position, 5000, 'the checkpoint past every event');
    } finally {
      release();
    }
  });

  it('stores the checkpoint of a saga that asks for it at most every checkpointEveryMs; a failure at once; a stop what passed', async () => {
    const failing = new Set<string>();
    const handled: string[] = [];
    const saga: Saga = {
      name: 'recorder',
      version: 1,
      filter: { kind: 'event_type', types: ['WorkspaceRenamed'] },
      checkpointEveryMs: 60_000,
      async handle(event) {
        handled.push(event.stream);
        if (failing.has(event.stream)) throw new Error('unexpected');
      },
    };
    const { delivery, runner: started } = start(saga);
    await started.start();
    const checkpoint = async (): Promise<number> => (await stores.readStore.getProjectionState('saga:recorder-v1'))!.checkpoint;
    // The first batch is stored (none was for a minute); the next ones wait for the minute (the clock stands still).
    const first = await stores.eventStore.appendToStream('order-1', [ordered()]);
    await eventually(async () => (await checkpoint()) >= first.position, 5000, 'the first checkpoint');
    await stores.eventStore.appendToStream('order-2', [ordered()]);
    await stores.eventStore.appendToStream('order-3', [ordered()]);
    await eventually(() => handled.length === 3, 5000, 'later events handled');
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(await checkpoint()).to.equal(first.position);
    // A failure is recorded with the checkpoint that passes it, at once.
    failing.add('order-4');
    const fourth = await stores.eventStore.appendToStream('order-4', [ordered()]);
    await eventually(async () => (await delivery.listFailures()).length === 1, 5000, 'the failure stored');
    expect(await checkpoint()).to.equal(fourth.position);
    // A stop stores what passed in memory.
    const fifth = await stores.eventStore.appendToStream('order-5', [ordered()]);
    await eventually(() => handled.length === 5, 5000, 'the fifth event handled');
    expect(await checkpoint()).to.equal(fourth.position);
    await started.stop();
    runner = null;
    expect(await checkpoint()).to.be.at.least(fifth.position);
  });

  it('records a failure, retries it with back-off, and forgets it after success', async () => {
    const { saga, calls } = recordingSaga((_event, attempt) => {
      if (attempt < 2) throw new Error('connector unreachable');
    });
    const { delivery, runner: started } = start(saga);
    await started.start();
    await stores.eventStore.appendToStream('order-1', [ordered()]);
    await eventually(async () => (await delivery.listFailures()).length === 1, 5000, 'failure recorded');
    const [failure] = await delivery.listFailures();
    expect(failure).to.deep.include({ group: 'recorder-v1', attempts: 1, status: 'retrying', last_error: 'connector unreachable' });
    // The sentinel: several retry passes have looked at the list (each reads the clock); none found it due.
    const readsBefore = clock.reads;
    await eventually(() => clock.reads >= readsBefore + 5, 5000, 'retry passes');
    expect(calls).to.have.length(1);
    clock.advance(1000);
    await eventually(async () => (await delivery.listFailures()).length === 0, 5000, 'failure cleared');
    expect(calls.map((call) => call.attempt)).to.deep.equal([1, 2]);
  });

  it('dead-letters after the last attempt and keeps it for the operator', async () => {
    const { saga, calls } = recordingSaga(() => {
      throw new Error('always fails');
    });
    const { delivery, runner: started } = start(saga, 2);
    await started.start();
    const event = ordered();
    await stores.eventStore.appendToStream('order-1', [event]);
    await eventually(async () => (await delivery.listFailures()).length === 1, 5000, 'failure recorded');
    clock.advance(1000);
    await eventually(async () => (await delivery.listFailures())[0]?.status === 'dead_lettered', 5000, 'dead letter');
    expect(calls).to.have.length(2);
    expect(await delivery.retryDeadLetter('recorder-v1', event.id)).to.equal(true);
    await eventually(() => calls.length === 3, 5000, 'operator retry');
  });

  it('delivers a group in one process at a time; another takes over when it stops', async () => {
    const deliveredBy = { one: [] as string[], two: [] as string[] };
    const saga = (who: 'one' | 'two'): Saga => ({
      name: 'recorder',
      version: 1,
      filter: { kind: 'event_type', types: ['WorkspaceRenamed'] },
      async handle(event) {
        deliveredBy[who].push(event.id);
      },
    });
    const delivery = (holder: string): CheckpointedSagaDelivery =>
      new CheckpointedSagaDelivery({ eventStore: stores.events, readStore: stores.readStore, clock }, { retryPollMs: 10, idleCheckpointMs: 0, lease: { holder, ttlMs: 300 } });
    const one = new SagaRunner(delivery('one'), [saga('one')], silentLogger, { maxAttempts: 3 });
    const two = new SagaRunner(delivery('two'), [saga('two')], silentLogger, { maxAttempts: 3 });
    runner = two;
    try {
      await one.start();
      await eventually(async () => (await stores.readStore.getProjectionState('saga:recorder-v1'))?.lease?.holder === 'one', 5000, 'first holds the group');
      await two.start();
      const first = [ordered(), ordered(), ordered()];
      await stores.eventStore.appendToStream('order-1', first);
      await eventually(() => deliveredBy.one.length === 3, 5000, 'deliveries by the holder');
      await one.stop();
      const second = [ordered(), ordered()];
      await stores.eventStore.appendToStream('order-2', second);
      await eventually(() => deliveredBy.two.length === 2, 5000, 'deliveries after the take-over');
      expect(deliveredBy.one).to.deep.equal(first.map((event) => event.id));
      expect(deliveredBy.two).to.deep.equal(second.map((event) => event.id));
      expect((await stores.readStore.getProjectionState('saga:recorder-v1'))?.lease?.holder).to.equal('two');
    } finally {
      await one.stop();
    }
  });
});
