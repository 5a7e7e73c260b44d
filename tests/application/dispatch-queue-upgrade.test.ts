// The dispatch queue reads each kind of waiting event (single, sequenced) along the index of
// its own due time, which the orchestration events' read model has from version 2 on. While a
// store built by version 1 is served (a rebuild into version 2 runs beside it until it is
// swapped in), the queue reads that one's `due_at`, so an upgrade never holds dispatch up.

import { expect } from 'chai';
import { nextDispatchable } from '../../application/orchestration/dispatch-queue';
import { ORCHESTRATION_EVENTS, orchestrationEventsProjection } from '../../projections/orchestration-events';
import { SqliteReadStore } from '../../infrastructure/read-store/sqlite';
import { type EmbeddedStores, embeddedStores } from '../support/stores';

describe('dispatch queue over a read model of an earlier version', () => {
  let stores: EmbeddedStores;
  const at = '2026-11-28T09:00:00.000Z';
  const now = new Date('2026-11-28T09:01:00.000Z');

  beforeEach(async () => {
    stores = embeddedStores({ now: () => now });
    for (const spec of orchestrationEventsProjection.collections) await stores.readStore.ensureCollection(spec);
    // A queued single event and a queued sequenced one as version 1 wrote them: `due_at` alone.
    const base = { tenant_id: 't1', name: 'shop.order.created', status: 'queued', due_at: at, not_before: at, received_at: at, expires_at: null, attempts: [], attempts_since_requeue: 0, sequence_gap: null };
    const events = stores.readStore.collection(ORCHESTRATION_EVENTS);
    await events.put({ id: 'single-1', ...base, sequence_key: null, sequence_n: null });
    await events.put({ id: 'sequenced-1', ...base, sequence_key: 'order-7', sequence_n: 1 });
  });
  afterEach(() => stores.dispose());

  const served = (version: number) =>
    stores.readStore.putProjectionState({ name: orchestrationEventsProjection.name, version, checkpoint: 10, status: 'running', error: null, updated_at: at });
  const dispatchable = async (readStore: SqliteReadStore) =>
    (await nextDispatchable({ ...stores.commands, readStore, orchestration: { sequenceGapWaitMs: 60_000 } })).map((candidate) => candidate.event_id).sort();

  it('reads due_at while version 1 is served, and the split due times from version 2 on', async () => {
    await served(1);
    expect(await dispatchable(stores.readStore)).to.deep.equal(['sequenced-1', 'single-1']);

    await served(2);
    // A store that saw version 2 once reads the split fields, which these documents lack.
    const upgraded = new SqliteReadStore(stores.db);
    expect(await dispatchable(upgraded)).to.deep.equal([]);
    await upgraded.collection(ORCHESTRATION_EVENTS).patch('single-1', { single_due_at: at });
    await upgraded.collection(ORCHESTRATION_EVENTS).patch('sequenced-1', { sequence_due_at: at });
    expect(await dispatchable(upgraded)).to.deep.equal(['sequenced-1', 'single-1']);
  });
});
