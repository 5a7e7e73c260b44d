// Two read stores behind one port (infrastructure/read-store/routed.ts): a projection's
// collections, state, lease and rebuild shadows go to the store it is routed to, everything else
// to the main one, and nothing is split across them.

import { expect } from 'chai';
import type { ProjectionState } from '../../application/ports/read-store';
import { RoutedReadStore } from '../../infrastructure/read-store/routed';
import { SqliteReadStore } from '../../infrastructure/read-store/sqlite';
import { type SqliteDatabase, openSqliteDatabase } from '../../infrastructure/sqlite/database';
import { temporaryDirectory } from '../support/files';

const state = (name: string, checkpoint: number): ProjectionState => ({ name, version: 1, checkpoint, status: 'running', error: null, updated_at: new Date(0).toISOString() });

describe('routed read store', () => {
  let dir: ReturnType<typeof temporaryDirectory>;
  let mainDb: SqliteDatabase;
  let otherDb: SqliteDatabase;
  let main: SqliteReadStore;
  let other: SqliteReadStore;
  let routed: RoutedReadStore;

  beforeEach(async () => {
    dir = temporaryDirectory();
    mainDb = openSqliteDatabase(`${dir.path}/main.db`);
    otherDb = openSqliteDatabase(`${dir.path}/other.db`);
    main = new SqliteReadStore(mainDb);
    other = new SqliteReadStore(otherDb);
    routed = new RoutedReadStore(main, other, { projections: [{ name: 'ledger', collections: [{ name: 'entries', indexes: [{ field: 'account' }] }] }] });
    await routed.ensureCollection({ name: 'entries', indexes: [{ field: 'account' }] });
    await routed.ensureCollection({ name: 'people' });
  });
  afterEach(async () => {
    await routed.close();
    mainDb.close();
    otherDb.close();
    dir.remove();
  });

  it("commits a routed projection's documents and checkpoint in its own store, and the rest in the main one", async () => {
    await routed.commitProjection({ projection: 'ledger', expectedCheckpoint: 0, state: state('ledger', 4), operations: [{ kind: 'put', collection: 'entries', doc: { id: 'e1', account: 'a' } }] });
    await routed.commitProjection({ projection: 'people', expectedCheckpoint: 0, state: state('people', 5), operations: [{ kind: 'put', collection: 'people', doc: { id: 'p1' } }] });

    expect(await other.collection('entries').get('e1')).to.deep.equal({ id: 'e1', account: 'a' });
    expect(await other.getProjectionState('ledger')).to.include({ checkpoint: 4 });
    expect(await main.getProjectionState('ledger')).to.equal(null);
    expect(await main.collection('people').get('p1')).to.deep.equal({ id: 'p1' });
    expect(await other.getProjectionState('people')).to.equal(null);
    // Read back through the router, filtered on a declared field of the routed collection.
    expect((await routed.collection('entries').find({ where: { account: 'a' } })).items.map((doc) => doc.id)).to.deep.equal(['e1']);
    expect((await routed.listProjectionStates()).map((stored) => [stored.name, stored.checkpoint])).to.deep.equal([
      ['ledger', 4],
      ['people', 5],
    ]);
  });

  it('refuses a commit that would write a collection of the other store, and writes nothing', async () => {
    let refused: unknown = null;
    try {
      await routed.commitProjection({ projection: 'ledger', expectedCheckpoint: 0, state: state('ledger', 4), operations: [{ kind: 'put', collection: 'people', doc: { id: 'p1' } }] });
    } catch (error) {
      refused = error;
    }
    expect(String(refused)).to.contain('ledger writes people');
    expect(await routed.getProjectionState('ledger')).to.equal(null);
    expect(await routed.collection('people').count()).to.equal(0);
  });

  it("routes a rebuild's shadow collection and state, and the lease, with the projection", async () => {
    await routed.ensureCollection({ name: 'entries__rebuild', indexes: [{ field: 'account' }] });
    await routed.commitProjection({ projection: 'ledger__rebuild', expectedCheckpoint: 0, state: state('ledger__rebuild', 9), operations: [{ kind: 'put', collection: 'entries__rebuild', doc: { id: 'e2', account: 'b' } }] });
    expect(await other.collection('entries__rebuild').get('e2')).to.deep.equal({ id: 'e2', account: 'b' });
    await routed.promoteShadow({ projection: 'ledger', collections: [{ shadow: 'entries__rebuild', live: 'entries' }], state: state('ledger', 9) });
    expect(await other.collection('entries').get('e2')).to.deep.equal({ id: 'e2', account: 'b' });

    const lease = await routed.acquireLease({ projection: 'ledger', holder: 'thread', now: new Date(1000), ttlMs: 1000, version: 1 });
    expect(lease?.holder).to.equal('thread');
    expect((await other.getProjectionState('ledger'))?.lease?.holder).to.equal('thread');
    expect(await main.getProjectionState('ledger')).to.equal(null);
  });

  it('lists only the states of the store a projection lives in: one left behind in the main file before the move is not its', async () => {
    await main.putProjectionState(state('ledger', 100));
    await routed.putProjectionState(state('ledger', 3));
    expect((await routed.listProjectionStates()).map((stored) => [stored.name, stored.checkpoint])).to.deep.equal([['ledger', 3]]);
    expect(await routed.getProjectionState('ledger')).to.include({ checkpoint: 3 });
  });
});
