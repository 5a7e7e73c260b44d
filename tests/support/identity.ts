// Registration and login through GraphQL, as a console would do them.

import type { TestResponse, TestServer } from './server';

export const PASSWORD = 'correct horse battery';

export async function gql(server: TestServer, query: string, variables: Record<string, unknown> = {}, token?: string): Promise<TestResponse> {
  return server.request('POST', '/graphql', { body: { query, variables }, headers: token ? { authorization: `Bearer ${token}` } : {} });
}

/** The last code emailed to `email`, read from the outbox events. */
export async function lastEmailedCode(server: TestServer, email: string): Promise<string> {
  const queued = await server.platform.eventStore.readAll({ direction: 'backwards', filter: { kind: 'event_type', types: ['EmailQueued'] }, maxCount: 200 });
  // An orchestration alert to the same owner holds event ids, whose digits are no code.
  const mine = queued.find((event) => event.type === 'EmailQueued' && event.data.to === email.toLowerCase() && event.data.kind !== 'orchestration_alert');
  if (mine?.type !== 'EmailQueued') throw new Error(`no email to ${email}`);
  const text = server.platform.secrets.open(mine.data.body_sealed);
  return /(\d{6})/.exec(text)![1];
}

export const REGISTER = `mutation ($email: String!, $password: String!, $name: String!, $organization_name: String!, $slug: String) {
  register(email: $email, password: $password, name: $name, organization_name: $organization_name, slug: $slug) { user_id tenant_id email verification_sent }
}`;
export const VERIFY = `mutation ($email: String!, $code: String!) { verify_otp(email: $email, code: $code) { token role user { id email email_verified } tenant { id slug } } }`;
export const LOGIN = `mutation ($email: String!, $password: String!, $tenant_id: ID) { login(email: $email, password: $password, tenant_id: $tenant_id) { token role user { id } tenant { id } } }`;

export interface Account {
  email: string;
  user_id: string;
  tenant_id: string;
  token: string;
}

/** Registers and verifies a new owner; returns their token. */
export async function registerOwner(server: TestServer, slug: string, email = `${slug}@example.com`): Promise<Account> {
  const registered = await gql(server, REGISTER, { email, password: PASSWORD, name: 'Owner', organization_name: `Org ${slug}`, slug });
  if (registered.json.errors) throw new Error(JSON.stringify(registered.json.errors));
  const code = await lastEmailedCode(server, email);
  const verified = await gql(server, VERIFY, { email, code });
  if (verified.json.errors) throw new Error(JSON.stringify(verified.json.errors));
  return { email, user_id: registered.json.data.register.user_id, tenant_id: registered.json.data.register.tenant_id, token: verified.json.data.verify_otp.token };
}

/**
 * Adds a registered user to another organization with a role (what an accepted invitation
 * does) and logs them in there.
 */
export async function joinAs(server: TestServer, account: Account, tenantId: string, role: 'admin' | 'member'): Promise<Account> {
  const { handleCommand } = await import('../../application/command-handling/handle-command');
  const { membershipAggregate } = await import('../../application/membership/memberships');
  const { membershipStream } = await import('../../domain/membership/membership');
  const { userContext } = await import('./context');
  const result = await handleCommand(
    server.platform.commands,
    membershipAggregate,
    membershipStream(tenantId),
    { type: 'AddMember', data: { tenant_id: tenantId, user_id: account.user_id, role } },
    userContext({ tenant_id: tenantId }),
  );
  await server.platform.readYourWrites(result.position);
  const login = await gql(server, LOGIN, { email: account.email, password: PASSWORD, tenant_id: tenantId });
  if (login.json.errors) throw new Error(JSON.stringify(login.json.errors));
  return { ...account, tenant_id: tenantId, token: login.json.data.login.token };
}

/** The tenant's current widget token, as its owner or an admin reads it in the console settings. */
export async function widgetTokenOf(server: TestServer, account: Account): Promise<string> {
  const settings = await gql(server, '{ settings { widget_token } }', {}, account.token);
  const token = settings.json.data?.settings?.widget_token;
  if (typeof token !== 'string') throw new Error(`no widget token: ${JSON.stringify(settings.json)}`);
  return token;
}

/**
 * Lifts the tenant's seat limit, as the super admin's override does: for suites that add more
 * members than the free plan's users limit to one organization.
 */
export async function liftSeatLimit(server: TestServer, tenantId: string): Promise<void> {
  const { setQuotaOverrides } = await import('../../application/quota-override/quota-overrides');
  const { systemContext } = await import('../../application/shared/request-context');
  await setQuotaOverrides(server.platform.identity, 'test-admin', tenantId, { overrides: { users: null }, reason: 'test suite' }, systemContext('test'));
}
