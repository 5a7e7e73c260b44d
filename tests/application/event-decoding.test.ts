// Every recorded event is decoded and upcast at one place: an event appended in an old shape
// reaches the decider (through the command handler), a projection and a saga in the current
// shape, and an event that cannot be decoded stops a projection, naming it.

import { expect } from 'chai';
import { handleCommand } from '../../application/command-handling/handle-command';
import { membershipAggregate } from '../../application/membership/memberships';
import { EventDecodingError, type RecordedOf } from '../../application/ports/domain-event-store';
import { silentLogger } from '../../application/ports/logger';
import { CheckpointedSagaDelivery } from '../../application/sagas/checkpointed-delivery';
import type { Saga } from '../../application/sagas/saga';
import { SagaRunner } from '../../application/sagas/saga-runner';
import type { MembershipEvent } from '../../domain/membership/membership';
import { membershipStream } from '../../domain/membership/membership';
import { MEMBERSHIPS, membershipId, membershipsProjection } from '../../projections/memberships';
import type { EventProjection } from '../../projections/projection';
import { ProjectionRunner } from '../../projections/runner';
import { userContext } from '../support/context';
import { newEvent } from '../support/events';
import { type EmbeddedStores, ManualClock, embeddedStores, eventually } from '../support/stores';

const T = 't1';
const joined = (userId: string, role: 'owner' | 'member') => newEvent('MemberJoined', { tenant_id: T, user_id: userId, role, joined_at: '2026-01-01T00:00:00.000Z' });
/** MemberRemoved as version 1 wrote it: no `removed_at`, and no schema_version in the metadata. */
const removedV1 = (userId: string) => newEvent('MemberRemoved', { tenant_id: T, user_id: userId, reason: 'removed' });

