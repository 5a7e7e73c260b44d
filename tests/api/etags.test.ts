// ETag and If-Match over HTTP against the real server: single resources carry their version,
// an update given a stale one is 412 and changes nothing, a current one succeeds and answers
// the new ETag, and no If-Match keeps last-writer-wins.

import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { handleCommand } from '../../application/command-handling/handle-command';
import { workspaceAggregate } from '../../application/workspace/workspaces';
import { workspaceStream } from '../../domain/workspace/workspace';
import { userContext } from '../support/context';
import { type Account, joinAs, registerOwner, liftSeatLimit } from '../support/identity';
import { type TestServer, startTestServer } from '../support/server';

describe('ETag and If-Match on single resources', () => {
  let server: TestServer;
  let owner: Account;
  let admin: Account;
  let member: Account;
  let outsider: Account;

  const as = (account: Account, ifMatch?: string) => ({ authorization: `Bearer ${account.token}`, ...(ifMatch === undefined ? {} : { 'if-match': ifMatch }) });
  const streamLength = async (stream: string): Promise<number> => (await server.platform.eventStore.readStream(stream)).length;
  const createTeam = async (name: string): Promise<{ id: string; etag: string }> => {
    const response = await server.request('POST', '/api/v1/org/teams', { headers: as(owner), body: { name } });
    if (response.status !== 201) throw new Error(`team not created: ${response.status} ${response.text}`);
    return { id: response.json.id, etag: response.headers.get('etag')! };
  };

  before(async () => {
    server = await startTestServer({ SCRYPT_LOG_N: '12' });
    owner = await registerOwner(server, 'etag-org');
    await liftSeatLimit(server, owner.tenant_id);
    admin = await joinAs(server, await registerOwner(server, 'etag-adm-home', 'etag-adm@example.com'), owner.tenant_id, 'admin');
    member = await joinAs(server, await registerOwner(server, 'etag-mem-home', 'etag-mem@example.com'), owner.tenant_id, 'member');
    outsider = await registerOwner(server, 'etag-other-org');
  });
  after(() => server.close());

  describe('teams', () => {
    it('carries the stream revision as a strong ETag on create and read', async () => {
      const team = await createTeam('Tagged');
      expect(team.etag).to.equal('"0"');
      const read = await server.request('GET', `/api/v1/org/teams/${team.id}`, { headers: as(admin) });
      expect(read.headers.get('etag')).to.equal('"0"');
    });

    it('applies an update whose If-Match is current and answers the new ETag', async () => {
      const team = await createTeam('Current');
      const updated = await server.request('PATCH', `/api/v1/org/teams/${team.id}`, { headers: as(admin, team.etag), body: { description: 'matched' } });
      expect(updated.status).to.equal(200);
      expect(updated.headers.get('etag')).to.equal('"1"');
      expect(updated.json.description).to.equal('matched');
      const members = await server.request('PUT', `/api/v1/org/teams/${team.id}/members`, { headers: as(admin, '"1"'), body: { members: [{ user_id: member.user_id }] } });
      expect([members.status, members.headers.get('etag')]).to.deep.equal([200, '"2"']);
    });

    it('refuses a stale If-Match with 412 revision_mismatch and changes nothing', async () => {
      const team = await createTeam('Contested');
      const first = await server.request('PATCH', `/api/v1/org/teams/${team.id}`, { headers: as(owner, team.etag), body: { name: 'Contested by owner' } });
      expect(first.status).to.equal(200);
      const lost = await server.request('PATCH', `/api/v1/org/teams/${team.id}`, { headers: as(admin, team.etag), body: { name: 'Contested by admin' } });
      expect(lost.status).to.equal(412);
      expect(lost.json.code).to.equal('revision_mismatch');
      expect(await lost.events()).to.deep.equal([]);
      expect(await streamLength(`team-${team.id}`)).to.equal(2);
      const read = await server.request('GET', `/api/v1/org/teams/${team.id}`, { headers: as(admin) });
      expect(read.json.name).to.equal('Contested by owner');
      expect(read.headers.get('etag')).to.equal('"1"');

      for (const [method, path, body] of [
        ['PUT', `/api/v1/org/teams/${team.id}/members`, { members: [] }],
        ['PUT', `/api/v1/org/teams/${team.id}/members/${member.user_id}/write`, { can_write_documents: true }],
        ['PUT', `/api/v1/org/teams/${team.id}/workspaces`, { workspace_ids: [] }],
        ['DELETE', `/api/v1/org/teams/${team.id}`, undefined],
      ] as const) {
        const stale = await server.request(method, path, { headers: as(admin, '"0"'), body });
        expect(stale.status, `${method} ${path}`).to.equal(412);
        expect(await stale.events()).to.deep.equal([]);
      }
      expect(await streamLength(`team-${team.id}`)).to.equal(2);
      const deleted = await server.request('DELETE', `/api/v1/org/teams/${team.id}`, { headers: as(admin, '"1"') });
      expect(deleted.status).to.equal(204);
    });

    it('keeps last-writer-wins without If-Match, and accepts If-Match: *', async () => {
      const team = await createTeam('Unconditional');
      expect((await server.request('PATCH', `/api/v1/org/teams/${team.id}`, { headers: as(owner), body: { description: 'one' } })).status).to.equal(200);
      const any = await server.request('PATCH', `/api/v1/org/teams/${team.id}`, { headers: as(admin, '*'), body: { description: 'two' } });
      expect([any.status, any.headers.get('etag')]).to.deep.equal([200, '"2"']);
    });

    it('refuses a malformed If-Match with 400 naming the header, and never matches a weak tag', async () => {
      const team = await createTeam('Picky');
      for (const header of ['0', '"0", "1"', 'W/0', '"0']) {
        const response = await server.request('PATCH', `/api/v1/org/teams/${team.id}`, { headers: as(admin, header), body: { description: 'x' } });
        expect(response.status, header).to.equal(400);
        expect(response.json).to.include({ code: 'invalid_request', field: 'If-Match' });
      }
      const weak = await server.request('PATCH', `/api/v1/org/teams/${team.id}`, { headers: as(admin, 'W/"0"'), body: { description: 'x' } });
      expect(weak.status).to.equal(412);
      expect(await streamLength(`team-${team.id}`)).to.equal(1);
    });

    it('answers 404 for another tenant’s team whatever the If-Match', async () => {
      const team = await createTeam('Private');
      const response = await server.request('PATCH', `/api/v1/org/teams/${team.id}`, { headers: as(outsider, '"7"'), body: { description: 'x' } });
      expect(response.status).to.equal(404);
    });
  });

  describe('workspaces', () => {
    let workspaceId: string;
    const setTeams = (account: Account, teamIds: string[], ifMatch?: string) =>
      server.request('PUT', `/api/v1/org/workspaces/${workspaceId}/teams`, { headers: as(account, ifMatch), body: { team_ids: teamIds } });
    const read = () => server.request('GET', `/api/v1/org/workspaces/${workspaceId}`, { headers: as(member) });

    before(async () => {
      workspaceId = randomUUID();
      const result = await handleCommand(
        server.platform.commands,
        workspaceAggregate,
        workspaceStream(workspaceId),
        { type: 'CreateWorkspace', data: { tenant_id: owner.tenant_id, workspace_id: workspaceId, name: 'Tagged space', is_default: false } },
        userContext({ tenant_id: owner.tenant_id }),
      );
      await server.platform.readYourWrites(result.position);
    });

    it('carries a version that changes with its grants, and refuses a stale one with 412', async () => {
      const alpha = await createTeam('Space alpha');
      const beta = await createTeam('Space beta');
      const initial = await read();
      expect(initial.status).to.equal(200);
      const tag = initial.headers.get('etag')!;
      expect(tag).to.match(/^"0-[0-9a-f]{16}"$/);

      const granted = await setTeams(admin, [alpha.id], tag);
      expect(granted.status).to.equal(200);
      const newTag = granted.headers.get('etag')!;
      expect(newTag).to.not.equal(tag);
      expect((await read()).headers.get('etag')).to.equal(newTag);

      const stale = await setTeams(owner, [beta.id], tag);
      expect(stale.status).to.equal(412);
      expect(stale.json.code).to.equal('revision_mismatch');
      expect(await stale.events()).to.deep.equal([]);
      expect((await read()).json.teams.map((team: { id: string }) => team.id)).to.deep.equal([alpha.id]);

      // A grant made from the team's side changes the workspace's version too.
      expect((await server.request('PUT', `/api/v1/org/teams/${beta.id}/workspaces`, { headers: as(admin), body: { workspace_ids: [workspaceId] } })).status).to.equal(200);
      expect((await setTeams(owner, [], newTag)).status).to.equal(412);
      const current = (await read()).headers.get('etag')!;
      const cleared = await setTeams(owner, [], current);
      expect(cleared.status).to.equal(200);
      expect(cleared.json.teams).to.deep.equal([]);
    });
  });

  describe('members', () => {
    it('carries the version of the member’s last change; other members’ changes leave it alone', async () => {
      const subject = await joinAs(server, await registerOwner(server, 'etag-subject-home', 'etag-subject@example.com'), owner.tenant_id, 'member');
      const bystander = await joinAs(server, await registerOwner(server, 'etag-by-home', 'etag-by@example.com'), owner.tenant_id, 'member');
      const read = await server.request('GET', `/api/v1/org/members/${subject.user_id}`, { headers: as(admin) });
      const tag = read.headers.get('etag')!;
      expect(tag).to.match(/^"\d+"$/);

      expect((await server.request('PUT', `/api/v1/org/members/${bystander.user_id}/status`, { headers: as(owner), body: { status: 'disabled' } })).status).to.equal(200);
      const changed = await server.request('PUT', `/api/v1/org/members/${subject.user_id}/role`, { headers: as(owner, tag), body: { role: 'admin' } });
      expect(changed.status).to.equal(200);
      expect(changed.json.role).to.equal('admin');
      const newTag = changed.headers.get('etag')!;
      expect(newTag).to.not.equal(tag);

      const stale = await server.request('PUT', `/api/v1/org/members/${subject.user_id}/status`, { headers: as(owner, tag), body: { status: 'disabled' } });
      expect(stale.status).to.equal(412);
      expect(await stale.events()).to.deep.equal([]);
      expect((await server.request('GET', `/api/v1/org/members/${subject.user_id}`, { headers: as(admin) })).json.status).to.equal('active');

      const removedStale = await server.request('DELETE', `/api/v1/team/members/${subject.user_id}`, { headers: as(owner, tag) });
      expect(removedStale.status).to.equal(412);
      expect((await server.request('DELETE', `/api/v1/team/members/${subject.user_id}`, { headers: as(owner, newTag) })).status).to.equal(204);
    });
  });

  describe('invitations', () => {
    it('answers the invitation’s ETag; revoking honours If-Match', async () => {
      const sent = await server.request('POST', '/api/v1/team/invite', { headers: as(admin), body: { email: 'etag-invitee@example.com', role: 'member' } });
      expect([sent.status, sent.headers.get('etag')]).to.deep.equal([201, '"0"']);
      const id = sent.json.id as string;

      const stale = await server.request('POST', `/api/v1/team/invitations/${id}/revoke`, { headers: as(admin, '"3"') });
      expect(stale.status).to.equal(412);
      expect(stale.json.code).to.equal('revision_mismatch');
      expect(await stale.events()).to.deep.equal([]);
      expect(await streamLength(`invitation-${id}`)).to.equal(1);

      const malformed = await server.request('POST', `/api/v1/team/invitations/${id}/revoke`, { headers: as(admin, 'zero') });
      expect(malformed.status).to.equal(400);

      const foreign = await server.request('POST', `/api/v1/team/invitations/${id}/revoke`, { headers: as(outsider, '"0"') });
      expect(foreign.status).to.equal(404);

      const revoked = await server.request('POST', `/api/v1/team/invitations/${id}/revoke`, { headers: as(admin, '"0"') });
      expect(revoked.status).to.equal(200);
      expect(revoked.json.status).to.equal('revoked');
      expect(revoked.headers.get('etag')).to.equal('"1"');
    });
  });
});
