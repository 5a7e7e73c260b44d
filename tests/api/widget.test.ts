// The website widget's HTTP routes (spec 4.4) over HTTP against the real server: the widget
// token (missing, bad, rotated, another organization's; refused everywhere else), the origins
// and the CORS preflight, a suspended organization and a disabled widget, the visitor headers
// and verified identity, a visitor's chat (JSON and streamed, from the widget's workspace only,
// with the embedded extractive engine and real indexed documents; the message quota), the
// visitor's own conversation and nobody else's, the public appearance, and clearing the
// end-user identity, end to end with a scripted model whose tool call is approved later.

import { expect } from 'chai';
import { setQuotaOverrides } from '../../application/quota-override/quota-overrides';
import { systemContext } from '../../application/shared/request-context';
import { suspendTenant, unsuspendTenant } from '../../application/tenant/tenant-commands';
import { identitySignature, verifiedPartyId, visitorOf } from '../../application/widget/widget-access';
import { conversationStream } from '../../domain/conversation/conversation';
import { DEFAULT_WIDGET_SETTINGS } from '../../domain/widget-config/widget-config';
import { toolCallStream } from '../../domain/tool-call/tool-call';
import { userContext } from '../support/context';
import { startConversation } from '../support/conversations';
import { type Account, gql, registerOwner, widgetTokenOf } from '../support/identity';
import { OpenAiCompatibleServer } from '../support/openai-compatible-server';
import { type TestResponse, type TestServer, startTestServer } from '../support/server';
import { eventually } from '../support/stores';
import { type WebhookReceiver, startWebhookReceiver } from '../support/webhook-receiver';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = any;

/** The named Server-Sent Events of a complete body (keep-alive comments left out). */
function framesOf(text: string): Array<{ event: string; data: Json }> {
  return text
    .split('\n\n')
    .map((block) => block.split('\n'))
    .filter((lines) => lines.some((line) => line.startsWith('event: ')))
    .map((lines) => ({ event: lines.find((line) => line.startsWith('event: '))!.slice(7), data: JSON.parse(lines.find((line) => line.startsWith('data: '))!.slice(6)) }));
}

const SHOP = 'https://shop.example';
const VISITOR = 'visitor-one-0123456789abcdef';
const OTHER_VISITOR = 'visitor-two-0123456789abcdef';
const REFUNDS = 'Refunds are issued within 14 days of the request, to the card you paid with. Gift cards cannot be refunded.';
const SALARIES = 'Engineering salary bands run from 70k to 90k, reviewed every April.';
const OTHER_REFUNDS = 'Refunds at the other shop take sixty days and come as store credit.';

const bearer = (token: string) => ({ authorization: `Bearer ${token}` });
const asUser = (account: Account, extra: Record<string, string> = {}) => ({ ...bearer(account.token), ...extra });

/** Adds a text document through the API and waits until it is indexed. */
async function addDocument(server: TestServer, account: Account, workspaceId: string, title: string, text: string): Promise<string> {
  const added = await server.request('POST', '/api/v1/documents/text', { headers: asUser(account), body: { workspace_id: workspaceId, title, text } });
  expect(added.status, added.text).to.equal(201);
  await eventually(async () => (await server.request('GET', `/api/v1/documents/${added.json.id}`, { headers: asUser(account) })).json.status === 'ready', 20_000, `${title} indexed`);
  return added.json.id;
}

const defaultWorkspaceOf = async (server: TestServer, account: Account): Promise<string> =>
  (await server.request('GET', '/api/v1/org/workspaces', { headers: asUser(account) })).json.items.find((workspace: Json) => workspace.is_default).id;

