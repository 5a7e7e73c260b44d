// Tenant isolation: a user of tenant A, even its owner, gets 403 or 404 on every
// tenant-scoped route with tenant B's ids, changes nothing of B's, and sees none of B's
// data in any list.

import { expect } from 'chai';
import { type Account, gql, joinAs, registerOwner } from '../support/identity';
import { type TestServer, startTestServer } from '../support/server';

describe('cross-tenant isolation', () => {
  let server: TestServer;
  let a: Account;
  let b: Account;
  let bMember: Account;
  let bTeamId: string;
  let bWorkspaceId: string;
  let bInvitationId: string;
  let bSessionJti: string;
  let bLogCount: number;
  const as = (account: Account) => ({ authorization: `Bearer ${account.token}` });

  before(async () => {
    server = await startTestServer({ SCRYPT_LOG_N: '12' });
    a = await registerOwner(server, 'tenant-a');
    b = await registerOwner(server, 'tenant-b');
    bMember = await joinAs(server, await registerOwner(server, 'b-member-home', 'bm@example.com'), b.tenant_id, 'member');
    bTeamId = (await server.request('POST', '/api/v1/org/teams', { headers: as(b), body: { name: 'B team' } })).json.id;
    bWorkspaceId = (await gql(server, '{ workspaces { id } }', {}, b.token)).json.data.workspaces[0].id;
    bInvitationId = (await server.request('POST', '/api/v1/team/invite', { headers: as(b), body: { email: 'invited-to-b@example.com', role: 'member' } })).json.id;
    bSessionJti = (await server.request('GET', '/api/v1/me/sessions', { headers: as(b) })).json.items[0].jti;
    await server.platform.readYourWrites(await server.platform.eventStore.headPosition());
    bLogCount = (await server.request('GET', '/api/v1/org/audit-logs?limit=1000', { headers: as(b) })).json.items.length;
    expect(bTeamId && bWorkspaceId && bInvitationId && bSessionJti).to.be.a('string');
  });
  after(() => server.close());

  it('answers 403 or 404 to A on every route that names one of B’s resources', async () => {
    const attempts: Array<[string, string, unknown?]> = [
      ['GET', `/api/v1/org/members/${b.user_id}`],
      ['PUT', `/api/v1/org/members/${bMember.user_id}/role`, { role: 'admin' }],
      ['PUT', `/api/v1/org/members/${bMember.user_id}/status`, { status: 'disabled' }],
      ['GET', `/api/v1/org/members/${bMember.user_id}/sessions`],
      ['DELETE', `/api/v1/org/members/${b.user_id}/sessions/${bSessionJti}`],
      ['POST', '/api/v1/org/transfer-ownership', { user_id: bMember.user_id }],
      ['GET', `/api/v1/org/teams/${bTeamId}`],
      ['PATCH', `/api/v1/org/teams/${bTeamId}`, { name: 'taken over' }],
      ['DELETE', `/api/v1/org/teams/${bTeamId}`],
      ['PUT', `/api/v1/org/teams/${bTeamId}/members`, { members: [] }],
      ['PUT', `/api/v1/org/teams/${bTeamId}/members/${bMember.user_id}/write`, { can_write_documents: true }],
      ['PUT', `/api/v1/org/teams/${bTeamId}/workspaces`, { workspace_ids: [] }],
      ['GET', `/api/v1/org/workspaces/${bWorkspaceId}`],
      ['PUT', `/api/v1/org/workspaces/${bWorkspaceId}/teams`, { team_ids: [] }],
      ['DELETE', `/api/v1/team/members/${bMember.user_id}`],
      ['POST', `/api/v1/team/invitations/${bInvitationId}/revoke`],
      ['DELETE', `/api/v1/me/sessions/${bSessionJti}`],
      ['POST', '/api/v1/team/switch-tenant', { tenant_id: b.tenant_id }],
    ];
    for (const [method, path, body] of attempts) {
      const response = await server.request(method, path, { headers: as(a), body });
      expect([403, 404], `${method} ${path} answered ${response.status}`).to.include(response.status);
    }
    const rename = await gql(server, 'mutation ($id: ID!) { rename_workspace(id: $id, name: "Mine") { name } }', { id: bWorkspaceId }, a.token);
    expect(rename.json.errors[0].extensions.status).to.equal(404);
  });

  it('left every one of B’s resources as it was', async () => {
    expect((await server.request('GET', `/api/v1/org/teams/${bTeamId}`, { headers: as(b) })).json.name).to.equal('B team');
    expect((await server.request('GET', `/api/v1/org/members/${bMember.user_id}`, { headers: as(b) })).json).to.deep.include({ role: 'member', status: 'active' });
    expect((await server.request('GET', '/api/v1/org/members', { headers: as(b) })).json.items).to.have.length(2);
    expect((await server.request('GET', '/api/v1/me/sessions', { headers: as(b) })).status).to.equal(200);
    const invitations = (await server.request('GET', '/api/v1/team/invitations', { headers: as(b) })).json.items;
    expect(invitations.find((invitation: { id: string }) => invitation.id === bInvitationId).status).to.equal('pending');
    const bLog = (await server.request('GET', '/api/v1/org/audit-logs?limit=1000', { headers: as(b) })).json.items;
    expect(bLog.filter((entry: { actor_id: string }) => entry.actor_id === a.user_id)).to.deep.equal([]);
    expect(bLog.length).to.equal(bLogCount);
  });

  it('shows A none of B’s data in any list', async () => {
    const bIds = new Set([b.user_id, bMember.user_id, bTeamId, bWorkspaceId, bInvitationId, bSessionJti, b.tenant_id]);
    const lists = [
      '/api/v1/org/members?limit=1000',
      '/api/v1/org/teams?limit=1000',
      '/api/v1/org/workspaces?limit=1000',
      '/api/v1/org/audit-logs?limit=1000',
      '/api/v1/team/members?limit=1000',
      '/api/v1/team/invitations?limit=1000',
      '/api/v1/team/my-tenants',
      '/api/v1/me/sessions?limit=1000',
    ];
    for (const path of lists) {
      const response = await server.request('GET', path, { headers: as(a) });
      expect(response.status, path).to.equal(200);
      const leaked = [...bIds].filter((id) => response.text.includes(id));
      expect(leaked, path).to.deep.equal([]);
    }
    const graph = await gql(server, '{ me { tenant { id } } workspaces { id } settings { widget_token } }', {}, a.token);
    expect([...bIds].filter((id) => graph.text.includes(id))).to.deep.equal([]);
  });
});
