// SDK connections over HTTP (spec 2.1, 3, 4.2; issue #13 point 2): every route's success, 401,
// 403 for a member and for a plan without the feature, 404 for another organization's, 409 for
// a taken name, 400 per bad field (a private webhook URL refused by a default deployment); the
// signing secret answered only by the create and by a rotating update, never by a read, never
// in an event in clear, never logged. Tests run against the example connector started in
// process, and against connectors that answer garbage, hang or hang up; a rotation keeps the
// connection healthy through its grace period and not after it. Syncing registers the
// connector's chat tools as business tools of a workspace, and a later sync follows the
// connector's changes.
//
// The deployment here allows plain http and private addresses (OUTBOUND_ALLOW_INSECURE,
// OUTBOUND_ALLOW_PRIVATE_NETWORKS) so it can reach connectors on 127.0.0.1, and waits 3 s for a
// connector's answer. Connector calls go through the platform's connector client, noting which
// secret signed each (tests/support/connector-client.ts).

import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect } from 'chai';
import { type Connector, type ConnectorServer, SDK_VERSION, createConnector } from '../../adapters/connector-sdk';
import { createExampleConnector } from '../../adapters/connector-sdk/example/connector';
import { checkQuota } from '../../application/entitlement/entitlements';
import { setQuotaOverrides } from '../../application/quota-override/quota-overrides';
import { systemContext } from '../../application/shared/request-context';
import { createLogger } from '../../infrastructure/logging/logger';
import { SignedConnectorClient } from '../../adapters/connector-client/connector-client';
import { GuardedOutboundHttp } from '../../infrastructure/outbound/signed-http';
import { BUSINESS_TOOLS, type BusinessToolDocument } from '../../projections/business-tools';
import { expectEveryEventAudited } from '../support/audit';
import { RecordingConnectorClient } from '../support/connector-client';
import { type Account, gql, joinAs, liftSeatLimit, registerOwner } from '../support/identity';
import { type TestResponse, type TestServer, startTestServer } from '../support/server';
import { ManualClock } from '../support/stores';
import { subscribeTo } from '../support/subscriptions';

const TIMEOUT_MS = 3000;
const BASE = '/api/v1/org/sdk-connections';