describe('the widget’s HTTP routes (/api/v1/widget)', () => {
  let server: TestServer;
  /** The organization whose widget most tests use. */
  let owner: Account;
  let token: string;
  let defaultWorkspace: string;
  let internalWorkspace: string;
  let refundsDoc: string;
  let salariesDoc: string;
  /** Another organization, with a widget and knowledge of its own. */
  let other: Account;
  let otherToken: string;
  let otherRefundsDoc: string;

  const widget = (widgetToken: string, extra: Record<string, string> = {}) => ({ ...bearer(widgetToken), ...extra });
  const visitorHeaders = (widgetToken: string, visitor = VISITOR, extra: Record<string, string> = {}) => widget(widgetToken, { 'x-widget-visitor': visitor, ...extra });
  const chat = (body: Json, headers: Record<string, string>) => server.request('POST', '/api/v1/widget/chat', { headers, body });
  const configure = async (account: Account, settings: Json): Promise<void> => {
    const response = await server.request('POST', '/api/v1/tenant/widget', { headers: asUser(account), body: settings });
    expect(response.status, response.text).to.equal(200);
  };
  const partyOf = (visitorId: string) => visitorOf({ secrets: server.platform.secrets }, { tenant_id: 'any', settings: DEFAULT_WIDGET_SETTINGS, identity_secret: null }, { visitor_id: visitorId }).party;

  /** One request of each widget route, by a visitor with these headers. */
  const everyRoute = (headers: Record<string, string>, conversationId = 'no-such-conversation'): Array<[string, () => Promise<TestResponse>]> => [
    ['POST /chat', () => chat({ message: 'How long do refunds take?' }, headers)],
    ['GET /settings', () => server.request('GET', '/api/v1/widget/settings', { headers })],
    ['GET /conversations', () => server.request('GET', '/api/v1/widget/conversations', { headers })],
    ['GET /conversations/{id}/messages', () => server.request('GET', `/api/v1/widget/conversations/${conversationId}/messages`, { headers })],
    ['POST /identity/clear', () => server.request('POST', '/api/v1/widget/identity/clear', { headers, body: {} })],
  ];

  async function expectEveryRoute(headers: Record<string, string>, status: number, code: string): Promise<void> {
    for (const [route, send] of everyRoute(headers)) {
      const response = await send();
      expect([response.status, response.json?.code], `${route}: ${response.text}`).to.deep.equal([status, code]);
      expect(await response.events(), route).to.deep.equal([]);
    }
  }

  before(async () => {
    server = await startTestServer({ SCRYPT_LOG_N: '12' });
    owner = await registerOwner(server, 'widget-http-org');
    token = await widgetTokenOf(server, owner);
    defaultWorkspace = await defaultWorkspaceOf(server, owner);
    internalWorkspace = (await gql(server, 'mutation { create_workspace(name: "Internal") { id } }', {}, owner.token)).json.data.create_workspace.id;
    refundsDoc = await addDocument(server, owner, defaultWorkspace, 'Refund policy', REFUNDS);
    salariesDoc = await addDocument(server, owner, internalWorkspace, 'Salary bands', SALARIES);
    await configure(owner, { allowed_origins: [SHOP, 'https://*.example.com'] });
    other = await registerOwner(server, 'widget-http-other');
    otherToken = await widgetTokenOf(server, other);
    otherRefundsDoc = await addDocument(server, other, await defaultWorkspaceOf(server, other), 'Other refunds', OTHER_REFUNDS);
  });
  after(() => server.close());

  describe('the widget token', () => {
    it('is required on every widget route: missing, unknown or a user’s token is 401 invalid_widget_token, recording nothing', async () => {
      await expectEveryRoute({ 'x-widget-visitor': VISITOR }, 401, 'invalid_widget_token');
      await expectEveryRoute(visitorHeaders('wt_not-a-token-of-anyone'), 401, 'invalid_widget_token');
      await expectEveryRoute(visitorHeaders(owner.token), 401, 'invalid_widget_token');
      await expectEveryRoute({ authorization: 'Basic d2lkZ2V0OnRva2Vu', 'x-widget-visitor': VISITOR }, 401, 'invalid_widget_token');
    });

    it('stops working at once when rotated (every route 401); the new token works', async () => {
      const rotating = await registerOwner(server, 'widget-http-rotate');
      const before = await widgetTokenOf(server, rotating);
      expect((await server.request('GET', '/api/v1/widget/settings', { headers: widget(before) })).status).to.equal(200);
      const rotated = await gql(server, 'mutation { rotate_widget_token { widget_token } }', {}, rotating.token);
      const after = rotated.json.data.rotate_widget_token.widget_token as string;
      expect(after).to.match(/^wt_/).and.not.equal(before);
      await expectEveryRoute(visitorHeaders(before), 401, 'invalid_widget_token');
      const settings = await server.request('GET', '/api/v1/widget/settings', { headers: widget(after) });
      expect([settings.status, settings.json.tenant.slug]).to.deep.equal([200, 'widget-http-rotate']);
      const turn = await chat({ message: 'Hello?' }, visitorHeaders(after));
      expect(turn.status, turn.text).to.equal(200);
    });

    it('is refused on every route that is not the widget’s (401 widget_token_not_allowed)', async () => {
      const routes: Array<[string, string, Json?]> = [
        ['GET', '/api/v1/org/members'],
        ['GET', '/api/v1/org/roles'],
        ['GET', '/api/v1/org/workspaces'],
        ['GET', '/api/v1/org/teams'],
        ['POST', '/api/v1/org/teams', { name: 'Widget team' }],
        ['GET', '/api/v1/org/audit-logs'],
        ['GET', '/api/v1/org/sdk-connections'],
        ['GET', '/api/v1/org/events'],
        ['POST', '/api/v1/chat', { message: 'Hello?' }],
        ['GET', '/api/v1/conversations'],
        ['GET', '/api/v1/tenant/widget'],
        ['POST', '/api/v1/tenant/widget/identity-secret'],
        ['GET', '/api/v1/documents'],
      ];
      for (const [method, path, body] of routes) {
        const response = await server.request(method, path, { headers: widget(token), body });
        expect([response.status, response.json.code], `${method} ${path}`).to.deep.equal([401, 'widget_token_not_allowed']);
        expect(await response.events(), `${method} ${path}`).to.deep.equal([]);
      }
    });
  });

  describe('origins and CORS', () => {
    it('answers an allowed origin, exact or by wildcard, and the platform’s own, with Access-Control-Allow-Origin', async () => {
      for (const origin of [SHOP, 'https://eu.example.com', 'https://a.b.example.com', server.url]) {
        const response = await server.request('GET', '/api/v1/widget/settings', { headers: widget(token, { origin }) });
        expect(response.status, origin).to.equal(200);
        expect(response.headers.get('access-control-allow-origin'), origin).to.equal(origin);
        expect(response.headers.get('vary'), origin).to.match(/\bOrigin\b/);
      }
    });

    it('refuses any other origin with 403 origin_not_allowed and no Access-Control-Allow-Origin, recording nothing', async () => {
      for (const origin of ['https://evil.example', 'https://example.com', 'http://shop.example', 'https://shop.example:8443', 'null']) {
        for (const [route, send] of everyRoute(visitorHeaders(token, VISITOR, { origin }))) {
          const response = await send();
          expect([response.status, response.json.code], `${origin} ${route}`).to.deep.equal([403, 'origin_not_allowed']);
          expect(response.headers.get('access-control-allow-origin'), `${origin} ${route}`).to.equal(null);
          expect(await response.events()).to.deep.equal([]);
        }
      }
    });

    it('does not check a request without Origin (no browser page), and sends it no Access-Control-Allow-Origin', async () => {
      const response = await server.request('GET', '/api/v1/widget/settings', { headers: widget(token) });
      expect(response.status).to.equal(200);
      expect(response.headers.get('access-control-allow-origin')).to.equal(null);
    });

    it('sends Access-Control-Allow-Origin with an error too, so the widget can read why it was refused', async () => {
      const response = await chat({ message: 'Hi' }, widget(token, { origin: SHOP, 'x-widget-visitor': 'short' }));
      expect([response.status, response.json.code]).to.deep.equal([400, 'invalid_visitor']);
      expect(response.headers.get('access-control-allow-origin')).to.equal(SHOP);
    });

    it('reads a body only after the token and origin, so a browser can read a 400 or 415 about it', async () => {
      const routes = ['/api/v1/widget/chat', '/api/v1/widget/identity/clear', '/api/v1/widget/messages/m-1/feedback', '/api/v1/widget/conversations/c-1/handoff', '/api/v1/widget/leads'];
      for (const path of routes) {
        const send = (headers: Record<string, string>, rawBody: string, type: string) => server.request('POST', path, { headers: { ...headers, 'content-type': type }, rawBody });
        const broken = await send(visitorHeaders(token, VISITOR, { origin: SHOP }), '{"message": ', 'application/json');
        expect([broken.status, broken.json?.code, broken.headers.get('access-control-allow-origin')], `${path}: ${broken.text}`).to.deep.equal([400, 'malformed_json', SHOP]);
        const typed = await send(visitorHeaders(token, VISITOR, { origin: SHOP }), 'message=hi', 'text/plain');
        expect([typed.status, typed.json?.code, typed.headers.get('access-control-allow-origin')], `${path}: ${typed.text}`).to.deep.equal([415, 'unsupported_media_type', SHOP]);
        // The token and origin come first: their refusals stand whatever the body.
        const elsewhere = await send(visitorHeaders(token, VISITOR, { origin: 'https://evil.example' }), '{"message": ', 'application/json');
        expect([elsewhere.status, elsewhere.json?.code, elsewhere.headers.get('access-control-allow-origin')], path).to.deep.equal([403, 'origin_not_allowed', null]);
        const anonymous = await send({ origin: SHOP }, '{"message": ', 'application/json');
        expect(anonymous.status, path).to.equal(401);
        for (const response of [broken, typed, elsewhere, anonymous]) expect(await response.events(), path).to.deep.equal([]);
      }
    });

    it('answers the preflight of every widget route without a token: 204 with the methods, headers and lifetime', async () => {
      for (const path of ['/api/v1/widget/chat', '/api/v1/widget/settings', '/api/v1/widget/conversations/c-1/messages', '/api/v1/widget/identity/clear', '/api/v1/widget/leads']) {
        const response = await server.request('OPTIONS', path, { headers: { origin: SHOP, 'access-control-request-method': 'POST', 'access-control-request-headers': 'authorization, content-type, x-widget-visitor' } });
        expect(response.status, path).to.equal(204);
        expect(response.text).to.equal('');
        expect({
          origin: response.headers.get('access-control-allow-origin'),
          methods: response.headers.get('access-control-allow-methods'),
          headers: response.headers.get('access-control-allow-headers'),
          maxAge: response.headers.get('access-control-max-age'),
          vary: response.headers.get('vary'),
        }, path).to.deep.equal({
          origin: SHOP,
          methods: 'GET, POST',
          headers: 'authorization, content-type, idempotency-key, x-widget-visitor, x-widget-user-id, x-widget-user-hash, x-end-user-token, x-end-user-session, x-request-id, x-correlation-id',
          maxAge: '600',
          vary: 'Origin',
        });
        expect(await response.events()).to.deep.equal([]);
      }
      // A preflight carries no token, so it cannot tell the organization: the actual request is refused instead.
      const evil = await server.request('OPTIONS', '/api/v1/widget/chat', { headers: { origin: 'https://evil.example', 'access-control-request-method': 'POST' } });
      expect([evil.status, evil.headers.get('access-control-allow-origin')]).to.deep.equal([204, 'https://evil.example']);
      const noOrigin = await server.request('OPTIONS', '/api/v1/widget/chat');
      expect([noOrigin.status, noOrigin.headers.get('access-control-allow-origin')]).to.deep.equal([204, null]);
    });
  });

  describe('the organization behind the token', () => {
    let paused: Account;
    let pausedToken: string;
    before(async () => {
      paused = await registerOwner(server, 'widget-http-paused');
      pausedToken = await widgetTokenOf(server, paused);
    });

    it('is 403 tenant_suspended on every route while suspended, and works again once unsuspended', async () => {
      const context = userContext({ actor: { kind: 'system', id: 'cli' }, tenant_id: paused.tenant_id });
      await server.platform.readYourWrites((await suspendTenant(server.platform.commands, paused.tenant_id, 'unpaid invoices', context)).position);
      await expectEveryRoute(visitorHeaders(pausedToken), 403, 'tenant_suspended');
      await server.platform.readYourWrites((await unsuspendTenant(server.platform.commands, paused.tenant_id, context)).position);
      expect((await server.request('GET', '/api/v1/widget/settings', { headers: widget(pausedToken) })).status).to.equal(200);
    });

    it('is 403 widget_disabled on every route while the organization has turned its widget off', async () => {
      const off = await gql(server, 'mutation { update_settings(input: {widget_enabled: false}) { widget_enabled } }', {}, paused.token);
      expect(off.json.data.update_settings.widget_enabled, off.text).to.equal(false);
      await expectEveryRoute(visitorHeaders(pausedToken), 403, 'widget_disabled');
      await gql(server, 'mutation { update_settings(input: {widget_enabled: true}) { widget_enabled } }', {}, paused.token);
      expect((await server.request('GET', '/api/v1/widget/settings', { headers: widget(pausedToken) })).status).to.equal(200);
    });
  });

  describe('the visitor', () => {
    it('must name itself on the routes that act for a visitor: 400 invalid_visitor naming visitor_id, recording nothing', async () => {
      const routes = (headers: Record<string, string>) => everyRoute(headers).filter(([route]) => route !== 'GET /settings');
      for (const visitor of [undefined, '', 'short', 'x'.repeat(65), 'has spaces in it 0123456789', 'ünïcödé-0123456789abcdefgh']) {
        const headers = visitor === undefined ? widget(token) : visitorHeaders(token, visitor);
        for (const [route, send] of routes(headers)) {
          const response = await send();
          expect([response.status, response.json.code, response.json.field], `${route} ${String(visitor)}`).to.deep.equal([400, 'invalid_visitor', 'visitor_id']);
          expect(await response.events()).to.deep.equal([]);
        }
      }
      expect((await server.request('GET', '/api/v1/widget/settings', { headers: widget(token) })).status).to.equal(200);
    });

    describe('verified identity', () => {
      let verifying: Account;
      let verifyingToken: string;
      let secret: string;
      const signed = (userId: string, hash: string, visitor = VISITOR) => visitorHeaders(verifyingToken, visitor, { 'x-widget-user-id': userId, 'x-widget-user-hash': hash });
      let conversationId: string;
      /** A conversation started before verified visitors' ids were digests. */
      let legacyId: string;

      before(async () => {
        verifying = await registerOwner(server, 'widget-http-verified');
        verifyingToken = await widgetTokenOf(server, verifying);
        secret = (await server.request('POST', '/api/v1/tenant/widget/identity-secret', { headers: asUser(verifying) })).json.identity_secret;
        await configure(verifying, { identity_verification: 'required' });
      });

      it('refuses a visitor without a signed identity when the widget requires one (401 identity_required)', async () => {
        for (const [route, send] of everyRoute(visitorHeaders(verifyingToken)).filter(([name]) => name !== 'GET /settings')) {
          const response = await send();
          expect([response.status, response.json.code], route).to.deep.equal([401, 'identity_required']);
        }
        // The appearance tells the widget to ask the host page first.
        expect((await server.request('GET', '/api/v1/widget/settings', { headers: widget(verifyingToken) })).json.identity_verification).to.equal('required');
      });

      it('refuses a signature that does not match (401 invalid_identity), recording nothing', async () => {
        for (const hash of [identitySignature(secret, 'host-user-2'), identitySignature('not the secret', 'host-user-1'), 'f'.repeat(64), '']) {
          const response = await chat({ message: 'Who am I?' }, signed('host-user-1', hash));
          expect([response.status, response.json.code], hash).to.deep.equal([401, hash === '' ? 'invalid_identity' : 'invalid_identity']);
          expect(await response.events()).to.deep.equal([]);
        }
      });

      it('lets a signed visitor chat as the host’s user, the same person on any device, and nobody else', async () => {
        const response = await chat({ message: 'How long do refunds take?' }, signed('host-user-1', identitySignature(secret, 'host-user-1')));
        expect(response.status, response.text).to.equal(200);
        conversationId = response.json.conversation_id;
        const [started] = await server.platform.eventStore.readStream(conversationStream(conversationId));
        // Named by a keyed digest; the host's user id kept sealed on the conversation, shown to its agents.
        const party = { kind: 'end_user', id: verifiedPartyId(server.platform.secrets, verifying.tenant_id, 'host-user-1') };
        expect(started.data).to.deep.include({ channel: 'widget', started_by: party, verified_user_id: 'host-user-1' });
        expect(started.metadata.actor).to.deep.equal(party);
        expect(JSON.stringify(await server.platform.storedEvents.readStream(conversationStream(conversationId)))).to.not.include('host-user-1');
        const shown = await server.request('GET', `/api/v1/conversations/${conversationId}`, { headers: asUser(verifying) });
        expect(shown.json).to.deep.include({ started_by: party, verified_user_id: 'host-user-1' });
        const otherDevice = await server.request('GET', `/api/v1/widget/conversations/${conversationId}/messages`, { headers: signed('host-user-1', identitySignature(secret, 'host-user-1'), OTHER_VISITOR) });
        expect(otherDevice.status, otherDevice.text).to.equal(200);
        expect(otherDevice.json.items.map((message: Json) => message.role)).to.deep.equal(['user', 'assistant']);
        const otherUser = await server.request('GET', `/api/v1/widget/conversations/${conversationId}/messages`, { headers: signed('host-user-2', identitySignature(secret, 'host-user-2')) });
        expect([otherUser.status, otherUser.json.code]).to.deep.equal([404, 'conversation_not_found']);
      });

      it('keeps a conversation started under the id of old (`verified:<user id>`) the signed visitor’s: read, continued, its user id shown', async () => {
        const legacyParty = { kind: 'end_user' as const, id: 'verified:host-user-1' };
        const workspaceId = (await server.request('GET', '/api/v1/org/workspaces', { headers: asUser(verifying) })).json.items[0].id;
        legacyId = await startConversation(server, verifying, { channel: 'widget', workspace_id: workspaceId, title: 'Before the upgrade', started_by: legacyParty });
        const headers = signed('host-user-1', identitySignature(secret, 'host-user-1'), OTHER_VISITOR);
        const read = await server.request('GET', `/api/v1/widget/conversations/${legacyId}/messages`, { headers });
        expect(read.status, read.text).to.equal(200);
        const continued = await chat({ message: 'Still there?', conversation_id: legacyId }, headers);
        expect(continued.status, continued.text).to.equal(200);
        expect(continued.json.conversation_id).to.equal(legacyId);
        const shown = await server.request('GET', `/api/v1/conversations/${legacyId}`, { headers: asUser(verifying) });
        expect(shown.json).to.deep.include({ started_by: legacyParty, verified_user_id: 'host-user-1' });
        const someoneElse = await server.request('GET', `/api/v1/widget/conversations/${legacyId}/messages`, { headers: signed('host-user-2', identitySignature(secret, 'host-user-2')) });
        expect([someoneElse.status, someoneElse.json.code]).to.deep.equal([404, 'conversation_not_found']);
      });

      it('lists the signed visitor’s conversations on any device, the most recently active first, those of before ids were digests too; nobody else’s', async () => {
        const list = async (headers: Record<string, string>, query = '') => {
          const response = await server.request('GET', `/api/v1/widget/conversations${query}`, { headers });
          expect(response.status, response.text).to.equal(200);
          return response.json;
        };
        const mine = await list(signed('host-user-1', identitySignature(secret, 'host-user-1'), OTHER_VISITOR));
        // The conversation of old was continued last.
        expect(mine.items.map((item: Json) => item.id)).to.deep.equal([legacyId, conversationId]);
        expect(mine.items[1]).to.deep.include({ title: 'How long do refunds take?', status: 'open', assistant_paused: false, message_count: 2 });
        expect(mine.items[1]).to.have.all.keys('id', 'title', 'status', 'assistant_paused', 'started_at', 'last_activity_at', 'message_count', 'last_message_preview');
        const paged = await list(signed('host-user-1', identitySignature(secret, 'host-user-1')), '?limit=1');
        expect(paged.items.map((item: Json) => item.id)).to.deep.equal([legacyId]);
        expect((await list(signed('host-user-1', identitySignature(secret, 'host-user-1')), `?limit=1&cursor=${paged.next_cursor}`)).items.map((item: Json) => item.id)).to.deep.equal([conversationId]);
        expect((await list(signed('host-user-2', identitySignature(secret, 'host-user-2')))).items).to.deep.equal([]);
        const bad = await server.request('GET', '/api/v1/widget/conversations?limit=0', { headers: signed('host-user-1', identitySignature(secret, 'host-user-1')) });
        expect([bad.status, bad.json.code]).to.deep.equal([400, 'invalid_limit']);
      });

      it('in optional mode lets anonymous visitors chat too, apart from the signed ones', async () => {
        await configure(verifying, { identity_verification: 'optional' });
        const anonymous = await chat({ message: 'Hello?' }, visitorHeaders(verifyingToken));
        expect(anonymous.status, anonymous.text).to.equal(200);
        const mine = await server.request('GET', `/api/v1/widget/conversations/${conversationId}/messages`, { headers: visitorHeaders(verifyingToken) });
        expect([mine.status, mine.json.code]).to.deep.equal([404, 'conversation_not_found']);
      });
    });
  });

  describe('POST /api/v1/widget/chat', () => {
    let conversationId: string;

    it('answers from the widget’s workspace (the default one) with a citation, as the visitor, in a widget conversation', async () => {
      const response = await chat({ message: 'How long do refunds take?' }, visitorHeaders(token, VISITOR, { origin: SHOP }));
      expect(response.status, response.text).to.equal(200);
      expect(response.headers.get('access-control-allow-origin')).to.equal(SHOP);
      conversationId = response.json.conversation_id;
      expect(response.json).to.deep.include({ paused: false, tool_steps: [] });
      expect(response.json.answer).to.deep.include({ answered_from_knowledge: true, model: 'extractive' });
      expect(response.json.answer.text).to.include('14 days');
      expect(response.json.answer.citations.map((citation: Json) => citation.document_id)).to.deep.equal([refundsDoc]);
      expect(await response.events()).to.deep.equal(['ConversationStarted@conversation', 'UserMessagePosted@conversation', 'AssistantAnswered@conversation']);
      const events = await server.platform.eventStore.readStream(conversationStream(conversationId));
      const visitor = partyOf(VISITOR);
      expect(events[0].data).to.deep.include({ tenant_id: owner.tenant_id, workspace_id: defaultWorkspace, channel: 'widget', title: 'How long do refunds take?', started_by: visitor });
      for (const event of events) expect({ actor: event.metadata.actor, tenant: event.metadata.tenant_id }).to.deep.equal({ actor: visitor, tenant: owner.tenant_id });
      expect(events[1].data).to.deep.include({ author: visitor, end_user_token_sealed: null, end_user_session_sealed: null });
      // The visitor id itself is a bearer secret: it is recorded nowhere.
      expect(JSON.stringify(events)).to.not.include(VISITOR);
    });

    it('continues the visitor’s own conversation, with its history', async () => {
      const response = await chat({ message: 'And gift cards?', conversation_id: conversationId }, visitorHeaders(token));
      expect(response.status, response.text).to.equal(200);
      expect(response.json.conversation_id).to.equal(conversationId);
      expect(response.json.answer.text).to.include('Gift cards cannot be refunded');
    });

    it('never answers from another workspace, nor from another organization', async () => {
      const salaries = await chat({ message: 'What are the engineering salary bands?' }, visitorHeaders(token));
      expect(salaries.status, salaries.text).to.equal(200);
      expect(salaries.json.answer).to.deep.include({ answered_from_knowledge: false, citations: [] });
      expect(salaries.json.answer.text).to.not.include('70k');
      const others = await chat({ message: 'Do refunds come as store credit after sixty days?' }, visitorHeaders(token));
      expect(others.json.answer.citations.map((citation: Json) => citation.document_id)).to.not.include(otherRefundsDoc);
      expect(others.json.answer.text).to.not.include('store credit');

      // The admins point the widget at the internal workspace: now only that one answers.
      await configure(owner, { workspace_id: internalWorkspace });
      const internal = await chat({ message: 'What are the engineering salary bands?' }, visitorHeaders(token));
      expect(internal.json.answer.citations.map((citation: Json) => citation.document_id)).to.deep.equal([salariesDoc]);
      const [started] = await server.platform.eventStore.readStream(conversationStream(internal.json.conversation_id));
      expect(started.data).to.deep.include({ workspace_id: internalWorkspace });
      const refunds = await chat({ message: 'How long do refunds take?' }, visitorHeaders(token));
      expect(refunds.json.answer).to.deep.include({ answered_from_knowledge: false, citations: [] });
      // A conversation keeps the workspace it started in.
      const earlier = await chat({ message: 'How long do refunds take?', conversation_id: conversationId }, visitorHeaders(token));
      expect(earlier.json.answer.citations.map((citation: Json) => citation.document_id)).to.deep.equal([refundsDoc]);
      await configure(owner, { workspace_id: null });
    });

    it('continues only the visitor’s own conversations: another visitor’s, another organization’s widget and a console conversation are 404', async () => {
      const mine = { message: 'Still there?', conversation_id: conversationId };
      for (const headers of [visitorHeaders(token, OTHER_VISITOR), visitorHeaders(otherToken, VISITOR)]) {
        const response = await chat(mine, headers);
        expect([response.status, response.json.code]).to.deep.equal([404, 'conversation_not_found']);
        expect(await response.events()).to.deep.equal([]);
      }
      const console = await server.request('POST', '/api/v1/chat', { headers: asUser(owner), body: { message: 'How long do refunds take?' } });
      const response = await chat({ message: 'Hi', conversation_id: console.json.conversation_id }, visitorHeaders(token));
      expect([response.status, response.json.code]).to.deep.equal([404, 'conversation_not_found']);
      expect(await response.events()).to.deep.equal([]);
    });

    it('refuses a bad body with 400 naming the field, recording nothing', async () => {
      const cases: Array<[Json, string, string]> = [
        [{}, 'invalid_request', 'message'],
        [{ message: 42 }, 'invalid_request', 'message'],
        [{ message: '' }, 'invalid_message', 'message'],
        [{ message: 'x'.repeat(8001) }, 'invalid_message', 'message'],
        [{ message: 'Hi', conversation_id: '' }, 'invalid_request', 'conversation_id'],
        [{ message: 'Hi', conversation_id: 7 }, 'invalid_request', 'conversation_id'],
      ];
      for (const [body, code, field] of cases) {
        const response = await chat(body, visitorHeaders(token));
        expect([response.status, response.json.code, response.json.field], JSON.stringify(body).slice(0, 50)).to.deep.equal([400, code, field]);
        expect(await response.events()).to.deep.equal([]);
      }
    });

    it('seals the end user’s token and session the host page gave (identify), on the visitor’s message', async () => {
      const response = await chat({ message: 'Where is my order?' }, visitorHeaders(token, VISITOR, { 'x-end-user-token': 'host-jwt-123', 'x-end-user-session': 'host-session-9' }));
      expect(response.status, response.text).to.equal(200);
      const events = await server.platform.eventStore.readStream(conversationStream(response.json.conversation_id));
      const posted = events.find((event) => event.type === 'UserMessagePosted')!.data as Json;
      expect(server.platform.secrets.open(posted.end_user_token_sealed)).to.equal('host-jwt-123');
      expect(server.platform.secrets.open(posted.end_user_session_sealed)).to.equal('host-session-9');
    });

    it('streams the answer as Server-Sent Events with Accept: text/event-stream', async () => {
      const response = await chat({ message: 'How long do refunds take?' }, visitorHeaders(token, VISITOR, { accept: 'text/event-stream', origin: SHOP }));
      expect(response.status).to.equal(200);
      expect(response.headers.get('content-type')).to.match(/^text\/event-stream/);
      expect(response.headers.get('access-control-allow-origin')).to.equal(SHOP);
      const frames = framesOf(response.text);
      const kinds = [...new Set(frames.map((frame) => frame.event))];
      expect(kinds).to.deep.equal(['delta', 'citation', 'done']);
      expect(frames.filter((frame) => frame.event === 'delta').map((frame) => frame.data.text).join('')).to.include('14 days');
      expect(frames.find((frame) => frame.event === 'citation')!.data.document_id).to.equal(refundsDoc);
      const done = frames[frames.length - 1].data;
      expect(done).to.include({ paused: false, answered_from_knowledge: true, model: 'extractive' });
      const [started] = await server.platform.eventStore.readStream(conversationStream(done.conversation_id));
      expect(started.data).to.deep.include({ channel: 'widget', started_by: partyOf(VISITOR) });
    });

    it('honours Idempotency-Key for a JSON turn (the visitor’s own keys), and refuses one on a stream', async () => {
      const headers = visitorHeaders(token, VISITOR, { 'idempotency-key': 'widget-turn-1' });
      const first = await chat({ message: 'How long do refunds take?' }, headers);
      expect(first.status, first.text).to.equal(200);
      const again = await chat({ message: 'How long do refunds take?' }, headers);
      expect([again.status, again.headers.get('idempotent-replayed')]).to.deep.equal([200, 'true']);
      expect(again.json).to.deep.equal(first.json);
      expect(await again.events()).to.deep.equal([]);
      // The kept answer holds the conversation's texts: it is sealed under the conversation's key, erased with it.
      const kept = (await server.platform.eventStore.readAll({ fromPosition: 0, maxCount: 1_000_000 })).filter((event) => event.type === 'IdempotentPersonalAnswerRecorded');
      expect(kept.map((event) => (event.data as { subject: string }).subject)).to.include(`conversation:${first.json.conversation_id}`);
      expect((await chat({ message: 'Something else?' }, headers)).status).to.equal(422);
      // Another visitor's key of the same name is theirs.
      const theirs = await chat({ message: 'How long do refunds take?' }, visitorHeaders(token, OTHER_VISITOR, { 'idempotency-key': 'widget-turn-1' }));
      expect(theirs.status).to.equal(200);
      expect(theirs.json.conversation_id).to.not.equal(first.json.conversation_id);

      const streamed = await chat({ message: 'How long do refunds take?' }, visitorHeaders(token, VISITOR, { 'idempotency-key': 'widget-turn-2', accept: 'text/event-stream' }));
      expect([streamed.status, streamed.json.code, streamed.json.field]).to.deep.equal([400, 'invalid_request', 'Idempotency-Key']);
      expect(await streamed.events()).to.deep.equal([]);
    });

    it('counts each message against the organization’s quota: past it 429 with the numbers, JSON or stream, recording nothing', async () => {
      const limited = await registerOwner(server, 'widget-http-quota');
      const limitedToken = await widgetTokenOf(server, limited);
      await setQuotaOverrides(server.platform.identity, 'test-admin', limited.tenant_id, { overrides: { messages_per_month: 1 }, reason: 'test' }, systemContext('test'));
      const first = await chat({ message: 'One?' }, visitorHeaders(limitedToken));
      expect(first.status, first.text).to.equal(200);
      const now = new Date();
      for (const accept of ['application/json', 'text/event-stream']) {
        const refused = await chat({ message: 'Two?', conversation_id: first.json.conversation_id }, visitorHeaders(limitedToken, VISITOR, { accept }));
        expect(refused.status, accept).to.equal(429);
        expect(refused.headers.get('content-type')).to.match(/^application\/json/);
        expect(refused.json).to.deep.equal({
          code: 'quota_exceeded',
          message: refused.json.message,
          quota: 'messages_per_month',
          limit: 1,
          used: 1,
          resets_at: new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1)).toISOString(),
        });
        expect(await refused.events()).to.deep.equal([]);
      }
    });
  });

  describe('GET /api/v1/widget/conversations/{id}/messages', () => {
    let conversationId: string;
    before(async () => {
      const first = await chat({ message: 'How long do refunds take?' }, visitorHeaders(token));
      conversationId = first.json.conversation_id;
      await chat({ message: 'And gift cards?', conversation_id: conversationId }, visitorHeaders(token));
    });
    const read = (query: string, headers: Record<string, string> = visitorHeaders(token), id = conversationId) => server.request('GET', `/api/v1/widget/conversations/${id}/messages${query}`, { headers });

    it('gives the visitor their conversation, oldest first, as the widget shows it (no author, model or usage)', async () => {
      const response = await read('');
      expect(response.status, response.text).to.equal(200);
      expect(response.json.next_cursor).to.equal(null);
      const items = response.json.items as Json[];
      expect(items.map((message) => [message.role, message.text.slice(0, 20)])).to.deep.equal([
        ['user', 'How long do refunds '],
        ['assistant', items[1].text.slice(0, 20)],
        ['user', 'And gift cards?'],
        ['assistant', items[3].text.slice(0, 20)],
      ]);
      for (const message of items) expect(Object.keys(message).sort()).to.deep.equal(['citations', 'created_at', 'failed', 'feedback_rating', 'id', 'role', 'text']);
      expect(items[1]).to.deep.include({ failed: false, feedback_rating: null });
      expect(items[1].citations[0]).to.deep.include({ document_id: refundsDoc, title: 'Refund policy' });
    });

    it('pages with the cursor; a bad limit or cursor is 400', async () => {
      const first = await read('?limit=3');
      expect(first.json.items).to.have.length(3);
      expect(first.json.next_cursor).to.be.a('string');
      const second = await read(`?limit=3&cursor=${encodeURIComponent(first.json.next_cursor)}`);
      expect(second.json.items.map((message: Json) => message.text)).to.deep.equal([(await read('')).json.items[3].text]);
      expect(second.json.next_cursor).to.equal(null);
      const badLimit = await read('?limit=0');
      expect([badLimit.status, badLimit.json.code, badLimit.json.field]).to.deep.equal([400, 'invalid_limit', 'limit']);
      const badCursor = await read('?cursor=bm90LWEtY3Vyc29y');
      expect([badCursor.status, badCursor.json.code]).to.deep.equal([400, 'invalid_cursor']);
    });

    it('is 404 conversation_not_found for another visitor, another organization’s widget, a console conversation, and an unknown id', async () => {
      const console = await server.request('POST', '/api/v1/chat', { headers: asUser(owner), body: { message: 'Hello?' } });
      const attempts: Array<[string, Record<string, string>, string]> = [
        ['another visitor', visitorHeaders(token, OTHER_VISITOR), conversationId],
        ['another organization', visitorHeaders(otherToken), conversationId],
        ['a console conversation', visitorHeaders(token), console.json.conversation_id],
        ['an unknown id', visitorHeaders(token), 'no-such-conversation'],
      ];
      for (const [what, headers, id] of attempts) {
        const response = await read('', headers, id);
        expect([response.status, response.json.code], what).to.deep.equal([404, 'conversation_not_found']);
      }
    });
  });

  describe('POST /api/v1/widget/identity/clear', () => {
    const clear = (body: Json, headers: Record<string, string> = visitorHeaders(token)) => server.request('POST', '/api/v1/widget/identity/clear', { headers, body });

    it('forgets the end-user token and session of the visitor’s conversation (recorded once), 204', async () => {
      const turn = await chat({ message: 'Where is my order?' }, visitorHeaders(token, VISITOR, { 'x-end-user-token': 'host-jwt-456' }));
      const conversationId = turn.json.conversation_id;
      const cleared = await clear({ conversation_id: conversationId });
      expect([cleared.status, cleared.text]).to.deep.equal([204, '']);
      expect(await cleared.events()).to.deep.equal(['EndUserIdentityCleared@conversation']);
      const events = await server.platform.eventStore.readStream(conversationStream(conversationId));
      expect(events[events.length - 1].metadata.actor).to.deep.equal(partyOf(VISITOR));
      const again = await clear({ conversation_id: conversationId });
      expect(again.status).to.equal(204);
      expect(await again.events()).to.deep.equal([]);
      // The conversation goes on; its ETag follows the stream.
      const answered = await chat({ message: 'Thanks', conversation_id: conversationId }, visitorHeaders(token));
      expect(answered.status).to.equal(200);
      const console = await server.request('GET', `/api/v1/conversations/${conversationId}`, { headers: asUser(owner) });
      expect(console.headers.get('etag')).to.equal(`"${(await server.platform.eventStore.readStream(conversationStream(conversationId))).length - 1}"`);
    });

    it('records nothing without a conversation, or for one whose messages carried none', async () => {
      for (const body of [{}, { conversation_id: null }, undefined]) {
        const response = await clear(body);
        expect(response.status, JSON.stringify(body)).to.equal(204);
        expect(await response.events()).to.deep.equal([]);
      }
      const plain = await chat({ message: 'Hello?' }, visitorHeaders(token));
      const response = await clear({ conversation_id: plain.json.conversation_id });
      expect(response.status).to.equal(204);
      expect(await response.events()).to.deep.equal([]);
    });

    it('is 404 for a conversation that is not the visitor’s, and 400 for a bad body', async () => {
      const turn = await chat({ message: 'Where is my order?' }, visitorHeaders(token, VISITOR, { 'x-end-user-token': 'host-jwt-789' }));
      for (const headers of [visitorHeaders(token, OTHER_VISITOR), visitorHeaders(otherToken)]) {
        const response = await clear({ conversation_id: turn.json.conversation_id }, headers);
        expect([response.status, response.json.code]).to.deep.equal([404, 'conversation_not_found']);
        expect(await response.events()).to.deep.equal([]);
      }
      const bad = await clear({ conversation_id: 5 });
      expect([bad.status, bad.json.code, bad.json.field]).to.deep.equal([400, 'invalid_request', 'conversation_id']);
    });
  });

  describe('GET /api/v1/widget/settings', () => {
    it('answers the appearance, with the branding filling what the widget leaves empty', async () => {
      const branded = await gql(server, 'mutation { update_settings(input: {display_name: "Widget Shop", welcome_message: "Welcome to the shop!", assistant_name: "Ada"}) { display_name } }', {}, owner.token);
      expect(branded.json.errors, branded.text).to.equal(undefined);
      await configure(owner, { primary_color: '#112233', theme: { radius: '8px' }, custom_css: '.svc-launcher { right: 24px; }', lead_form_fields: ['email', 'phone'], voice: true });
      const response = await server.request('GET', '/api/v1/widget/settings', { headers: widget(token, { origin: SHOP }) });
      expect(response.status).to.equal(200);
      expect(response.json).to.deep.equal({
        tenant: { name: 'Widget Shop', slug: 'widget-http-org', logo_url: null },
        assistant_name: 'Ada',
        title: 'Widget Shop',
        welcome_message: 'Welcome to the shop!',
        primary_color: '#112233',
        background_color: DEFAULT_WIDGET_SETTINGS.background_color,
        text_color: DEFAULT_WIDGET_SETTINGS.text_color,
        position: 'bottom-right',
        launcher_icon: 'chat',
        theme: { radius: '8px' },
        custom_css: '.svc-launcher { right: 24px; }',
        features: { lead_form: true, lead_form_fields: ['email', 'phone'], handoff_button: true, feedback: true, voice: true, visitor_erasure: true },
        identity_verification: 'off',
      });
      await configure(owner, { title: 'Ask us', welcome_message: 'Hi there' });
      const own = await server.request('GET', '/api/v1/widget/settings', { headers: widget(token) });
      expect(own.json).to.include({ title: 'Ask us', welcome_message: 'Hi there' });
    });

    it('never tells the allowed origins, the workspace or the identity secret', async () => {
      await configure(owner, { workspace_id: internalWorkspace });
      const secret = (await server.request('POST', '/api/v1/tenant/widget/identity-secret', { headers: asUser(owner) })).json.identity_secret;
      const response = await server.request('GET', '/api/v1/widget/settings', { headers: widget(token) });
      for (const hidden of ['shop.example', internalWorkspace, secret, 'allowed_origins', 'workspace_id', 'identity_secret']) expect(response.text).to.not.include(hidden);
      await configure(owner, { workspace_id: null });
    });

    it('is each organization’s own', async () => {
      const response = await server.request('GET', '/api/v1/widget/settings', { headers: widget(otherToken) });
      expect(response.json.tenant.slug).to.equal('widget-http-other');
      expect(response.json.title).to.not.equal('Ask us');
    });
  });
});

