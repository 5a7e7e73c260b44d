import { expect } from 'chai';
import { type Logger, silentLogger } from '../../application/ports/logger';
import type { RecordedEvent } from '../../application/ports/event-store';
import type { LogProjection, Projection, ProjectionView } from '../../projections/projection';
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
    const audit = await stores.readStore.collection<AuditLogEntry>(AUDIT_LOG).find({ where: { tenant_id }, sort: { field: 'seq', direction: 'asc' } });
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
    expect(report).to.deep.equal({ name: 'counters', version: 1, checkpoint: head, head, lag: 0, status: 'running', error: null, holder: projections.holder });
  });

  it('answers false when a position is not reached in time', async () => {
    const projections = runner([countingProjection({ failOn: (type) => type === 'Poison' })]);
    await projections.start();
    const { position } = await stores.eventStore.appendToStream('thing-1', [newEvent('Poison')]);
    expect(await projections.waitFor(position, { timeoutMs: 100 })).to.equal(false);
    await eventually(async () => (await projections.status())[0].status === 'failed', 5000, 'failed status');
    expect((await projections.status())[0].error).to.equal('cannot project Poison');
  });

  it('does not hold a wait for all projections on one that fails at the same event again and again', async () => {
    let poisoned = true;
    const failures: string[] = [];
    const logger = { ...silentLogger, error: (...logged: unknown[]) => void failures.push(String(logged[1])) } as unknown as Logger;
    const projections = new ProjectionRunner(
      { eventStore: stores.events, readStore: stores.readStore, clock: stores.clock, logger },
      [countingProjection({ name: 'healthy' }), countingProjection({ name: 'poisoned', failOn: (type) => poisoned && type === 'Poison' })],
      { retryDelayMs: 20, idleCheckpointMs: 0 },
    );
    runners.push(projections);
    await projections.start();
    const { position: poison } = await stores.eventStore.appendToStream('thing-1', [newEvent('Poison')]);
    await eventually(async () => failures.length >= 2, 5000, 'two failed attempts');

    // Every write's wait: the healthy projection is waited for, the stuck one is not (a minute's
    // timeout would outlast the test's); false, as not every read model shows the write.
    const { position } = await stores.eventStore.appendToStream('thing-2', [newEvent('Happened')]);
    expect(await projections.waitFor(position, { timeoutMs: 60_000 })).to.equal(false);
    expect(await stores.readStore.collection<CounterDocument>('healthy').get('thing-2')).to.deep.include({ count: 1 });
    // A caller that reads the stuck one waits for it, and is told it did not pass.
    expect(await projections.waitFor(poison, { timeoutMs: 100, projections: ['poisoned'] })).to.equal(false);

    // Mended, it moves on at its next retry, and waits are for every projection again.
    poisoned = false;
    expect(await projections.waitFor(position, { timeoutMs: 20_000, projections: ['poisoned'] })).to.equal(true);
    const { position: next } = await stores.eventStore.appendToStream('thing-3', [newEvent('Happened')]);
    expect(await projections.waitFor(next, { timeoutMs: 20_000 })).to.equal(true);
    expect(await stores.readStore.collection<CounterDocument>('poisoned').get('thing-2')).to.deep.include({ count: 1 });
  });

  it('waits through a single failed attempt: the retry passes, and the wait answers true', async () => {
    let failed = 0;
    const projections = runner([countingProjection({ failOn: (type) => type === 'Flaky' && failed++ === 0 })], { retryDelayMs: 200 });
    await projections.start();
    const { position } = await stores.eventStore.appendToStream('thing-1', [newEvent('Flaky')]);
    expect(await projections.waitFor(position, { timeoutMs: 20_000 })).to.equal(true);
    expect(failed).to.be.greaterThan(1);
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

  it('lets a batch read its own deletes by fields: the documents stored, put or patched before are gone, a write after stands', async () => {
    // Notes of threads; `Probe` records what the batch reads of each note at that point.
    type NoteEvent = { id?: string; thread?: string; text?: string };
    const notes: LogProjection = {
      name: 'notes',
      version: 1,
      collections: [{ name: 'notes', indexes: [{ field: 'thread' }] }, { name: 'probes' }],
      handles: 'all',
      async apply(event, view) {
        const data = event.data as NoteEvent;
        if (event.type === 'Noted') view.put('notes', { id: data.id!, thread: data.thread!, text: data.text! });
        if (event.type === 'Amended') view.patch('notes', data.id!, { text: data.text });
        if (event.type === 'Cleared') view.deleteWhere('notes', { thread: data.thread! });
        if (event.type === 'Redacted') view.patchWhere('notes', { thread: data.thread! }, { text: '[redacted]' });
        if (event.type === 'Probe') {
          const seen: Record<string, unknown> = {};
          for (const id of ['n1', 'n2', 'n3', 'n4']) seen[id] = (await view.get<{ id: string; text: string }>('notes', id))?.text ?? null;
          view.put('probes', { id: data.id!, seen });
        }
      },
    };
    await stores.readStore.ensureCollection(notes.collections[0]!);
    const stored = stores.readStore.collection('notes');
    await stored.put({ id: 'n1', thread: 't', text: 'stored' });
    await stored.put({ id: 'n2', thread: 't', text: 'stored' });
    await stored.put({ id: 'n4', thread: 'other', text: 'elsewhere' });
    // One append: the runner reads them as one batch.
    const { position } = await stores.eventStore.appendToStream('notes-1', [
      newEvent('Noted', { id: 'n3', thread: 't', text: 'put' }),
      newEvent('Amended', { id: 'n1', text: 'patched' }),
      newEvent('Probe', { id: 'before' }),
      newEvent('Cleared', { thread: 't' }),
      newEvent('Probe', { id: 'cleared' }),
      newEvent('Noted', { id: 'n2', thread: 't', text: 'again' }),
      newEvent('Amended', { id: 'n1', text: 'too late' }),
      newEvent('Probe', { id: 'after' }),
    ]);
    const projections = runner([notes]);
    await projections.start();
    expect(await projections.waitFor(position, { timeoutMs: 5000 })).to.equal(true);
    const probe = async (id: string) => ((await stores.readStore.collection<{ id: string; seen: unknown }>('probes').get(id)) ?? { seen: undefined }).seen;
    expect(await probe('before')).to.deep.equal({ n1: 'patched', n2: 'stored', n3: 'put', n4: 'elsewhere' });
    expect(await probe('cleared')).to.deep.equal({ n1: null, n2: null, n3: null, n4: 'elsewhere' });
    expect(await probe('after')).to.deep.equal({ n1: null, n2: 'again', n3: null, n4: 'elsewhere' });
    // The store agrees with what the batch read.
    expect((await stored.find()).items).to.deep.equal([
      { id: 'n2', thread: 't', text: 'again' },
      { id: 'n4', thread: 'other', text: 'elsewhere' },
    ]);
  });

  it('lets a batch read its own patches by fields: the documents stored, put or patched before are changed, a write after stands', async () => {
    const notes: LogProjection = {
      name: 'redacted_notes',
      version: 1,
      collections: [{ name: 'rnotes', indexes: [{ field: 'thread' }] }, { name: 'rprobes' }],
      handles: 'all',
      async apply(event, view) {
        const data = event.data as { id?: string; thread?: string; text?: string };
        if (event.type === 'Noted') view.put('rnotes', { id: data.id!, thread: data.thread!, text: data.text! });
        if (event.type === 'Amended') view.patch('rnotes', data.id!, { text: data.text });
        if (event.type === 'Redacted') view.patchWhere('rnotes', { thread: data.thread! }, { text: '[redacted]' });
        if (event.type === 'Probe') {
          const seen: Record<string, unknown> = {};
          for (const id of ['n1', 'n2', 'n3', 'n4']) seen[id] = (await view.get<{ id: string; text: string }>('rnotes', id))?.text ?? null;
          view.put('rprobes', { id: data.id!, seen });
        }
      },
    };
    await stores.readStore.ensureCollection(notes.collections[0]!);
    const stored = stores.readStore.collection('rnotes');
    await stored.put({ id: 'n1', thread: 't', text: 'stored' });
    await stored.put({ id: 'n2', thread: 't', text: 'stored' });
    await stored.put({ id: 'n4', thread: 'other', text: 'elsewhere' });
    const { position } = await stores.eventStore.appendToStream('rnotes-1', [
      newEvent('Noted', { id: 'n3', thread: 't', text: 'put' }),
      newEvent('Amended', { id: 'n1', text: 'patched' }),
      newEvent('Redacted', { thread: 't' }),
      newEvent('Probe', { id: 'redacted' }),
      newEvent('Amended', { id: 'n2', text: 'written after' }),
      newEvent('Probe', { id: 'after' }),
    ]);
    const projections = runner([notes]);
    await projections.start();
    expect(await projections.waitFor(position, { timeoutMs: 5000 })).to.equal(true);
    const probe = async (id: string) => ((await stores.readStore.collection<{ id: string; seen: unknown }>('rprobes').get(id)) ?? { seen: undefined }).seen;
    expect(await probe('redacted')).to.deep.equal({ n1: '[redacted]', n2: '[redacted]', n3: '[redacted]', n4: 'elsewhere' });
    expect(await probe('after')).to.deep.equal({ n1: '[redacted]', n2: 'written after', n3: '[redacted]', n4: 'elsewhere' });
    // The store agrees with what the batch read.
    expect((await stored.find()).items).to.deep.equal([
      { id: 'n1', thread: 't', text: '[redacted]' },
      { id: 'n2', thread: 't', text: 'written after' },
      { id: 'n3', thread: 't', text: '[redacted]' },
      { id: 'n4', thread: 'other', text: 'elsewhere' },
    ]);
  });

  it('gives way when another runner moved the checkpoint, and applies nothing twice', async () => {
    // One holder id for both, so the lease does not keep them apart: the checkpoint's
    // compare-and-set does (as between the server and an operator's rebuild).
    const one = runner([countingProjection()], { leaseHolder: 'shared' });
    const two = runner([countingProjection()], { leaseHolder: 'shared' });
    await one.start();
    await two.start();
    for (let index = 0; index < 40; index += 1) await stores.eventStore.appendToStream('thing-1', [newEvent('Happened')]);
    const head = await stores.eventStore.headPosition();
    await eventually(async () => (await stores.readStore.getProjectionState('counters'))?.checkpoint === head, 5000, 'checkpoint at head');
    expect(await stores.readStore.collection<CounterDocument>('counters').get('thing-1')).to.deep.include({ count: 40 });
  });

  describe('with a projection another thread of the process builds (followedElsewhere)', () => {
    it('never takes its lease nor applies its events; waits end as that thread reports progress; a rebuild is sent there', async () => {
      const rebuilt: string[] = [];
      const serving = runner([tenantsProjection, auditLogProjection], {
        followedElsewhere: [auditLogProjection.name],
        rebuildElsewhere: async (name: string) => {
          rebuilt.push(name);
          return { events: 3, checkpoint: 42 };
        },
      });
      await serving.start();
      const { tenant_id } = await createTenant(stores.commands, { name: 'Acme', slug: 'acme' }, userContext());
      const head = await stores.eventStore.headPosition();
      expect(await serving.waitFor(head, { timeoutMs: 5000, projections: [tenantsProjection.name] })).to.equal(true);
      // The tenants read model is built here; the audit log is not (no collection, no state), and waits on it wait for the other thread.
      expect(await stores.readStore.collection<TenantDocument>(TENANTS).get(tenant_id)).to.not.equal(null);
      expect(await stores.readStore.getProjectionState(auditLogProjection.name)).to.equal(null);
      expect(await serving.waitFor(head, { timeoutMs: 50 })).to.equal(false);

      const waiting = serving.waitFor(head, { timeoutMs: 5000 });
      serving.observe([{ name: auditLogProjection.name, checkpoint: head, status: 'running', error: null, stuck: false }]);
      expect(await waiting).to.equal(true);

      const report = (await serving.status()).find((candidate) => candidate.name === auditLogProjection.name)!;
      expect(report).to.deep.include({ checkpoint: head, lag: 0, status: 'running' });

      // The thread reports it stuck at an event: a wait for all projections waits for the others only.
      serving.observe([{ name: auditLogProjection.name, checkpoint: head, status: 'failed', error: 'cannot project', stuck: true }]);
      const renamed = await renameTenant(stores.commands, tenant_id, 'Acme Corp', userContext({ tenant_id }));
      expect(await serving.waitFor(renamed.position, { timeoutMs: 60_000 })).to.equal(false);
      expect(await stores.readStore.collection<TenantDocument>(TENANTS).get(tenant_id)).to.deep.include({ name: 'Acme Corp' });
      serving.observe([{ name: auditLogProjection.name, checkpoint: renamed.position!, status: 'running', error: null, stuck: false }]);

      expect(await serving.rebuild(auditLogProjection.name)).to.deep.equal({ events: 3, checkpoint: 42 });
      expect(rebuilt).to.deep.equal([auditLogProjection.name]);
    });

    it('reports the progress of the projections it builds to its listeners (the projection thread posts them)', async () => {
      const building = runner([tenantsProjection]);
      const seen: Array<{ name: string; checkpoint: number; status: string }> = [];
      building.onProgress((progress) => seen.push(...progress.map(({ name, checkpoint, status }) => ({ name, checkpoint, status }))));
      await building.start();
      await createTenant(stores.commands, { name: 'Acme', slug: 'acme' }, userContext());
      const head = await stores.eventStore.headPosition();
      await eventually(() => seen.some((progress) => progress.name === tenantsProjection.name && progress.checkpoint >= head && progress.status === 'running'));
    });
  });

  describe('with several runners (processes) on one store', () => {
    /** A counting projection that also counts, per runner, the events it applied. */
    const tallied = (applied: number[], options: Parameters<typeof countingProjection>[0] = {}): Projection => {
      const projection = countingProjection(options) as LogProjection;
      return {
        ...projection,
        apply(event: RecordedEvent, view: ProjectionView) {
          applied.push(event.position);
          return projection.apply(event, view);
        },
      };
    };
    const lease = { leaseTtlMs: 300, standbyPollMs: 10 };
    const stored = () => stores.readStore.getProjectionState('counters');
    const append = async (count: number): Promise<number> => {
      for (let index = 0; index < count; index += 1) await stores.eventStore.appendToStream(`thing-${index % 3}`, [newEvent('Happened')]);
      return stores.eventStore.headPosition();
    };
    const total = async (): Promise<number> => {
      const page = await stores.readStore.collection<CounterDocument>('counters').find();
      return page.items.reduce((sum, counter) => sum + counter.count, 0);
    };

    it('runs a projection in the lease holder only; the other stands by and still waits for the holder\'s progress', async () => {
      const byOne: number[] = [];
      const byTwo: number[] = [];
      const one = runner([tallied(byOne)], lease);
      const two = runner([tallied(byTwo)], lease);
      await one.start();
      await eventually(async () => (await stored())?.lease?.holder === one.holder, 5000, 'first runner holds the lease');
      await two.start();
      const head = await append(30);
      expect(await two.waitFor(head, { timeoutMs: 5000 }), 'standby waitFor').to.equal(true);
      expect(await total()).to.equal(30);
      expect(byOne).to.have.length(30);
      expect(byTwo).to.deep.equal([]);
      const [report] = await two.status();
      expect(report).to.deep.include({ status: 'standby', holder: one.holder, checkpoint: head, lag: 0, error: null });
    });

    it('takes over from the checkpoint when the holder stops, applying nothing twice', async () => {
      const byOne: number[] = [];
      const byTwo: number[] = [];
      const one = runner([tallied(byOne)], lease);
      const two = runner([tallied(byTwo)], lease);
      await one.start();
      await eventually(async () => (await stored())?.lease?.holder === one.holder, 5000, 'first runner holds the lease');
      await two.start();
      expect(await one.waitFor(await append(10))).to.equal(true);
      await one.stop();
      const head = await append(10);
      await eventually(async () => (await stored())?.checkpoint === head, 5000, 'second runner at the head');
      expect((await stored())?.lease?.holder).to.equal(two.holder);
      expect(await total()).to.equal(20);
      expect(byOne).to.have.length(10);
      expect(byTwo).to.have.length(10);
      expect(Math.min(...byTwo)).to.be.greaterThan(Math.max(...byOne));
    });

    it('stops applying once another process took its lease, and resumes when it gets it back', async () => {
      const applied: number[] = [];
      const one = runner([tallied(applied)], lease);
      await one.start();
      expect(await one.waitFor(await append(5))).to.equal(true);
      // Another process takes the lease as if this one had been paused past its expiry.
      const later = new Date(Date.now() + 60_000);
      expect(await stores.readStore.acquireLease({ projection: 'counters', holder: 'other', version: 1, now: later, ttlMs: 60_000 })).to.deep.include({ holder: 'other' });
      await eventually(async () => (await one.status())[0].status === 'standby', 5000, 'the runner standing by');
      expect((await one.status())[0].holder).to.equal('other');
      const head = await append(5);
      await stores.readStore.releaseLease('counters', 'other');
      expect(await one.waitFor(head, { timeoutMs: 5000 })).to.equal(true);
      expect(await total()).to.equal(10);
      expect(applied).to.have.length(10);
    });

    it('rebuilds a new version once, in the lease holder', async () => {
      const v1 = runner([countingProjection({ version: 1 })], lease);
      await v1.start();
      const head = await append(12);
      expect(await v1.waitFor(head)).to.equal(true);
      await v1.stop();
      const byOne: number[] = [];
      const byTwo: number[] = [];
      const one = runner([tallied(byOne, { version: 2 })], lease);
      const two = runner([tallied(byTwo, { version: 2 })], lease);
      await Promise.all([one.start(), two.start()]);
      await eventually(async () => (await stored())?.version === 2, 5000, 'version 2 in place');
      expect(await total()).to.equal(12);
      const rebuiltBy = (await stored())?.lease?.holder;
      expect([one.holder, two.holder]).to.include(rebuiltBy);
      expect(byOne.length + byTwo.length, 'events applied in all').to.equal(12);
      expect(rebuiltBy === one.holder ? byTwo : byOne).to.deep.equal([]);
    });

    it('leaves a projection stored by a newer version to the processes running that version', async () => {
      const v2 = runner([countingProjection({ version: 2 })], lease);
      await v2.start();
      expect(await v2.waitFor(await append(3))).to.equal(true);
      await v2.stop();
      const warnings: string[] = [];
      const logger: Logger = { ...silentLogger, warn: (_fields, message) => void warnings.push(message ?? '') };
      const v1 = new ProjectionRunner({ eventStore: stores.events, readStore: stores.readStore, clock: stores.clock, logger }, [countingProjection({ version: 1 })], lease);
      runners.push(v1);
      await v1.start();
      await eventually(() => warnings.includes('stored version is newer than this code; standing by'), 5000, 'the warning');
      expect((await v1.status())[0]).to.deep.include({ status: 'standby', holder: null });
      expect(await stored()).to.deep.include({ version: 2, lease: null });
    });
  });
});

