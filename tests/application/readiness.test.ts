import { expect } from 'chai';
import { type ProjectionHealth, checkReadiness } from '../../application/operations/readiness';
import type { EventStore } from '../../application/ports/event-store';
import type { ReadStore } from '../../application/ports/read-store';

describe('readiness', () => {
  const eventStore = { headPosition: async () => 100 } as unknown as EventStore;
  const readStore = { ping: async () => true } as unknown as ReadStore;
  const ready = (projections: ProjectionHealth[]) => checkReadiness({ eventStore, readStore, projectionStatus: async () => projections, maxProjectionLag: 10 });

  it('counts a projection another process holds as ready while its stored checkpoint is within the lag', async () => {
    const report = await ready([
      { name: 'tenants', status: 'running', lag: 0, holder: 'here', error: null },
      { name: 'sessions', status: 'standby', lag: 10, holder: 'there', error: null },
    ]);
    expect(report.ready).to.equal(true);
    expect(report.checks.projections).to.deep.equal([
      { name: 'tenants', status: 'running', lag: 0, holder: 'here', ok: true },
      { name: 'sessions', status: 'standby', lag: 10, holder: 'there', ok: true },
    ]);
  });

  it('is not ready when a projection held elsewhere lags or its holder recorded a failure', async () => {
    expect((await ready([{ name: 'sessions', status: 'standby', lag: 11, holder: 'there', error: null }])).ready).to.equal(false);
    expect((await ready([{ name: 'sessions', status: 'standby', lag: 0, holder: 'there', error: 'cannot project Poison' }])).ready).to.equal(false);
    expect((await ready([{ name: 'sessions', status: 'failed', lag: 0, holder: 'here', error: 'cannot project Poison' }])).ready).to.equal(false);
    expect((await ready([{ name: 'sessions', status: 'rebuilding', lag: 0, holder: 'here' }])).ready).to.equal(false);
  });
});