describe('reading events: decoded and upcast at one place', () => {
  let stores: EmbeddedStores;
  let stops: Array<() => Promise<void>>;

  beforeEach(() => {
    stores = embeddedStores(new ManualClock());
    stops = [];
  });
  afterEach(async () => {
    for (const stop of stops) await stop();
    await stores.dispose();
  });

  function startProjections(...projections: ConstructorParameters<typeof ProjectionRunner>[1]): ProjectionRunner {
    const runner = new ProjectionRunner({ eventStore: stores.events, readStore: stores.readStore, clock: stores.clock }, projections, { retryDelayMs: 20, idleCheckpointMs: 0 });
    stops.push(() => runner.stop());
    return runner;
  }

  it('gives the decider, a projection and a saga an event appended in an old shape in its current shape', async () => {
    const stream = membershipStream(T);
    await stores.eventStore.appendToStream(stream, [joined('olga', 'owner'), joined('mia', 'member'), removedV1('mia')]);

    // The decider, through the command handler: its evolve sees version 2, and its state is right.
    const seenByDecider: MembershipEvent[] = [];
    const recordingAggregate = {
      ...membershipAggregate,
      decider: {
        ...membershipAggregate.decider,
        evolve: (state: Parameters<typeof membershipAggregate.decider.evolve>[0], event: MembershipEvent) => {
          seenByDecider.push(event);
          return membershipAggregate.decider.evolve(state, event);
        },
      },
    };
    const again = await handleCommand(stores.commands, recordingAggregate, stream, { type: 'AddMember', data: { tenant_id: T, user_id: 'mia', role: 'member' } }, userContext({ tenant_id: T }));
    expect(again.events.map((event) => event.type)).to.deep.equal(['MemberJoined']);
    expect(seenByDecider.find((event) => event.type === 'MemberRemoved')?.data).to.deep.equal({ tenant_id: T, user_id: 'mia', reason: 'removed', removed_at: null });

    // A projection, run by the projection runner.
    const seenByProjection: Array<RecordedOf<'MemberRemoved'>['data']> = [];
    const recordingProjection: EventProjection<'MemberRemoved'> = {
      name: 'removals',
      version: 1,
      collections: [],
      handles: ['MemberRemoved'],
      apply(event) {
        seenByProjection.push(event.data);
      },
    };
    const projections = startProjections(recordingProjection, membershipsProjection);
    await projections.start();
    expect(await projections.waitFor(again.position, { timeoutMs: 5000 })).to.equal(true);
    expect(seenByProjection).to.deep.equal([{ tenant_id: T, user_id: 'mia', reason: 'removed', removed_at: null }]);
    expect(await stores.readStore.collection(MEMBERSHIPS).get(membershipId(T, 'mia'))).to.include({ role: 'member', status: 'active' });

    // A saga, through embedded saga delivery.
    const seenBySaga: Array<RecordedOf<'MemberRemoved'>['data']> = [];
    const recordingSaga: Saga<'MemberRemoved'> = {
      name: 'removal_recorder',
      version: 1,
      // The events are appended before the group exists.
      startFrom: 'history',
      filter: { kind: 'event_type', types: ['MemberRemoved'] },
      async handle(event) {
        seenBySaga.push(event.data);
      },
    };
    const delivery = new CheckpointedSagaDelivery({ eventStore: stores.events, readStore: stores.readStore, clock: stores.clock }, { retryPollMs: 10, idleCheckpointMs: 0 });
    const sagas = new SagaRunner(delivery, [recordingSaga], silentLogger, { maxAttempts: 3 });
    stops.push(() => sagas.stop());
    await sagas.start();
    await eventually(() => seenBySaga.length === 1, 5000, 'saga delivery');
    expect(seenBySaga).to.deep.equal([{ tenant_id: T, user_id: 'mia', reason: 'removed', removed_at: null }]);
  });

  it('decodes an event the store shares (frozen) once, and hands out the same frozen event again; one a reader owns, anew each time', async () => {
    const stream = membershipStream(T);
    await stores.eventStore.appendToStream(stream, [joined('olga', 'owner'), removedV1('olga')]);
    // The store shares an event from its second read on (the first reader gets its own).
    await stores.events.readStream(stream);
    const [firstRead, secondRead] = [await stores.events.readStream(stream), await stores.events.readStream(stream)];
    expect(secondRead[1]).to.equal(firstRead[1]);
    expect(Object.isFrozen(firstRead[1]) && Object.isFrozen(firstRead[1].data)).to.equal(true);
    // Upcast all the same: version 1 had no removed_at.
    expect(firstRead[1].type === 'MemberRemoved' && 'removed_at' in firstRead[1].data).to.equal(true);
    const { decodeRecordedEvent } = await import('../../application/events/decoding-event-store');
    const [stored] = await stores.eventStore.readStream(stream);
    const unfrozen = { ...stored, data: { ...(stored.data as object) }, metadata: { ...stored.metadata } };
    const decoded = decodeRecordedEvent(unfrozen);
    expect(decodeRecordedEvent(unfrozen)).to.not.equal(decoded);
    expect(Object.isFrozen(decoded)).to.equal(false);
  });

  it('records the schema version each event is written with', async () => {
    await stores.eventStore.appendToStream(membershipStream(T), [joined('olga', 'owner'), joined('mia', 'member')]);
    const removal = await handleCommand(stores.commands, membershipAggregate, membershipStream(T), { type: 'RemoveMember', data: { actor_user_id: 'olga', user_id: 'mia' } }, userContext({ tenant_id: T }));
    const [stored] = await stores.eventStore.readStream(membershipStream(T), { fromRevision: removal.revision });
    expect(stored.metadata.schema_version).to.equal(2);
    expect(stored.data).to.deep.equal({ tenant_id: T, user_id: 'mia', reason: 'removed', removed_at: stores.clock.now().toISOString() });
  });

  it('stops a projection at an event it cannot decode, naming the event, and applies what came before', async () => {
    const good = joined('olga', 'owner');
    const broken = newEvent('MemberRemoved', { tenant_id: T, reason: 'removed' });
    await stores.eventStore.appendToStream(membershipStream(T), [good]);
    const { position } = await stores.eventStore.appendToStream(membershipStream(T), [broken]);
    const projections = startProjections(membershipsProjection);
    await projections.start();
    await eventually(async () => (await projections.status())[0].status === 'failed', 5000, 'failed status');
    const [report] = await projections.status();
    expect(report.error).to.equal(
      `event MemberRemoved ${broken.id} (stream membership-${T} revision 1, position ${position}) cannot be read: data.user_id: expected string, got undefined after upcasting from version 1 to 2`,
    );
    expect(report.checkpoint).to.equal(position - 1);
    expect(await stores.readStore.collection(MEMBERSHIPS).get(membershipId(T, 'olga'))).to.include({ role: 'owner' });
    // Stored too, so `projections status` shows it from another process.
    expect(await stores.readStore.getProjectionState('memberships')).to.include({ status: 'failed', error: report.error });
  });

  it('refuses, naming it, an event of an undeclared type or of another aggregate in a stream the handler loads', async () => {
    await stores.eventStore.appendToStream(membershipStream('t2'), [newEvent('Mystery')]);
    await stores.eventStore.appendToStream(membershipStream('t3'), [newEvent('WorkspaceRenamed', { tenant_id: 't3', workspace_id: 'w', name: 'W' })]);
    const add = (tenantId: string) =>
      handleCommand(stores.commands, membershipAggregate, membershipStream(tenantId), { type: 'AddMember', data: { tenant_id: tenantId, user_id: 'u', role: 'owner' } }, userContext());
    const unknown = await add('t2').then(() => null, (error: unknown) => error);
    expect(unknown).to.be.instanceOf(EventDecodingError).and.to.include({ reason: 'unknown_type', stream: 'membership-t2', revision: 0, type: 'Mystery' });
    const foreign = await add('t3').then(() => null, (error: unknown) => error);
    expect(foreign).to.be.instanceOf(EventDecodingError).and.to.include({ reason: 'unexpected_type', stream: 'membership-t3', type: 'WorkspaceRenamed' });
  });

  it('dead-letters at once, naming it, an event a saga cannot decode, and goes on with the next', async () => {
    const seen: string[] = [];
    const saga: Saga<'MemberRemoved'> = {
      name: 'removal_recorder',
      version: 1,
      // The events are appended before the group exists.
      startFrom: 'history',
      filter: { kind: 'event_type', types: ['MemberRemoved'] },
      async handle(event) {
        seen.push(event.data.user_id);
      },
    };
    const delivery = new CheckpointedSagaDelivery({ eventStore: stores.events, readStore: stores.readStore, clock: stores.clock }, { retryPollMs: 10, idleCheckpointMs: 0 });
    const sagas = new SagaRunner(delivery, [saga], silentLogger, { maxAttempts: 5 });
    stops.push(() => sagas.stop());
    await sagas.start();
    const broken = newEvent('MemberRemoved', { tenant_id: T, reason: 'removed' });
    await stores.eventStore.appendToStream(membershipStream(T), [broken, removedV1('mia')]);
    await eventually(() => seen.length === 1, 5000, 'the next event delivered');
    expect(seen).to.deep.equal(['mia']);
    const [failure] = await delivery.listFailures();
    expect(failure).to.include({ event_id: broken.id, event_type: 'MemberRemoved', status: 'dead_lettered', attempts: 5 });
    expect(failure.last_error).to.match(/^event MemberRemoved .* cannot be read: data\.user_id: expected string, got undefined/);
  });
});
