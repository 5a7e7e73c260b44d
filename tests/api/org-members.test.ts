import { expect } from 'chai';
import { AUDIT_LOG, type AuditLogEntry } from '../../projections/audit-log';
import { type Account, LOGIN, PASSWORD, gql, joinAs, registerOwner, widgetTokenOf } from '../support/identity';
import { type TestServer, startTestServer } from '../support/server';

describe('organization members, roles and ownership (/api/v1/org)', () => {
  let server: TestServer;
  let owner: Account;
  let admin: Account;
  let member: Account;
  let outsider: Account;

  const as = (account: Account) => ({ authorization: `Bearer ${account.token}` });

  before(async () => {
    server = await startTestServer({ SCRYPT_LOG_N: '12' });
    owner = await registerOwner(server, 'orbit');
    admin = await joinAs(server, await registerOwner(server, 'adm-home', 'adm@example.com'), owner.tenant_id, 'admin');
    member = await joinAs(server, await registerOwner(server, 'mem-home', 'mem@example.com'), owner.tenant_id, 'member');
    outsider = await registerOwner(server, 'other-org');
  });
  after(() => server.close());

  it('GET /roles lists the three roles for any member', async () => {
    const response = await server.request('GET', '/api/v1/org/roles', { headers: as(member) });
    expect(response.status).to.equal(200);
    expect(response.json.items.map((r: { role: string }) => r.role)).to.deep.equal(['owner', 'admin', 'member']);
  });

  it('GET /members lists members with email and role, filters by role, and pages', async () => {
    const all = await server.request('GET', '/api/v1/org/members', { headers: as(member) });
    expect(all.status).to.equal(200);
    expect(all.json.items.map((m: { email: string; role: string }) => [m.email, m.role])).to.deep.equal([
      ['orbit@example.com', 'owner'],
      ['adm@example.com', 'admin'],
      ['mem@example.com', 'member'],
    ]);
    const admins = await server.request('GET', '/api/v1/org/members?role=admin', { headers: as(member) });
    expect(admins.json.items.map((m: { email: string }) => m.email)).to.deep.equal(['adm@example.com']);
    const firstPage = await server.request('GET', '/api/v1/org/members?limit=2', { headers: as(member) });
    expect(firstPage.json.items).to.have.length(2);
    const secondPage = await server.request('GET', `/api/v1/org/members?limit=2&cursor=${firstPage.json.next_cursor}`, { headers: as(member) });
    expect(secondPage.json.items.map((m: { email: string }) => m.email)).to.deep.equal(['mem@example.com']);
    expect(secondPage.json.next_cursor).to.equal(null);
    expect((await server.request('GET', '/api/v1/org/members?role=king', { headers: as(member) })).json).to.deep.include({ code: 'invalid_request', field: 'role' });
    expect((await server.request('GET', '/api/v1/org/members?cursor=junk', { headers: as(member) })).status).to.equal(400);
  });

  it('answers a method a route does not take with 405 {code, message} and its Allow header', async () => {
    const response = await server.request('PATCH', '/api/v1/org/members', { headers: as(owner) });
    expect(response.status).to.equal(405);
    expect(response.json.code).to.equal('method_not_allowed');
    expect(response.headers.get('allow')).to.include('GET');
  });

  it('GET /members/{id} answers the member, and 404 for another tenant’s user', async () => {
    expect((await server.request('GET', `/api/v1/org/members/${admin.user_id}`, { headers: as(member) })).json).to.deep.include({ role: 'admin', status: 'active' });
    const foreign = await server.request('GET', `/api/v1/org/members/${outsider.user_id}`, { headers: as(owner) });
    expect(foreign.status).to.equal(404);
    expect(foreign.json.code).to.equal('member_not_found');
  });

  it('rejects a widget token, a missing token and a bad token with 401', async () => {
    const widget = await widgetTokenOf(server, owner);
    expect((await server.request('GET', '/api/v1/org/members', { headers: { authorization: `Bearer ${widget}` } })).json.code).to.equal('widget_token_not_allowed');
    expect((await server.request('GET', '/api/v1/org/members')).status).to.equal(401);
    expect((await server.request('GET', '/api/v1/org/members', { headers: { authorization: 'Bearer nonsense' } })).status).to.equal(401);
  });

  describe('PUT /members/{id}/role', () => {
    it('400 per bad field', async () => {
      const missing = await server.request('PUT', `/api/v1/org/members/${member.user_id}/role`, { headers: as(admin), body: {} });
      expect(missing.status).to.equal(400);
      expect(missing.json).to.deep.include({ code: 'invalid_request', field: 'role' });
      const wrong = await server.request('PUT', `/api/v1/org/members/${member.user_id}/role`, { headers: as(admin), body: { role: 'emperor' } });
      expect(wrong.json.field).to.equal('role');
      const toOwner = await server.request('PUT', `/api/v1/org/members/${member.user_id}/role`, { headers: as(owner), body: { role: 'owner' } });
      expect(toOwner.status).to.equal(400);
      expect(toOwner.json.code).to.equal('invalid_role');
      for (const refused of [missing, wrong, toOwner]) expect(await refused.events()).to.deep.equal([]);
    });

    it('403 for a member, 403 for an admin demoting the owner, 409 for the last owner, 404 for a stranger', async () => {
      const byMember = await server.request('PUT', `/api/v1/org/members/${admin.user_id}/role`, { headers: as(member), body: { role: 'member' } });
      expect(byMember.status).to.equal(403);
      expect(byMember.json.code).to.equal('insufficient_role');
      const ownerByAdmin = await server.request('PUT', `/api/v1/org/members/${owner.user_id}/role`, { headers: as(admin), body: { role: 'member' } });
      expect(ownerByAdmin.status).to.equal(403);
      expect(ownerByAdmin.json.code).to.equal('owner_protected');
      const lastOwner = await server.request('PUT', `/api/v1/org/members/${owner.user_id}/role`, { headers: as(owner), body: { role: 'admin' } });
      expect(lastOwner.status).to.equal(409);
      expect(lastOwner.json.code).to.equal('last_owner');
      expect(await lastOwner.events()).to.deep.equal([]);
      // A 403 writes only the record of the denial.
      expect(await ownerByAdmin.events()).to.deep.equal(['AccessDenied@accessDenial']);
      expect((await server.request('PUT', `/api/v1/org/members/${outsider.user_id}/role`, { headers: as(owner), body: { role: 'admin' } })).status).to.equal(404);
    });

    it('lets an admin promote a member, and records the denials in the audit log', async () => {
      const promoted = await server.request('PUT', `/api/v1/org/members/${member.user_id}/role`, { headers: as(admin), body: { role: 'admin' } });
      expect(promoted.status).to.equal(200);
      expect(promoted.json.role).to.equal('admin');
      expect(await promoted.events()).to.deep.equal(['MemberRoleChanged@membership']);
      const back = await server.request('PUT', `/api/v1/org/members/${member.user_id}/role`, { headers: as(owner), body: { role: 'member' } });
      expect(back.json.role).to.equal('member');
      await server.platform.readYourWrites(await server.platform.eventStore.headPosition());
      const denials = await server.platform.readStore.collection<AuditLogEntry>(AUDIT_LOG).find({ where: { tenant_id: owner.tenant_id, action: 'AccessDenied' }, limit: 100 });
      expect(denials.items.map((entry) => entry.actor_id)).to.include.members([member.user_id, admin.user_id]);
    });
  });

  describe('PUT /members/{id}/status', () => {
    it('disables a member, whose token then stops working, and enables them again', async () => {
      const disabled = await server.request('PUT', `/api/v1/org/members/${member.user_id}/status`, { headers: as(admin), body: { status: 'disabled' } });
      expect(disabled.status).to.equal(200);
      expect(disabled.json.status).to.equal('disabled');
      expect(await disabled.events()).to.deep.equal(['MemberStatusChanged@membership', 'SessionRevoked@session']);
      const refused = await server.request('GET', '/api/v1/org/roles', { headers: as(member) });
      expect(refused.status).to.equal(401);
      expect(refused.json.code).to.equal('session_revoked');
      const login = await gql(server, LOGIN, { email: member.email, password: PASSWORD, tenant_id: owner.tenant_id });
      expect(login.json.errors[0].extensions.code).to.equal('member_disabled');
      await server.request('PUT', `/api/v1/org/members/${member.user_id}/status`, { headers: as(admin), body: { status: 'active' } });
      // Disabling ended the member's sessions here: enabled again, the old token stays dead.
      const stale = await server.request('GET', '/api/v1/org/roles', { headers: as(member) });
      expect(stale.status).to.equal(401);
      expect(stale.json.code).to.equal('session_revoked');
      const again = await gql(server, LOGIN, { email: member.email, password: PASSWORD, tenant_id: owner.tenant_id });
      member = { ...member, token: again.json.data.login.token };
      expect((await server.request('GET', '/api/v1/org/roles', { headers: as(member) })).status).to.equal(200);
    });

    it('400 for a bad status and for one’s own, 403 for an admin on the owner', async () => {
      expect((await server.request('PUT', `/api/v1/org/members/${member.user_id}/status`, { headers: as(admin), body: { status: 'asleep' } })).json.field).to.equal('status');
      expect((await server.request('PUT', `/api/v1/org/members/${admin.user_id}/status`, { headers: as(admin), body: { status: 'disabled' } })).json.code).to.equal('cannot_change_own_status');
      expect((await server.request('PUT', `/api/v1/org/members/${owner.user_id}/status`, { headers: as(admin), body: { status: 'disabled' } })).status).to.equal(403);
    });
  });

  describe('member sessions (admin)', () => {
    it('403 owner_protected when an admin ends an owner’s session; the owner stays logged in', async () => {
      const sessions = await server.request('GET', `/api/v1/org/members/${owner.user_id}/sessions`, { headers: as(admin) });
      const jti = sessions.json.items.find((s: { status: string }) => s.status === 'active').jti;
      const refused = await server.request('DELETE', `/api/v1/org/members/${owner.user_id}/sessions/${jti}`, { headers: as(admin) });
      expect(refused.status).to.equal(403);
      expect(refused.json.code).to.equal('owner_protected');
      expect(await refused.events()).to.deep.equal(['AccessDenied@accessDenial']);
      expect((await server.request('GET', '/api/v1/org/roles', { headers: as(owner) })).status).to.equal(200);
    });


    it('lists and revokes a member’s sessions; a member may not', async () => {
      const listed = await server.request('GET', `/api/v1/org/members/${member.user_id}/sessions`, { headers: as(admin) });
      expect(listed.status).to.equal(200);
      expect(listed.json.items.length).to.be.greaterThan(0);
      const jti = listed.json.items.find((s: { status: string }) => s.status === 'active').jti;
      expect((await server.request('GET', `/api/v1/org/members/${admin.user_id}/sessions`, { headers: as(member) })).status).to.equal(403);
      expect((await server.request('DELETE', `/api/v1/org/members/${member.user_id}/sessions/unknown`, { headers: as(admin) })).status).to.equal(404);
      const revoked = await server.request('DELETE', `/api/v1/org/members/${member.user_id}/sessions/${jti}`, { headers: as(admin) });
      expect(revoked.status).to.equal(204);
      expect(await revoked.events()).to.deep.equal(['SessionRevoked@session']);
      expect((await server.request('GET', `/api/v1/org/members/${outsider.user_id}/sessions`, { headers: as(admin) })).status).to.equal(404);
    });
  });

  describe('POST /transfer-ownership', () => {
    it('is for the owner only, needs a member of this organization, and moves ownership', async () => {
      expect((await server.request('POST', '/api/v1/org/transfer-ownership', { headers: as(admin), body: { user_id: admin.user_id } })).status).to.equal(403);
      expect((await server.request('POST', '/api/v1/org/transfer-ownership', { headers: as(owner), body: {} })).json.field).to.equal('user_id');
      expect((await server.request('POST', '/api/v1/org/transfer-ownership', { headers: as(owner), body: { user_id: outsider.user_id } })).status).to.equal(404);
      const moved = await server.request('POST', '/api/v1/org/transfer-ownership', { headers: as(owner), body: { user_id: admin.user_id } });
      expect(moved.status).to.equal(200);
      expect(moved.json.owner).to.deep.include({ user_id: admin.user_id, role: 'owner' });
      expect(await moved.events()).to.deep.equal(['OwnershipTransferred@membership']);
      expect((await server.request('GET', `/api/v1/org/members/${owner.user_id}`, { headers: as(owner) })).json.role).to.equal('admin');
    });
  });
});
