// The super admin's tenant routes (spec 4.16, issue #10.5) over HTTP: list and search, create
// with an invited owner, read, update, soft delete, suspend and unsuspend; each with its
// success, 401 (no token, a tenant token), 400 per bad field, 404, 409 and 412.

import { expect } from 'chai';
import { type Account, LOGIN, PASSWORD, gql, registerOwner } from '../support/identity';
import { type TestResponse, type TestServer, startTestServer } from '../support/server';
import { expectEveryEventAudited } from '../support/audit';

const ADMIN = { email: 'root@tenants.test', password: 'root password 123' };

describe('super admin tenants (/api/v1/admin/tenants)', () => {
  let server: TestServer;
  let adminToken: string;
  let adminId: string;
  let owner: Account;

  const bearer = (token: string) => ({ authorization: `Bearer ${token}` });
  const asAdmin = () => bearer(adminToken);
  const admin = (method: string, path: string, options: { body?: unknown; headers?: Record<string, string> } = {}) =>
    server.request(method, `/api/v1/admin${path}`, { ...options, headers: { ...asAdmin(), ...options.headers } });
  const createTenant = (slug: string, extra: Record<string, unknown> = {}) =>
    admin('POST', '/tenants', { body: { name: `Org ${slug}`, slug, owner_email: `owner-of-${slug}@example.com`, ...extra } });

  /** The invitation token emailed to `email`, read from the outbox events. */
  async function invitationToken(email: string): Promise<string> {
    const queued = await server.platform.eventStore.readAll({ direction: 'backwards', filter: { kind: 'event_type', types: ['EmailQueued'] }, maxCount: 500 });
    const mine = queued.find((event) => event.type === 'EmailQueued' && event.data.to === email && event.data.kind === 'invitation');
    if (mine?.type !== 'EmailQueued') throw new Error(`no invitation to ${email}`);
    return /invitation token is ([A-Za-z0-9_-]+)/.exec(server.platform.secrets.open(mine.data.body_sealed))![1];
  }

  /** Each event the request appended, with its actor. */
  async function actorsOf(response: TestResponse): Promise<Array<{ type: string; actor: string; tenant_id: string | null }>> {
    const requestId = response.headers.get('x-request-id');
    const recent = await server.platform.storedEvents.readAll({ direction: 'backwards', maxCount: 500 });
    return recent
      .filter((event) => event.metadata.request_id === requestId)
      .reverse()
      .map((event) => ({ type: event.type, actor: `${event.metadata.actor.kind}:${event.metadata.actor.id}`, tenant_id: event.metadata.tenant_id }));
  }

  before(async () => {
    server = await startTestServer({ SCRYPT_LOG_N: '12', SUPER_ADMIN_EMAIL: ADMIN.email, SUPER_ADMIN_PASSWORD: ADMIN.password });
    const login = await server.request('POST', '/api/v1/admin/auth/login', { body: ADMIN });
    adminToken = login.json.token;
    adminId = login.json.admin.id;
    owner = await registerOwner(server, 'signed-up-org');
  });
  after(() => server.close());

  describe('authentication', () => {
    it('answers 401 without a token and with a tenant token on every tenant route, and refuses the admin token on tenant routes', async () => {
      const id = owner.tenant_id;
      const routes: Array<[string, string, unknown?]> = [
        ['GET', '/api/v1/admin/tenants'],
        ['POST', '/api/v1/admin/tenants', { name: 'X', slug: 'xyz-org', owner_email: 'x@example.com' }],
        ['GET', `/api/v1/admin/tenants/${id}`],
        ['PUT', `/api/v1/admin/tenants/${id}`, { name: 'Taken over' }],
        ['DELETE', `/api/v1/admin/tenants/${id}`],
        ['POST', `/api/v1/admin/tenants/${id}/suspend`, { reason: 'because' }],
        ['POST', `/api/v1/admin/tenants/${id}/unsuspend`],
        ['POST', `/api/v1/admin/tenants/${id}/impersonate`, {}],
      ];
      for (const [method, path, body] of routes) {
        const anonymous = await server.request(method, path, { body });
        expect(anonymous.status, `${method} ${path} without a token`).to.equal(401);
        const tenant = await server.request(method, path, { body, headers: bearer(owner.token) });
        expect(tenant.status, `${method} ${path} with a tenant token`).to.equal(401);
        expect(await tenant.events(), `${method} ${path}`).to.deep.equal([]);
      }
      expect((await server.request('GET', '/api/v1/org/members', { headers: asAdmin() })).status).to.equal(401);
      expect((await gql(server, '{ me { role } }', {}, adminToken)).status).to.equal(401);
      // The tenant is untouched.
      expect((await admin('GET', `/tenants/${id}`)).json).to.deep.include({ name: 'Org signed-up-org', status: 'active' });
    });
  });

  describe('POST /tenants', () => {
    it('creates the organization with its workspace and widget token, and invites its owner by email, the admin acting', async () => {
      const created = await createTenant('acme-made', { owner_name: 'Ada Owner' });
      expect(created.status).to.equal(201);
      const { tenant, invitation } = created.json;
      expect(created.headers.get('location')).to.equal(`/api/v1/admin/tenants/${tenant.id}`);
      expect(tenant).to.deep.include({ name: 'Org acme-made', slug: 'acme-made', status: 'active', suspended_reason: null, deleted_at: null });
      expect(tenant.settings).to.deep.include({ default_language: 'en', widget_enabled: true });
      expect(tenant).to.not.have.any.keys('widget_token', 'widget_token_sealed', 'widget_token_hash');
      expect(invitation).to.deep.include({ email: 'owner-of-acme-made@example.com', role: 'owner', status: 'pending', invited_by: adminId });
      const token = await invitationToken('owner-of-acme-made@example.com');
      expect(created.text).to.not.contain(token);
      expect(await created.events()).to.deep.equal([
        'ReservationClaimed@reservation',
        'TenantCreated@tenant',
        'WorkspaceCreated@workspace',
        'WidgetTokenRotated@tenant',
        'ReservationClaimed@reservation',
        'InvitationSent@invitation',
        'EmailQueued@email',
      ]);
      const actors = await actorsOf(created);
      expect(actors.every((event) => event.actor === `admin:${adminId}` && event.tenant_id === tenant.id), JSON.stringify(actors)).to.equal(true);
      const email = server.platform.secrets.open(
        ((await server.platform.eventStore.readAll({ filter: { kind: 'event_type', types: ['EmailQueued'] } })).find((event) => event.type === 'EmailQueued' && event.data.to === invitation.email)!.data as { body_sealed: string }).body_sealed,
      );
      expect(email).to.match(/^Hello Ada Owner,\n\nAn administrator invited you to join Org acme-made as its owner\./);
    });

    it('lets the invited owner join as the owner, and then run the organization', async () => {
      const created = await createTenant('owned-later');
      const token = await invitationToken('owner-of-owned-later@example.com');
      const preview = await server.request('GET', `/api/v1/team/invite-preview?token=${token}`);
      expect(preview.json).to.deep.include({ organization_name: 'Org owned-later', role: 'owner', inviter_name: null });
      const accepted = await server.request('POST', '/api/v1/team/accept-invite', { body: { token, name: 'Olive Owner', password: PASSWORD } });
      expect(accepted.status).to.equal(200);
      expect(accepted.json).to.deep.include({ role: 'owner' });
      expect(accepted.json.tenant.id).to.equal(created.json.tenant.id);
      const members = await server.request('GET', '/api/v1/org/members', { headers: bearer(accepted.json.token) });
      expect(members.json.items.map((member: { role: string; email: string }) => [member.role, member.email])).to.deep.equal([['owner', 'owner-of-owned-later@example.com']]);
      const workspaces = await server.request('GET', '/api/v1/org/workspaces', { headers: bearer(accepted.json.token) });
      expect(workspaces.json.items.map((workspace: { name: string; is_default: boolean }) => [workspace.name, workspace.is_default])).to.deep.equal([['Default', true]]);
    });

    it('answers 409 slug_taken for a slug in use, a signed-up one included', async () => {
      for (const slug of ['acme-made', 'signed-up-org']) {
        const taken = await createTenant(slug, { owner_email: 'someone@example.com' });
        expect(taken.status, slug).to.equal(409);
        expect(taken.json).to.deep.include({ code: 'slug_taken', field: 'slug' });
        expect(await taken.events(), slug).to.deep.equal([]);
      }
    });

    it('answers 400 naming each bad field, and writes nothing', async () => {
      const good = { name: 'Fine Org', slug: 'fine-org', owner_email: 'fine@example.com' };
      const cases: Array<[Record<string, unknown>, string, string]> = [
        [{ ...good, name: undefined }, 'name', 'invalid_request'],
        [{ ...good, name: 42 }, 'name', 'invalid_request'],
        [{ ...good, name: '   ' }, 'name', 'invalid_name'],
        [{ ...good, slug: undefined }, 'slug', 'invalid_request'],
        [{ ...good, slug: 'Not A Slug' }, 'slug', 'invalid_slug'],
        [{ ...good, slug: 'admin' }, 'slug', 'invalid_slug'],
        [{ ...good, owner_email: undefined }, 'owner_email', 'invalid_request'],
        [{ ...good, owner_email: 'not-an-email' }, 'owner_email', 'invalid_email'],
        [{ ...good, owner_name: 7 }, 'owner_name', 'invalid_request'],
        [{ ...good, owner_name: ' ' }, 'owner_name', 'invalid_name'],
      ];
      for (const [body, field, code] of cases) {
        const refused = await admin('POST', '/tenants', { body });
        expect([refused.status, refused.json.field, refused.json.code], JSON.stringify(body)).to.deep.equal([400, field, code]);
        expect(await refused.events(), JSON.stringify(body)).to.deep.equal([]);
      }
      expect((await server.request('GET', '/api/v1/public/tenant-slug-available?slug=fine-org')).json.available).to.equal(true);
    });

    it('gives the first answer again under the same Idempotency-Key, and creates one organization', async () => {
      const body = { name: 'Once Org', slug: 'once-org', owner_email: 'once@example.com' };
      const first = await admin('POST', '/tenants', { body, headers: { 'idempotency-key': 'create-once' } });
      const again = await admin('POST', '/tenants', { body, headers: { 'idempotency-key': 'create-once' } });
      expect(first.status).to.equal(201);
      expect([again.status, again.headers.get('idempotent-replayed')]).to.deep.equal([201, 'true']);
      expect(again.json).to.deep.equal(first.json);
      expect(await again.events()).to.deep.equal([]);
      const other = await admin('POST', '/tenants', { body: { ...body, slug: 'twice-org' }, headers: { 'idempotency-key': 'create-once' } });
      expect(other.status).to.equal(422);
    });
  });

  describe('GET /tenants/{id}', () => {
    it('answers the organization with its ETag, and 404 for an unknown id', async () => {
      const one = await admin('GET', `/tenants/${owner.tenant_id}`);
      expect(one.status).to.equal(200);
      expect(one.headers.get('etag')).to.match(/^"\d+"$/);
      expect(one.json).to.deep.include({ id: owner.tenant_id, slug: 'signed-up-org', status: 'active' });
      expect(one.json).to.have.all.keys('id', 'name', 'slug', 'status', 'suspended_reason', 'created_at', 'updated_at', 'deleted_at', 'branding', 'settings');
      const missing = await admin('GET', '/tenants/no-such-tenant');
      expect([missing.status, missing.json.code]).to.deep.equal([404, 'tenant_not_found']);
    });
  });

  describe('PUT /tenants/{id}', () => {
    let tenantId: string;
    before(async () => {
      tenantId = (await createTenant('edited-org')).json.tenant.id;
    });

    it('changes name, branding and settings together, the admin acting, with a new ETag', async () => {
      const before = await admin('GET', `/tenants/${tenantId}`);
      const changed = await admin('PUT', `/tenants/${tenantId}`, {
        body: { name: 'Edited Org', branding: { primary_color: '#123456' }, settings: { timezone: 'Europe/Paris' } },
        headers: { 'if-match': before.headers.get('etag')! },
      });
      expect(changed.status).to.equal(200);
      expect(changed.json).to.deep.include({ name: 'Edited Org' });
      expect(changed.json.branding).to.deep.include({ primary_color: '#123456' });
      expect(changed.json.settings).to.deep.include({ timezone: 'Europe/Paris' });
      expect(changed.headers.get('etag')).to.not.equal(before.headers.get('etag'));
      expect(await actorsOf(changed)).to.deep.equal(
        ['TenantRenamed', 'TenantBrandingChanged', 'TenantSettingsChanged'].map((type) => ({ type, actor: `admin:${adminId}`, tenant_id: tenantId })),
      );
      const same = await admin('PUT', `/tenants/${tenantId}`, { body: { name: 'Edited Org' } });
      expect(same.status).to.equal(200);
      expect(await same.events()).to.deep.equal([]);
    });

    it('answers 412 for a stale If-Match and changes nothing', async () => {
      const stale = await admin('PUT', `/tenants/${tenantId}`, { body: { name: 'Lost Update' }, headers: { 'if-match': '"0"' } });
      expect([stale.status, stale.json.code]).to.deep.equal([412, 'revision_mismatch']);
      expect((await admin('GET', `/tenants/${tenantId}`)).json.name).to.equal('Edited Org');
    });

    it('answers 400 naming each bad field, nested ones by their path, and changes nothing', async () => {
      const cases: Array<[unknown, string]> = [
        [{ name: '' }, 'name'],
        [{ name: 5 }, 'name'],
        [{ branding: { primary_color: 'red' } }, 'branding.primary_color'],
        [{ branding: { logo_url: 'http://insecure.example/logo.png' } }, 'branding.logo_url'],
        [{ branding: 'blue' }, 'branding'],
        [{ settings: { widget_enabled: 'yes' } }, 'settings.widget_enabled'],
        [{ settings: { default_language: 'english' } }, 'settings.default_language'],
      ];
      for (const [body, field] of cases) {
        const refused = await admin('PUT', `/tenants/${tenantId}`, { body });
        expect([refused.status, refused.json.field], JSON.stringify(body)).to.deep.equal([400, field]);
        expect(await refused.events()).to.deep.equal([]);
      }
      expect((await admin('PUT', `/tenants/${tenantId}`, { body: { name: 'X' }, headers: { 'if-match': 'W/"1", "2"' } })).status).to.equal(400);
    });

    it('answers 404 for an unknown id', async () => {
      const missing = await admin('PUT', '/tenants/no-such-tenant', { body: { name: 'Ghost' } });
      expect([missing.status, missing.json.code]).to.deep.equal([404, 'tenant_not_found']);
      expect((await admin('PUT', '/tenants/no-such-tenant', { body: { name: 'Ghost' }, headers: { 'if-match': '"0"' } })).status).to.equal(404);
    });
  });

  describe('suspend and unsuspend', () => {
    let victim: Account;
    before(async () => {
      victim = await registerOwner(server, 'suspended-by-admin');
    });

    it("makes the organization's tokens and logins 403 tenant_suspended, and unsuspending restores them", async () => {
      expect((await server.request('GET', '/api/v1/org/members', { headers: bearer(victim.token) })).status).to.equal(200);
      const suspended = await admin('POST', `/tenants/${victim.tenant_id}/suspend`, { body: { reason: ' unpaid invoices ' } });
      expect(suspended.status).to.equal(200);
      expect(suspended.json).to.deep.include({ status: 'suspended', suspended_reason: 'unpaid invoices' });
      expect(suspended.headers.get('etag')).to.match(/^"\d+"$/);
      expect(await actorsOf(suspended)).to.deep.equal([{ type: 'TenantSuspended', actor: `admin:${adminId}`, tenant_id: victim.tenant_id }]);

      const refused = await server.request('GET', '/api/v1/org/members', { headers: bearer(victim.token) });
      expect([refused.status, refused.json.code]).to.deep.equal([403, 'tenant_suspended']);
      const login = await gql(server, LOGIN, { email: victim.email, password: PASSWORD });
      expect([login.status, login.json.errors[0].extensions.code]).to.deep.equal([403, 'tenant_suspended']);
      const listed = await admin('GET', '/tenants?status=suspended');
      expect(listed.json.items.map((tenant: { id: string }) => tenant.id)).to.include(victim.tenant_id);

      const again = await admin('POST', `/tenants/${victim.tenant_id}/suspend`, { body: { reason: 'twice' } });
      expect([again.status, again.json.code]).to.deep.equal([409, 'tenant_suspended']);

      const unsuspended = await admin('POST', `/tenants/${victim.tenant_id}/unsuspend`);
      expect(unsuspended.status).to.equal(200);
      expect(unsuspended.json).to.deep.include({ status: 'active', suspended_reason: null });
      expect(await actorsOf(unsuspended)).to.deep.equal([{ type: 'TenantUnsuspended', actor: `admin:${adminId}`, tenant_id: victim.tenant_id }]);
      expect((await server.request('GET', '/api/v1/org/members', { headers: bearer(victim.token) })).status).to.equal(200);
      expect((await gql(server, LOGIN, { email: victim.email, password: PASSWORD })).status).to.equal(200);

      const notSuspended = await admin('POST', `/tenants/${victim.tenant_id}/unsuspend`);
      expect([notSuspended.status, notSuspended.json.code]).to.deep.equal([409, 'tenant_not_suspended']);
    });

    it('answers 400 for a missing or empty reason, and 404 for an unknown id', async () => {
      for (const body of [{}, { reason: 3 }, { reason: '  ' }]) {
        const refused = await admin('POST', `/tenants/${victim.tenant_id}/suspend`, { body });
        expect([refused.status, refused.json.field], JSON.stringify(body)).to.deep.equal([400, 'reason']);
      }
      expect((await admin('POST', '/tenants/no-such-tenant/suspend', { body: { reason: 'x' } })).status).to.equal(404);
      expect((await admin('POST', '/tenants/no-such-tenant/unsuspend')).status).to.equal(404);
    });
  });

  describe('DELETE /tenants/{id} (soft)', () => {
    let doomed: Account;
    before(async () => {
      doomed = await registerOwner(server, 'deleted-by-admin');
    });

    it('answers 412 for a stale If-Match, and deletes nothing', async () => {
      const stale = await admin('DELETE', `/tenants/${doomed.tenant_id}`, { headers: { 'if-match': '"0"' } });
      expect(stale.status).to.equal(412);
      expect((await admin('GET', `/tenants/${doomed.tenant_id}`)).json.status).to.equal('active');
    });

    it("records TenantDeleted, keeps the data and the slug, and refuses the members' tokens and logins with 403 tenant_deleted", async () => {
      const etag = (await admin('GET', `/tenants/${doomed.tenant_id}`)).headers.get('etag')!;
      const deleted = await admin('DELETE', `/tenants/${doomed.tenant_id}`, { headers: { 'if-match': etag } });
      expect(deleted.status).to.equal(204);
      expect(deleted.text).to.equal('');
      expect(await actorsOf(deleted)).to.deep.equal([{ type: 'TenantDeleted', actor: `admin:${adminId}`, tenant_id: doomed.tenant_id }]);

      const kept = await admin('GET', `/tenants/${doomed.tenant_id}`);
      expect(kept.json).to.deep.include({ slug: 'deleted-by-admin', name: 'Org deleted-by-admin', status: 'deleted' });
      expect(kept.json.deleted_at).to.be.a('string');
      const refused = await server.request('GET', '/api/v1/org/members', { headers: bearer(doomed.token) });
      expect([refused.status, refused.json.code]).to.deep.equal([403, 'tenant_deleted']);
      const graphql = await gql(server, '{ me { role } }', {}, doomed.token);
      expect([graphql.status, graphql.json.errors[0].extensions.code]).to.deep.equal([403, 'tenant_deleted']);
      const login = await gql(server, LOGIN, { email: doomed.email, password: PASSWORD });
      expect([login.status, login.json.errors[0].extensions.code]).to.deep.equal([403, 'tenant_deleted']);

      // The slug stays reserved for good.
      expect((await server.request('GET', '/api/v1/public/tenant-slug-available?slug=deleted-by-admin')).json.available).to.equal(false);
      expect((await createTenant('deleted-by-admin')).json.code).to.equal('slug_taken');
      expect((await server.request('GET', '/api/v1/public/tenant-branding?slug=deleted-by-admin')).status).to.equal(404);
      const listed = await admin('GET', '/tenants?status=deleted');
      expect(listed.json.items.map((tenant: { id: string }) => tenant.id)).to.deep.equal([doomed.tenant_id]);
    });

    it('answers 409 tenant_deleted to a second delete and to every change of a deleted organization', async () => {
      const id = doomed.tenant_id;
      const attempts: Array<[string, string, unknown?]> = [
        ['DELETE', `/tenants/${id}`],
        ['PUT', `/tenants/${id}`, { name: 'Revived' }],
        ['POST', `/tenants/${id}/suspend`, { reason: 'late' }],
        ['POST', `/tenants/${id}/unsuspend`],
        ['POST', `/tenants/${id}/impersonate`, {}],
      ];
      for (const [method, path, body] of attempts) {
        const refused = await admin(method, path, { body });
        expect([refused.status, refused.json.code], `${method} ${path}`).to.deep.equal([409, 'tenant_deleted']);
        expect(await refused.events(), `${method} ${path}`).to.deep.equal([]);
      }
    });

    it('answers 404 for an unknown id', async () => {
      expect((await admin('DELETE', '/tenants/no-such-tenant')).status).to.equal(404);
    });
  });

  describe('GET /tenants', () => {
    let ids: Record<string, string>;
    before(async () => {
      // Oldest first; the list answers newest first.
      ids = {};
      for (const [slug, name] of [
        ['zeta-shop', 'Zeta Shop'],
        ['beta-one', 'Gamma Holdings'],
        ['gamma-two', 'Beta Two'],
        ['betamax', 'BETA Max'],
        ['unrelated', 'Nothing Here'],
        ['beta-three', 'Beta Three'],
      ]) {
        ids[slug] = (await createTenant(slug, { name })).json.tenant.id;
      }
    });

    it('lists organizations newest first, in pages of `limit` with a cursor', async () => {
      const all: string[] = [];
      let cursor: string | null = null;
      let pages = 0;
      do {
        const query: string = cursor === null ? '?limit=4' : `?limit=4&cursor=${encodeURIComponent(cursor)}`;
        const page: TestResponse = await admin('GET', `/tenants${query}`);
        expect(page.status).to.equal(200);
        expect(page.json.items.length).to.be.at.most(4);
        all.push(...page.json.items.map((tenant: { id: string }) => tenant.id));
        cursor = page.json.next_cursor;
        pages += 1;
      } while (cursor !== null);
      expect(pages).to.be.greaterThan(2);
      expect(new Set(all).size).to.equal(all.length);
      expect(all.indexOf(ids['beta-three'])).to.be.lessThan(all.indexOf(ids['zeta-shop']));
      expect(all).to.include.members([owner.tenant_id, ...Object.values(ids)]);
      const first = (await admin('GET', '/tenants?limit=1')).json.items[0];
      expect(first).to.have.all.keys('id', 'name', 'slug', 'status', 'suspended_reason', 'created_at', 'updated_at', 'deleted_at');
    });

    it('searches by a prefix of the slug or of the name, ignoring case, each organization once', async () => {
      const search = async (q: string, limit?: number): Promise<string[]> => {
        const found: string[] = [];
        let cursor: string | null = null;
        do {
          const query = `?q=${encodeURIComponent(q)}${limit ? `&limit=${limit}` : ''}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`;
          const page: TestResponse = await admin('GET', `/tenants${query}`);
          expect(page.status, q).to.equal(200);
          expect(page.json.items.length, `${q} by ${limit}`).to.be.at.most(limit ?? 50);
          found.push(...page.json.items.map((tenant: { id: string }) => tenant.id));
          cursor = page.json.next_cursor;
        } while (cursor !== null);
        return found;
      };
      // The list's own order (newest first; two created in the same millisecond go by id), kept to the ids expected.
      const listed = (await admin('GET', '/tenants?limit=1000')).json.items.map((tenant: { id: string }) => tenant.id) as string[];
      const inListOrder = (...slugs: string[]): string[] => listed.filter((id) => slugs.some((slug) => ids[slug] === id));
      // slug beta-one (name Gamma ...), name Beta Two (slug gamma-two), betamax (both), beta-three (both).
      const betas = inListOrder('beta-three', 'betamax', 'gamma-two', 'beta-one');
      expect(betas).to.have.length(4);
      expect(await search('beta')).to.deep.equal(betas);
      expect(await search('BeTa')).to.deep.equal(betas);
      for (const limit of [1, 2, 3]) expect(await search('beta', limit), `limit ${limit}`).to.deep.equal(betas);
      expect(await search('gamma')).to.deep.equal(inListOrder('gamma-two', 'beta-one'));
      expect(await search('beta t')).to.deep.equal(inListOrder('beta-three', 'gamma-two'));
      expect(await search('zeta-')).to.deep.equal([ids['zeta-shop']]);
      expect(await search('no-such-prefix')).to.deep.equal([]);
      expect(await search('')).to.include.members(Object.values(ids));
    });

    it('combines the search with the status filter', async () => {
      await admin('POST', `/tenants/${ids.betamax}/suspend`, { body: { reason: 'checking filters' } });
      const suspended = await admin('GET', '/tenants?q=beta&status=suspended');
      expect(suspended.json.items.map((tenant: { id: string }) => tenant.id)).to.deep.equal([ids.betamax]);
      const active = await admin('GET', '/tenants?q=beta&status=active');
      expect(active.json.items.map((tenant: { id: string }) => tenant.id)).to.have.members([ids['beta-three'], ids['gamma-two'], ids['beta-one']]);
      await admin('POST', `/tenants/${ids.betamax}/unsuspend`);
    });

    it('answers 400 for a bad status, limit, cursor or search text', async () => {
      const searchCursor = (await admin('GET', '/tenants?q=beta&limit=1')).json.next_cursor;
      const plainCursor = (await admin('GET', '/tenants?limit=1')).json.next_cursor;
      const cases: Array<[string, string]> = [
        ['?status=archived', 'status'],
        ['?status=active&status=deleted', 'status'],
        ['?limit=0', 'limit'],
        ['?limit=1001', 'limit'],
        ['?limit=ten', 'limit'],
        ['?cursor=', 'cursor'],
        [`?q=${'x'.repeat(101)}`, 'q'],
        ['?q=a&q=b', 'q'],
      ];
      for (const [query, field] of cases) {
        const refused = await admin('GET', `/tenants${query}`);
        expect([refused.status, refused.json.field], query).to.deep.equal([400, field]);
      }
      for (const query of ['?cursor=garbage', `?q=beta&cursor=${encodeURIComponent(plainCursor)}`, `?cursor=${encodeURIComponent(searchCursor)}`, '?q=beta&cursor=Zm9v']) {
        const refused = await admin('GET', `/tenants${query}`);
        expect([refused.status, refused.json.code], query).to.deep.equal([400, 'invalid_cursor']);
      }
    });
  });
  describe('the audit log, after everything above', () => {
    it('puts every event it recorded in an audit log with its actor, these new kinds among them', async () => {
      const seen = await expectEveryEventAudited(server);
      expect([...seen]).to.include.members(['TenantDeleted']);
    });
  });
});
