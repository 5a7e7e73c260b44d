import { expect } from 'chai';
import { FeatureNotInPlanError, QuotaExceededError, requireFeature, requireQuota } from '../../application/entitlement/entitlements';
import { seedPlanCatalogue } from '../../application/plan/plans';
import { activateSubscription } from '../../application/subscription/subscriptions';
import { userContext } from '../support/context';
import { AUDIT_LOG, type AuditLogEntry } from '../../projections/audit-log';
import { PLANS } from '../../projections/plans';
import { type Account, joinAs, registerOwner } from '../support/identity';
import { type TestServer, startTestServer } from '../support/server';
import { eventually } from '../support/stores';
import { expectEveryEventAudited } from '../support/audit';

const ADMIN = { email: 'root@plans.test', password: 'root password 123' };
const TERMS = {
  name: 'Team',
  description: 'for teams',
  prices: [
    { interval: 'month', amount: 4900, currency: 'usd' },
    { interval: 'year', amount: 49000, currency: 'usd' },
  ],
  limits: { messages_per_month: 1000, documents: 50, users: 5, business_tools: 5 },
  features: { handoff: true },
};

describe('plans, quotas and overrides (spec 4.9, 4.16, 7.1)', () => {
  let server: TestServer;
  let owner: Account;
  let member: Account;
  let token: string;
  const as = (bearer: string | Account) => ({ authorization: `Bearer ${typeof bearer === 'string' ? bearer : bearer.token}` });

  before(async () => {
    server = await startTestServer({ SCRYPT_LOG_N: '12', SUPER_ADMIN_EMAIL: ADMIN.email, SUPER_ADMIN_PASSWORD: ADMIN.password });
    owner = await registerOwner(server, 'quota-org');
    member = await joinAs(server, await registerOwner(server, 'quota-mem-home', 'quota-mem@example.com'), owner.tenant_id, 'member');
    token = (await server.request('POST', '/api/v1/admin/auth/login', { body: ADMIN })).json.token;
  });
  after(() => server.close());

  describe('the default catalogue', () => {
    it('is recorded as events on the first start: free, starter, growth and premium, cheapest first', async () => {
      const created = await server.platform.eventStore.readAll({ filter: { kind: 'event_type', types: ['PlanCreated'] }, maxCount: 100 });
      expect(created.filter((event) => event.metadata.actor.id === 'plan_catalogue').map((event) => (event.data as { code: string }).code)).to.deep.equal(['free', 'starter', 'growth', 'premium']);
      const listed = await server.request('GET', '/api/v1/admin/plans?status=sellable', { headers: as(token) });
      expect(listed.status).to.equal(200);
      expect(listed.json.items.map((plan: { code: string }) => plan.code).slice(0, 4)).to.deep.equal(['free', 'starter', 'growth', 'premium']);
      const premium = listed.json.items.find((plan: { code: string }) => plan.code === 'premium');
      expect(premium.features).to.deep.equal({ sdk_connections: true, whatsapp: true, handoff: true, crm: true });
      expect(listed.json.items.find((plan: { code: string }) => plan.code === 'growth').features.whatsapp).to.equal(true);
      expect(listed.json.items.find((plan: { code: string }) => plan.code === 'starter').features.whatsapp).to.equal(false);
    });

    it('is not seeded again, and a deleted catalogue plan stays deleted', async () => {
      const deleted = await server.request('DELETE', '/api/v1/admin/plans/starter', { headers: as(token) });
      expect(deleted.json).to.deep.equal({ id: 'starter', outcome: 'deleted' });
      expect(await seedPlanCatalogue(server.platform.commands)).to.deep.equal({ seeded: 0, position: null });
      expect(await server.platform.readStore.collection(PLANS).get('starter')).to.equal(null);
    });
  });

  describe('admin plan routes', () => {
    it('creates, reads, changes, retires and deletes a plan, each an event naming the admin', async () => {
      const created = await server.request('POST', '/api/v1/admin/plans', { headers: as(token), body: { code: 'team', ...TERMS } });
      expect(created.status).to.equal(201);
      expect(created.headers.get('etag')).to.equal('"0"');
      expect(created.json).to.include({ code: 'team', name: 'Team', status: 'sellable', subscribers: 0 });
      expect(created.json.features).to.deep.equal({ sdk_connections: false, whatsapp: false, handoff: true, crm: false });
      expect(await created.events()).to.deep.equal(['ReservationClaimed@reservation', 'PlanCreated@plan']);
      const id = created.json.id;

      const read = await server.request('GET', `/api/v1/admin/plans/${id}`, { headers: as(token) });
      expect(read.json).to.deep.equal(created.json);

      const changed = await server.request('PUT', `/api/v1/admin/plans/${id}`, { headers: { ...as(token), 'if-match': '"0"' }, body: { ...TERMS, limits: { ...TERMS.limits, users: 8 } } });
      expect(changed.status).to.equal(200);
      expect(changed.json.limits.users).to.equal(8);
      expect(changed.headers.get('etag')).to.equal('"1"');
      const stale = await server.request('PUT', `/api/v1/admin/plans/${id}`, { headers: { ...as(token), 'if-match': '"0"' }, body: TERMS });
      expect(stale.status).to.equal(412);

      const retired = await server.request('PUT', `/api/v1/admin/plans/${id}`, { headers: as(token), body: { ...TERMS, limits: { ...TERMS.limits, users: 8 }, sellable: false } });
      expect(retired.json.status).to.equal('retired');
      expect(await retired.events()).to.deep.equal(['PlanRetired@plan']);
      const sellable = await server.request('GET', '/api/v1/admin/plans?status=sellable', { headers: as(token) });
      expect(sellable.json.items.map((plan: { id: string }) => plan.id)).to.not.include(id);
      const reinstated = await server.request('PUT', `/api/v1/admin/plans/${id}`, { headers: as(token), body: { ...TERMS, limits: { ...TERMS.limits, users: 8 }, sellable: true } });
      expect(reinstated.json.status).to.equal('sellable');
      expect(await reinstated.events()).to.deep.equal(['PlanReinstated@plan']);

      const deleted = await server.request('DELETE', `/api/v1/admin/plans/${id}`, { headers: as(token) });
      expect(deleted.json).to.deep.equal({ id, outcome: 'deleted' });
      expect(await deleted.events()).to.deep.equal(['PlanDeleted@plan', 'ReservationReleased@reservation']);
      expect((await server.request('GET', `/api/v1/admin/plans/${id}`, { headers: as(token) })).status).to.equal(404);
      // The code is free again.
      const again = await server.request('POST', '/api/v1/admin/plans', { headers: as(token), body: { code: 'team', ...TERMS } });
      expect(again.status).to.equal(201);
    });

    it('retires a plan somebody is subscribed to instead of deleting it', async () => {
      const plan = await server.request('POST', '/api/v1/admin/plans', { headers: as(token), body: { code: 'subscribed', ...TERMS } });
      const subscriber = await registerOwner(server, 'quota-subscriber');
      const activated = await activateSubscription(
        server.platform.commands,
        { tenant_id: subscriber.tenant_id, plan_id: plan.json.id, plan_code: 'subscribed', interval: 'month', payment_id: 'pay-subscribed', checkout_id: 'checkout-subscribed', paid_at: new Date().toISOString() },
        userContext({ tenant_id: subscriber.tenant_id }),
      );
      await server.platform.readYourWrites(activated.position);
      const deleted = await server.request('DELETE', `/api/v1/admin/plans/${plan.json.id}`, { headers: as(token) });
      expect(deleted.json).to.deep.equal({ id: plan.json.id, outcome: 'retired' });
      const read = await server.request('GET', `/api/v1/admin/plans/${plan.json.id}`, { headers: as(token) });
      expect(read.json).to.include({ status: 'retired', subscribers: 1 });
    });

    it("puts every plan event in the platform's audit log with the admin as actor, and the chain verifies", async () => {
      await eventually(async () => (await server.platform.projections.status()).every((projection) => projection.lag === 0), 5000, 'projections caught up');
      const listed = await server.request('GET', '/api/v1/admin/audit-logs?resource_type=plan', { headers: as(token) });
      expect(listed.status).to.equal(200);
      const actions = new Set(listed.json.items.map((entry: { action: string }) => entry.action));
      for (const action of ['PlanCreated', 'PlanTermsChanged', 'PlanRetired', 'PlanDeleted']) expect(actions, action).to.include(action);
      const byAdmin = listed.json.items.filter((entry: { action: string }) => entry.action === 'PlanTermsChanged');
      expect(byAdmin[0]).to.include({ tenant_id: 'platform', actor_kind: 'admin' });
      const seeded = listed.json.items.filter((entry: { actor_id: string }) => entry.actor_id === 'plan_catalogue');
      expect(seeded.map((entry: { actor_kind: string }) => entry.actor_kind)).to.include('system');
      const verified = await server.request('GET', '/api/v1/admin/audit-logs/verify', { headers: as(token) });
      expect(verified.json).to.include({ ok: true, first_break: null });
      expect(verified.json.entries_checked).to.be.greaterThan(8);
      expect((await server.request('GET', '/api/v1/admin/audit-logs', { headers: as(owner) })).status).to.equal(401);
      const tenantLog = await server.request('GET', '/api/v1/org/audit-logs?resource_type=plan', { headers: as(owner) });
      expect(tenantLog.json.items).to.deep.equal([]);
    });

    it('answers 409 for a taken code and for deleting or retiring the free plan', async () => {
      const taken = await server.request('POST', '/api/v1/admin/plans', { headers: as(token), body: { code: 'growth', ...TERMS } });
      expect([taken.status, taken.json.code]).to.deep.equal([409, 'plan_code_taken']);
      expect(await taken.events()).to.deep.equal([]);
      const free = await server.request('DELETE', '/api/v1/admin/plans/free', { headers: as(token) });
      expect([free.status, free.json.code]).to.deep.equal([409, 'default_plan']);
      const freeRead = await server.request('GET', '/api/v1/admin/plans/free', { headers: as(token) });
      const retireFree = await server.request('PUT', '/api/v1/admin/plans/free', { headers: as(token), body: { ...freeRead.json, sellable: false } });
      expect([retireFree.status, retireFree.json.code]).to.deep.equal([409, 'default_plan']);
      // Refused before anything is written: new terms with it are not half applied.
      const renameAndRetire = await server.request('PUT', '/api/v1/admin/plans/free', { headers: as(token), body: { ...freeRead.json, name: 'Free forever', sellable: false } });
      expect([renameAndRetire.status, renameAndRetire.json.code]).to.deep.equal([409, 'default_plan']);
      expect(await renameAndRetire.events()).to.deep.equal([]);
      expect((await server.request('GET', '/api/v1/admin/plans/free', { headers: as(token) })).json.name).to.equal(freeRead.json.name);
    });

    it('answers 400 naming each bad field, and records nothing', async () => {
      const cases: Array<[Record<string, unknown>, string]> = [
        [{ ...TERMS, code: 'Not A Code' }, 'code'],
        [{ ...TERMS, code: 'ok-code', name: '' }, 'name'],
        [{ ...TERMS, code: 'ok-code', prices: 'cheap' }, 'prices'],
        [{ ...TERMS, code: 'ok-code', prices: [{ interval: 'week', amount: 1, currency: 'usd' }] }, 'prices.0.interval'],
        [{ ...TERMS, code: 'ok-code', prices: [{ interval: 'month', amount: 1.5, currency: 'usd' }] }, 'prices[0].amount'],
        [{ ...TERMS, code: 'ok-code', prices: [{ interval: 'month', amount: 100, currency: 'dollars' }] }, 'prices[0].currency'],
        [{ ...TERMS, code: 'ok-code', limits: { ...TERMS.limits, users: 'many' } }, 'limits.users'],
        [{ ...TERMS, code: 'ok-code', limits: { ...TERMS.limits, documents: -5 } }, 'limits.documents'],
        [{ ...TERMS, code: 'ok-code', features: { whatsapp: 'yes' } }, 'features.whatsapp'],
        // A misspelt feature is refused, not dropped (the plan would lack it).
        [{ ...TERMS, code: 'ok-code', features: { whats_app: true } }, 'features.whats_app'],
        [{ code: 'ok-code', name: 'No limits', prices: TERMS.prices }, 'limits'],
      ];
      for (const [body, field] of cases) {
        const response = await server.request('POST', '/api/v1/admin/plans', { headers: as(token), body });
        expect([response.status, response.json.field], JSON.stringify(body)).to.deep.equal([400, field]);
        expect(await response.events()).to.deep.equal([]);
      }
      const status = await server.request('GET', '/api/v1/admin/plans?status=gone', { headers: as(token) });
      expect([status.status, status.json.field]).to.deep.equal([400, 'status']);
    });

    it('answers 404 for an unknown plan, and 401 without an admin token', async () => {
      expect((await server.request('GET', '/api/v1/admin/plans/none', { headers: as(token) })).status).to.equal(404);
      expect((await server.request('PUT', '/api/v1/admin/plans/none', { headers: as(token), body: TERMS })).status).to.equal(404);
      expect((await server.request('DELETE', '/api/v1/admin/plans/none', { headers: as(token) })).status).to.equal(404);
      for (const headers of [{}, as(owner)]) {
        expect((await server.request('GET', '/api/v1/admin/plans', { headers })).status).to.equal(401);
        expect((await server.request('POST', '/api/v1/admin/plans', { headers, body: { code: 'x', ...TERMS } })).status).to.equal(401);
        expect((await server.request('GET', `/api/v1/admin/tenants/${owner.tenant_id}/quotas`, { headers })).status).to.equal(401);
      }
      // An admin token is not a tenant token.
      expect((await server.request('GET', '/api/v1/org/members', { headers: as(token) })).status).to.equal(401);
    });
  });

  describe('quotas', () => {
    it('refuses an invitation past the users limit with 429 and the numbers, records nothing, and an override lifts it at once', async () => {
      // owner + member + one pending invitation = 3 seats, the free plan's users limit.
      const third = await server.request('POST', '/api/v1/team/invite', { headers: as(owner), body: { email: 'third@example.com', role: 'member' } });
      expect(third.status).to.equal(201);
      const fourth = await server.request('POST', '/api/v1/team/invite', { headers: as(owner), body: { email: 'fourth@example.com', role: 'member' } });
      expect(fourth.status).to.equal(429);
      expect(fourth.json).to.deep.equal({
        code: 'quota_exceeded',
        message: "the users limit of this organization's plan is 3, and 3 are used",
        quota: 'users',
        limit: 3,
        used: 3,
        resets_at: null,
      });
      expect(await fourth.events()).to.deep.equal([]);

      const lifted = await server.request('PUT', `/api/v1/admin/tenants/${owner.tenant_id}/quotas`, { headers: as(token), body: { overrides: { users: 4 }, reason: 'pilot customer' } });
      expect(lifted.status).to.equal(200);
      expect(lifted.json).to.deep.include({ tenant_id: owner.tenant_id, overrides: { users: 4 }, overrides_reason: 'pilot customer' });
      expect(lifted.json.plan).to.deep.equal({ id: 'free', code: 'free', name: 'Free' });
      expect(lifted.json.limits).to.deep.equal({ messages_per_month: 500, documents: 20, users: 4, business_tools: 2 });
      expect(lifted.json.used).to.deep.equal({ messages_per_month: 0, documents: 0, users: 3, business_tools: 0 });
      expect(await lifted.events()).to.deep.equal(['QuotaOverridesSet@quotaOverride']);

      const now = await server.request('POST', '/api/v1/team/invite', { headers: as(owner), body: { email: 'fourth@example.com', role: 'member' } });
      expect(now.status).to.equal(201);
      const fifth = await server.request('POST', '/api/v1/team/invite', { headers: as(owner), body: { email: 'fifth@example.com', role: 'member' } });
      expect([fifth.status, fifth.json.limit, fifth.json.used]).to.deep.equal([429, 4, 4]);

      // Revoking an invitation frees its seat.
      await server.request('POST', `/api/v1/team/invitations/${now.json.id}/revoke`, { headers: as(owner) });
      expect((await server.request('POST', '/api/v1/team/invite', { headers: as(owner), body: { email: 'fifth@example.com', role: 'member' } })).status).to.equal(201);
    });

    it('puts the override in the tenant audit log with the admin as actor', async () => {
      const entries = await server.platform.readStore.collection<AuditLogEntry>(AUDIT_LOG).find({ where: { tenant_id: owner.tenant_id, action: 'QuotaOverridesSet' } });
      expect(entries.items).to.have.length.greaterThan(0);
      expect(entries.items[0]).to.include({ actor_kind: 'admin', resource_type: 'quotaOverride' });
    });

    it('removes overrides with an empty set, and answers 400 per bad field and 404 for an unknown tenant', async () => {
      const reset = await server.request('PUT', `/api/v1/admin/tenants/${owner.tenant_id}/quotas`, { headers: as(token), body: { overrides: {} } });
      expect(reset.json.overrides).to.deep.equal({});
      expect(reset.json.limits.users).to.equal(3);
      for (const [body, field] of [
        [{ overrides: { users: -1 } }, 'overrides.users'],
        [{ overrides: { documents: 'lots' } }, 'overrides.documents'],
        // A misspelt quota is refused, not dropped (the PUT would clear the others).
        [{ overrides: { messages: 5000 } }, 'overrides.messages'],
        [{ overrides: 5 }, 'overrides'],
        [{ overrides: {}, reason: 7 }, 'reason'],
      ] as const) {
        const response = await server.request('PUT', `/api/v1/admin/tenants/${owner.tenant_id}/quotas`, { headers: as(token), body });
        expect([response.status, response.json.field], JSON.stringify(body)).to.deep.equal([400, field]);
        expect(await response.events()).to.deep.equal([]);
      }
      const misspelt = await server.request('PUT', `/api/v1/admin/tenants/${owner.tenant_id}/quotas`, { headers: as(token), body: { overrides: { messages: 5000 } } });
      expect(misspelt.json.message).to.equal('overrides.messages: not a field here (the fields are messages_per_month, documents, users, business_tools)');
      expect((await server.request('GET', '/api/v1/admin/tenants/none/quotas', { headers: as(token) })).status).to.equal(404);
      expect((await server.request('PUT', '/api/v1/admin/tenants/none/quotas', { headers: as(token), body: { overrides: {} } })).status).to.equal(404);
    });

    it('puts every tenant without a subscription on the default plan, a platform setting', async () => {
      const unknown = await server.request('PUT', '/api/v1/admin/settings', { headers: as(token), body: { default_plan_code: 'gold' } });
      expect([unknown.status, unknown.json.code, unknown.json.field]).to.deep.equal([400, 'unknown_plan', 'default_plan_code']);
      expect(await unknown.events()).to.deep.equal([]);
      const changed = await server.request('PUT', '/api/v1/admin/settings', { headers: as(token), body: { default_plan_code: 'growth' } });
      expect(changed.status).to.equal(200);
      expect(changed.json.default_plan_code).to.equal('growth');
      const quotas = await server.request('GET', `/api/v1/admin/tenants/${owner.tenant_id}/quotas`, { headers: as(token) });
      expect(quotas.json.plan.code).to.equal('growth');
      const deleteDefault = await server.request('DELETE', '/api/v1/admin/plans/growth', { headers: as(token) });
      expect([deleteDefault.status, deleteDefault.json.code]).to.deep.equal([409, 'default_plan']);
      await server.request('PUT', '/api/v1/admin/settings', { headers: as(token), body: { default_plan_code: 'free' } });
      expect((await server.request('GET', `/api/v1/admin/tenants/${owner.tenant_id}/quotas`, { headers: as(token) })).json.plan.code).to.equal('free');
    });

    it('answers one shape for every quota and feature refusal', async () => {
      const deps = { readStore: server.platform.readStore, clock: server.platform.clock };
      await server.request('PUT', `/api/v1/admin/tenants/${owner.tenant_id}/quotas`, { headers: as(token), body: { overrides: { messages_per_month: 0 } } });
      const refusal = await requireQuota(deps, owner.tenant_id, 'messages_per_month').catch((error: unknown) => error);
      expect(refusal).to.be.instanceOf(QuotaExceededError);
      const details = (refusal as QuotaExceededError).details();
      const now = server.platform.clock.now();
      expect(details).to.deep.equal({ quota: 'messages_per_month', limit: 0, used: 0, resets_at: new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1)).toISOString() });
      await requireQuota(deps, owner.tenant_id, 'documents', 20);
      expect(await requireQuota(deps, owner.tenant_id, 'documents', 21).catch((error: unknown) => (error as QuotaExceededError).details())).to.deep.include({ limit: 20, used: 0 });

      const sdk = await requireFeature(deps, owner.tenant_id, 'sdk_connections').catch((error: unknown) => error);
      expect(sdk).to.be.instanceOf(FeatureNotInPlanError);
      expect((sdk as FeatureNotInPlanError).details()).to.deep.equal({ feature: 'sdk_connections', plan: 'premium' });
      expect(((await requireFeature(deps, owner.tenant_id, 'whatsapp').catch((error: unknown) => error)) as FeatureNotInPlanError).details()).to.deep.equal({ feature: 'whatsapp', plan: 'growth' });
      expect(member.tenant_id).to.equal(owner.tenant_id);
    });
  });
  describe('the audit log, after everything above', () => {
    it('puts every event it recorded in an audit log with its actor, these new kinds among them', async () => {
      const seen = await expectEveryEventAudited(server);
      expect([...seen]).to.include.members(['PlanCreated', 'PlanTermsChanged', 'PlanRetired', 'PlanReinstated', 'PlanDeleted', 'PlatformSettingsChanged', 'QuotaOverridesSet']);
    });
  });
});
