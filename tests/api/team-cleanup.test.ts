import { expect } from 'chai';
import { type Account, joinAs, registerOwner } from '../support/identity';
import { type TestServer, startTestServer } from '../support/server';
import { eventually } from '../support/stores';

describe('a member who leaves the organization leaves its teams', () => {
  let server: TestServer;
  let owner: Account;
  let member: Account;
  const as = (account: Account) => ({ authorization: `Bearer ${account.token}` });

  before(async () => {
    server = await startTestServer({ SCRYPT_LOG_N: '12' }, { sagaRetryPollMs: 20 });
    owner = await registerOwner(server, 'cleanup-co');
    member = await joinAs(server, await registerOwner(server, 'cleanup-home', 'leaver@example.com'), owner.tenant_id, 'member');
  });
  after(() => server.close());

  it('removes a removed member from every team of the tenant, and keeps the others', async () => {
    const teams = [];
    for (const name of ['Support', 'Sales']) {
      const team = (await server.request('POST', '/api/v1/org/teams', { headers: as(owner), body: { name } })).json;
      const set = await server.request('PUT', `/api/v1/org/teams/${team.id}/members`, {
        headers: as(owner),
        body: { members: [{ user_id: owner.user_id }, { user_id: member.user_id, can_write_documents: true }] },
      });
      expect(set.status).to.equal(200);
      teams.push(team.id as string);
    }
    expect((await server.request('DELETE', `/api/v1/team/members/${member.user_id}`, { headers: as(owner) })).status).to.equal(204);
    for (const teamId of teams) {
      await eventually(
        async () => {
          const team = (await server.request('GET', `/api/v1/org/teams/${teamId}`, { headers: as(owner) })).json;
          return team.members.length === 1 && team.members[0].user_id === owner.user_id;
        },
        10_000,
        `team ${teamId} without the removed member`,
      );
    }
  });
});
