import { expect } from 'chai';
import { ManualClock } from '../support/stores';
import { domainEvents } from '../../domain/events';
import { parseStreamName } from '../../domain/shared/stream-names';
import { AUDIT_LOG, type AuditLogEntry } from '../../projections/audit-log';
import { LOGIN, PASSWORD, REGISTER, VERIFY, gql, lastEmailedCode, registerOwner, widgetTokenOf } from '../support/identity';
import { type TestServer, startTestServer } from '../support/server';

const FAST_HASHING = { SCRYPT_LOG_N: '12' };

describe('identity over GraphQL and /api/v1/me/sessions', () => {
  let server: TestServer;
  let clock: ManualClock;
  before(async () => {
    clock = new ManualClock(new Date());
    server = await startTestServer({ ...FAST_HASHING, TOKEN_TTL_SECONDS: '3600' }, { clock });
  });
  after(() => server.close());

  describe('register and verify_otp', () => {
    it('registers, emails a code, and verify_otp returns a token with the owner role', async () => {
      const registered = await gql(server, REGISTER, { email: 'Ada@Example.com', password: PASSWORD, name: 'Ada', organization_name: 'Acme Shoes' });
      expect(registered.status).to.equal(200);
      expect(registered.json.data.register).to.deep.include({ email: 'ada@example.com', verification_sent: true });
      const code = await lastEmailedCode(server, 'ada@example.com');
      const verified = await gql(server, VERIFY, { email: 'ada@example.com', code });
      expect(verified.json.errors).to.equal(undefined);
      expect(verified.json.data.verify_otp).to.deep.include({ role: 'owner' });
      expect(verified.json.data.verify_otp.tenant.slug).to.equal('acme-shoes');
      expect(verified.json.data.verify_otp.user.email_verified).to.equal(true);
      expect(verified.json.data.verify_otp.token).to.match(/^v4\.public\./);
      // The sign-up is a registration, started first and completed last, naming no email.
      const userId = registered.json.data.register.user_id;
      const events = await server.platform.storedEvents.readAll({ filter: { kind: 'event_type_prefix', prefixes: ['Registration'] }, maxCount: 100_000 });
      const mine = events.filter((event) => (event.data as { user_id?: string }).user_id === userId);
      expect(mine.map((event) => event.type)).to.deep.equal(['RegistrationStarted']);
      const completed = events.filter((event) => event.stream === mine[0].stream).map((event) => event.type);
      expect(completed).to.deep.equal(['RegistrationStarted', 'RegistrationCompleted']);
      expect(JSON.stringify(mine[0].data)).to.not.match(/ada@example/i);
    });

    it('names every stream <category>-<id> with a declared category, and keeps the email out of stream names and reservations', async () => {
      const { user_id, tenant_id } = await registerOwner(server, 'stream-names', 'Grace.Hopper@Example.com');
      const events = await server.platform.storedEvents.readAll({ maxCount: 100_000 });
      for (const event of events) expect(domainEvents.categories, event.stream).to.include(parseStreamName(event.stream).category);
      expect(events.filter((event) => event.stream.toLowerCase().includes('grace'))).to.deep.equal([]);
      const reservations = events.filter((event) => event.type === 'ReservationClaimed');
      const mine = reservations.filter((event) => [user_id, tenant_id].includes((event.data as { owner_id: string }).owner_id)).map((event) => event.data);
      expect(mine).to.have.deep.members([
        { scope: 'user_email', owner_id: user_id },
        { scope: 'tenant_slug', owner_id: tenant_id },
      ]);
      expect(JSON.stringify(reservations)).to.not.match(/grace/i);
      for (const event of reservations) expect(event.stream).to.match(/^reservation-[0-9a-f]{64}$/);
    });

    it('refuses a wrong code with invalid_code naming the field', async () => {
      await gql(server, REGISTER, { email: 'bob@example.com', password: PASSWORD, name: 'Bob', organization_name: 'Bob Co' });
      const wrong = await gql(server, VERIFY, { email: 'bob@example.com', code: '000000' });
      expect(wrong.json.errors[0].extensions).to.deep.equal({ code: 'invalid_code', status: 400, field: 'code' });
    });

    it('answers 409-style conflicts for a taken email and a taken slug, and leaves nothing half-made', async () => {
      await registerOwner(server, 'taken-slug', 'first@example.com');
      const sameEmail = await gql(server, REGISTER, { email: 'FIRST@example.com', password: PASSWORD, name: 'X', organization_name: 'Other Org' });
      expect(sameEmail.json.errors[0].extensions).to.deep.include({ code: 'email_taken', status: 409 });
      const sameSlug = await gql(server, REGISTER, { email: 'second@example.com', password: PASSWORD, name: 'X', organization_name: 'Y', slug: 'taken-slug' });
      expect(sameSlug.json.errors[0].extensions).to.deep.include({ code: 'slug_taken', status: 409, field: 'slug' });
      // Each refused sign-up is a registration abandoned at once, for its reason.
      const abandoned = await server.platform.storedEvents.readAll({ filter: { kind: 'event_type', types: ['RegistrationAbandoned'] }, maxCount: 100_000 });
      expect(abandoned.map((event) => (event.data as { reason: string }).reason)).to.include.members(['email_taken', 'slug_taken']);
      // The email of the refused registration is free again.
      const retry = await gql(server, REGISTER, { email: 'second@example.com', password: PASSWORD, name: 'X', organization_name: 'Y', slug: 'free-slug-2' });
      expect(retry.json.errors).to.equal(undefined);
    });

    it('refuses each invalid field with its own code', async () => {
      const cases: Array<[Record<string, unknown>, string, string]> = [
        [{ email: 'not-an-email' }, 'invalid_email', 'email'],
        [{ email: '<script>alert(1)</script>@x.io' }, 'invalid_email', 'email'],
        [{ password: 'short' }, 'weak_password', 'password'],
        [{ name: ' ' }, 'invalid_name', 'name'],
        [{ organization_name: '' }, 'invalid_name', 'organization_name'],
        [{ slug: 'Bad Slug!' }, 'invalid_slug', 'slug'],
      ];
      for (const [override, code, field] of cases) {
        const response = await gql(server, REGISTER, { email: 'valid@example.com', password: PASSWORD, name: 'V', organization_name: 'Valid Org', ...override });
        expect(response.json.errors?.[0]?.extensions, JSON.stringify(override)).to.deep.equal({ code, status: 400, field });
      }
      const login = await gql(server, LOGIN, { email: 'valid@example.com', password: PASSWORD });
      expect(login.json.errors[0].extensions.code).to.equal('invalid_credentials');
    });

    it('creates exactly one account when 50 requests race for one email', async () => {
      const responses = await Promise.all(
        Array.from({ length: 50 }, (_, index) =>
          gql(server, REGISTER, { email: 'race@example.com', password: PASSWORD, name: 'R', organization_name: `Race ${index}`, slug: `race-${index}` }),
        ),
      );
      const created = responses.filter((response) => !response.json.errors);
      expect(created).to.have.length(1);
      expect(responses.filter((response) => response.json.errors?.[0]?.extensions?.code === 'email_taken')).to.have.length(49);
    });

    it('creates exactly one organization when 50 requests race for one slug', async () => {
      const responses = await Promise.all(
        Array.from({ length: 50 }, (_, index) =>
          gql(server, REGISTER, { email: `slug-race-${index}@example.com`, password: PASSWORD, name: 'R', organization_name: `Slug Race ${index}`, slug: 'contested' }),
        ),
      );
      expect(responses.filter((response) => !response.json.errors)).to.have.length(1);
      expect(responses.filter((response) => response.json.errors?.[0]?.extensions?.code === 'slug_taken')).to.have.length(49);
      const tenants = await server.platform.eventStore.readAll({ filter: { kind: 'event_type', types: ['TenantCreated'] } });
      expect(tenants.filter((event) => (event.data as { slug: string }).slug === 'contested')).to.have.length(1);
    });

    it('answers a request without a query with 400', async () => {
      const response = await server.request('POST', '/graphql', { body: { variables: {} } });
      expect(response.status).to.equal(400);
      expect(response.json).to.deep.equal({ code: 'invalid_request', message: 'send {"query": "...", "variables": {...}} as JSON' });
      const syntax = await server.request('POST', '/graphql', { body: { query: 'mutation {' } });
      expect(syntax.status).to.equal(400);
      expect(syntax.json.errors[0].extensions.code).to.equal('invalid_request');
    });

    it('keeps the playground off unless enabled', async () => {
      expect((await server.request('GET', '/graphql')).status).to.equal(404);
      const withPlayground = await startTestServer({ ...FAST_HASHING, ENABLE_GRAPHQL_PLAYGROUND: 'true' });
      try {
        const page = await withPlayground.request('GET', '/graphql');
        expect(page.status).to.equal(200);
        expect(page.headers.get('content-type')).to.match(/^text\/html/);
        expect(page.text).to.contain('GraphiQL');
      } finally {
        await withPlayground.close();
      }
    });
  });

  describe('login', () => {
    it('refuses an unverified email, then logs in after verification', async () => {
      await gql(server, REGISTER, { email: 'carol@example.com', password: PASSWORD, name: 'Carol', organization_name: 'Carol Co' });
      const early = await gql(server, LOGIN, { email: 'carol@example.com', password: PASSWORD });
      expect(early.json.errors[0].extensions).to.deep.include({ code: 'email_not_verified', status: 403 });
      await gql(server, VERIFY, { email: 'carol@example.com', code: await lastEmailedCode(server, 'carol@example.com') });
      const login = await gql(server, LOGIN, { email: 'carol@example.com', password: PASSWORD });
      expect(login.json.data.login.role).to.equal('owner');
    });

    it('refuses a wrong password and records the failure in the audit log with the ip', async () => {
      const owner = await registerOwner(server, 'dave-co', 'dave@example.com');
      const wrong = await gql(server, LOGIN, { email: 'dave@example.com', password: 'wrong password!' });
      expect(wrong.json.errors[0].extensions).to.deep.include({ code: 'invalid_credentials', status: 401 });
      const unknown = await gql(server, LOGIN, { email: 'nobody@example.com', password: PASSWORD });
      expect(unknown.json.errors[0].extensions.code).to.equal('invalid_credentials');
      await server.platform.readYourWrites(await server.platform.eventStore.headPosition());
      const audit = await server.platform.readStore.collection<AuditLogEntry>(AUDIT_LOG).find({ where: { tenant_id: owner.tenant_id, action: 'LoginFailed' } });
      expect(audit.items).to.have.length(1);
      expect(audit.items[0]).to.deep.include({ actor_id: owner.user_id, ip: '127.0.0.1' });
    });

    it('resets the password with an emailed code and revokes every session', async () => {
      const owner = await registerOwner(server, 'erin-co', 'erin@example.com');
      const reset = await gql(server, 'mutation ($email: String!) { request_password_reset(email: $email) }', { email: 'erin@example.com' });
      expect(reset.json.data.request_password_reset).to.equal(true);
      const silent = await gql(server, 'mutation ($email: String!) { request_password_reset(email: $email) }', { email: 'ghost@example.com' });
      expect(silent.json.data.request_password_reset).to.equal(true);
      const code = await lastEmailedCode(server, 'erin@example.com');
      const RESET = 'mutation ($email: String!, $code: String!, $p: String!) { reset_password(email: $email, code: $code, new_password: $p) }';
      expect((await gql(server, RESET, { email: 'erin@example.com', code: '999999', p: 'a new long password' })).json.errors[0].extensions.code).to.equal('invalid_code');
      expect((await gql(server, RESET, { email: 'erin@example.com', code, p: 'short' })).json.errors[0].extensions.code).to.equal('weak_password');
      expect((await gql(server, RESET, { email: 'erin@example.com', code, p: 'a new long password' })).json.data.reset_password).to.equal(true);
      expect((await server.request('GET', '/api/v1/me/sessions', { headers: { authorization: `Bearer ${owner.token}` } })).status).to.equal(401);
      expect((await gql(server, LOGIN, { email: 'erin@example.com', password: PASSWORD })).json.errors[0].extensions.code).to.equal('invalid_credentials');
      expect((await gql(server, LOGIN, { email: 'erin@example.com', password: 'a new long password' })).json.data.login.token).to.be.a('string');
    });
  });

  describe('/api/v1/me/sessions', () => {
    it('lists the sessions of the caller and revokes one; the revoked token is 401 next time', async () => {
      const owner = await registerOwner(server, 'frank-co', 'frank@example.com');
      const second = (await gql(server, LOGIN, { email: 'frank@example.com', password: PASSWORD })).json.data.login.token as string;
      const auth = { authorization: `Bearer ${owner.token}` };
      const listed = await server.request('GET', '/api/v1/me/sessions', { headers: auth });
      expect(listed.status).to.equal(200);
      expect(listed.json.items).to.have.length(2);
      expect(listed.json.items.filter((s: { current: boolean }) => s.current)).to.have.length(1);
      const other = listed.json.items.find((s: { current: boolean }) => !s.current);
      expect((await server.request('DELETE', `/api/v1/me/sessions/${other.jti}`, { headers: auth })).status).to.equal(204);
      const refused = await server.request('GET', '/api/v1/me/sessions', { headers: { authorization: `Bearer ${second}` } });
      expect(refused.status).to.equal(401);
      expect(refused.json.code).to.equal('session_revoked');
    });

    it("shows each session's IP and User-Agent at login, cleaned and cut to 256 characters", async () => {
      await registerOwner(server, 'hana-co', 'hana@example.com');
      const sessionOf = async (userAgent: string) => {
        const login = await server.request('POST', '/graphql', { body: { query: LOGIN, variables: { email: 'hana@example.com', password: PASSWORD } }, headers: { 'user-agent': userAgent } });
        const listed = await server.request('GET', '/api/v1/me/sessions', { headers: { authorization: `Bearer ${login.json.data.login.token}` } });
        return listed.json.items.find((session: { current: boolean }) => session.current);
      };
      const browser = 'Mozilla/5.0 (X11; Linux x86_64) Firefox/140.0';
      expect(await sessionOf(browser)).to.deep.include({ user_agent: browser, ip: '127.0.0.1' });
      const cut = (await sessionOf(`  curl/8.5\tcustom ${'x'.repeat(400)}  `)).user_agent as string;
      expect(cut).to.have.length(256);
      expect(cut.startsWith('curl/8.5 custom xxx')).to.equal(true);
    });

    it('answers 401 without a token, with a bad one, with a widget token and after expiry', async () => {
      expect((await server.request('GET', '/api/v1/me/sessions')).json).to.deep.equal({ code: 'unauthenticated', message: 'send Authorization: Bearer <token>' });
      expect((await server.request('GET', '/api/v1/me/sessions', { headers: { authorization: 'Bearer v4.public.garbage' } })).json.code).to.equal('invalid_token');
      const owner = await registerOwner(server, 'gina-co', 'gina@example.com');
      const widget = await widgetTokenOf(server, owner);
      expect((await server.request('GET', '/api/v1/me/sessions', { headers: { authorization: `Bearer ${widget}` } })).json.code).to.equal('widget_token_not_allowed');
      expect((await server.request('GET', '/api/v1/me/sessions', { headers: { authorization: 'Bearer wt_abc' } })).json.code).to.equal('invalid_token');
      clock.advance(3601 * 1000);
      const expired = await server.request('GET', '/api/v1/me/sessions', { headers: { authorization: `Bearer ${owner.token}` } });
      expect(expired.status).to.equal(401);
      expect(expired.json.code).to.equal('invalid_token');
    });

    it('answers 404 for a session of someone else and 400 for a bad limit', async () => {
      const one = await registerOwner(server, 'hank-co', 'hank@example.com');
      const two = await registerOwner(server, 'iris-co', 'iris@example.com');
      const theirs = (await server.request('GET', '/api/v1/me/sessions', { headers: { authorization: `Bearer ${two.token}` } })).json.items[0].jti;
      const response = await server.request('DELETE', `/api/v1/me/sessions/${theirs}`, { headers: { authorization: `Bearer ${one.token}` } });
      expect(response.status).to.equal(404);
      const badLimit = await server.request('GET', '/api/v1/me/sessions?limit=0', { headers: { authorization: `Bearer ${one.token}` } });
      expect(badLimit.status).to.equal(400);
      expect(badLimit.json).to.deep.include({ code: 'invalid_limit', field: 'limit' });
    });
  });

  describe('console queries and mutations', () => {
    it('answers me, workspaces and settings, and lets an owner update settings and rotate the widget token', async () => {
      const owner = await registerOwner(server, 'jade-co', 'jade@example.com');
      const me = await gql(server, '{ me { role user { email } tenant { slug } } workspaces { name is_default } settings { timezone widget_token } }', {}, owner.token);
      expect(me.json.data.me).to.deep.equal({ role: 'owner', user: { email: 'jade@example.com' }, tenant: { slug: 'jade-co' } });
      expect(me.json.data.workspaces).to.deep.equal([{ name: 'Default', is_default: true }]);
      const firstWidgetToken = me.json.data.settings.widget_token;
      expect(firstWidgetToken).to.match(/^wt_/);
      const updated = await gql(server, 'mutation { update_settings(input: { timezone: "Europe/Oslo", primary_color: "#112233" }) { timezone primary_color } }', {}, owner.token);
      expect(updated.json.data.update_settings).to.deep.equal({ timezone: 'Europe/Oslo', primary_color: '#112233' });
      const badColour = await gql(server, 'mutation { update_settings(input: { primary_color: "red" }) { timezone } }', {}, owner.token);
      expect(badColour.json.errors[0].extensions).to.deep.equal({ code: 'invalid_branding', status: 400, field: 'primary_color' });
      // A setting beside a bad branding field is not half made: the change is refused whole.
      const mixed = await gql(server, 'mutation { update_settings(input: { timezone: "Asia/Tokyo", primary_color: "red" }) { timezone } }', {}, owner.token);
      expect(mixed.json.errors[0].extensions).to.deep.equal({ code: 'invalid_branding', status: 400, field: 'primary_color' });
      expect(mixed.json.errors[0].message).to.equal('primary_color must be a #rrggbb colour');
      expect(await mixed.events()).to.deep.equal([]);
      expect((await gql(server, '{ settings { timezone } }', {}, owner.token)).json.data.settings.timezone).to.equal('Europe/Oslo');
      const rotated = await gql(server, 'mutation { rotate_widget_token { widget_token } }', {}, owner.token);
      expect(rotated.json.data.rotate_widget_token.widget_token).to.match(/^wt_/).and.not.equal(firstWidgetToken);
      // A widget token is recognised by looking it up: the rotated-out one is just an invalid token.
      const on = (token: string) => server.request('GET', '/api/v1/me/sessions', { headers: { authorization: `Bearer ${token}` } });
      expect((await on(rotated.json.data.rotate_widget_token.widget_token)).json.code).to.equal('widget_token_not_allowed');
      expect((await on(firstWidgetToken)).json.code).to.equal('invalid_token');
      const created = await gql(server, 'mutation { create_workspace(name: "Support") { id name is_default } }', {}, owner.token);
      expect(created.json.data.create_workspace).to.deep.include({ name: 'Support', is_default: false });
      const renamed = await gql(server, 'mutation ($id: ID!) { rename_workspace(id: $id, name: "Help desk") { name } }', { id: created.json.data.create_workspace.id }, owner.token);
      expect(renamed.json.data.rename_workspace.name).to.equal('Help desk');
    });

    it('answers unauthenticated without a token and not found for another tenant’s workspace', async () => {
      const anonymous = await gql(server, '{ me { role } }');
      expect(anonymous.json.errors[0].extensions).to.deep.include({ code: 'unauthenticated', status: 401 });
      const one = await registerOwner(server, 'kim-co', 'kim@example.com');
      const two = await registerOwner(server, 'lee-co', 'lee@example.com');
      const theirs = (await gql(server, '{ workspaces { id } }', {}, two.token)).json.data.workspaces[0].id;
      const response = await gql(server, 'mutation ($id: ID!) { rename_workspace(id: $id, name: "Mine") { name } }', { id: theirs }, one.token);
      expect(response.json.errors[0].extensions).to.deep.include({ code: 'workspace_not_found', status: 404 });
    });
  });
});
