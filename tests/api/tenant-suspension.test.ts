// A suspended tenant (issue #9.1): its users' tokens, logins, session switches and invitation
// acceptances are 403 `tenant_suspended` on every route kind; unsuspending restores them.

import { expect } from 'chai';
import { suspendTenant, unsuspendTenant } from '../../application/tenant/tenant-commands';
import { userContext } from '../support/context';
import { type Account, LOGIN, PASSWORD, REGISTER, VERIFY, gql, joinAs, lastEmailedCode, liftSeatLimit, registerOwner } from '../support/identity';
import { type TestResponse, type TestServer, startTestServer } from '../support/server';

describe('suspended tenants (#9.1)', () => {
  let server: TestServer;
  let owner: Account;
  let elsewhere: Account;
  let visitor: Account;

  const as = (account: Account) => ({ authorization: `Bearer ${account.token}` });

  async function suspend(tenantId: string): Promise<void> {
    const result = await suspendTenant(server.platform.commands, tenantId, 'unpaid invoices', userContext({ actor: { kind: 'system', id: 'cli' }, tenant_id: tenantId }));
    await server.platform.readYourWrites(result.position);
  }

  async function unsuspend(tenantId: string): Promise<void> {
    const result = await unsuspendTenant(server.platform.commands, tenantId, userContext({ actor: { kind: 'system', id: 'cli' }, tenant_id: tenantId }));
    await server.platform.readYourWrites(result.position);
  }

  /** One request of each kind a tenant user makes with a token. */
  const withToken = (account: Account): Array<[string, () => Promise<TestResponse>]> => [
    ['GET /org/members', () => server.request('GET', '/api/v1/org/members', { headers: as(account) })],
    ['POST /org/teams', () => server.request('POST', '/api/v1/org/teams', { headers: as(account), body: { name: 'Night shift' } })],
    ['POST /team/invite', () => server.request('POST', '/api/v1/team/invite', { headers: as(account), body: { email: 'new.hire@example.com', role: 'member' } })],
    ['GET /me/sessions', () => server.request('GET', '/api/v1/me/sessions', { headers: as(account) })],
    ['graphql me', () => gql(server, '{ me { role } }', {}, account.token)],
    ['graphql update_settings', () => gql(server, 'mutation { update_settings(input: { timezone: "UTC" }) { timezone } }', {}, account.token)],
  ];

  const codeOf = (response: TestResponse): unknown => response.json?.code ?? response.json?.errors?.[0]?.extensions?.code;

  before(async () => {
    server = await startTestServer({ SCRYPT_LOG_N: '12' });
    owner = await registerOwner(server, 'paused-org');
    await liftSeatLimit(server, owner.tenant_id);
    elsewhere = await registerOwner(server, 'open-org');
    // A member of both: her token in the open tenant switches into the suspended one.
    visitor = await registerOwner(server, 'visitor-home', 'visitor@example.com');
    await joinAs(server, visitor, owner.tenant_id, 'member');
  });
  after(() => server.close());

  it('answers 403 tenant_suspended to every route kind, to login and to switch-tenant, and works again once unsuspended', async () => {
    for (const [name, call] of withToken(owner)) expect((await call()).status, `${name} before`).to.be.oneOf([200, 201]);
    await suspend(owner.tenant_id);

    for (const [name, call] of withToken(owner)) {
      const response = await call();
      expect(response.status, name).to.equal(403);
      expect(codeOf(response), name).to.equal('tenant_suspended');
    }
    const login = await gql(server, LOGIN, { email: owner.email, password: PASSWORD });
    expect(login.status).to.equal(403);
    expect(codeOf(login)).to.equal('tenant_suspended');
    expect(login.json.data).to.equal(null);
    const switched = await server.request('POST', '/api/v1/team/switch-tenant', { headers: as(visitor), body: { tenant_id: owner.tenant_id } });
    expect(switched.status).to.equal(403);
    expect(switched.json.code).to.equal('tenant_suspended');
    // Another tenant is untouched, and a member of both lands in the one still active.
    expect((await server.request('GET', '/api/v1/org/members', { headers: as(elsewhere) })).status).to.equal(200);
    const visitorLogin = await gql(server, LOGIN, { email: visitor.email, password: PASSWORD });
    expect(visitorLogin.json.data.login.tenant.id).to.equal(visitor.tenant_id);

    await unsuspend(owner.tenant_id);
    for (const [name, call] of withToken(owner)) expect((await call()).status, `${name} after`).to.be.oneOf([200, 201, 409]);
    const again = await gql(server, LOGIN, { email: owner.email, password: PASSWORD });
    expect(again.status).to.equal(200);
    expect(again.json.data.login.tenant.id).to.equal(owner.tenant_id);
  });

  it('answers 403 to verify_otp and to accepting an invitation of a suspended tenant', async () => {
    const email = 'late@example.com';
    const registered = await gql(server, REGISTER, { email, password: PASSWORD, name: 'Late', organization_name: 'Late Org', slug: 'late-org' });
    const tenantId = registered.json.data.register.tenant_id as string;
    const invited = await server.request('POST', '/api/v1/team/invite', { headers: as(elsewhere), body: { email: 'joiner@example.com', role: 'member' } });
    expect(invited.status).to.equal(201);
    await suspend(tenantId);
    await suspend(elsewhere.tenant_id);

    const verified = await gql(server, VERIFY, { email, code: await lastEmailedCode(server, email) });
    expect(verified.status).to.equal(403);
    expect(codeOf(verified)).to.equal('tenant_suspended');
    const queued = await server.platform.eventStore.readAll({ direction: 'backwards', filter: { kind: 'event_type', types: ['EmailQueued'] }, maxCount: 50 });
    const invitation = queued.find((event) => (event.data as { to: string }).to === 'joiner@example.com')!;
    const token = /invitation token is ([A-Za-z0-9_-]+)/.exec(server.platform.secrets.open((invitation.data as { body_sealed: string }).body_sealed))![1];
    const accepted = await server.request('POST', '/api/v1/team/accept-invite', { body: { token, name: 'Joiner', password: PASSWORD } });
    expect(accepted.status).to.equal(403);
    expect(accepted.json.code).to.equal('tenant_suspended');
    expect(await accepted.events()).to.deep.equal([]);

    await unsuspend(elsewhere.tenant_id);
    expect((await server.request('POST', '/api/v1/team/accept-invite', { body: { token, name: 'Joiner', password: PASSWORD } })).status).to.equal(200);
  });
});
