import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { handleCommand } from '../../application/command-handling/handle-command';
import { workspaceAggregate } from '../../application/workspace/workspaces';
import { workspaceStream } from '../../domain/workspace/workspace';
import { userContext } from '../support/context';
import { type Account, joinAs, registerOwner, widgetTokenOf } from '../support/identity';
import { type TestServer, startTestServer } from '../support/server';

interface WorkspaceBody {
  id: string;
  name: string;
  is_default: boolean;
  created_at: string;
  teams: Array<{ id: string; name: string }>;
}

describe('organization workspaces (/api/v1/org/workspaces)', () => {
  let server: TestServer;
  let owner: Account;
  let admin: Account;
  let member: Account;
  let outsider: Account;
  let defaultWorkspaceId: string;
  let docsWorkspaceId: string;
  let foreignWorkspaceId: string;
  let foreignTeamId: string;

  const as = (account: Account) => ({ authorization: `Bearer ${account.token}` });
  const createTeam = async (account: Account, name: string): Promise<string> => {
    const response = await server.request('POST', '/api/v1/org/teams', { headers: as(account), body: { name } });
    if (response.status !== 201) throw new Error(`team not created: ${response.status} ${response.text}`);
    return response.json.id as string;
  };
  /** Workspaces have no creation route yet: create one through its aggregate, as the platform would. */
  const createWorkspace = async (tenantId: string, name: string): Promise<string> => {
    const workspaceId = randomUUID();
    const result = await handleCommand(
      server.platform.commands,
      workspaceAggregate,
      workspaceStream(workspaceId),
      { type: 'CreateWorkspace', data: { tenant_id: tenantId, workspace_id: workspaceId, name, is_default: false } },
      userContext({ tenant_id: tenantId }),
    );
    await server.platform.readYourWrites(result.position);
    return workspaceId;
  };
  const setTeams = (account: Account, workspaceId: string, teamIds: string[]) =>
    server.request('PUT', `/api/v1/org/workspaces/${workspaceId}/teams`, { headers: as(account), body: { team_ids: teamIds } });
  const teamStreamLength = async (teamId: string): Promise<number> => (await server.platform.eventStore.readStream(`team-${teamId}`)).length;

  before(async () => {
    server = await startTestServer({ SCRYPT_LOG_N: '12' });
    owner = await registerOwner(server, 'ws-org');
    admin = await joinAs(server, await registerOwner(server, 'ws-adm-home', 'ws-adm@example.com'), owner.tenant_id, 'admin');
    member = await joinAs(server, await registerOwner(server, 'ws-mem-home', 'ws-mem@example.com'), owner.tenant_id, 'member');
    outsider = await registerOwner(server, 'ws-other-org');
    docsWorkspaceId = await createWorkspace(owner.tenant_id, 'Docs');
    defaultWorkspaceId = (await server.request('GET', '/api/v1/org/workspaces', { headers: as(owner) })).json.items.find((w: WorkspaceBody) => w.is_default).id;
    foreignWorkspaceId = (await server.request('GET', '/api/v1/org/workspaces', { headers: as(outsider) })).json.items[0].id;
    foreignTeamId = await createTeam(outsider, 'Foreign team');
  });
  after(() => server.close());

  describe('GET /workspaces', () => {
    it('lists the tenant’s workspaces for any member, in creation order, each with its teams', async () => {
      const response = await server.request('GET', '/api/v1/org/workspaces', { headers: as(member) });
      expect(response.status).to.equal(200);
      const items: WorkspaceBody[] = response.json.items;
      expect(items.map((w) => w.id)).to.deep.equal([defaultWorkspaceId, docsWorkspaceId]);
      expect(items[0]).to.deep.include({ name: 'Default', is_default: true, teams: [] });
      expect(items[1]).to.deep.include({ name: 'Docs', is_default: false, teams: [] });
      expect(response.json.next_cursor).to.equal(null);
    });

    it('pages with limit and cursor', async () => {
      const first = await server.request('GET', '/api/v1/org/workspaces?limit=1', { headers: as(member) });
      expect(first.json.items.map((w: WorkspaceBody) => w.id)).to.deep.equal([defaultWorkspaceId]);
      const second = await server.request('GET', `/api/v1/org/workspaces?limit=1&cursor=${first.json.next_cursor}`, { headers: as(member) });
      expect(second.json.items.map((w: WorkspaceBody) => w.id)).to.deep.equal([docsWorkspaceId]);
      expect(second.json.next_cursor).to.equal(null);
      expect((await server.request('GET', '/api/v1/org/workspaces?limit=abc', { headers: as(member) })).json).to.deep.include({ code: 'invalid_limit', field: 'limit' });
      expect((await server.request('GET', '/api/v1/org/workspaces?cursor=junk', { headers: as(member) })).status).to.equal(400);
    });
  });

  describe('GET /workspaces/{id}', () => {
    it('gets a workspace for any member; 404 for an unknown id and for another tenant’s workspace', async () => {
      const response = await server.request('GET', `/api/v1/org/workspaces/${docsWorkspaceId}`, { headers: as(member) });
      expect(response.status).to.equal(200);
      expect(response.json).to.deep.include({ id: docsWorkspaceId, name: 'Docs', is_default: false });
      for (const id of ['no-such-workspace', foreignWorkspaceId]) {
        const missing = await server.request('GET', `/api/v1/org/workspaces/${id}`, { headers: as(owner) });
        expect(missing.status).to.equal(404);
        expect(missing.json.code).to.equal('workspace_not_found');
      }
    });
  });

  describe('PUT /workspaces/{id}/teams', () => {
    it('sets exactly the teams granted the workspace, through each team’s grants', async () => {
      const alpha = await createTeam(admin, 'Alpha');
      const beta = await createTeam(admin, 'Beta');
      const gamma = await createTeam(admin, 'Gamma');
      await server.request('PUT', `/api/v1/org/teams/${gamma}/workspaces`, { headers: as(admin), body: { workspace_ids: [defaultWorkspaceId] } });

      const set = await setTeams(admin, docsWorkspaceId, [beta, alpha]);
      expect(set.status).to.equal(200);
      expect(set.json).to.deep.include({ id: docsWorkspaceId, name: 'Docs' });
      expect(set.json.teams).to.deep.equal([
        { id: alpha, name: 'Alpha' },
        { id: beta, name: 'Beta' },
      ]);
      expect((await server.request('GET', `/api/v1/org/teams/${alpha}`, { headers: as(admin) })).json.workspace_ids).to.deep.equal([docsWorkspaceId]);

      // Replacing: Beta loses the workspace, Gamma gains it and keeps its other grant.
      const replaced = await setTeams(owner, docsWorkspaceId, [alpha, gamma]);
      expect(replaced.json.teams.map((team: { name: string }) => team.name)).to.deep.equal(['Alpha', 'Gamma']);
      expect((await server.request('GET', `/api/v1/org/teams/${beta}`, { headers: as(admin) })).json.workspace_ids).to.deep.equal([]);
      expect((await server.request('GET', `/api/v1/org/teams/${gamma}`, { headers: as(admin) })).json.workspace_ids).to.deep.equal([defaultWorkspaceId, docsWorkspaceId]);
      const listed = await server.request('GET', '/api/v1/org/workspaces', { headers: as(member) });
      expect(listed.json.items.map((w: WorkspaceBody) => [w.name, w.teams.map((team) => team.name)])).to.deep.equal([
        ['Default', ['Gamma']],
        ['Docs', ['Alpha', 'Gamma']],
      ]);

      // The same request again appends nothing.
      const before = await Promise.all([alpha, beta, gamma].map(teamStreamLength));
      expect((await setTeams(admin, docsWorkspaceId, [gamma, alpha, alpha])).status).to.equal(200);
      expect(await Promise.all([alpha, beta, gamma].map(teamStreamLength))).to.deep.equal(before);

      // Emptying revokes every grant of this workspace only.
      const emptied = await setTeams(admin, docsWorkspaceId, []);
      expect(emptied.json.teams).to.deep.equal([]);
      expect((await server.request('GET', `/api/v1/org/workspaces/${defaultWorkspaceId}`, { headers: as(member) })).json.teams).to.deep.equal([{ id: gamma, name: 'Gamma' }]);
    });

    it('shows a renamed team under its new name and drops a deleted team', async () => {
      const team = await createTeam(admin, 'Renamable');
      await setTeams(admin, docsWorkspaceId, [team]);
      await server.request('PATCH', `/api/v1/org/teams/${team}`, { headers: as(admin), body: { name: 'Renamed' } });
      expect((await server.request('GET', `/api/v1/org/workspaces/${docsWorkspaceId}`, { headers: as(member) })).json.teams).to.deep.equal([{ id: team, name: 'Renamed' }]);
      expect((await server.request('DELETE', `/api/v1/org/teams/${team}`, { headers: as(admin) })).status).to.equal(204);
      expect((await server.request('GET', `/api/v1/org/workspaces/${docsWorkspaceId}`, { headers: as(member) })).json.teams).to.deep.equal([]);
    });

    it('400 unknown_team naming the entry for another tenant’s or an unknown team, and nothing changes', async () => {
      const team = await createTeam(admin, 'Bystander');
      const foreignBefore = await teamStreamLength(foreignTeamId);
      for (const stranger of [foreignTeamId, 'no-such-team']) {
        const response = await setTeams(admin, docsWorkspaceId, [team, stranger]);
        expect(response.status).to.equal(400);
        expect(response.json).to.deep.include({ code: 'unknown_team', field: 'team_ids.1' });
      }
      expect(await teamStreamLength(team)).to.equal(1);
      expect(await teamStreamLength(foreignTeamId)).to.equal(foreignBefore);
    });

    it('400 invalid_request per bad field', async () => {
      const cases: Array<[unknown, string]> = [
        [{}, 'team_ids'],
        [{ team_ids: 'all' }, 'team_ids'],
        [{ team_ids: [null] }, 'team_ids.0'],
      ];
      for (const [body, field] of cases) {
        const response = await server.request('PUT', `/api/v1/org/workspaces/${docsWorkspaceId}/teams`, { headers: as(admin), body });
        expect(response.status, JSON.stringify(body)).to.equal(400);
        expect(response.json, JSON.stringify(body)).to.deep.include({ code: 'invalid_request', field });
      }
    });

    it('404 for an unknown workspace and for another tenant’s workspace', async () => {
      for (const id of ['no-such-workspace', foreignWorkspaceId]) {
        const response = await setTeams(admin, id, []);
        expect(response.status).to.equal(404);
        expect(response.json.code).to.equal('workspace_not_found');
      }
    });

    it('403 insufficient_role for a member', async () => {
      const response = await setTeams(member, docsWorkspaceId, []);
      expect(response.status).to.equal(403);
      expect(response.json.code).to.equal('insufficient_role');
    });
  });

  it('401 without a token and with a widget token on every route', async () => {
    const routes: Array<[string, string, unknown]> = [
      ['GET', '/api/v1/org/workspaces', undefined],
      ['GET', `/api/v1/org/workspaces/${docsWorkspaceId}`, undefined],
      ['PUT', `/api/v1/org/workspaces/${docsWorkspaceId}/teams`, { team_ids: [] }],
    ];
    const widgetToken = await widgetTokenOf(server, owner);
    for (const [method, path, body] of routes) {
      const anonymous = await server.request(method, path, { body });
      expect(anonymous.status, `${method} ${path}`).to.equal(401);
      expect(anonymous.json.code).to.equal('unauthenticated');
      const widget = await server.request(method, path, { body, headers: { authorization: `Bearer ${widgetToken}` } });
      expect(widget.status, `${method} ${path}`).to.equal(401);
      expect(widget.json.code).to.equal('widget_token_not_allowed');
    }
  });

  it('keeps tenants apart: neither lists the other’s workspaces, and each other’s ids are 404', async () => {
    const mine: WorkspaceBody[] = (await server.request('GET', '/api/v1/org/workspaces', { headers: as(owner) })).json.items;
    const theirs: WorkspaceBody[] = (await server.request('GET', '/api/v1/org/workspaces', { headers: as(outsider) })).json.items;
    expect(mine.map((w) => w.id)).to.not.include(foreignWorkspaceId);
    expect(theirs.map((w) => w.id)).to.deep.equal([foreignWorkspaceId]);
    for (const workspace of mine) {
      expect((await server.request('GET', `/api/v1/org/workspaces/${workspace.id}`, { headers: as(outsider) })).status).to.equal(404);
      expect((await setTeams(outsider, workspace.id, [foreignTeamId])).status).to.equal(404);
    }
    // A foreign team is never listed under one of ours, even when the other tenant tries.
    expect((await setTeams(outsider, foreignWorkspaceId, [foreignTeamId])).status).to.equal(200);
    for (const workspace of (await server.request('GET', '/api/v1/org/workspaces', { headers: as(owner) })).json.items as WorkspaceBody[]) {
      expect(workspace.teams.map((team) => team.id)).to.not.include(foreignTeamId);
    }
  });
});
