// Every route that needs a user token answers 401 with no token, a malformed one, a widget
// token, an admin token, a revoked session and an expired token; GraphQL answers the same
// status and code as REST for each of them.

import { expect } from 'chai';
import { type Account, LOGIN, PASSWORD, gql, registerOwner, widgetTokenOf } from '../support/identity';
import { type TestServer, startTestServer } from '../support/server';
import { ManualClock } from '../support/stores';

const USER_ROUTES: Array<[string, string]> = [
  ['GET', '/api/v1/me/sessions'],
  ['DELETE', '/api/v1/me/sessions/some-jti'],
  ['GET', '/api/v1/org/roles'],
  ['GET', '/api/v1/org/members'],
  ['GET', '/api/v1/org/members/some-user'],
  ['PUT', '/api/v1/org/members/some-user/role'],
  ['PUT', '/api/v1/org/members/some-user/status'],
  ['GET', '/api/v1/org/members/some-user/sessions'],
  ['DELETE', '/api/v1/org/members/some-user/sessions/some-jti'],
  ['POST', '/api/v1/org/transfer-ownership'],
  ['GET', '/api/v1/org/teams'],
  ['POST', '/api/v1/org/teams'],
  ['GET', '/api/v1/org/teams/some-team'],
  ['PATCH', '/api/v1/org/teams/some-team'],
  ['DELETE', '/api/v1/org/teams/some-team'],
  ['PUT', '/api/v1/org/teams/some-team/members'],
  ['PUT', '/api/v1/org/teams/some-team/members/some-user/write'],
  ['PUT', '/api/v1/org/teams/some-team/workspaces'],
  ['GET', '/api/v1/org/workspaces'],
  ['GET', '/api/v1/org/workspaces/some-workspace'],
  ['PUT', '/api/v1/org/workspaces/some-workspace/teams'],
  ['GET', '/api/v1/org/audit-logs'],
  ['GET', '/api/v1/org/audit-logs/verify'],
  ['GET', '/api/v1/org/audit-logs/export'],
  ['GET', '/api/v1/team/members'],
  ['DELETE', '/api/v1/team/members/some-user'],
  ['POST', '/api/v1/team/invite'],
  ['GET', '/api/v1/team/invitations'],
  ['POST', '/api/v1/team/invitations/some-invitation/revoke'],
  ['POST', '/api/v1/team/invitations/some-invitation/erase'],
  ['GET', '/api/v1/tenant/end-users/export'],
  ['POST', '/api/v1/tenant/end-users/erase'],
  ['POST', '/api/v1/org/events/payloads/erase'],
  ['POST', '/api/v1/team/switch-tenant'],
  ['GET', '/api/v1/team/my-tenants'],
];

describe('authentication on every user route', () => {
  let server: TestServer;
  let clock: ManualClock;
  let owner: Account;
  let revoked: string;
  let admin: string;
  let widget: string;

  before(async () => {
    clock = new ManualClock(new Date());
    server = await startTestServer(
      { SCRYPT_LOG_N: '12', TOKEN_TTL_SECONDS: '600', SUPER_ADMIN_EMAIL: 'root@platform.test', SUPER_ADMIN_PASSWORD: 'root password 123' },
      { clock },
    );
    owner = await registerOwner(server, 'matrix-co');
    revoked = (await gql(server, LOGIN, { email: owner.email, password: PASSWORD })).json.data.login.token;
    const sessions = await server.request('GET', '/api/v1/me/sessions', { headers: { authorization: `Bearer ${owner.token}` } });
    const revokedJti = sessions.json.items.find((session: { current: boolean }) => !session.current).jti;
    expect((await server.request('DELETE', `/api/v1/me/sessions/${revokedJti}`, { headers: { authorization: `Bearer ${owner.token}` } })).status).to.equal(204);
    admin = (await server.request('POST', '/api/v1/admin/auth/login', { body: { email: 'root@platform.test', password: 'root password 123' } })).json.token;
    widget = await widgetTokenOf(server, owner);
  });
  after(() => server.close());

  const refusals = (): Array<[string, Record<string, string>]> => [
    ['no token', {}],
    ['a malformed token', { authorization: 'Bearer not-a-token' }],
    ['a non-bearer scheme', { authorization: `Basic ${Buffer.from('a:b').toString('base64')}` }],
    ['a widget token', { authorization: `Bearer ${widget}` }],
    ['a made-up widget-looking token', { authorization: 'Bearer wt_publishable_key' }],
    ['an admin token', { authorization: `Bearer ${admin}` }],
    ['a revoked session', { authorization: `Bearer ${revoked}` }],
  ];

  it('answers 401 {code, message} to every refusal on every route', async () => {
    for (const [method, path] of USER_ROUTES) {
      for (const [what, headers] of refusals()) {
        const response = await server.request(method, path, { headers, body: method === 'GET' || method === 'DELETE' ? undefined : {} });
        expect(response.status, `${method} ${path} with ${what}`).to.equal(401);
        expect(response.json.code, `${method} ${path} with ${what}`).to.be.a('string');
        expect(response.json.message).to.be.a('string');
      }
    }
  });

  it('answers GraphQL with HTTP 401 and the code REST gives, for every refusal', async () => {
    const expected: Record<string, string> = {
      'no token': 'unauthenticated',
      'a malformed token': 'invalid_token',
      'a non-bearer scheme': 'unauthenticated',
      'a widget token': 'widget_token_not_allowed',
      'a made-up widget-looking token': 'invalid_token',
      'an admin token': 'invalid_token',
      'a revoked session': 'session_revoked',
    };
    for (const [what, headers] of refusals()) {
      const rest = await server.request('GET', '/api/v1/me/sessions', { headers });
      const graph = await server.request('POST', '/graphql', { headers, body: { query: '{ me { role } }' } });
      expect({ rest: rest.status, graphql: graph.status }, what).to.deep.equal({ rest: 401, graphql: 401 });
      expect(rest.json.code, what).to.equal(expected[what]);
      expect(graph.json.data, what).to.equal(null);
      expect(graph.json.errors, what).to.have.length(1);
      expect(graph.json.errors[0].message, what).to.equal(rest.json.message);
      expect(graph.json.errors[0].extensions, what).to.deep.equal({ code: expected[what], status: 401 });
    }
  });

  it('still serves public GraphQL mutations to a caller whose stale token is refused', async () => {
    const login = await server.request('POST', '/graphql', {
      headers: { authorization: `Bearer ${revoked}` },
      body: { query: LOGIN, variables: { email: owner.email, password: PASSWORD } },
    });
    expect(login.status).to.equal(200);
    expect(login.json.data.login.token).to.match(/^v4\.public\./);
  });

  it('answers 401 on every route once the token has expired', async () => {
    clock.advance(601 * 1000);
    for (const [method, path] of USER_ROUTES) {
      const response = await server.request(method, path, { headers: { authorization: `Bearer ${owner.token}` }, body: method === 'GET' || method === 'DELETE' ? undefined : {} });
      expect(response.status, `${method} ${path}`).to.equal(401);
      expect(response.json.code).to.equal('invalid_token');
    }
    const graph = await gql(server, '{ me { role } }', {}, owner.token);
    expect(graph.status).to.equal(401);
    expect(graph.json.errors[0].extensions).to.deep.include({ code: 'invalid_token', status: 401 });
  });
});
