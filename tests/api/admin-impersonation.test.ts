// Impersonation (spec 4.16, issue #10.5): the super admin gets a short-lived tenant token for a
// member; every event written with it names the admin as actor and the member as subject, and
// the tenant's audit log shows the impersonation and each action so.

import { expect } from 'chai';
import type { RecordedEvent } from '../../application/ports/event-store';
import { type Account, PASSWORD, gql, joinAs, registerOwner } from '../support/identity';
import { type TestResponse, type TestServer, startTestServer } from '../support/server';
import { expectEveryEventAudited } from '../support/audit';

const ADMIN = { email: 'root@impersonation.test', password: 'root password 123' };
const TTL_SECONDS = 600;

describe('super admin impersonation (POST /api/v1/admin/tenants/{id}/impersonate)', () => {
  let server: TestServer;
  let adminToken: string;
  let adminId: string;
  let owner: Account;
  let member: Account;

  const bearer = (token: string) => ({ authorization: `Bearer ${token}` });
  const impersonate = (tenantId: string, body: unknown = {}) => server.request('POST', `/api/v1/admin/tenants/${tenantId}/impersonate`, { headers: bearer(adminToken), body });

  /** The events a request appended, as recorded. */
  async function eventsOf(response: TestResponse): Promise<RecordedEvent[]> {
    const requestId = response.headers.get('x-request-id');
    const recent = await server.platform.storedEvents.readAll({ direction: 'backwards', maxCount: 500 });
    return recent.filter((event) => event.metadata.request_id === requestId).reverse();
  }

  before(async () => {
    server = await startTestServer({ SCRYPT_LOG_N: '12', SUPER_ADMIN_EMAIL: ADMIN.email, SUPER_ADMIN_PASSWORD: ADMIN.password, IMPERSONATION_TTL_SECONDS: String(TTL_SECONDS) });
    const login = await server.request('POST', '/api/v1/admin/auth/login', { body: ADMIN });
    adminToken = login.json.token;
    adminId = login.json.admin.id;
    owner = await registerOwner(server, 'impersonated-org');
    member = await joinAs(server, await registerOwner(server, 'member-home', 'member.person@example.com'), owner.tenant_id, 'member');
  });
  after(() => server.close());

  it("answers a token for the tenant's owner by default, for IMPERSONATION_TTL_SECONDS, recording the impersonation with the admin as actor and the owner as subject", async () => {
    const response = await impersonate(owner.tenant_id);
    expect(response.status).to.equal(200);
    expect(response.json).to.deep.include({ tenant_id: owner.tenant_id, role: 'owner', impersonated_by: { kind: 'admin', id: adminId } });
    expect(response.json.user).to.deep.equal({ id: owner.user_id, email: owner.email, name: 'Owner' });
    expect(response.json.token).to.match(/^v4\.public\./);

    const events = await eventsOf(response);
    expect(events.map((event) => event.type)).to.deep.equal(['SessionStarted', 'ImpersonationStarted']);
    for (const event of events) {
      expect(event.metadata, event.type).to.deep.include({ tenant_id: owner.tenant_id, actor: { kind: 'admin', id: adminId }, subject: { kind: 'user', id: owner.user_id } });
    }
    const [started, impersonation] = events as Array<RecordedEvent<string, Record<string, string>>>;
    expect(started.data).to.deep.include({ jti: response.json.session_id, user_id: owner.user_id, tenant_id: owner.tenant_id, impersonated_by: adminId, expires_at: response.json.expires_at });
    expect(Date.parse(started.data.expires_at) - Date.parse(started.data.issued_at)).to.equal(TTL_SECONDS * 1000);
    expect(impersonation.data).to.deep.equal({ jti: response.json.session_id, tenant_id: owner.tenant_id, user_id: owner.user_id, admin_id: adminId, expires_at: response.json.expires_at });
  });

  it('acts as the member on REST and GraphQL: each event names the admin as actor and the member as subject, and so does the audit log', async () => {
    const { token, session_id: sessionId } = (await impersonate(owner.tenant_id)).json;
    expect((await server.request('GET', '/api/v1/org/members', { headers: bearer(token) })).status).to.equal(200);

    const team = await server.request('POST', '/api/v1/org/teams', { headers: bearer(token), body: { name: 'Made while impersonating' } });
    expect(team.status).to.equal(201);
    const settings = await gql(server, 'mutation { update_settings(input: { timezone: "Asia/Tokyo" }) { timezone } }', {}, token);
    expect(settings.json.data.update_settings.timezone).to.equal('Asia/Tokyo');
    const written = [...(await eventsOf(team)), ...(await eventsOf(settings))];
    expect(written.map((event) => event.type)).to.include.members(['TeamCreated', 'TenantSettingsChanged']);
    for (const event of written) {
      expect(event.metadata, event.type).to.deep.include({ tenant_id: owner.tenant_id, actor: { kind: 'admin', id: adminId }, subject: { kind: 'user', id: owner.user_id } });
    }

    // The owner's own token writes as the owner, with no subject.
    const own = await server.request('POST', '/api/v1/org/teams', { headers: bearer(owner.token), body: { name: 'Made by the owner' } });
    const [ownEvent] = (await eventsOf(own)).filter((event) => event.type === 'TeamCreated');
    expect(ownEvent.metadata.actor).to.deep.equal({ kind: 'user', id: owner.user_id });
    expect(ownEvent.metadata).to.not.have.property('subject');

    await server.platform.readYourWrites(written[written.length - 1].position);
    const audit = await server.request('GET', '/api/v1/org/audit-logs?limit=1000', { headers: bearer(owner.token) });
    expect(audit.status).to.equal(200);
    type Entry = { action: string; actor_kind: string; actor_id: string; subject_kind: string | null; subject_id: string | null; resource_id: string; details: Record<string, unknown> | null };
    const entries = audit.json.items as Entry[];
    const started = entries.find((entry) => entry.action === 'ImpersonationStarted' && entry.resource_id === sessionId)!;
    expect(started).to.deep.include({ actor_kind: 'admin', actor_id: adminId, subject_kind: 'user', subject_id: owner.user_id });
    expect(started.details).to.deep.include({ user_id: owner.user_id, admin_id: adminId });
    const created = entries.find((entry) => entry.action === 'TeamCreated' && entry.actor_kind === 'admin')!;
    expect(created).to.deep.include({ actor_id: adminId, subject_kind: 'user', subject_id: owner.user_id });
    const byOwner = entries.filter((entry) => entry.action === 'TeamCreated' && entry.actor_kind === 'user');
    expect(byOwner.map((entry) => [entry.actor_id, entry.subject_kind, entry.subject_id])).to.deep.equal([[owner.user_id, null, null]]);
    // The subject is outside the chained fields: the chain still verifies.
    expect((await server.request('GET', '/api/v1/org/audit-logs/verify', { headers: bearer(owner.token) })).json).to.deep.include({ ok: true });
  });

  it('impersonates the member named by user_id, with their role', async () => {
    const response = await impersonate(owner.tenant_id, { user_id: member.user_id });
    expect(response.status).to.equal(200);
    expect(response.json).to.deep.include({ role: 'member' });
    expect(response.json.user.id).to.equal(member.user_id);
    const refused = await server.request('POST', '/api/v1/org/teams', { headers: bearer(response.json.token), body: { name: 'Not allowed' } });
    expect([refused.status, refused.json.code]).to.deep.equal([403, 'insufficient_role']);
    // The refusal is recorded as the admin's, acting as the member.
    const [denied] = await eventsOf(refused);
    expect(denied.type).to.equal('AccessDenied');
    expect(denied.metadata).to.deep.include({ actor: { kind: 'admin', id: adminId }, subject: { kind: 'user', id: member.user_id } });
  });

  it('keeps the token in its tenant: no switch-tenant, no admin routes, no proof of the account for an invitation', async () => {
    const { token } = (await impersonate(owner.tenant_id, { user_id: member.user_id })).json;
    const switched = await server.request('POST', '/api/v1/team/switch-tenant', { headers: bearer(token), body: { tenant_id: member.tenant_id } });
    expect([switched.status, switched.json.code]).to.deep.equal([403, 'impersonation_restricted']);
    expect(await switched.events()).to.not.include('SessionStarted@session');
    expect((await server.request('GET', '/api/v1/admin/tenants', { headers: bearer(token) })).status).to.equal(401);

    const inviter = await registerOwner(server, 'inviting-org');
    await server.request('POST', '/api/v1/team/invite', { headers: bearer(inviter.token), body: { email: 'member.person@example.com', role: 'member' } });
    const queued = await server.platform.eventStore.readAll({ direction: 'backwards', filter: { kind: 'event_type', types: ['EmailQueued'] }, maxCount: 100 });
    const mail = queued.find((event) => event.type === 'EmailQueued' && event.data.to === 'member.person@example.com' && event.data.kind === 'invitation')!;
    const invitationToken = /invitation token is ([A-Za-z0-9_-]+)/.exec(server.platform.secrets.open((mail.data as { body_sealed: string }).body_sealed))![1];
    const accepted = await server.request('POST', '/api/v1/team/accept-invite', { headers: bearer(token), body: { token: invitationToken } });
    expect([accepted.status, accepted.json.code]).to.deep.equal([401, 'credentials_required']);
    const own = await server.request('POST', '/api/v1/team/accept-invite', { body: { token: invitationToken, password: PASSWORD } });
    expect(own.status).to.equal(200);
  });

  it('answers 404 for an unknown tenant or member, 409 for a disabled member, a tenant without an owner yet, a suspended or deleted one, and 400 for a bad user_id', async () => {
    expect((await impersonate('no-such-tenant')).status).to.equal(404);
    const unknown = await impersonate(owner.tenant_id, { user_id: 'no-such-user' });
    expect([unknown.status, unknown.json.code]).to.deep.equal([404, 'member_not_found']);
    const bad = await impersonate(owner.tenant_id, { user_id: 42 });
    expect([bad.status, bad.json.field]).to.deep.equal([400, 'user_id']);

    const disabledHome = await registerOwner(server, 'disabled-home', 'disabled.person@example.com');
    const disabled = await joinAs(server, disabledHome, owner.tenant_id, 'member');
    expect((await server.request('PUT', `/api/v1/org/members/${disabled.user_id}/status`, { headers: bearer(owner.token), body: { status: 'disabled' } })).status).to.equal(200);
    const refusedDisabled = await impersonate(owner.tenant_id, { user_id: disabled.user_id });
    expect([refusedDisabled.status, refusedDisabled.json.code]).to.deep.equal([409, 'member_disabled']);

    const created = await server.request('POST', '/api/v1/admin/tenants', { headers: bearer(adminToken), body: { name: 'Ownerless', slug: 'ownerless-org', owner_email: 'later@example.com' } });
    const noOwner = await impersonate(created.json.tenant.id);
    expect([noOwner.status, noOwner.json.code]).to.deep.equal([409, 'no_owner']);

    const paused = await registerOwner(server, 'paused-impersonation');
    await server.request('POST', `/api/v1/admin/tenants/${paused.tenant_id}/suspend`, { headers: bearer(adminToken), body: { reason: 'review' } });
    const suspended = await impersonate(paused.tenant_id);
    expect([suspended.status, suspended.json.code]).to.deep.equal([409, 'tenant_suspended']);
    expect(await suspended.events()).to.deep.equal([]);

    const gone = await registerOwner(server, 'gone-impersonation');
    await server.request('DELETE', `/api/v1/admin/tenants/${gone.tenant_id}`, { headers: bearer(adminToken) });
    const deleted = await impersonate(gone.tenant_id);
    expect([deleted.status, deleted.json.code]).to.deep.equal([409, 'tenant_deleted']);
  });

  it("stops working when the tenant is suspended, like its members' own tokens", async () => {
    const victim = await registerOwner(server, 'suspended-while-impersonated');
    const { token } = (await impersonate(victim.tenant_id)).json;
    expect((await server.request('GET', '/api/v1/org/members', { headers: bearer(token) })).status).to.equal(200);
    await server.request('POST', `/api/v1/admin/tenants/${victim.tenant_id}/suspend`, { headers: bearer(adminToken), body: { reason: 'review' } });
    const refused = await server.request('GET', '/api/v1/org/members', { headers: bearer(token) });
    expect([refused.status, refused.json.code]).to.deep.equal([403, 'tenant_suspended']);
  });
  describe('the audit log, after everything above', () => {
    it('puts every event it recorded in an audit log with its actor and subject, the impersonation among them', async () => {
      const seen = await expectEveryEventAudited(server);
      expect([...seen]).to.include.members(['ImpersonationStarted']);
    });
  });
});
