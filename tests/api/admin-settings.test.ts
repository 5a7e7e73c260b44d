// Platform settings (spec 4.16, issue #10.5): `GET, PUT /api/v1/admin/settings`. Closing
// sign-up makes the `register` mutation answer 403 `signup_closed` (writing nothing), while
// the super admin's tenants and invitations keep working; reopening restores sign-up.

import { expect } from 'chai';
import { PASSWORD, REGISTER, gql, registerOwner } from '../support/identity';
import { type TestServer, startTestServer } from '../support/server';

const ADMIN = { email: 'root@settings.test', password: 'root password 123' };

describe('platform settings (/api/v1/admin/settings)', () => {
  let server: TestServer;
  let adminToken: string;
  let adminId: string;

  const asAdmin = (extra: Record<string, string> = {}) => ({ authorization: `Bearer ${adminToken}`, ...extra });
  const put = (body: unknown, extra: Record<string, string> = {}) => server.request('PUT', '/api/v1/admin/settings', { headers: asAdmin(extra), body });
  const signUp = (slug: string) => gql(server, REGISTER, { email: `${slug}@example.com`, password: PASSWORD, name: 'Someone', organization_name: `Org ${slug}`, slug });

  before(async () => {
    server = await startTestServer({ SCRYPT_LOG_N: '12', SUPER_ADMIN_EMAIL: ADMIN.email, SUPER_ADMIN_PASSWORD: ADMIN.password });
    const login = await server.request('POST', '/api/v1/admin/auth/login', { body: ADMIN });
    adminToken = login.json.token;
    adminId = login.json.admin.id;
  });
  after(() => server.close());

  it('answers the defaults before any change: sign-up open', async () => {
    const settings = await server.request('GET', '/api/v1/admin/settings', { headers: asAdmin() });
    expect(settings.status).to.equal(200);
    expect(settings.json).to.deep.equal({ signup_open: true, updated_at: null, updated_by: null });
    expect(settings.headers.get('etag')).to.equal('"-1"');
  });

  it('answers 401 without a token and with a tenant token', async () => {
    const tenant = await registerOwner(server, 'settings-tenant');
    const callers: Array<Record<string, string>> = [{}, { authorization: `Bearer ${tenant.token}` }];
    for (const headers of callers) {
      expect((await server.request('GET', '/api/v1/admin/settings', { headers })).status).to.equal(401);
      const refused = await server.request('PUT', '/api/v1/admin/settings', { headers, body: { signup_open: false } });
      expect(refused.status).to.equal(401);
      expect(await refused.events()).to.deep.equal([]);
    }
  });

  it('answers 400 for a setting of the wrong type, and 412 for a stale If-Match', async () => {
    for (const body of [{ signup_open: 'no' }, { signup_open: null }, 'closed']) {
      const refused = await put(body);
      expect(refused.status, JSON.stringify(body)).to.equal(400);
      expect(await refused.events()).to.deep.equal([]);
    }
    expect((await put({ signup_open: 'no' })).json.field).to.equal('signup_open');
    const stale = await put({ signup_open: false }, { 'if-match': '"7"' });
    expect([stale.status, stale.json.code]).to.deep.equal([412, 'revision_mismatch']);
    expect((await server.request('GET', '/api/v1/admin/settings', { headers: asAdmin() })).json.signup_open).to.equal(true);
  });

  it('closes sign-up: register is 403 signup_closed and writes nothing; the super admin still creates tenants and their owners still join', async () => {
    const closed = await put({ signup_open: false }, { 'if-match': '"-1"' });
    expect(closed.status).to.equal(200);
    expect(closed.json).to.deep.include({ signup_open: false, updated_by: adminId });
    expect(closed.headers.get('etag')).to.equal('"0"');
    expect(await closed.events()).to.deep.equal(['PlatformSettingsChanged@platformSettings']);
    const [changed] = await server.platform.eventStore.readStream('platformSettings-platform');
    expect(changed.data).to.deep.equal({ changes: { signup_open: false } });
    expect(changed.metadata).to.deep.include({ tenant_id: null, actor: { kind: 'admin', id: adminId } });
    const same = await put({ signup_open: false });
    expect(same.status).to.equal(200);
    expect(await same.events()).to.deep.equal([]);
    // A platform event: the platform's audit log shows it, with the admin as actor.
    await server.platform.readYourWrites(changed.position);
    const audit = await server.request('GET', '/api/v1/admin/audit-logs?action=PlatformSettingsChanged', { headers: asAdmin() });
    expect(audit.json.items.map((entry: { actor_kind: string; actor_id: string }) => [entry.actor_kind, entry.actor_id])).to.deep.equal([['admin', adminId]]);

    const refused = await signUp('closed-door');
    expect(refused.status).to.equal(403);
    expect(refused.json.errors[0].extensions.code).to.equal('signup_closed');
    expect(refused.json.data).to.equal(null);
    expect(await refused.events()).to.deep.equal([]);
    expect((await server.request('GET', '/api/v1/public/tenant-slug-available?slug=closed-door')).json.available).to.equal(true);

    const created = await server.request('POST', '/api/v1/admin/tenants', { headers: asAdmin(), body: { name: 'Invited Org', slug: 'invited-org', owner_email: 'invited.owner@example.com' } });
    expect(created.status).to.equal(201);
    const queued = await server.platform.eventStore.readAll({ direction: 'backwards', filter: { kind: 'event_type', types: ['EmailQueued'] }, maxCount: 100 });
    const mail = queued.find((event) => event.type === 'EmailQueued' && event.data.to === 'invited.owner@example.com')!;
    const token = /invitation token is ([A-Za-z0-9_-]+)/.exec(server.platform.secrets.open((mail.data as { body_sealed: string }).body_sealed))![1];
    const joined = await server.request('POST', '/api/v1/team/accept-invite', { body: { token, name: 'Invited Owner', password: PASSWORD } });
    expect(joined.status).to.equal(200);
    expect(joined.json.role).to.equal('owner');
  });

  it('reopens sign-up: register works again', async () => {
    const current = await server.request('GET', '/api/v1/admin/settings', { headers: asAdmin() });
    expect(current.json.signup_open).to.equal(false);
    const reopened = await put({ signup_open: true }, { 'if-match': current.headers.get('etag')! });
    expect(reopened.status).to.equal(200);
    expect(reopened.json.signup_open).to.equal(true);
    const registered = await signUp('open-door');
    expect(registered.status).to.equal(200);
    expect(registered.json.data.register.tenant_id).to.be.a('string');
  });
});