/** A server that is no connector: answers as `handler` says, for the failures a connector can have. */
async function rawServer(handler: http.RequestListener): Promise<{ url: string; close(): Promise<void> }> {
  const server = http.createServer(handler);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** The base URL the platform is given for a listening connector (it posts to `{url}/svc`). */
const baseOf = (listening: ConnectorServer): string => listening.url.replace(/\/svc$/, '');

describe('SDK connections (spec 4.2)', () => {
  let clock: ManualClock;
  let server: TestServer;
  let client: RecordingConnectorClient;
  let owner: Account;
  let admin: Account;
  let member: Account;
  let outsider: Account;
  let free: Account;
  let workspaceId: string;
  let otherWorkspaceId: string;
  let foreignWorkspaceId: string;
  const logged: string[] = [];
  /** Every signing secret given or made: none may show up anywhere but the answer that set it. */
  const secrets: string[] = [];
  const answers: string[] = [];
  const closers: Array<() => Promise<void>> = [];

  const as = (account: Account, extra: Record<string, string> = {}) => ({ authorization: `Bearer ${account.token}`, ...extra });
  async function send(account: Account | null, method: string, path: string, body?: unknown, extra: Record<string, string> = {}): Promise<TestResponse> {
    const response = await server.request(method, path, { headers: account ? as(account, extra) : extra, body });
    answers.push(response.text);
    return response;
  }
  /** A request whose answer may carry a secret (a create, a rotation): the secret is remembered, the answer kept apart. */
  async function sendSettingSecret(account: Account, method: string, path: string, body: Record<string, unknown>, extra: Record<string, string> = {}): Promise<TestResponse> {
    const response = await server.request(method, path, { headers: as(account, extra), body });
    if (typeof body.signing_secret === 'string' && body.signing_secret !== '') secrets.push(body.signing_secret);
    if (typeof response.json?.signing_secret === 'string') secrets.push(response.json.signing_secret);
    else answers.push(response.text);
    return response;
  }
  const create = (account: Account, body: Record<string, unknown>, extra: Record<string, string> = {}) => sendSettingSecret(account, 'POST', BASE, body, extra);
  const connectionEvents = async (id: string) => server.platform.eventStore.readStream(`sdkConnection-${id}`);
  async function expectRefused(response: TestResponse, status: number, code: string, field?: string): Promise<void> {
    expect(response.status, response.text).to.equal(status);
    expect(response.json.code, response.text).to.equal(code);
    if (field !== undefined) expect(response.json.field, response.text).to.equal(field);
    const written = (await response.events()).filter((event) => !event.startsWith('AccessDenied'));
    expect(written, response.text).to.deep.equal([]);
  }
  async function exampleConnector(secrets: string[], port = 0, connector?: Connector): Promise<ConnectorServer> {
    const listening = await (connector ?? createExampleConnector({ signingSecrets: secrets, now: () => clock.now().getTime(), otpDelivery: { send: async () => undefined } })).listen(port, '127.0.0.1');
    closers.push(() => listening.close());
    return listening;
  }
  async function businessTools(connectionId: string): Promise<BusinessToolDocument[]> {
    const found = await server.platform.readStore.collection<BusinessToolDocument>(BUSINESS_TOOLS).find({ where: { connection_id: connectionId }, sort: { field: 'created_at', direction: 'asc' }, limit: 100 });
    return found.items;
  }
  const defaultWorkspace = async (account: Account): Promise<string> => (await server.request('GET', '/api/v1/org/workspaces', { headers: as(account) })).json.items[0].id;

  before(async () => {
    clock = new ManualClock(new Date('2026-11-20T08:00:00.000Z'));
    const logger = createLogger('debug', { write: (line: string) => void logged.push(line) });
    const outbound = new GuardedOutboundHttp({ allowInsecureUrls: true, allowPrivateNetworks: true });
    client = new RecordingConnectorClient(new SignedConnectorClient(outbound, { timeoutMs: TIMEOUT_MS, maxResponseBytes: 1024 * 1024, clock }));
    server = await startTestServer(
      { SCRYPT_LOG_N: '12', TOKEN_TTL_SECONDS: String(30 * 24 * 3600), OUTBOUND_ALLOW_INSECURE: 'true', OUTBOUND_ALLOW_PRIVATE_NETWORKS: 'true', CONNECTOR_TIMEOUT_MS: String(TIMEOUT_MS) },
      { clock, logger, connectorClient: client },
    );
    owner = await registerOwner(server, 'sdk-conn-org');
    await liftSeatLimit(server, owner.tenant_id);
    await subscribeTo(server, owner.tenant_id, 'premium');
    admin = await joinAs(server, await registerOwner(server, 'sdk-conn-adm-home', 'sdk-conn-adm@example.com'), owner.tenant_id, 'admin');
    member = await joinAs(server, await registerOwner(server, 'sdk-conn-mem-home', 'sdk-conn-mem@example.com'), owner.tenant_id, 'member');
    outsider = await registerOwner(server, 'sdk-conn-other-org');
    await subscribeTo(server, outsider.tenant_id, 'premium');
    free = await registerOwner(server, 'sdk-conn-free-org');
    workspaceId = await defaultWorkspace(owner);
    foreignWorkspaceId = await defaultWorkspace(outsider);
    otherWorkspaceId = (await gql(server, 'mutation { create_workspace(name: "Stores") { id } }', {}, owner.token)).json.data.create_workspace.id;
  });
  after(async () => {
    for (const close of closers) await close().catch(() => undefined);
    await server.close();
  });

  describe('create, read, list, update, delete', () => {
    it('creates with a secret the platform makes, answered once; reads and lists say has_secret, never the secret', async () => {
      const created = await create(admin, { name: 'Coffee shop', webhook_url: 'https://93.184.215.16' });
      expect(created.status, created.text).to.equal(201);
      expect(created.headers.get('location')).to.equal(`${BASE}/${created.json.id}`);
      expect(created.headers.get('etag')).to.equal('"0"');
      expect(created.json).to.include({ name: 'Coffee shop', webhook_url: 'https://93.184.215.16', enabled: false, has_secret: true, status: 'untested', previous_secret_valid_until: null, tools_count: 0 });
      expect(created.json.signing_secret).to.match(/^ssec_[A-Za-z0-9_-]{43}$/);
      expect(await created.events()).to.deep.equal(['ReservationClaimed@reservation', 'SdkConnectionCreated@sdkConnection']);
      const [event] = await connectionEvents(created.json.id);
      const sealed = (event.data as { secret_sealed: string }).secret_sealed;
      expect(sealed).to.not.include(created.json.signing_secret);
      expect(server.platform.secrets.open(sealed)).to.equal(created.json.signing_secret);
      expect(event.metadata.actor).to.deep.equal({ kind: 'user', id: admin.user_id });

      const read = await send(owner, 'GET', `${BASE}/${created.json.id}`);
      expect(read.status).to.equal(200);
      expect(read.headers.get('etag')).to.equal('"0"');
      expect(read.json).to.not.have.property('signing_secret');
      const { signing_secret: _secret, ...view } = created.json;
      expect(read.json).to.deep.equal(view);
    });

    it('creates with a given secret and enabled; lists oldest first in pages', async () => {
      const secret = 'given-secret-0123456789-abcdef';
      clock.advance(1000);
      const created = await create(owner, { name: 'Roastery', webhook_url: 'https://93.184.215.17/connector', signing_secret: secret, enabled: true });
      expect(created.status, created.text).to.equal(201);
      expect(created.json).to.include({ enabled: true, signing_secret: secret });
      const first = await send(owner, 'GET', `${BASE}?limit=1`);
      expect(first.json.items.map((item: { name: string }) => item.name)).to.deep.equal(['Coffee shop']);
      const next = await send(owner, 'GET', `${BASE}?limit=1&cursor=${encodeURIComponent(first.json.next_cursor)}`);
      expect(next.json.items.map((item: { name: string }) => item.name)).to.deep.equal(['Roastery']);
      for (const item of [...first.json.items, ...next.json.items]) expect(item).to.not.have.property('signing_secret');
    });

    it('updates what is given: renames (the old name is free again), moves, enables; the same again records nothing; 412 on a stale If-Match', async () => {
      const created = await create(owner, { name: 'Bakery', webhook_url: 'https://93.184.215.18' });
      const path = `${BASE}/${created.json.id}`;
      const changed = await sendSettingSecret(owner, 'PATCH', path, { name: 'Patisserie', webhook_url: 'https://93.184.215.19', enabled: true }, { 'if-match': created.headers.get('etag')! });
      expect(changed.status, changed.text).to.equal(200);
      expect(changed.json).to.include({ name: 'Patisserie', webhook_url: 'https://93.184.215.19', enabled: true });
      expect(changed.json).to.not.have.property('signing_secret');
      expect(await changed.events()).to.deep.equal(['ReservationClaimed@reservation', 'SdkConnectionUpdated@sdkConnection', 'SdkConnectionEnabled@sdkConnection', 'ReservationReleased@reservation']);
      const again = await send(owner, 'PATCH', path, { name: 'Patisserie', enabled: true });
      expect(again.status).to.equal(200);
      expect(await again.events()).to.deep.equal([]);
      const disabled = await send(owner, 'PATCH', path, { enabled: false });
      expect(await disabled.events()).to.deep.equal(['SdkConnectionDisabled@sdkConnection']);
      await expectRefused(await send(owner, 'PATCH', path, { name: 'Stale' }, { 'if-match': created.headers.get('etag')! }), 412, 'revision_mismatch');
      const reused = await create(owner, { name: 'bakery', webhook_url: 'https://93.184.215.18' });
      expect(reused.status, reused.text).to.equal(201);
    });

    it('rotates the secret: a new one given or made, answered by that update only; the previous one keeps its grace', async () => {
      const created = await create(owner, { name: 'Rotating', webhook_url: 'https://93.184.215.20' });
      const path = `${BASE}/${created.json.id}`;
      const made = await sendSettingSecret(owner, 'PATCH', path, { signing_secret: '' });
      expect(made.status, made.text).to.equal(200);
      expect(made.json.signing_secret).to.match(/^ssec_/).and.not.equal(created.json.signing_secret);
      expect(made.json.previous_secret_valid_until).to.equal(new Date(clock.now().getTime() + 86400_000).toISOString());
      expect(await made.events()).to.deep.equal(['SdkConnectionSecretRotated@sdkConnection']);
      const events = await connectionEvents(created.json.id);
      const rotation = events[events.length - 1].data as { secret_sealed: string; previous_secret_sealed: string };
      expect(server.platform.secrets.open(rotation.secret_sealed)).to.equal(made.json.signing_secret);
      expect(server.platform.secrets.open(rotation.previous_secret_sealed)).to.equal(created.json.signing_secret);

      const given = 'a-rotated-secret-0123456789';
      const noGrace = await sendSettingSecret(owner, 'PATCH', path, { signing_secret: given, grace_seconds: 0 });
      expect(noGrace.json).to.include({ signing_secret: given, previous_secret_valid_until: null });
      const read = await send(owner, 'GET', path);
      expect(read.json).to.not.have.property('signing_secret');
      expect(read.json.secret_rotated_at).to.equal(clock.now().toISOString());
    });

    it('deletes: 204, the name is free again, then 404', async () => {
      const created = await create(owner, { name: 'Doomed', webhook_url: 'https://93.184.215.21' });
      const path = `${BASE}/${created.json.id}`;
      await expectRefused(await send(owner, 'DELETE', path, undefined, { 'if-match': '"7"' }), 412, 'revision_mismatch');
      const deleted = await send(owner, 'DELETE', path);
      expect(deleted.status).to.equal(204);
      expect(await deleted.events()).to.deep.equal(['SdkConnectionDeleted@sdkConnection', 'ReservationReleased@reservation']);
      for (const [method, suffix] of [['GET', ''], ['PATCH', ''], ['DELETE', ''], ['POST', '/test'], ['POST', '/sync-tools'], ['GET', '/flows']] as const) {
        await expectRefused(await send(owner, method, `${path}${suffix}`, method === 'GET' || method === 'DELETE' ? undefined : {}), 404, 'sdk_connection_not_found');
      }
      expect((await create(owner, { name: 'Doomed', webhook_url: 'https://93.184.215.21' })).status).to.equal(201);
    });
  });

  describe('who may call', () => {
    let id: string;
    before(async () => {
      id = (await create(owner, { name: 'Guarded', webhook_url: 'https://93.184.215.22' })).json.id;
    });
    const routes = (connectionId: string): Array<[string, string, unknown?]> => [
      ['GET', BASE],
      ['POST', BASE, { name: 'x', webhook_url: 'https://93.184.215.22' }],
      ['GET', `${BASE}/${connectionId}`],
      ['PATCH', `${BASE}/${connectionId}`, { name: 'x' }],
      ['DELETE', `${BASE}/${connectionId}`],
      ['POST', `${BASE}/${connectionId}/test`],
      ['POST', `${BASE}/${connectionId}/sync-tools`, {}],
      ['GET', `${BASE}/${connectionId}/flows`],
    ];

    it('401 without a user token, on every route', async () => {
      for (const [method, path, body] of routes(id)) {
        const response = await send(null, method, path, body);
        expect([response.status, response.json.code], `${method} ${path}`).to.deep.equal([401, 'unauthenticated']);
      }
    });

    it('403 insufficient_role for a member, on every route, recorded as a denial and nothing else', async () => {
      for (const [method, path, body] of routes(id)) {
        const response = await send(member, method, path, body);
        expect([response.status, response.json.code], `${method} ${path}`).to.deep.equal([403, 'insufficient_role']);
        expect(await response.events(), `${method} ${path}`).to.deep.equal(['AccessDenied@accessDenial']);
      }
    });

    it('403 feature_not_in_plan to create on a plan without SDK connections, naming the plan that has them', async () => {
      const response = await create(free, { name: 'Free', webhook_url: 'https://93.184.215.22' });
      expect(response.status).to.equal(403);
      expect(response.json).to.include({ code: 'feature_not_in_plan', feature: 'sdk_connections', plan: 'premium' });
      expect(await response.events()).to.deep.equal(['AccessDenied@accessDenial']);
    });

    it('404 for another organization’s connection and an unknown one, on every route of one', async () => {
      for (const [account, connectionId] of [[outsider, id], [owner, 'none']] as const) {
        for (const [method, path, body] of routes(connectionId).slice(2)) {
          await expectRefused(await send(account, method, path, body), 404, 'sdk_connection_not_found');
        }
      }
      const listed = await send(outsider, 'GET', BASE);
      expect(listed.json.items).to.deep.equal([]);
    });

    it('409 sdk_connection_name_taken for a name in use (ignoring case), on create and rename; another organization may use it', async () => {
      await expectRefused(await create(owner, { name: 'GUARDED', webhook_url: 'https://93.184.215.22' }), 409, 'sdk_connection_name_taken');
      await expectRefused(await send(owner, 'PATCH', `${BASE}/${id}`, { name: 'Coffee Shop' }), 409, 'sdk_connection_name_taken');
      expect((await create(outsider, { name: 'Guarded', webhook_url: 'https://93.184.215.22' })).status).to.equal(201);
    });
  });

  describe('bad fields', () => {
    const valid = { name: 'Valid', webhook_url: 'https://93.184.215.23' };
    const createCases: Array<[string, Record<string, unknown>, string, string]> = [
      ['no name', { name: undefined }, 'invalid_request', 'name'],
      ['an empty name', { name: '  ' }, 'invalid_request', 'name'],
      ['a name of 101 characters', { name: 'n'.repeat(101) }, 'invalid_request', 'name'],
      ['a name with a control character', { name: 'Coffee\u0007' }, 'invalid_request', 'name'],
      ['no webhook URL', { webhook_url: undefined }, 'invalid_request', 'webhook_url'],
      ['a webhook URL that is no URL', { webhook_url: 'connector' }, 'invalid_url', 'webhook_url'],
      ['an ftp webhook URL', { webhook_url: 'ftp://93.184.215.23' }, 'invalid_url', 'webhook_url'],
      ['a webhook URL with a password', { webhook_url: 'https://user:pw@93.184.215.23' }, 'invalid_url', 'webhook_url'],
      ['a number as the secret', { signing_secret: 12 }, 'invalid_request', 'signing_secret'],
      ['a short secret', { signing_secret: 'short' }, 'invalid_secret', 'signing_secret'],
      ['a secret with a space', { signing_secret: 'a secret with spaces 0123' }, 'invalid_secret', 'signing_secret'],
      ['enabled as a string', { enabled: 'yes' }, 'invalid_request', 'enabled'],
    ];
    for (const [what, change, code, field] of createCases) {
      it(`400 ${code} naming ${field} to create with ${what}`, async () => {
        await expectRefused(await create(owner, { ...valid, ...change }), 400, code, field);
      });
    }

    it('400 naming the field to update with a bad one', async () => {
      const id = (await create(owner, { name: 'Patched', webhook_url: 'https://93.184.215.23' })).json.id;
      const cases: Array<[Record<string, unknown>, string, string]> = [
        [{ name: '' }, 'invalid_request', 'name'],
        [{ webhook_url: 'mailto:x@example.com' }, 'invalid_url', 'webhook_url'],
        [{ enabled: 1 }, 'invalid_request', 'enabled'],
        [{ signing_secret: 'short' }, 'invalid_secret', 'signing_secret'],
        [{ grace_seconds: 60 }, 'grace_without_rotation', 'grace_seconds'],
        [{ signing_secret: '', grace_seconds: -1 }, 'invalid_grace', 'grace_seconds'],
        [{ signing_secret: '', grace_seconds: 1.5 }, 'invalid_grace', 'grace_seconds'],
        [{ signing_secret: '', grace_seconds: 31 * 24 * 3600 }, 'invalid_grace', 'grace_seconds'],
        [{ signing_secret: '', grace_seconds: '60' }, 'invalid_request', 'grace_seconds'],
      ];
      for (const [body, code, field] of cases) await expectRefused(await send(owner, 'PATCH', `${BASE}/${id}`, body), 400, code, field);
      await expectRefused(await send(owner, 'PATCH', `${BASE}/${id}`, { name: 'x' }, { 'if-match': '"1", "2"' }), 400, 'invalid_request', 'If-Match');
    });

    it('400 naming the field for a bad test or sync request', async () => {
      const id = (await create(owner, { name: 'Asked badly', webhook_url: 'https://93.184.215.23' })).json.id;
      await expectRefused(await send(owner, 'POST', `${BASE}/${id}/test?deep=yes`), 400, 'invalid_request', 'deep');
      await expectRefused(await send(owner, 'POST', `${BASE}/${id}/sync-tools`, { auto_register: true }), 400, 'workspace_required', 'workspace_id');
      await expectRefused(await send(owner, 'POST', `${BASE}/${id}/sync-tools`, { workspace_id: foreignWorkspaceId, auto_register: true }), 400, 'workspace_not_found', 'workspace_id');
      await expectRefused(await send(owner, 'POST', `${BASE}/${id}/sync-tools`, { workspace_id: 'none' }), 400, 'workspace_not_found', 'workspace_id');
      await expectRefused(await send(owner, 'POST', `${BASE}/${id}/sync-tools`, { workspace_id: workspaceId, auto_register: 'yes' }), 400, 'invalid_request', 'auto_register');
      await expectRefused(await send(owner, 'POST', `${BASE}/${id}/sync-tools`, { workspace_id: 7 }), 400, 'invalid_request', 'workspace_id');
    });
  });

  describe('test', () => {
    let example: ConnectorServer;
    const secret = 'example-connector-secret-0123456789';
    let id: string;
    before(async () => {
      example = await exampleConnector([secret]);
      id = (await create(owner, { name: 'Example', webhook_url: baseOf(example), signing_secret: secret })).json.id;
    });

    it('is healthy against the example connector: a pong with protocol version 1, recorded with its latency', async () => {
      const tested = await send(admin, 'POST', `${BASE}/${id}/test`);
      expect(tested.status, tested.text).to.equal(200);
      expect(tested.json).to.include({ connection_id: id, status: 'healthy', reason: null, detail: null, protocol_version: '1', sdk_version: SDK_VERSION, signed_with: 'current', deep: null });
      expect(tested.json.latency_ms).to.be.a('number');
      expect(await tested.events()).to.deep.equal(['SdkConnectionTested@sdkConnection']);
      const read = await send(admin, 'GET', `${BASE}/${id}`);
      expect(read.json.status).to.equal('healthy');
      expect(read.json.last_test).to.deep.equal({ status: 'healthy', reason: null, detail: null, latency_ms: tested.json.latency_ms, protocol_version: '1', sdk_version: SDK_VERSION, deep: null, tested_at: tested.json.tested_at });
    });

    it('deep: every conformance case of the doctor passes against the example connector, each with its hint', async () => {
      const tested = await send(owner, 'POST', `${BASE}/${id}/test?deep=true`);
      expect(tested.status, tested.text).to.equal(200);
      expect(tested.json.status).to.equal('healthy');
      const { cases, passed, total } = tested.json.deep;
      expect(cases.filter((one: { passed: boolean }) => !one.passed), JSON.stringify(cases)).to.deep.equal([]);
      expect(total).to.equal(cases.length).and.to.be.greaterThan(10);
      expect(passed).to.equal(total);
      for (const one of cases) expect(one.hint).to.be.a('string').and.not.equal('');
      expect(cases.map((one: { name: string }) => one.name)).to.include.members(['signed ping answered by pong', 'wrong secret refused with 401', 'capabilities.list shape']);
      const events = await connectionEvents(id);
      expect((events[events.length - 1].data as { deep: unknown }).deep).to.deep.equal({ passed: total, total });
    });

    it('deep against a connector that is no connector: the cases fail with their hints, the test is degraded, nothing crashes', async () => {
      const garbage = await rawServer((_request, response) => response.end('garbage'));
      closers.push(garbage.close);
      const broken = (await create(owner, { name: 'Deep garbage', webhook_url: garbage.url })).json.id;
      const tested = await send(owner, 'POST', `${BASE}/${broken}/test?deep=true`);
      expect(tested.status, tested.text).to.equal(200);
      expect(tested.json).to.include({ status: 'degraded', reason: 'bad_response' });
      expect(tested.json.deep.passed).to.equal(0);
      expect(tested.json.deep.cases[0]).to.include({ name: 'signed ping answered by pong', passed: false });
      expect(tested.json.deep.cases[0].hint).to.include('/svc');
    });

    it('is degraded with the right reason, and answered, for a connector that answers garbage, hangs past the timeout, hangs up or is gone', async () => {
      const garbage = await rawServer((_request, response) => {
        response.writeHead(200, { 'content-type': 'application/json' });
        response.end('{"type": "pong", "protocol_version": ');
      });
      const wrongType = await rawServer((_request, response) => {
        response.writeHead(200, { 'content-type': 'application/json' });
        response.end(JSON.stringify({ type: 'result', output: {} }));
      });
      const otherProtocol = await rawServer((_request, response) => {
        response.writeHead(200, { 'content-type': 'application/json' });
        response.end(JSON.stringify({ type: 'pong', protocol_version: '2' }));
      });
      const hanging = await rawServer(() => undefined);
      const hangingUp = await rawServer((request) => request.socket.destroy());
      const gone = await rawServer(() => undefined);
      await gone.close();
      closers.push(garbage.close, wrongType.close, otherProtocol.close, hanging.close, hangingUp.close);
      const cases: Array<[string, string, string]> = [
        ['Garbage', garbage.url, 'bad_response'],
        ['Wrong type', wrongType.url, 'bad_response'],
        ['Other protocol', otherProtocol.url, 'protocol_mismatch'],
        ['Hanging', hanging.url, 'timeout'],
        ['Hanging up', hangingUp.url, 'unreachable'],
        ['Gone', gone.url, 'unreachable'],
      ];
      for (const [name, url, reason] of cases) {
        const connection = (await create(owner, { name, webhook_url: url })).json.id;
        const tested = await send(owner, 'POST', `${BASE}/${connection}/test`);
        expect(tested.status, `${name}: ${tested.text}`).to.equal(200);
        expect(tested.json, name).to.include({ status: 'degraded', reason });
        expect(tested.json.detail, name).to.be.a('string').and.not.equal('');
        expect(await tested.events(), name).to.deep.equal(['SdkConnectionTested@sdkConnection']);
        expect((await send(owner, 'GET', `${BASE}/${connection}`)).json.status, name).to.equal('degraded');
      }
      expect(logged.filter((line) => /"level":50/.test(line)), 'no unexpected error logged').to.deep.equal([]);
    });

    it('keeps a rotated connection healthy through the grace period, is degraded invalid_signature after it, and healthy again once the connector has the new secret', async () => {
      const oldSecret = 'rotation-old-secret-0123456789';
      const onOldSecret = await exampleConnector([oldSecret]);
      const connection = (await create(owner, { name: 'Rotation', webhook_url: baseOf(onOldSecret), signing_secret: oldSecret })).json.id;
      const path = `${BASE}/${connection}`;
      expect((await send(owner, 'POST', `${path}/test`)).json).to.include({ status: 'healthy', signed_with: 'current' });

      const rotated = await sendSettingSecret(owner, 'PATCH', path, { signing_secret: '', grace_seconds: 60 });
      const newSecret = rotated.json.signing_secret as string;
      expect(rotated.json.previous_secret_valid_until).to.equal(new Date(clock.now().getTime() + 60_000).toISOString());

      const sent = client.sent.length;
      const during = await send(owner, 'POST', `${path}/test`);
      expect(during.json).to.include({ status: 'healthy', reason: null, signed_with: 'previous' });
      expect(during.json.detail).to.include('previous signing secret');
      // Signed with the new secret first, refused, then once more with the previous one.
      expect(client.sent.slice(sent).map((call) => call.secret)).to.deep.equal([newSecret, oldSecret]);

      clock.advance(59_000);
      expect((await send(owner, 'POST', `${path}/test`)).json).to.include({ status: 'healthy', signed_with: 'previous' });
      clock.advance(2_000);
      const after = await send(owner, 'POST', `${path}/test`);
      expect(after.json).to.include({ status: 'degraded', reason: 'invalid_signature', signed_with: 'current' });
      expect((await send(owner, 'GET', path)).json).to.include({ status: 'degraded', previous_secret_valid_until: null });

      // The connector is redeployed with the new secret. On a new port: a restart on the same one
      // races the platform's kept-alive connection to the old process (the first call may find
      // it closed), which is not what this is about.
      await onOldSecret.close();
      const onNewSecret = await exampleConnector([newSecret]);
      await send(owner, 'PATCH', path, { webhook_url: baseOf(onNewSecret) });
      const restored = await send(owner, 'POST', `${path}/test`);
      expect(restored.json).to.include({ status: 'healthy', reason: null, detail: null, signed_with: 'current' });
      expect((await send(owner, 'GET', path)).json.status).to.equal('healthy');
    });

    it('a connector given both secrets during the rotation answers the new one at once', async () => {
      const oldSecret = 'both-old-secret-0123456789';
      const newSecret = 'both-new-secret-0123456789';
      const both = await exampleConnector([newSecret, oldSecret]);
      const connection = (await create(owner, { name: 'Both secrets', webhook_url: baseOf(both), signing_secret: oldSecret })).json.id;
      await sendSettingSecret(owner, 'PATCH', `${BASE}/${connection}`, { signing_secret: newSecret, grace_seconds: 600 });
      const sent = client.sent.length;
      expect((await send(owner, 'POST', `${BASE}/${connection}/test`)).json).to.include({ status: 'healthy', signed_with: 'current', detail: null });
      expect(client.sent.slice(sent).map((call) => call.secret)).to.deep.equal([newSecret]);
    });
  });

  describe('sync-tools', () => {
    const secret = 'sync-connector-secret-0123456789';
    let example: ConnectorServer;
    let id: string;
    before(async () => {
      example = await exampleConnector([secret]);
      id = (await create(owner, { name: 'Synced', webhook_url: baseOf(example), signing_secret: secret, enabled: true })).json.id;
    });

    it('records what capabilities.list advertises: tools, flows, events, organization metadata; GET flows lists the flows', async () => {
      const synced = await send(admin, 'POST', `${BASE}/${id}/sync-tools`, {});
      expect(synced.status, synced.text).to.equal(200);
      expect(synced.json).to.include({ connection_id: id, via: 'capabilities.list', sdk_version: SDK_VERSION, flows_count: 2, events_count: 2, registration: null });
      expect(synced.json.tools.map((tool: { name: string; chat: boolean }) => [tool.name, tool.chat])).to.deep.equal([
        ['search_products', true],
        ['order_status', true],
        ['approve_refund', false],
        ['notify_warehouse', false],
      ]);
      expect(synced.json.organization.tasks).to.deep.equal([{ id: 'review_refund', label: 'Review a refund request', priority: 'high' }]);
      expect(await synced.events()).to.deep.equal(['SdkConnectionToolsSynced@sdkConnection']);
      const flows = await send(admin, 'GET', `${BASE}/${id}/flows`);
      expect(flows.status).to.equal(200);
      expect(flows.json.next_cursor).to.equal(null);
      expect(flows.json.items.map((flow: { id: string }) => flow.id)).to.deep.equal(['prepare_order', 'order_delay_follow_up']);
      const read = await send(admin, 'GET', `${BASE}/${id}`);
      expect(read.json).to.include({ tools_count: 4, flows_count: 2, events_count: 2 });
      expect(read.json.last_sync).to.deep.include({ via: 'capabilities.list', synced_at: synced.json.synced_at });
    });

    it('with auto_register, registers each chat tool as a business tool of the workspace (source sdk, risk write, the connector’s schema)', async () => {
      const synced = await send(owner, 'POST', `${BASE}/${id}/sync-tools`, { workspace_id: workspaceId, auto_register: true });
      expect(synced.status, synced.text).to.equal(200);
      const { registration } = synced.json;
      expect(registration.created.map((tool: { name: string }) => tool.name)).to.deep.equal(['search_products', 'order_status']);
      expect(registration).to.deep.include({ workspace_id: workspaceId, updated: [], disabled: [], unchanged: [], skipped: [] });
      expect(await synced.events()).to.deep.equal([
        'SdkConnectionToolsSynced@sdkConnection',
        'ReservationClaimed@reservation',
        'ToolCreated@tool',
        'ReservationClaimed@reservation',
        'ToolCreated@tool',
      ]);
      const tools = await businessTools(id);
      expect(tools.map((tool) => [tool.name, tool.workspace_id, tool.source, tool.offered_in_chat])).to.have.deep.members([
        ['search_products', workspaceId, 'sdk', true],
        ['order_status', workspaceId, 'sdk', true],
      ]);
      const search = tools.find((tool) => tool.name === 'search_products') as BusinessToolDocument;
      expect(search.definition).to.deep.include({ method: 'POST', path: '/svc', parameters: [], chat: true, risk: 'write', enabled: true });
      expect(search.definition.description).to.equal('Search the product catalog by keywords; optionally filter by category and stock.');
      expect(search.definition.input_schema).to.deep.include({ type: 'object', required: ['query'] });
      const [created] = (await server.platform.eventStore.readStream(`tool-${search.id}`)) as Array<{ data: { target: unknown } }>;
      expect(created.data.target).to.deep.equal({ kind: 'sdk_connection', connection_id: id, tool: 'search_products' });
      // The workspace's tools, as its readers list them.
      const listed = await send(admin, 'GET', `/api/v1/workspaces/${workspaceId}/tools?source=sdk`);
      expect(listed.status, listed.text).to.equal(200);
      expect(listed.json.items.map((tool: { name: string; connection_id: string; integration_id: null }) => [tool.name, tool.connection_id, tool.integration_id])).to.have.deep.members([
        ['search_products', id, null],
        ['order_status', id, null],
      ]);

      const again = await send(owner, 'POST', `${BASE}/${id}/sync-tools`, { workspace_id: workspaceId, auto_register: true });
      expect(again.json.registration.unchanged.map((tool: { name: string }) => tool.name)).to.have.members(['search_products', 'order_status']);
      expect(await again.events()).to.deep.equal(['SdkConnectionToolsSynced@sdkConnection']);
    });

    it('a later sync follows the connector: changed tools are updated, gone ones disabled, new ones registered under a name the model can call', async () => {
      // The connector is redeployed (at a new address, see the rotation test): order_status
      // reworded, search_products gone, a new tool.
      await example.close();
      const changed = createConnector({ signingSecret: secret, now: () => clock.now().getTime() });
      changed.tool('order_status', { description: 'Where an order is.', chat: true, input_schema: { type: 'object', properties: { order_id: { type: 'string' } }, required: ['order_id'] }, handler: () => ({ output: {} }) });
      changed.tool('store.hours', { description: 'Opening hours.', handler: () => ({ output: {} }) });
      changed.tool('approve_refund', { description: 'Still kept off chat.', chat: false, handler: () => ({ output: {} }) });
      example = await exampleConnector([], 0, changed);
      await send(owner, 'PATCH', `${BASE}/${id}`, { webhook_url: baseOf(example) });
      const synced = await send(owner, 'POST', `${BASE}/${id}/sync-tools`, { workspace_id: workspaceId, auto_register: true });
      expect(synced.status, synced.text).to.equal(200);
      const { registration } = synced.json;
      expect(registration.updated).to.deep.equal([{ id: registration.updated[0].id, name: 'order_status', tool: 'order_status' }]);
      expect(registration.disabled.map((tool: { name: string }) => tool.name)).to.deep.equal(['search_products']);
      expect(registration.created.map((tool: { name: string; tool: string }) => [tool.name, tool.tool])).to.deep.equal([['store_hours', 'store.hours']]);
      const tools = await businessTools(id);
      const byName = Object.fromEntries(tools.map((tool) => [tool.name, tool]));
      expect(byName.order_status.definition.description).to.equal('Where an order is.');
      expect(byName.order_status.definition.input_schema).to.deep.equal({ type: 'object', properties: { order_id: { type: 'string' } }, required: ['order_id'] });
      expect(byName.search_products.definition.enabled).to.equal(false);
      expect(byName.search_products.offered_in_chat).to.equal(false);
      expect(byName.store_hours.definition.input_schema).to.deep.equal({ type: 'object', properties: {} });
      const events = await synced.events();
      expect(events.filter((event) => event === 'ToolUpdated@tool')).to.have.length(2);
      expect(events.filter((event) => event === 'ToolCreated@tool')).to.have.length(1);

      // Gone it stays disabled, and a sync never switches a tool back on that a person may have switched off.
      const again = await send(owner, 'POST', `${BASE}/${id}/sync-tools`, { workspace_id: workspaceId, auto_register: true });
      expect(again.json.registration).to.deep.include({ created: [], updated: [], disabled: [] });
      expect(await again.events()).to.deep.equal(['SdkConnectionToolsSynced@sdkConnection']);

      // A person's choices stand: a risk raised stays, a tool deleted is not registered again.
      expect((await send(owner, 'PATCH', `/api/v1/tools/${byName.order_status.id}`, { risk: 'approval_required' })).status).to.equal(200);
      expect((await send(owner, 'DELETE', `/api/v1/tools/${byName.store_hours.id}`)).status).to.equal(204);
      const afterEdits = await send(owner, 'POST', `${BASE}/${id}/sync-tools`, { workspace_id: workspaceId, auto_register: true });
      expect(afterEdits.json.registration.skipped).to.deep.equal([{ tool: 'store.hours', code: 'tool_deleted', reason: 'a person deleted this tool; a sync does not register it again' }]);
      expect(afterEdits.json.registration.unchanged.map((tool: { name: string }) => tool.name)).to.deep.equal(['order_status']);
      expect((await send(owner, 'GET', `/api/v1/tools/${byName.order_status.id}`)).json.risk).to.equal('approval_required');
    });

    it('registers in another workspace separately; a taken name gets a number', async () => {
      const synced = await send(owner, 'POST', `${BASE}/${id}/sync-tools`, { workspace_id: otherWorkspaceId, auto_register: true });
      expect(synced.status, synced.text).to.equal(200);
      expect(synced.json.registration.created.map((tool: { name: string }) => tool.name)).to.deep.equal(['order_status', 'store_hours']);
      // A second connection offering a tool of the same name in the same workspace: it gets `_2`.
      const twinSecret = 'twin-connector-secret-0123456789';
      const twin = await exampleConnector([twinSecret]);
      const twinId = (await create(owner, { name: 'Twin', webhook_url: baseOf(twin), signing_secret: twinSecret })).json.id;
      const twinSync = await send(owner, 'POST', `${BASE}/${twinId}/sync-tools`, { workspace_id: otherWorkspaceId, auto_register: true });
      expect(twinSync.json.registration.created.map((tool: { name: string; tool: string }) => [tool.name, tool.tool])).to.deep.equal([
        ['search_products', 'search_products'],
        ['order_status_2', 'order_status'],
      ]);
    });

    it('429 quota_exceeded with the numbers when the new tools pass the plan’s business tools limit, and nothing is recorded', async () => {
      const quotaSecret = 'quota-connector-secret-0123456789';
      const connector = await exampleConnector([quotaSecret]);
      const connection = (await create(owner, { name: 'Over quota', webhook_url: baseOf(connector), signing_secret: quotaSecret })).json.id;
      const { used } = await checkQuota({ readStore: server.platform.readStore, clock }, owner.tenant_id, 'business_tools');
      await setQuotaOverrides(server.platform.identity, 'test-admin', owner.tenant_id, { overrides: { users: null, business_tools: used + 1 }, reason: 'test suite' }, systemContext('test'));
      const refused = await send(owner, 'POST', `${BASE}/${connection}/sync-tools`, { workspace_id: workspaceId, auto_register: true });
      expect(refused.status, refused.text).to.equal(429);
      expect(refused.json).to.include({ code: 'quota_exceeded', quota: 'business_tools', limit: used + 1, used });
      expect(await refused.events()).to.deep.equal([]);
      await setQuotaOverrides(server.platform.identity, 'test-admin', owner.tenant_id, { overrides: { users: null }, reason: 'test suite' }, systemContext('test'));
    });

    it('falls back to tools.list for a connector that does not know capabilities.list', async () => {
      const legacy = await rawServer((request, response) => {
        let body = '';
        request.on('data', (chunk: Buffer) => (body += chunk.toString()));
        request.on('end', () => {
          const type = (JSON.parse(body) as { type: string }).type;
          response.writeHead(200, { 'content-type': 'application/json' });
          if (type === 'tools.list') response.end(JSON.stringify({ type: 'tools.list', tools: [{ name: 'legacy_lookup', description: 'An old tool.', input_schema: { type: 'object', properties: {} } }] }));
          else response.end(JSON.stringify({ type: 'error', code: 'invalid_request', message: `unknown request type ${type}` }));
        });
      });
      closers.push(legacy.close);
      const connection = (await create(owner, { name: 'Legacy', webhook_url: legacy.url })).json.id;
      const synced = await send(owner, 'POST', `${BASE}/${connection}/sync-tools`, { workspace_id: workspaceId, auto_register: true });
      expect(synced.status, synced.text).to.equal(200);
      expect(synced.json).to.include({ via: 'tools.list', flows_count: 0, events_count: 0, organization: null });
      expect(synced.json.registration.created.map((tool: { name: string }) => tool.name)).to.deep.equal(['legacy_lookup']);
      expect((await send(owner, 'GET', `${BASE}/${connection}/flows`)).json.items).to.deep.equal([]);
    });

    it('502 connector_unavailable with the reason for a connector that gives no list, recorded as a failed sync', async () => {
      const gone = await rawServer(() => undefined);
      await gone.close();
      const connection = (await create(owner, { name: 'Unreachable', webhook_url: gone.url })).json.id;
      const failed = await send(owner, 'POST', `${BASE}/${connection}/sync-tools`, { workspace_id: workspaceId, auto_register: true });
      expect(failed.status, failed.text).to.equal(502);
      expect(failed.json).to.include({ code: 'connector_unavailable', reason: 'unreachable' });
      expect(await failed.events()).to.deep.equal(['SdkConnectionSyncFailed@sdkConnection']);
      const read = await send(owner, 'GET', `${BASE}/${connection}`);
      expect(read.json.last_sync_failure).to.include({ reason: 'unreachable' });
      expect(read.json.last_sync).to.equal(null);

      const wrongSecret = await exampleConnector(['some-other-secret-0123456789']);
      const refusing = (await create(owner, { name: 'Wrong secret', webhook_url: baseOf(wrongSecret) })).json.id;
      const refused = await send(owner, 'POST', `${BASE}/${refusing}/sync-tools`, {});
      expect([refused.status, refused.json.reason]).to.deep.equal([502, 'invalid_signature']);
    });

    it('deleting the connection deletes its business tools in every workspace and frees their names', async () => {
      const before = await businessTools(id);
      expect(before.length).to.be.greaterThan(0);
      const deleted = await send(owner, 'DELETE', `${BASE}/${id}`);
      expect(deleted.status).to.equal(204);
      const events = await deleted.events();
      expect(events.filter((event) => event === 'ToolDeleted@tool')).to.have.length(before.length);
      expect(events.slice(-2)).to.deep.equal(['SdkConnectionDeleted@sdkConnection', 'ReservationReleased@reservation']);
      expect(await businessTools(id)).to.deep.equal([]);
    });
  });

  describe('a deployment with the default outbound rules', () => {
    let strict: TestServer;
    let strictOwner: Account;
    before(async () => {
      strict = await startTestServer({ SCRYPT_LOG_N: '12' });
      strictOwner = await registerOwner(strict, 'sdk-conn-strict');
      await subscribeTo(strict, strictOwner.tenant_id, 'premium');
    });
    after(() => strict.close());

    it('refuses a private, loopback, metadata or plain-http webhook URL, naming webhook_url', async () => {
      for (const [url, code] of [
        ['https://127.0.0.1:8443', 'private_address'],
        ['https://10.1.2.3', 'private_address'],
        ['https://169.254.169.254/latest', 'private_address'],
        ['https://[::1]', 'private_address'],
        ['http://93.184.215.24', 'insecure_url'],
      ] as const) {
        const response = await strict.request('POST', BASE, { headers: { authorization: `Bearer ${strictOwner.token}` }, body: { name: 'Private', webhook_url: url } });
        expect([response.status, response.json.code, response.json.field], url).to.deep.equal([400, code, 'webhook_url']);
        expect(await response.events(), url).to.deep.equal([]);
      }
    });
  });

  describe('secrets and the audit log, after everything above', () => {
    it('no signing secret is in any other answer, in any stored event, or in any log line', async () => {
      expect(secrets.length).to.be.greaterThan(10);
      const events = await server.platform.storedEvents.readAll({ fromPosition: 0, maxCount: 1_000_000 });
      const stored = events.map((event) => JSON.stringify(event));
      for (const secret of secrets) {
        expect(answers.filter((text) => text.includes(secret)), 'answers').to.deep.equal([]);
        expect(stored.filter((text) => text.includes(secret)), 'events').to.deep.equal([]);
        expect(logged.filter((line) => line.includes(secret)), 'logs').to.deep.equal([]);
      }
    });

    it('puts every event in an audit log with its actor, every test and sync among them', async () => {
      const seen = await expectEveryEventAudited(server);
      expect([...seen]).to.include.members([
        'SdkConnectionCreated',
        'SdkConnectionUpdated',
        'SdkConnectionSecretRotated',
        'SdkConnectionEnabled',
        'SdkConnectionDisabled',
        'SdkConnectionTested',
        'SdkConnectionToolsSynced',
        'SdkConnectionSyncFailed',
        'SdkConnectionDeleted',
        'ToolCreated',
        'ToolUpdated',
        'ToolDeleted',
      ]);
    });
  });
});