describe('clearing the end-user identity, end to end (a tool call approved after the clear)', function () {
  this.timeout(60_000);
  const ORDER_SCHEMA = { type: 'object', properties: { order_number: { type: 'string', minLength: 1 } }, required: ['order_number'] };
  let llm: OpenAiCompatibleServer;
  let shop: WebhookReceiver;
  let server: TestServer;
  let owner: Account;
  let token: string;

  before(async () => {
    llm = await OpenAiCompatibleServer.start();
    shop = await startWebhookReceiver();
    server = await startTestServer(
      // The shop API is plain http on 127.0.0.1: allowed here only, as in development.
      { SCRYPT_LOG_N: '12', LLM_BASE_URL: llm.baseUrl, LLM_MODEL: 'scripted-model', LLM_API_KEY: 'sk-local-test', OUTBOUND_ALLOW_INSECURE: 'true', OUTBOUND_ALLOW_PRIVATE_NETWORKS: 'true' },
      { sagaRetryPollMs: 20 },
    );
    owner = await registerOwner(server, 'widget-clear-org');
    token = await widgetTokenOf(server, owner);
    await setQuotaOverrides(server.platform.identity, 'test-admin', owner.tenant_id, { overrides: { business_tools: null }, reason: 'test suite' }, systemContext('test'));
    const workspaceId = await defaultWorkspaceOf(server, owner);
    const integration = await server.request('POST', `/api/v1/workspaces/${workspaceId}/integrations`, { headers: asUser(owner), body: { name: 'Shop', base_url: shop.url, auth: { kind: 'none' } } });
    expect(integration.status, integration.text).to.equal(201);
    const tool = await server.request('POST', `/api/v1/workspaces/${workspaceId}/tools`, {
      headers: asUser(owner),
      body: {
        integration_id: integration.json.id,
        name: 'cancel_order',
        description: 'Cancels an order',
        method: 'POST',
        path: '/orders/{order_number}/cancel',
        parameters: [{ argument: 'order_number', in: 'path', name: 'order_number' }],
        input_schema: ORDER_SCHEMA,
        chat: true,
        risk: 'approval_required',
      },
    });
    expect(tool.status, tool.text).to.equal(201);
  });
  after(async () => {
    await server.close();
    await shop.close();
    await llm.close();
  });

  /** A visitor's turn in which the model asks to cancel `order`; answers the call that waits for approval. */
  async function turnAwaitingApproval(order: string, visitor: string): Promise<{ conversationId: string; toolCallId: string }> {
    llm.script({ tool_calls: [{ id: `call_${order}`, name: 'cancel_order', arguments: [JSON.stringify({ order_number: order })] }] });
    const turn = await server.request('POST', '/api/v1/widget/chat', {
      headers: { ...bearer(token), 'x-widget-visitor': visitor, 'x-end-user-token': `host-jwt-${order}`, 'x-end-user-session': `host-session-${order}` },
      body: { message: `Please cancel order ${order}` },
    });
    expect(turn.status, turn.text).to.equal(200);
    expect(turn.json.tool_steps.map((step: Json) => step.status)).to.deep.equal(['awaiting_approval']);
    return { conversationId: turn.json.conversation_id, toolCallId: turn.json.tool_steps[0].tool_call_id };
  }

  async function approve(toolCallId: string, order: string): Promise<Record<string, string>> {
    llm.script({ deltas: [`Order ${order} is cancelled.`] });
    const approved = await server.request('POST', `/api/v1/tool-calls/${toolCallId}/approve`, { headers: asUser(owner) });
    expect(approved.status, approved.text).to.equal(200);
    await eventually(async () => (await server.platform.eventStore.readStream(toolCallStream(toolCallId))).some((event) => event.type === 'ToolCallSucceeded'), 20_000, `the call of ${order} to run`);
    const delivery = shop.deliveries.find((request) => request.path === `/orders/${order}/cancel`);
    expect(delivery, `the shop got ${order}`).to.not.equal(undefined);
    return delivery!.headers;
  }

  it('forwards the token and session to a call approved later while the visitor keeps them', async () => {
    const { toolCallId } = await turnAwaitingApproval('A-1', VISITOR);
    const headers = await approve(toolCallId, 'A-1');
    expect(headers).to.include({ 'x-end-user-token': 'host-jwt-A-1', 'x-end-user-session': 'host-session-A-1' });
  });

  it('forwards neither once the visitor cleared their identity in that conversation', async () => {
    const { conversationId, toolCallId } = await turnAwaitingApproval('B-2', OTHER_VISITOR);
    const cleared = await server.request('POST', '/api/v1/widget/identity/clear', { headers: { ...bearer(token), 'x-widget-visitor': OTHER_VISITOR }, body: { conversation_id: conversationId } });
    expect(cleared.status, cleared.text).to.equal(204);
    expect(await cleared.events()).to.deep.equal(['EndUserIdentityCleared@conversation']);
    const headers = await approve(toolCallId, 'B-2');
    expect(headers).to.not.have.any.keys('x-end-user-token', 'x-end-user-session');
    // The call itself still holds what it was given, sealed: the clear is what stops it.
    const [requested] = await server.platform.eventStore.readStream(toolCallStream(toolCallId));
    expect(server.platform.secrets.open((requested.data as { end_user_token_sealed: string }).end_user_token_sealed)).to.equal('host-jwt-B-2');
  });
});
