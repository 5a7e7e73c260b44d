import { expect } from 'chai';
import { createTenant, renameTenant, suspendTenant } from '../../application/tenant/tenant-commands';
import { AUDIT_LOG, type AuditLogEntry, auditLogProjection } from '../../projections/audit-log';
import { ProjectionRunner } from '../../projections/runner';
import { TENANTS, type TenantDocument, tenantsProjection } from '../../projections/tenants';
import { userContext } from '../support/context';
import { type CounterDocument, countingProjection } from '../support/counting-projection';
import { newEvent } from '../support/events';
import { type EmbeddedStores, embeddedStores, eventually } from '../support/stores';

describe('projection runner', () => {
  let stores: EmbeddedStores;
  let runners: ProjectionRunner[];

  const runner = (projections = [tenantsProjection, auditLogProjection], options = {}): ProjectionRunner => {
    const created = new ProjectionRunner({ eventStore: stores.events, readStore: stores.readStore, clock: stores.clock }, projections, {
      retryDelayMs: 20,
      idleCheckpointMs: 0,
      ...options,
    });
    runners.push(created);
    return created;
  };

  beforeEach(() => {
    stores = embeddedStores();
    runners = [];
  });
  afterEach(async () => {
    for (const created of runners) await created.stop();
    await stores.dispose();
  });

  it('builds the tenants read model and an audit entry per tenant event, read-your-writes', async () => {
    const projections = runner();
    await projections.start();
    const context = userContext();
    const { tenant_id } = await createTenant(stores.commands, { name: 'Acme', slug: 'acme' }, context);
    await renameTenant(stores.commands, tenant_id, 'Acme Corp', userContext({ tenant_id }));
    const suspended = await suspendTenant(stores.commands, tenant_id, 'unpaid', userContext({ tenant_id, actor: { kind: 'admin', id: 'root' } }));
    expect(await projections.waitFor(suspended.position, { timeoutMs: 5000 })).to.equal(true);
    const tenant = await stores.readStore.collection<TenantDocument>(TENANTS).get(tenant_id);
    expect(tenant).to.deep.include({ name: 'Acme Corp', slug: 'acme', status: 'suspended', suspended_reason: 'unpaid' });
    const audit = await stores.readStore.collection<AuditLogEntry>(AUDIT_LOG).find({ where: { tenant_id }, sort: { field: 'position', direction: 'asc' } });
    expect(audit.items.map((entry) => [entry.action, entry.resource_type, entry.actor_kind])).to.deep.equal([
      ['ReservationClaimed', 'reservation', 'user'],
      ['TenantCreated', 'tenant', 'user'],
      ['TenantRenamed', 'tenant', 'user'],
      ['TenantSuspended', 'tenant', 'admin'],
    ]);
    expect(audit.items[1]).to.deep.include({ resource_id: tenant_id, ip: '203.0.113.7', request_id: context.request_id });
  });

  it('resumes from its checkpoint after a restart without applying anything twice', async () => {
    const first = runner([countingProjection()]);
    await first.start();
    for (let index = 0; index < 30; index += 1) await stores.eventStore.appendToStream('thing-1', [newEvent('Happened')]);
    expect(await first.waitFor(await stores.eventStore.headPosition())).to.equal(true);
    await first.stop();
    for (let index = 0; index < 5; index += 1) await stores.eventStore.appendToStream('thing-1', [newEvent('Happened')]);
    const second = runner([countingProjection()]);
    await second.start();
    expect(await second.waitFor(await stores.eventStore.headPosition())).to.equal(true);
    expect(await stores.readStore.collection<CounterDocument>('counters').get('thing-1')).to.deep.include({ count: 35 });
  });

  it('reports checkpoint, head, lag and status, and moves past events it does not handle', async () => {
    const projections = runner([countingProjection({ handles: ['WorkspaceRenamed'] })]);
    await projections.start();
    const counted = newEvent('WorkspaceRenamed', { tenant_id: 't1', workspace_id: 'w1', name: 'Counted' });
    await stores.eventStore.appendToStream('thing-1', [counted, newEvent('Ignored'), newEvent('Ignored')]);
    const head = await stores.eventStore.headPosition();
    expect(await projections.waitFor(head)).to.equal(true);
    const [report] = await projections.status();
    expect(report).to.deep.equal({ name: 'counters', version: 1, checkpoint: head, head, lag: 0, status: 'running', error: null });
  });

  it('answers false when a position is not reached in time', async () => {
    const projections = runner([countingProjection({ failOn: (type) => type === 'Poison' })]);
    await projections.start();
    const { position } = await stores.eventStore.appendToStream('thing-1', [newEvent('Poison')]);
    expect(await projections.waitFor(position, { timeoutMs: 100 })).to.equal(false);
    await eventually(async () => (await projections.status())[0].status === 'failed', 5000, 'failed status');
    expect((await projections.status())[0].error).to.equal('cannot project Poison');
  });

  it('rebuilds into shadow collections while the live ones keep serving, then swaps', async () => {
    const projections = runner([countingProjection()]);
    await projections.start();
    for (let index = 0; index < 50; index += 1) await stores.eventStore.appendToStream(`thing-${index % 5}`, [newEvent('Happened')]);
    expect(await projections.waitFor(await stores.eventStore.headPosition())).to.equal(true);
    const counters = stores.readStore.collection<CounterDocument>('counters');
    // Damage the live read model; the rebuild must restore it from the events.
    await counters.put({ id: 'thing-0', count: 999, last_position: 0 });
    const writes = Promise.all(Array.from({ length: 20 }, () => stores.eventStore.appendToStream('thing-9', [newEvent('Happened')])));
    const result = await projections.rebuild('counters');
    await writes;
    expect(result.events).to.be.at.least(50);
    expect(await projections.waitFor(await stores.eventStore.headPosition())).to.equal(true);
    expect(await counters.get('thing-0')).to.deep.include({ count: 10 });
    expect(await counters.get('thing-9')).to.deep.include({ count: 20 });
    expect(await counters.count()).to.equal(6);
    expect((await projections.status())[0].status).to.equal('running');
  });

  it('rebuilds by itself when the projection version changes', async () => {
    const v1 = runner([countingProjection({ version: 1 })]);
    await v1.start();
    await stores.eventStore.appendToStream('thing-1', [newEvent('Happened'), newEvent('Happened')]);
    expect(await v1.waitFor(await stores.eventStore.headPosition())).to.equal(true);
    await v1.stop();
    await stores.readStore.collection<CounterDocument>('counters').put({ id: 'thing-1', count: 999, last_position: 0 });
    const v2 = runner([countingProjection({ version: 2 })]);
    await v2.start();
    await eventually(async () => (await stores.readStore.getProjectionState('counters'))?.version === 2, 5000, 'version 2');
    expect(await stores.readStore.collection<CounterDocument>('counters').get('thing-1')).to.deep.include({ count: 2 });
  });

  it('gives way when another runner moved the checkpoint, and applies nothing twice', async () => {
    const one = runner([countingProjection()]);
    const two = runner([countingProjection()]);
    await one.start();
    await two.start();
    for (let index = 0; index < 40; index += 1) await stores.eventStore.appendToStream('thing-1', [newEvent('Happened')]);
    const head = await stores.eventStore.headPosition();
    await eventually(async () => (await stores.readStore.getProjectionState('counters'))?.checkpoint === head, 5000, 'checkpoint at head');
    expect(await stores.readStore.collection<CounterDocument>('counters').get('thing-1')).to.deep.include({ count: 40 });
  });
});
