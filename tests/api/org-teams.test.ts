import { expect } from 'chai';
import { type Account, joinAs, registerOwner, widgetTokenOf } from '../support/identity';
import { type TestServer, startTestServer } from '../support/server';

describe('organization teams (/api/v1/org/teams)', () => {
  let server: TestServer;
  let owner: Account;
  let admin: Account;
  let member: Account;
  let outsider: Account;
  let foreignTeamId: string;
  let foreignWorkspaceId: string;
  let workspaceId: string;

  const as = (account: Account) => ({ authorization: `Bearer ${account.token}` });
  const createTeam = async (account: Account, body: Record<string, unknown>) => {
    const response = await server.request('POST', '/api/v1/org/teams', { headers: as(account), body });
    if (response.status !== 201) throw new Error(`team not created: ${response.status} ${response.text}`);
    return response.json as { id: string; name: string };
  };
  const streamTypes = async (teamId: string): Promise<string[]> => (await server.platform.eventStore.readStream(`team-${teamId}`)).map((event) => event.type);
  const defaultWorkspace = async (account: Account): Promise<string> => (await server.request('GET', '/api/v1/org/workspaces', { headers: as(account) })).json.items[0].id;

  before(async () => {
    server = await startTestServer({ SCRYPT_LOG_N: '12' });
    owner = await registerOwner(server, 'teams-org');
    admin = await joinAs(server, await registerOwner(server, 'teams-adm-home', 'teams-adm@example.com'), owner.tenant_id, 'admin');
    member = await joinAs(server, await registerOwner(server, 'teams-mem-home', 'teams-mem@example.com'), owner.tenant_id, 'member');
    outsider = await registerOwner(server, 'teams-other-org');
    foreignTeamId = (await createTeam(outsider, { name: 'Foreign' })).id;
    foreignWorkspaceId = await defaultWorkspace(outsider);
    workspaceId = await defaultWorkspace(owner);
  });
  after(() => server.close());

  describe('POST /teams', () => {
    it('creates a team (201) as owner or admin, records TeamCreated and answers the team', async () => {
      const response = await server.request('POST', '/api/v1/org/teams', { headers: as(admin), body: { name: '  Support  ', description: 'First line' } });
      expect(response.status).to.equal(201);
      expect(response.json).to.deep.include({ name: 'Support', description: 'First line', members: [], workspace_ids: [] });
      expect(response.json.id).to.be.a('string');
      expect(response.json.created_at).to.equal(response.json.updated_at);
      expect(response.headers.get('location')).to.equal(`/api/v1/org/teams/${response.json.id}`);
      expect(await streamTypes(response.json.id)).to.deep.equal(['TeamCreated']);
      const byOwner = await server.request('POST', '/api/v1/org/teams', { headers: as(owner), body: { name: 'Sales' } });
      expect(byOwner.status).to.equal(201);
      expect(byOwner.json.description).to.equal(null);
    });

    it('400 invalid_request per bad field', async () => {
      const cases: Array<[unknown, string]> = [
        [{}, 'name'],
        [{ name: '' }, 'name'],
        [{ name: '    ' }, 'name'],
        [{ name: 'x'.repeat(101) }, 'name'],
        [{ name: 42 }, 'name'],
        [{ name: 'Fine', description: 'd'.repeat(501) }, 'description'],
        [{ name: 'Fine', description: 7 }, 'description'],
      ];
      for (const [body, field] of cases) {
        const response = await server.request('POST', '/api/v1/org/teams', { headers: as(admin), body });
        expect(response.status, JSON.stringify(body)).to.equal(400);
        expect(response.json, JSON.stringify(body)).to.deep.include({ code: 'invalid_request', field });
      }
      expect((await server.request('POST', '/api/v1/org/teams', { headers: as(admin), body: { name: 'x'.repeat(100), description: 'd'.repeat(500) } })).status).to.equal(201);
    });

    it('409 team_name_taken for a name already used in the tenant, case-insensitively; other tenants may use it', async () => {
      await createTeam(admin, { name: 'Billing' });
      for (const name of ['Billing', 'billing', ' BILLING ']) {
        const response = await server.request('POST', '/api/v1/org/teams', { headers: as(owner), body: { name } });
        expect(response.status, name).to.equal(409);
        expect(response.json.code).to.equal('team_name_taken');
      }
      expect((await server.request('POST', '/api/v1/org/teams', { headers: as(outsider), body: { name: 'Billing' } })).status).to.equal(201);
    });

    it('says a name is taken without internal keys, tenant ids or digests (#9.10)', async () => {
      const response = await server.request('POST', '/api/v1/org/teams', { headers: as(owner), body: { name: 'Billing' } });
      expect(response.json).to.deep.equal({ code: 'team_name_taken', message: 'this team name is already taken' });
      expect(response.text).to.not.contain(owner.tenant_id);
      expect(response.text).to.not.match(/[0-9a-f]{32}/);
    });
  });

  describe('GET /teams and /teams/{id}', () => {
    it('lists the tenant’s teams in creation order and pages them', async () => {
      const created = [await createTeam(admin, { name: 'List A' }), await createTeam(admin, { name: 'List B' }), await createTeam(admin, { name: 'List C' })];
      const all = await server.request('GET', '/api/v1/org/teams?limit=1000', { headers: as(admin) });
      expect(all.status).to.equal(200);
      expect(all.json.next_cursor).to.equal(null);
      const items: Array<{ id: string; name: string; created_at: string }> = all.json.items;
      expect(items.map((team) => team.id)).to.include.members(created.map((team) => team.id));
      expect(items.map((team) => team.created_at)).to.deep.equal(items.map((team) => team.created_at).sort());
      expect(items.map((team) => team.name)).to.not.include('Foreign');
      const paged: string[] = [];
      let cursor: string | null = null;
      do {
        const page: { json: { items: Array<{ id: string }>; next_cursor: string | null } } = await server.request('GET', `/api/v1/org/teams?limit=2${cursor ? `&cursor=${cursor}` : ''}`, { headers: as(admin) });
        expect(page.json.items.length).to.be.at.most(2);
        paged.push(...page.json.items.map((team) => team.id));
        cursor = page.json.next_cursor;
      } while (cursor);
      expect(paged).to.deep.equal(items.map((team) => team.id));
      expect((await server.request('GET', '/api/v1/org/teams?limit=0', { headers: as(admin) })).json.field).to.equal('limit');
      expect((await server.request('GET', '/api/v1/org/teams?cursor=junk', { headers: as(admin) })).status).to.equal(400);
    });

    it('gets a team; 404 for an unknown id and for another tenant’s team', async () => {
      const team = await createTeam(admin, { name: 'Readable' });
      const response = await server.request('GET', `/api/v1/org/teams/${team.id}`, { headers: as(owner) });
      expect(response.status).to.equal(200);
      expect(response.json).to.deep.include({ id: team.id, name: 'Readable' });
      for (const id of ['no-such-team', foreignTeamId]) {
        const missing = await server.request('GET', `/api/v1/org/teams/${id}`, { headers: as(owner) });
        expect(missing.status).to.equal(404);
        expect(missing.json.code).to.equal('team_not_found');
      }
    });
  });

  describe('PATCH /teams/{id}', () => {
    it('renames and redescribes; the old name is released and a taken one is 409', async () => {
      const team = await createTeam(admin, { name: 'Ops', description: 'Runs things' });
      const renamed = await server.request('PATCH', `/api/v1/org/teams/${team.id}`, { headers: as(admin), body: { name: 'Operations' } });
      expect(renamed.status).to.equal(200);
      expect(renamed.json).to.deep.include({ name: 'Operations', description: 'Runs things' });
      expect(renamed.json.updated_at >= renamed.json.created_at).to.equal(true);
      expect(await streamTypes(team.id)).to.deep.equal(['TeamCreated', 'TeamUpdated']);
      // The old name is free again; the new one is held.
      await createTeam(owner, { name: 'ops' });
      const taken = await server.request('PATCH', `/api/v1/org/teams/${team.id}`, { headers: as(admin), body: { name: 'OPS' } });
      expect(taken.status).to.equal(409);
      expect(taken.json.code).to.equal('team_name_taken');
      expect((await server.request('POST', '/api/v1/org/teams', { headers: as(owner), body: { name: 'operations' } })).status).to.equal(409);
      // Changing only the case keeps the reservation; null clears the description.
      const recased = await server.request('PATCH', `/api/v1/org/teams/${team.id}`, { headers: as(admin), body: { name: 'OPERATIONS', description: null } });
      expect(recased.status).to.equal(200);
      expect(recased.json).to.deep.include({ name: 'OPERATIONS', description: null });
      expect((await server.request('POST', '/api/v1/org/teams', { headers: as(owner), body: { name: 'Operations' } })).status).to.equal(409);
      const unchanged = await server.request('PATCH', `/api/v1/org/teams/${team.id}`, { headers: as(admin), body: {} });
      expect(unchanged.status).to.equal(200);
      expect(await streamTypes(team.id)).to.have.length(3);
    });

    it('400 per bad field, 404 for an unknown id and another tenant’s team', async () => {
      const team = await createTeam(admin, { name: 'Patchable' });
      const cases: Array<[unknown, string]> = [
        [{ name: '' }, 'name'],
        [{ name: null }, 'name'],
        [{ name: 'y'.repeat(101) }, 'name'],
        [{ description: 'd'.repeat(501) }, 'description'],
        [{ description: false }, 'description'],
      ];
      for (const [body, field] of cases) {
        const response = await server.request('PATCH', `/api/v1/org/teams/${team.id}`, { headers: as(admin), body });
        expect(response.status, JSON.stringify(body)).to.equal(400);
        expect(response.json, JSON.stringify(body)).to.deep.include({ code: 'invalid_request', field });
      }
      for (const id of ['no-such-team', foreignTeamId]) {
        const missing = await server.request('PATCH', `/api/v1/org/teams/${id}`, { headers: as(admin), body: { name: 'Hijacked' } });
        expect(missing.status).to.equal(404);
        expect(missing.json.code).to.equal('team_not_found');
      }
      expect((await server.request('GET', `/api/v1/org/teams/${foreignTeamId}`, { headers: as(outsider) })).json.name).to.equal('Foreign');
      // The refused rename left its name free.
      expect((await server.request('POST', '/api/v1/org/teams', { headers: as(admin), body: { name: 'Hijacked' } })).status).to.equal(201);
    });
  });

  describe('DELETE /teams/{id}', () => {
    it('deletes (204), after which the team is 404 and its name is free again', async () => {
      const team = await createTeam(admin, { name: 'Temporary' });
      const response = await server.request('DELETE', `/api/v1/org/teams/${team.id}`, { headers: as(admin) });
      expect(response.status).to.equal(204);
      expect(await streamTypes(team.id)).to.deep.equal(['TeamCreated', 'TeamDeleted']);
      expect((await server.request('GET', `/api/v1/org/teams/${team.id}`, { headers: as(admin) })).status).to.equal(404);
      expect((await server.request('DELETE', `/api/v1/org/teams/${team.id}`, { headers: as(admin) })).status).to.equal(404);
      const listed = await server.request('GET', '/api/v1/org/teams?limit=1000', { headers: as(admin) });
      expect(listed.json.items.map((t: { id: string }) => t.id)).to.not.include(team.id);
      expect((await server.request('POST', '/api/v1/org/teams', { headers: as(admin), body: { name: 'temporary' } })).status).to.equal(201);
    });

    it('404 for an unknown id and for another tenant’s team, which stays', async () => {
      for (const id of ['no-such-team', foreignTeamId]) expect((await server.request('DELETE', `/api/v1/org/teams/${id}`, { headers: as(owner) })).status).to.equal(404);
      expect((await server.request('GET', `/api/v1/org/teams/${foreignTeamId}`, { headers: as(outsider) })).status).to.equal(200);
    });
  });

  describe('PUT /teams/{id}/members', () => {
    it('sets the members of the tenant with their write flags (false unless given)', async () => {
      const team = await createTeam(admin, { name: 'Staffed' });
      const response = await server.request('PUT', `/api/v1/org/teams/${team.id}/members`, {
        headers: as(admin),
        body: { members: [{ user_id: member.user_id, can_write_documents: true }, { user_id: admin.user_id }] },
      });
      expect(response.status).to.equal(200);
      expect(response.json.members).to.deep.equal([
        { user_id: member.user_id, can_write_documents: true },
        { user_id: admin.user_id, can_write_documents: false },
      ]);
      // A staying member keeps their flag when none is given; the rest are replaced.
      const replaced = await server.request('PUT', `/api/v1/org/teams/${team.id}/members`, { headers: as(admin), body: { members: [{ user_id: member.user_id }] } });
      expect(replaced.json.members).to.deep.equal([{ user_id: member.user_id, can_write_documents: true }]);
      const again = await server.request('PUT', `/api/v1/org/teams/${team.id}/members`, { headers: as(admin), body: { members: [{ user_id: member.user_id }] } });
      expect(again.status).to.equal(200);
      expect(await streamTypes(team.id)).to.deep.equal(['TeamCreated', 'TeamMembersSet', 'TeamMembersSet']);
      const emptied = await server.request('PUT', `/api/v1/org/teams/${team.id}/members`, { headers: as(owner), body: { members: [] } });
      expect(emptied.json.members).to.deep.equal([]);
    });

    it('400 not_a_member naming the entry for someone outside the tenant, and nothing changes', async () => {
      const team = await createTeam(admin, { name: 'Guarded' });
      for (const stranger of [outsider.user_id, 'nobody']) {
        const response = await server.request('PUT', `/api/v1/org/teams/${team.id}/members`, {
          headers: as(admin),
          body: { members: [{ user_id: member.user_id }, { user_id: stranger }] },
        });
        expect(response.status).to.equal(400);
        expect(response.json).to.deep.include({ code: 'not_a_member', field: 'members.1.user_id' });
      }
      expect(await streamTypes(team.id)).to.deep.equal(['TeamCreated']);
      const twice = await server.request('PUT', `/api/v1/org/teams/${team.id}/members`, {
        headers: as(admin),
        body: { members: [{ user_id: member.user_id }, { user_id: member.user_id }] },
      });
      expect(twice.json).to.deep.include({ code: 'duplicate_member', field: 'members.1.user_id' });
    });

    it('400 invalid_request per bad field, 404 for an unknown id and another tenant’s team', async () => {
      const team = await createTeam(admin, { name: 'Strict' });
      const cases: Array<[unknown, string]> = [
        [{}, 'members'],
        [{ members: 'everyone' }, 'members'],
        [{ members: [{ user_id: member.user_id }, {}] }, 'members.1.user_id'],
        [{ members: [{ user_id: 5 }] }, 'members.0.user_id'],
        [{ members: [{ user_id: member.user_id, can_write_documents: 'yes' }] }, 'members.0.can_write_documents'],
      ];
      for (const [body, field] of cases) {
        const response = await server.request('PUT', `/api/v1/org/teams/${team.id}/members`, { headers: as(admin), body });
        expect(response.status, JSON.stringify(body)).to.equal(400);
        expect(response.json, JSON.stringify(body)).to.deep.include({ code: 'invalid_request', field });
      }
      for (const id of ['no-such-team', foreignTeamId]) {
        const missing = await server.request('PUT', `/api/v1/org/teams/${id}/members`, { headers: as(admin), body: { members: [{ user_id: member.user_id }] } });
        expect(missing.status).to.equal(404);
        expect(missing.json.code).to.equal('team_not_found');
      }
    });
  });

  describe('PUT /teams/{id}/members/{user_id}/write', () => {
    it('sets one member’s document write flag', async () => {
      const team = await createTeam(admin, { name: 'Writers' });
      await server.request('PUT', `/api/v1/org/teams/${team.id}/members`, { headers: as(admin), body: { members: [{ user_id: member.user_id }, { user_id: admin.user_id }] } });
      const response = await server.request('PUT', `/api/v1/org/teams/${team.id}/members/${member.user_id}/write`, { headers: as(admin), body: { can_write_documents: true } });
      expect(response.status).to.equal(200);
      expect(response.json.members).to.deep.equal([
        { user_id: member.user_id, can_write_documents: true },
        { user_id: admin.user_id, can_write_documents: false },
      ]);
      const off = await server.request('PUT', `/api/v1/org/teams/${team.id}/members/${member.user_id}/write`, { headers: as(owner), body: { can_write_documents: false } });
      expect(off.json.members[0]).to.deep.equal({ user_id: member.user_id, can_write_documents: false });
      expect(await streamTypes(team.id)).to.deep.equal(['TeamCreated', 'TeamMembersSet', 'TeamMemberWriteFlagSet', 'TeamMemberWriteFlagSet']);
    });

    it('404 for a user outside the team, an unknown team and another tenant’s team; 400 for a bad body', async () => {
      const team = await createTeam(admin, { name: 'Flagless' });
      const notInTeam = await server.request('PUT', `/api/v1/org/teams/${team.id}/members/${member.user_id}/write`, { headers: as(admin), body: { can_write_documents: true } });
      expect(notInTeam.status).to.equal(404);
      expect(notInTeam.json.code).to.equal('team_member_not_found');
      for (const id of ['no-such-team', foreignTeamId]) {
        const missing = await server.request('PUT', `/api/v1/org/teams/${id}/members/${outsider.user_id}/write`, { headers: as(admin), body: { can_write_documents: true } });
        expect(missing.status).to.equal(404);
        expect(missing.json.code).to.equal('team_not_found');
      }
      for (const body of [{}, { can_write_documents: 'true' }, { can_write_documents: null }]) {
        const response = await server.request('PUT', `/api/v1/org/teams/${team.id}/members/${member.user_id}/write`, { headers: as(admin), body });
        expect(response.status).to.equal(400);
        expect(response.json).to.deep.include({ code: 'invalid_request', field: 'can_write_documents' });
      }
    });
  });

  describe('PUT /teams/{id}/workspaces', () => {
    it('grants the tenant’s workspaces, replacing the previous set', async () => {
      const team = await createTeam(admin, { name: 'Granted' });
      const response = await server.request('PUT', `/api/v1/org/teams/${team.id}/workspaces`, { headers: as(admin), body: { workspace_ids: [workspaceId, workspaceId] } });
      expect(response.status).to.equal(200);
      expect(response.json.workspace_ids).to.deep.equal([workspaceId]);
      const workspace = await server.request('GET', `/api/v1/org/workspaces/${workspaceId}`, { headers: as(member) });
      expect(workspace.json.teams).to.deep.include({ id: team.id, name: 'Granted' });
      const revoked = await server.request('PUT', `/api/v1/org/teams/${team.id}/workspaces`, { headers: as(owner), body: { workspace_ids: [] } });
      expect(revoked.json.workspace_ids).to.deep.equal([]);
      expect(await streamTypes(team.id)).to.deep.equal(['TeamCreated', 'TeamWorkspacesGranted', 'TeamWorkspacesGranted']);
    });

    it('400 naming the field for another tenant’s or an unknown workspace and for a bad body; 404 for unknown and foreign teams', async () => {
      const team = await createTeam(admin, { name: 'Fenced' });
      for (const stranger of [foreignWorkspaceId, 'no-such-workspace']) {
        const response = await server.request('PUT', `/api/v1/org/teams/${team.id}/workspaces`, { headers: as(admin), body: { workspace_ids: [workspaceId, stranger] } });
        expect(response.status).to.equal(400);
        expect(response.json).to.deep.include({ code: 'unknown_workspace', field: 'workspace_ids.1' });
      }
      expect(await streamTypes(team.id)).to.deep.equal(['TeamCreated']);
      const cases: Array<[unknown, string]> = [
        [{}, 'workspace_ids'],
        [{ workspace_ids: workspaceId }, 'workspace_ids'],
        [{ workspace_ids: [workspaceId, 3] }, 'workspace_ids.1'],
      ];
      for (const [body, field] of cases) {
        const response = await server.request('PUT', `/api/v1/org/teams/${team.id}/workspaces`, { headers: as(admin), body });
        expect(response.status, JSON.stringify(body)).to.equal(400);
        expect(response.json, JSON.stringify(body)).to.deep.include({ code: 'invalid_request', field });
      }
      for (const id of ['no-such-team', foreignTeamId]) {
        const missing = await server.request('PUT', `/api/v1/org/teams/${id}/workspaces`, { headers: as(admin), body: { workspace_ids: [workspaceId] } });
        expect(missing.status).to.equal(404);
        expect(missing.json.code).to.equal('team_not_found');
      }
    });
  });

  describe('authentication and roles', () => {
    const routes = (teamId: string, userId: string): Array<[string, string, unknown]> => [
      ['GET', '/api/v1/org/teams', undefined],
      ['POST', '/api/v1/org/teams', { name: 'Intruders' }],
      ['GET', `/api/v1/org/teams/${teamId}`, undefined],
      ['PATCH', `/api/v1/org/teams/${teamId}`, { name: 'Intruders' }],
      ['DELETE', `/api/v1/org/teams/${teamId}`, undefined],
      ['PUT', `/api/v1/org/teams/${teamId}/members`, { members: [] }],
      ['PUT', `/api/v1/org/teams/${teamId}/members/${userId}/write`, { can_write_documents: true }],
      ['PUT', `/api/v1/org/teams/${teamId}/workspaces`, { workspace_ids: [] }],
    ];

    it('401 without a token and with a widget token on every route', async () => {
      const team = await createTeam(admin, { name: 'Locked' });
      const widgetToken = await widgetTokenOf(server, owner);
      for (const [method, path, body] of routes(team.id, member.user_id)) {
        const anonymous = await server.request(method, path, { body });
        expect(anonymous.status, `${method} ${path}`).to.equal(401);
        expect(anonymous.json.code).to.equal('unauthenticated');
        const widget = await server.request(method, path, { body, headers: { authorization: `Bearer ${widgetToken}` } });
        expect(widget.status, `${method} ${path}`).to.equal(401);
        expect(widget.json.code).to.equal('widget_token_not_allowed');
      }
    });

    it('403 insufficient_role for a member on every route, and nothing changes', async () => {
      const team = await createTeam(admin, { name: 'Admins only' });
      for (const [method, path, body] of routes(team.id, member.user_id)) {
        const response = await server.request(method, path, { body, headers: as(member) });
        expect(response.status, `${method} ${path}`).to.equal(403);
        expect(response.json.code).to.equal('insufficient_role');
      }
      expect(await streamTypes(team.id)).to.deep.equal(['TeamCreated']);
    });
  });

  describe('tenant isolation', () => {
    it('keeps tenants apart: neither lists the other’s teams, and each other’s ids are 404', async () => {
      await createTeam(owner, { name: 'Only mine' });
      const mine = await server.request('GET', '/api/v1/org/teams?limit=1000', { headers: as(owner) });
      const theirs = await server.request('GET', '/api/v1/org/teams?limit=1000', { headers: as(outsider) });
      const mineIds: string[] = mine.json.items.map((team: { id: string }) => team.id);
      const theirIds: string[] = theirs.json.items.map((team: { id: string }) => team.id);
      expect(mineIds).to.not.include(foreignTeamId);
      expect(theirIds).to.include(foreignTeamId);
      expect(theirs.json.items.map((team: { name: string }) => team.name)).to.not.include('Only mine');
      expect(mineIds.filter((id) => theirIds.includes(id))).to.deep.equal([]);
      for (const id of mineIds) expect((await server.request('GET', `/api/v1/org/teams/${id}`, { headers: as(outsider) })).status).to.equal(404);
      expect((await server.request('GET', `/api/v1/org/teams/${foreignTeamId}`, { headers: as(owner) })).status).to.equal(404);
    });
  });
});
