// The website widget's configuration over HTTP (spec 4.4): `GET, POST /api/v1/tenant/widget`
// and `POST /api/v1/tenant/widget/identity-secret`, for an organization's owner or admin. Every
// route: success, 401 (no token, a widget token), 403 for a member, 400 per bad field, 404 for
// a workspace that is not the organization's, 409 verification without a secret, 412 on a lost
// update. The identity secret is answered once, by the rotation that made it, and is in no
// read, no log line and no event in clear.

import { expect } from 'chai';
import { DEFAULT_WIDGET_SETTINGS } from '../../domain/widget-config/widget-config';
import { identitySignature } from '../../application/widget/widget-access';
import { createLogger } from '../../infrastructure/logging/logger';
import { expectEveryEventAudited } from '../support/audit';
import { type Account, gql, joinAs, liftSeatLimit, registerOwner, widgetTokenOf } from '../support/identity';
import { type TestResponse, type TestServer, startTestServer } from '../support/server';
import { ManualClock } from '../support/stores';

const PATH = '/api/v1/tenant/widget';
const SECRET_PATH = '/api/v1/tenant/widget/identity-secret';
const VISITOR = 'visitor-of-the-config-suite-01';

describe('widget configuration (/api/v1/tenant/widget)', () => {
  let server: TestServer;
  let clock: ManualClock;
  const logged: string[] = [];
  let owner: Account;
  let admin: Account;
  let member: Account;
  let other: Account;
  let widgetToken: string;
  let secondWorkspace: string;
  let othersWorkspace: string;
  const as = (account: Account, extra: Record<string, string> = {}) => ({ authorization: `Bearer ${account.token}`, ...extra });
  const get = (account: Account) => server.request('GET', PATH, { headers: as(account) });
  const post = (account: Account, body: unknown, extra: Record<string, string> = {}) => server.request('POST', PATH, { headers: as(account, extra), body });
  const rotate = (account: Account, extra: Record<string, string> = {}) => server.request('POST', SECRET_PATH, { headers: as(account, extra) });

  async function expectRefused(response: TestResponse, status: number, code: string, field?: string): Promise<void> {
    expect(response.status, response.text).to.equal(status);
    expect(response.json.code, response.text).to.equal(code);
    if (field !== undefined) expect(response.json.field, response.text).to.equal(field);
    expect(await response.events()).to.deep.equal([]);
  }

  const workspacesOf = async (account: Account): Promise<Array<{ id: string; is_default: boolean }>> => (await server.request('GET', '/api/v1/org/workspaces', { headers: as(account) })).json.items;

  before(async () => {
    clock = new ManualClock(new Date('2026-11-23T09:00:00.000Z'));
    const logger = createLogger('debug', { write: (line: string) => void logged.push(line) });
    server = await startTestServer({ SCRYPT_LOG_N: '12' }, { clock, logger });
    owner = await registerOwner(server, 'widget-cfg-org');
    await liftSeatLimit(server, owner.tenant_id);
    admin = await joinAs(server, await registerOwner(server, 'widget-cfg-adm-home', 'widget-cfg-adm@example.com'), owner.tenant_id, 'admin');
    member = await joinAs(server, await registerOwner(server, 'widget-cfg-mem-home', 'widget-cfg-mem@example.com'), owner.tenant_id, 'member');
    other = await registerOwner(server, 'widget-cfg-other');
    widgetToken = await widgetTokenOf(server, owner);
    secondWorkspace = (await gql(server, 'mutation { create_workspace(name: "Support desk") { id } }', {}, owner.token)).json.data.create_workspace.id;
    othersWorkspace = (await workspacesOf(other))[0].id;
  });
  after(() => server.close());

  describe('who may call', () => {
    const routes: Array<[string, string, unknown?]> = [
      ['GET', PATH],
      ['POST', PATH, { title: 'Help' }],
      ['POST', SECRET_PATH],
    ];

    it('is 401 without a token, and with the widget token, for every route', async () => {
      for (const [method, path, body] of routes) {
        const none = await server.request(method, path, { body });
        expect([none.status, none.json.code], `${method} ${path}`).to.deep.equal([401, 'unauthenticated']);
        const widget = await server.request(method, path, { body, headers: { authorization: `Bearer ${widgetToken}` } });
        expect([widget.status, widget.json.code], `${method} ${path}`).to.deep.equal([401, 'widget_token_not_allowed']);
        expect([...(await none.events()), ...(await widget.events())]).to.deep.equal([]);
      }
    });

    it('is 403 for a member, recorded as an access denial, for every route', async () => {
      for (const [method, path, body] of routes) {
        const response = await server.request(method, path, { headers: as(member), body });
        expect([response.status, response.json.code], `${method} ${path}`).to.deep.equal([403, 'insufficient_role']);
        expect(await response.events(), `${method} ${path}`).to.deep.equal(['AccessDenied@accessDenial']);
      }
    });
  });

  describe('GET, POST /api/v1/tenant/widget', () => {
    it('answers an organization that never configured its widget with the defaults', async () => {
      const response = await get(admin);
      expect(response.status).to.equal(200);
      expect(response.headers.get('etag')).to.equal('"-1"');
      expect(response.json).to.deep.equal({ ...DEFAULT_WIDGET_SETTINGS, configured: false, has_identity_secret: false, identity_secret_rotated_at: null, updated_at: null, updated_by: null });
    });

    it('refuses a body of the wrong shape with 400 invalid_request naming the field, and records nothing', async () => {
      const cases: Array<[unknown, string]> = [
        [{ title: 5 }, 'title'],
        [{ welcome_message: null }, 'welcome_message'],
        [{ primary_color: 255 }, 'primary_color'],
        [{ position: 'top-center' }, 'position'],
        [{ launcher_icon: 'rocket' }, 'launcher_icon'],
        [{ theme: ['radius'] }, 'theme'],
        [{ theme: { radius: 12 } }, 'theme.radius'],
        [{ custom_css: false }, 'custom_css'],
        [{ allowed_origins: 'https://shop.example' }, 'allowed_origins'],
        [{ allowed_origins: ['https://shop.example', 7] }, 'allowed_origins.1'],
        [{ workspace_id: '' }, 'workspace_id'],
        [{ workspace_id: 42 }, 'workspace_id'],
        [{ lead_form: 'yes' }, 'lead_form'],
        [{ lead_form_fields: ['email', 'fax'] }, 'lead_form_fields.1'],
        [{ handoff_button: 1 }, 'handoff_button'],
        [{ feedback: 'on' }, 'feedback'],
        [{ voice: null }, 'voice'],
        [{ identity_verification: 'always' }, 'identity_verification'],
        [{ primary_colour: '#ff0000' }, 'primary_colour'],
      ];
      for (const [body, field] of cases) await expectRefused(await post(admin, body), 400, 'invalid_request', field);
      await expectRefused(await post(admin, ['title']), 400, 'invalid_request');
    });

    it('refuses settings the widget rules refuse, naming the setting, and records nothing', async () => {
      await expectRefused(await post(admin, { primary_color: 'red' }), 400, 'invalid_widget_settings', 'primary_color');
      await expectRefused(await post(admin, { text_color: '#fff' }), 400, 'invalid_widget_settings', 'text_color');
      await expectRefused(await post(admin, { theme: { 'Bad Name': '1px' } }), 400, 'invalid_widget_settings', 'theme.Bad Name');
      await expectRefused(await post(admin, { theme: { accent: 'red; background: url(https://evil.example)' } }), 400, 'invalid_widget_settings', 'theme.accent');
      await expectRefused(await post(admin, { custom_css: '@import url("https://evil.example/x.css");' }), 400, 'invalid_widget_settings', 'custom_css');
      await expectRefused(await post(admin, { custom_css: '</style><script>alert(1)</script>' }), 400, 'invalid_widget_settings', 'custom_css');
      await expectRefused(await post(admin, { lead_form_fields: ['name', 'company'] }), 400, 'invalid_widget_settings', 'lead_form_fields');
      await expectRefused(await post(admin, { title: 'x'.repeat(101) }), 400, 'invalid_widget_settings', 'title');
      await expectRefused(await post(admin, { allowed_origins: ['https://shop.example', 'https://shop.example/checkout'] }), 400, 'invalid_origin', 'allowed_origins.1');
      await expectRefused(await post(admin, { allowed_origins: ['http://shop.example'] }), 400, 'invalid_origin', 'allowed_origins.0');
      await expectRefused(await post(admin, { allowed_origins: ['https://*'] }), 400, 'invalid_origin', 'allowed_origins.0');
    });

    it('is 404 workspace_not_found for a workspace that is not the organization’s', async () => {
      await expectRefused(await post(admin, { workspace_id: 'no-such-workspace' }), 404, 'workspace_not_found');
      await expectRefused(await post(admin, { workspace_id: othersWorkspace }), 404, 'workspace_not_found');
    });

    it('is 409 identity_secret_missing when verification is turned on before a secret was made', async () => {
      await expectRefused(await post(admin, { identity_verification: 'required' }), 409, 'identity_secret_missing');
    });

    let etag: string;
    it('changes the settings given, keeps the others, and answers the configuration with its ETag', async () => {
      clock.advance(60_000);
      const response = await post(admin, {
        title: '  Shop help  ',
        welcome_message: 'Hello!\nAsk us anything.',
        primary_color: '#0F766E',
        theme: { radius: '12px' },
        custom_css: '.svc-panel { box-shadow: none; }',
        allowed_origins: ['https://Shop.Example/', 'https://*.example.com'],
        workspace_id: secondWorkspace,
        lead_form_fields: ['name', 'phone'],
        voice: true,
      });
      expect(response.status, response.text).to.equal(200);
      etag = response.headers.get('etag')!;
      expect(etag).to.equal('"0"');
      expect(response.json).to.deep.equal({
        ...DEFAULT_WIDGET_SETTINGS,
        title: 'Shop help',
        welcome_message: 'Hello!\nAsk us anything.',
        primary_color: '#0F766E',
        theme: { radius: '12px' },
        custom_css: '.svc-panel { box-shadow: none; }',
        allowed_origins: ['https://shop.example', 'https://*.example.com'],
        workspace_id: secondWorkspace,
        lead_form_fields: ['name', 'phone'],
        voice: true,
        configured: true,
        has_identity_secret: false,
        identity_secret_rotated_at: null,
        updated_at: clock.now().toISOString(),
        updated_by: { kind: 'user', id: admin.user_id },
      });
      expect(await response.events()).to.deep.equal(['WidgetConfigured@widgetConfig']);
      const [event] = await server.platform.eventStore.readStream(`widgetConfig-${owner.tenant_id}`);
      expect(event.metadata.actor).to.deep.equal({ kind: 'user', id: admin.user_id });
      expect((event.data as { changed: string[] }).changed).to.deep.equal(['title', 'welcome_message', 'primary_color', 'theme', 'custom_css', 'allowed_origins', 'workspace_id', 'lead_form_fields', 'voice']);
      const read = await get(owner);
      expect(read.headers.get('etag')).to.equal('"0"');
      expect(read.json).to.deep.equal(response.json);
    });

    it('records nothing for the same settings again, or for none', async () => {
      const same = await post(owner, { title: 'Shop help', voice: true, allowed_origins: ['https://shop.example', 'https://*.example.com'] });
      expect(same.status, same.text).to.equal(200);
      expect(same.headers.get('etag')).to.equal('"0"');
      expect(await same.events()).to.deep.equal([]);
      const none = await post(owner, {});
      expect([none.status, none.headers.get('etag')]).to.deep.equal([200, '"0"']);
      expect(await none.events()).to.deep.equal([]);
    });

    it('honours If-Match: the version read changes it, an older one is 412 revision_mismatch, a list of tags 400', async () => {
      const changed = await post(owner, { workspace_id: null, launcher_icon: 'help' }, { 'if-match': etag });
      expect(changed.status, changed.text).to.equal(200);
      expect(changed.headers.get('etag')).to.equal('"1"');
      expect(changed.json).to.include({ workspace_id: null, launcher_icon: 'help', title: 'Shop help' });
      await expectRefused(await post(owner, { title: 'Lost update' }, { 'if-match': etag }), 412, 'revision_mismatch');
      await expectRefused(await post(owner, { title: 'Lost update' }, { 'if-match': '"1", "2"' }), 400, 'invalid_request', 'If-Match');
      expect((await get(owner)).json.title).to.equal('Shop help');
    });
  });

  describe('POST /api/v1/tenant/widget/identity-secret', () => {
    let first: string;

    it('makes a secret, answers it this once with the configuration, and seals it in its event', async () => {
      clock.advance(60_000);
      const response = await rotate(admin);
      expect(response.status, response.text).to.equal(201);
      expect(response.headers.get('etag')).to.equal('"2"');
      first = response.json.identity_secret;
      expect(first).to.match(/^wsec_[A-Za-z0-9_-]{43}$/);
      expect(response.json).to.include({ has_identity_secret: true, identity_secret_rotated_at: clock.now().toISOString(), title: 'Shop help', configured: true });
      expect(await response.events()).to.deep.equal(['WidgetIdentitySecretRotated@widgetConfig']);
      const events = await server.platform.eventStore.readStream(`widgetConfig-${owner.tenant_id}`);
      const rotated = events[events.length - 1];
      expect(JSON.stringify(rotated.data)).to.not.include(first);
      expect(server.platform.secrets.open((rotated.data as { secret_sealed: string }).secret_sealed)).to.equal(first);
    });

    it('never answers the secret again: a read says there is one', async () => {
      const read = await get(owner);
      expect(read.json).to.include({ has_identity_secret: true });
      expect(read.json).to.not.have.property('identity_secret');
      expect(read.text).to.not.include(first);
    });

    it('lets verification be turned on now; visitors are checked against the newest secret only', async () => {
      const on = await post(owner, { identity_verification: 'required' });
      expect(on.status, on.text).to.equal(200);
      const visitor = (userHash: string) => ({ authorization: `Bearer ${widgetToken}`, 'x-widget-visitor': VISITOR, 'x-widget-user-id': 'host-user-7', 'x-widget-user-hash': userHash });
      const signedWithFirst = identitySignature(first, 'host-user-7');
      expect((await server.request('GET', '/api/v1/widget/conversations/none/messages', { headers: visitor(signedWithFirst) })).json.code).to.equal('conversation_not_found');

      const again = await rotate(owner, { 'if-match': on.headers.get('etag')! });
      expect(again.status, again.text).to.equal(201);
      const second = again.json.identity_secret as string;
      expect(second).to.match(/^wsec_/).and.not.equal(first);
      const stale = await server.request('GET', '/api/v1/widget/conversations/none/messages', { headers: visitor(signedWithFirst) });
      expect([stale.status, stale.json.code]).to.deep.equal([401, 'invalid_identity']);
      const fresh = await server.request('GET', '/api/v1/widget/conversations/none/messages', { headers: visitor(identitySignature(second, 'host-user-7')) });
      expect([fresh.status, fresh.json.code]).to.deep.equal([404, 'conversation_not_found']);
      await expectRefused(await rotate(owner, { 'if-match': on.headers.get('etag')! }), 412, 'revision_mismatch');
      await post(owner, { identity_verification: 'off' });
    });

    it('keeps every identity secret out of the logs', async () => {
      const events = await server.platform.eventStore.readStream(`widgetConfig-${owner.tenant_id}`);
      const secrets = events.flatMap((event) => (event.type === 'WidgetIdentitySecretRotated' ? [server.platform.secrets.open(event.data.secret_sealed)] : []));
      expect(secrets).to.have.length(2);
      for (const secret of secrets) expect(logged.filter((line) => line.includes(secret))).to.deep.equal([]);
    });
  });

  // Mocha runs a suite's own tests before its nested suites: these come last in a suite of their own.
  describe('after all of the above', () => {
    it('keeps each organization’s configuration its own', async () => {
      const others = await server.request('GET', PATH, { headers: as(other) });
      expect(others.json).to.include({ configured: false, title: '', has_identity_secret: false });
    });

    it('audits every event with its actor', async () => {
      const types = await expectEveryEventAudited(server);
      expect([...types]).to.include.members(['WidgetConfigured', 'WidgetIdentitySecretRotated']);
    });
  });
});
