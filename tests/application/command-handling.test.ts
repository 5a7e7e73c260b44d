import { expect } from 'chai';
import { handleCommand, handleCommands, streamCommand } from '../../application/command-handling/handle-command';
import { isReservationFree } from '../../application/reservation/reservations';
import { TENANT_SLUG_SCOPE, changeTenantSettings, createTenant, renameTenant, tenantAggregate } from '../../application/tenant/tenant-commands';
import { left } from 'fp-ts/Either';
import { DomainError, RejectionWithEvents, conflict } from '../../domain/shared/errors';
import { tenantStream } from '../../domain/tenant/tenant';
import { userContext } from '../support/context';
import { type EmbeddedStores, embeddedStores } from '../support/stores';

async function rejection(promise: Promise<unknown>): Promise<DomainError> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof DomainError) return error;
    throw error;
  }
  throw new Error('expected a DomainError');
}

describe('command handling', () => {
  let stores: EmbeddedStores;
  beforeEach(() => {
    stores = embeddedStores();
  });
  afterEach(() => stores.dispose());

  it('appends the decided events with the request metadata and returns the position', async () => {
    const context = userContext();
    const created = await createTenant(stores.commands, { name: 'Acme', slug: 'acme' }, context);
    const [event] = await stores.eventStore.readStream(tenantStream(created.tenant_id));
    expect(event.type).to.equal('TenantCreated');
    expect(event.position).to.equal(created.position);
    expect(event.metadata).to.deep.include({
      tenant_id: created.tenant_id,
      actor: context.actor,
      request_id: context.request_id,
      correlation_id: context.correlation_id,
      ip: '203.0.113.7',
    });
  });

  it('retries on a conflict so that concurrent commands all land', async () => {
    const { tenant_id } = await createTenant(stores.commands, { name: 'Acme', slug: 'acme' }, userContext());
    const names = Array.from({ length: 10 }, (_, index) => `Acme ${index}`);
    await Promise.all(names.map((name) => renameTenant(stores.commands, tenant_id, name, userContext({ tenant_id }))));
    const events = await stores.eventStore.readStream(tenantStream(tenant_id));
    expect(events.filter((e) => e.type === 'TenantRenamed')).to.have.length(10);
  });

  it('refuses a stale If-Match revision with precondition_failed and appends nothing', async () => {
    const { tenant_id } = await createTenant(stores.commands, { name: 'Acme', slug: 'acme' }, userContext());
    await renameTenant(stores.commands, tenant_id, 'Acme 2', userContext(), { expectedRevision: 0 });
    const error = await rejection(renameTenant(stores.commands, tenant_id, 'Acme 3', userContext(), { expectedRevision: 0 }));
    expect(error.kind).to.equal('precondition_failed');
    // The stream's category, never its id: a tenant id or a reservation's digest is internal (#9.10).
    expect(error.message).to.equal('the tenant is at revision 1, not 0');
    expect(await stores.eventStore.readStream(tenantStream(tenant_id))).to.have.length(2);
  });

  it('appends nothing the second time for the same idempotency key', async () => {
    const { tenant_id } = await createTenant(stores.commands, { name: 'Acme', slug: 'acme' }, userContext());
    const first = await changeTenantSettings(stores.commands, tenant_id, { timezone: 'Europe/Oslo' }, userContext(), { idempotencyKey: 'saga:event-1' });
    const again = await changeTenantSettings(stores.commands, tenant_id, { timezone: 'Europe/Oslo' }, userContext(), { idempotencyKey: 'saga:event-1' });
    expect(first.events).to.have.length(1);
    expect(again.events).to.have.length(0);
    expect(await stores.eventStore.readStream(tenantStream(tenant_id))).to.have.length(2);
  });

  it('passes domain errors through and appends nothing', async () => {
    const error = await rejection(handleCommand(stores.commands, tenantAggregate, tenantStream('nope'), { type: 'RenameTenant', data: { name: 'X' } }, userContext()));
    expect(error.code).to.equal('tenant_not_found');
    expect(await stores.eventStore.headPosition()).to.equal(0);
  });

  describe('commands on several streams, appended together', () => {
    const rename = (tenantId: string, name: string) => streamCommand(tenantAggregate, tenantStream(tenantId), { type: 'RenameTenant', data: { name } }, userContext({ tenant_id: tenantId }));

    it('decides each on its stream and appends them in one append, in order', async () => {
      const [a, b] = [await createTenant(stores.commands, { name: 'A', slug: 'org-a' }, userContext()), await createTenant(stores.commands, { name: 'B', slug: 'org-b' }, userContext())];
      const [first, second] = await handleCommands(stores.commands, [rename(a.tenant_id, 'A 2'), rename(b.tenant_id, 'B 2')]);
      expect([first.events.map((event) => event.type), second.events.map((event) => event.type)]).to.deep.equal([['TenantRenamed'], ['TenantRenamed']]);
      expect(first.position).to.be.lessThan(second.position as number);
      const [renamedA] = (await stores.eventStore.readStream(tenantStream(a.tenant_id))).slice(-1);
      expect(renamedA.metadata.tenant_id).to.equal(a.tenant_id);
    });

    it('refuses them all when one is refused, before anything is appended', async () => {
      const a = await createTenant(stores.commands, { name: 'A', slug: 'org-a' }, userContext());
      const head = await stores.eventStore.headPosition();
      const error = await rejection(handleCommands(stores.commands, [rename(a.tenant_id, 'A 2'), rename('nope', 'X')]));
      expect(error.code).to.equal('tenant_not_found');
      expect(await stores.eventStore.headPosition()).to.equal(head);
    });

    it('appends only what a refusal records (RejectionWithEvents), not what the others decided, then throws it', async () => {
      const [a, b] = [await createTenant(stores.commands, { name: 'A', slug: 'org-a' }, userContext()), await createTenant(stores.commands, { name: 'B', slug: 'org-b' }, userContext())];
      // A decider that refuses, recording the attempt (as a wrong one-time code is recorded).
      const refusing: typeof tenantAggregate = {
        ...tenantAggregate,
        decider: { ...tenantAggregate.decider, decide: (_command, state) => left(new RejectionWithEvents([{ type: 'TenantRenamed', data: { tenant_id: state.status === 'absent' ? '' : state.id, name: 'Recorded', previous_name: 'B' } }], conflict('refused', 'refused, with a record'))) },
      };
      const recordedRefusal = streamCommand(refusing, tenantStream(b.tenant_id), { type: 'RenameTenant', data: { name: 'B 2' } }, userContext({ tenant_id: b.tenant_id }));
      const error = await rejection(handleCommands(stores.commands, [rename(a.tenant_id, 'A 2'), recordedRefusal]));
      expect(error.code).to.equal('refused');
      expect((await stores.eventStore.readStream(tenantStream(a.tenant_id))).map((event) => event.type)).to.deep.equal(['TenantCreated']);
      expect((await stores.eventStore.readStream(tenantStream(b.tenant_id))).map((event) => event.type)).to.deep.equal(['TenantCreated', 'TenantRenamed']);
    });

    it('decides all again when another writer got there first, so that every one lands', async () => {
      const [a, b] = [await createTenant(stores.commands, { name: 'A', slug: 'org-a' }, userContext()), await createTenant(stores.commands, { name: 'B', slug: 'org-b' }, userContext())];
      await Promise.all(Array.from({ length: 8 }, (_, index) => handleCommands(stores.commands, [rename(a.tenant_id, `A ${index}`), rename(b.tenant_id, `B ${index}`)])));
      for (const tenantId of [a.tenant_id, b.tenant_id]) {
        expect((await stores.eventStore.readStream(tenantStream(tenantId))).filter((event) => event.type === 'TenantRenamed')).to.have.length(8);
      }
    });
  });

  describe('unique slugs through reservation streams', () => {
    it('creates exactly one tenant when 20 requests race for one slug', async () => {
      const outcomes = await Promise.allSettled(
        Array.from({ length: 20 }, (_, index) => createTenant(stores.commands, { name: `Org ${index}`, slug: 'same-slug' }, userContext())),
      );
      const created = outcomes.filter((o) => o.status === 'fulfilled');
      const refused = outcomes.filter((o): o is PromiseRejectedResult => o.status === 'rejected');
      expect(created).to.have.length(1);
      expect(refused.map((o) => (o.reason as DomainError).code)).to.deep.equal(Array(19).fill('tenant_slug_taken'));
      const tenants = await stores.eventStore.readAll({ filter: { kind: 'event_type', types: ['TenantCreated'] } });
      expect(tenants).to.have.length(1);
    });

    it('leaves no reservation behind for an invalid tenant', async () => {
      const error = await rejection(createTenant(stores.commands, { name: '', slug: 'free-slug' }, userContext()));
      expect(error.field).to.equal('name');
      expect(await isReservationFree(stores.commands, TENANT_SLUG_SCOPE, 'free-slug')).to.equal(true);
      expect(await stores.eventStore.headPosition()).to.equal(0);
    });
  });
});
