// Integrations over HTTP (spec 4.12, issue #12 point 1): every route's success, 401, 403 for a
// member whose team only reads the workspace, 404 for another tenant's and an ungranted
// workspace, 400 per bad field, 412 on a stale If-Match. The deployment allows neither plain
// http nor private addresses (the defaults); public addresses are IP literals. No credential
// given is ever answered or stored in clear in any event.

import { expect } from 'chai';
import { type Account } from '../support/identity';
import { type TestResponse, type TestServer, startTestServer } from '../support/server';
import { castWorkspaceRoles } from '../support/workspace-cast';

const BASE = 'https://93.184.215.16/api';

describe('integrations (spec 4.12)', () => {
  let server: TestServer;
  let owner: Account;
  let writer: Account;
  let reader: Account;
  let stranger: Account;
  let outsider: Account;
  let workspaceId: string;
  let otherWorkspaceId: string;
  let foreignWorkspaceId: string;
  /** Every credential sent: none may show up in an answer or an event. */
  const secrets: string[] = [];
  const answers: string[] = [];

  const as = (account: Account, extra: Record<string, string> = {}) => ({ authorization: `Bearer ${account.token}`, ...extra });
  const send = async (account: Account | null, method: string, path: string, body?: unknown, extra: Record<string, string> = {}): Promise<TestResponse> => {
    const response = await server.request(method, path, { headers: account ? as(account, extra) : extra, body });
    answers.push(response.text);
    return response;
  };
  const credential = (label: string): string => {
    const value = `${label}-Secret-${secrets.length}-0123456789`;
    secrets.push(value);
    return value;
  };
  const create = (account: Account, body: Record<string, unknown>, workspace = workspaceId) => send(account, 'POST', `/api/v1/workspaces/${workspace}/integrations`, body);
  /** The data of the integration's last stored event. */
  const lastData = async (id: string): Promise<Record<string, unknown>> => {
    const events = await server.platform.eventStore.readStream(`integration-${id}`);
    return events[events.length - 1].data as Record<string, unknown>;
  };
  async function expectRefused(response: TestResponse, status: number, code: string, field?: string): Promise<void> {
    expect(response.status, response.text).to.equal(status);
    expect(response.json.code, response.text).to.equal(code);
    if (field !== undefined) expect(response.json.field, response.text).to.equal(field);
    expect((await response.events()).filter((event) => event.startsWith('Integration'))).to.deep.equal([]);
  }

  before(async () => {
    server = await startTestServer({ SCRYPT_LOG_N: '12' });
    ({ owner, writer, reader, stranger, outsider, workspaceId, otherWorkspaceId, foreignWorkspaceId } = await castWorkspaceRoles(server, 'integrations'));
  });
  after(() => server.close());

  describe('create, read, list, update, delete', () => {
    it('creates one integration per auth kind, answering has_credentials and never the secret', async () => {
      const auths = [
        [{ kind: 'none' }, null],
        [{ kind: 'api_key', in: 'header', name: 'X-Api-Key' }, credential('ApiKey')],
        [{ kind: 'api_key', in: 'query', name: 'api_key' }, credential('QueryKey')],
        [{ kind: 'bearer' }, credential('Bearer')],
        [{ kind: 'basic', username: 'shop' }, credential('Password')],
        [{ kind: 'oauth2_client_credentials', token_url: 'https://93.184.215.17/oauth/token', client_id: 'platform', scopes: ['orders:read'] }, credential('ClientSecret')],
      ] as const;
      for (const [index, [auth, secret]] of auths.entries()) {
        const body = { name: `API ${index}`, base_url: BASE, auth, default_headers: { Accept: 'application/json' }, ...(secret === null ? {} : { credentials: secret }) };
        const created = await create(writer, body);
        expect(created.status, created.text).to.equal(201);
        expect(created.headers.get('location')).to.equal(`/api/v1/integrations/${created.json.id}`);
        expect(created.headers.get('etag')).to.be.a('string');
        expect(created.json).to.include({ workspace_id: workspaceId, name: `API ${index}`, base_url: BASE, has_credentials: secret !== null });
        expect(created.json.auth).to.deep.equal(auth);
        expect(created.json).to.not.have.property('credentials');
        expect(await created.events()).to.deep.equal(['IntegrationCreated@integration']);
        const sealed = (await lastData(created.json.id)).credentials_sealed as string | null;
        if (secret === null) expect(sealed).to.equal(null);
        else {
          expect(sealed).to.be.a('string').and.not.include(secret);
          expect(server.platform.secrets.open(sealed!)).to.equal(secret);
        }
      }
      const listed = await send(reader, 'GET', `/api/v1/workspaces/${workspaceId}/integrations?limit=3`);
      expect(listed.status).to.equal(200);
      expect(listed.json.items.map((item: { name: string }) => item.name)).to.deep.equal(['API 0', 'API 1', 'API 2']);
      const next = await send(reader, 'GET', `/api/v1/workspaces/${workspaceId}/integrations?cursor=${encodeURIComponent(listed.json.next_cursor)}`);
      expect(next.json.items.map((item: { name: string }) => item.name)).to.deep.equal(['API 3', 'API 4', 'API 5']);
      const one = await send(reader, 'GET', `/api/v1/integrations/${listed.json.items[1].id}`);
      expect(one.status).to.equal(200);
      expect(one.json).to.deep.equal(listed.json.items[1]);
    });

    it('updates: omitted credentials are kept, new ones replace them, null removes them; a new auth kind needs its own; the same again records nothing', async () => {
      const created = await create(owner, { name: 'Orders', base_url: BASE, auth: { kind: 'bearer' }, credentials: credential('First') });
      const path = `/api/v1/integrations/${created.json.id}`;
      const renamed = await send(owner, 'PATCH', path, { name: 'Order API', default_headers: { 'X-Shop': 'north' } }, { 'if-match': created.headers.get('etag')! });
      expect(renamed.status, renamed.text).to.equal(200);
      expect(renamed.json).to.include({ name: 'Order API', has_credentials: true });
      expect(renamed.json.default_headers).to.deep.equal({ 'X-Shop': 'north' });
      const events = await server.platform.eventStore.readStream(`integration-${created.json.id}`);
      expect(events[1].data).to.include({ credentials_change: 'kept', credentials_sealed: (events[0].data as { credentials_sealed: string }).credentials_sealed });
      const again = await send(owner, 'PATCH', path, { name: 'Order API' });
      expect(again.status).to.equal(200);
      expect(await again.events()).to.deep.equal([]);
      await expectRefused(await send(owner, 'PATCH', path, { auth: { kind: 'basic', username: 'shop' } }), 400, 'credentials_required', 'credentials');
      const rotated = await send(owner, 'PATCH', path, { auth: { kind: 'basic', username: 'shop' }, credentials: credential('Second') });
      expect(rotated.json.auth).to.deep.equal({ kind: 'basic', username: 'shop' });
      expect(await lastData(created.json.id)).to.include({ credentials_change: 'given' });
      const removed = await send(owner, 'PATCH', path, { credentials: null });
      expect(removed.json.has_credentials).to.equal(false);
      expect(await lastData(created.json.id)).to.include({ credentials_change: 'removed', credentials_sealed: null });
      // PUT, which earlier releases answered, does the same.
      const put = await send(owner, 'PUT', path, { name: 'Orders (PUT)' });
      expect(put.status, put.text).to.equal(200);
      expect(put.json).to.include({ name: 'Orders (PUT)', has_credentials: false });
      expect(await lastData(created.json.id)).to.include({ name: 'Orders (PUT)' });
    });

    it('412 on a stale If-Match for PATCH, PUT and DELETE; DELETE removes it (then 404)', async () => {
      const created = await create(writer, { name: 'Stale', base_url: BASE, auth: { kind: 'none' } });
      const path = `/api/v1/integrations/${created.json.id}`;
      await send(writer, 'PATCH', path, { name: 'Fresh' });
      await expectRefused(await send(writer, 'PATCH', path, { name: 'Old' }, { 'if-match': created.headers.get('etag')! }), 412, 'revision_mismatch');
      await expectRefused(await send(writer, 'PUT', path, { name: 'Old' }, { 'if-match': created.headers.get('etag')! }), 412, 'revision_mismatch');
      await expectRefused(await send(writer, 'DELETE', path, undefined, { 'if-match': created.headers.get('etag')! }), 412, 'revision_mismatch');
      const deleted = await send(writer, 'DELETE', path);
      expect(deleted.status).to.equal(204);
      expect(await deleted.events()).to.deep.equal(['IntegrationDeleted@integration']);
      await expectRefused(await send(writer, 'GET', path), 404, 'integration_not_found');
      await expectRefused(await send(writer, 'DELETE', path), 404, 'integration_not_found');
      const listed = await send(writer, 'GET', `/api/v1/workspaces/${workspaceId}/integrations?limit=1000`);
      expect(listed.json.items.map((item: { id: string }) => item.id)).to.not.include(created.json.id);
    });
  });

  describe('who may call', () => {
    let integrationId: string;
    before(async () => {
      integrationId = (await create(owner, { name: 'Guarded', base_url: BASE, auth: { kind: 'none' } })).json.id;
    });

    it('401 without a user token, on every route', async () => {
      for (const [method, path, body] of [
        ['GET', `/api/v1/workspaces/${workspaceId}/integrations`],
        ['POST', `/api/v1/workspaces/${workspaceId}/integrations`, { name: 'x', base_url: BASE, auth: { kind: 'none' } }],
        ['GET', `/api/v1/integrations/${integrationId}`],
        ['PATCH', `/api/v1/integrations/${integrationId}`, { name: 'x' }],
        ['DELETE', `/api/v1/integrations/${integrationId}`],
      ] as const) {
        const response = await send(null, method, path, body);
        expect([response.status, response.json.code], `${method} ${path}`).to.deep.equal([401, 'unauthenticated']);
      }
    });

    it('403 workspace_read_only for a member whose team only reads the workspace, on every change; reading is allowed', async () => {
      await expectRefused(await create(reader, { name: 'x', base_url: BASE, auth: { kind: 'none' } }), 403, 'workspace_read_only');
      await expectRefused(await send(reader, 'PATCH', `/api/v1/integrations/${integrationId}`, { name: 'x' }), 403, 'workspace_read_only');
      await expectRefused(await send(reader, 'DELETE', `/api/v1/integrations/${integrationId}`), 403, 'workspace_read_only');
      expect((await send(reader, 'GET', `/api/v1/integrations/${integrationId}`)).status).to.equal(200);
    });

    it('404 for a workspace not granted, another tenant’s, and their integrations', async () => {
      const internal = (await create(owner, { name: 'Internal', base_url: BASE, auth: { kind: 'none' } }, otherWorkspaceId)).json.id;
      await expectRefused(await send(stranger, 'GET', `/api/v1/workspaces/${workspaceId}/integrations`), 404, 'workspace_not_found');
      await expectRefused(await create(stranger, { name: 'x', base_url: BASE, auth: { kind: 'none' } }), 404, 'workspace_not_found');
      await expectRefused(await send(writer, 'GET', `/api/v1/workspaces/${otherWorkspaceId}/integrations`), 404, 'workspace_not_found');
      await expectRefused(await create(owner, { name: 'x', base_url: BASE, auth: { kind: 'none' } }, foreignWorkspaceId), 404, 'workspace_not_found');
      for (const [account, id] of [[stranger, integrationId], [writer, internal], [outsider, integrationId], [owner, 'none']] as const) {
        await expectRefused(await send(account, 'GET', `/api/v1/integrations/${id}`), 404, 'integration_not_found');
        await expectRefused(await send(account, 'PATCH', `/api/v1/integrations/${id}`, { name: 'x' }), 404, 'integration_not_found');
        await expectRefused(await send(account, 'DELETE', `/api/v1/integrations/${id}`), 404, 'integration_not_found');
      }
    });
  });

  describe('bad fields', () => {
    const valid = { name: 'Valid', base_url: BASE, auth: { kind: 'none' } };
    const cases: Array<[string, Record<string, unknown>, string, string]> = [
      ['an unknown auth kind', { auth: { kind: 'magic' } }, 'invalid_request', 'auth'],
      ['an api key without its place', { auth: { kind: 'api_key', name: 'X-Key' } }, 'invalid_request', 'auth.in'],
      ['a plain http base URL', { base_url: 'http://93.184.215.16/api' }, 'insecure_url', 'base_url'],
      ['a loopback base URL', { base_url: 'https://127.0.0.1/api' }, 'private_address', 'base_url'],
      ['a metadata base URL', { base_url: 'https://169.254.169.254/latest' }, 'private_address', 'base_url'],
      ['a base URL that is no URL', { base_url: 'orders' }, 'invalid_url', 'base_url'],
      ['a private token URL', { auth: { kind: 'oauth2_client_credentials', token_url: 'https://10.0.0.1/token', client_id: 'c', scopes: [] } }, 'private_address', 'auth.token_url'],
      ['a bad scope', { auth: { kind: 'oauth2_client_credentials', token_url: 'https://93.184.215.17/token', client_id: 'c', scopes: ['a b'] } }, 'invalid_auth', 'auth.scopes.0'],
      ['an api key header name with a space', { auth: { kind: 'api_key', in: 'header', name: 'X Key' } }, 'invalid_header', 'auth.name'],
      ['a basic user name with a colon', { auth: { kind: 'basic', username: 'a:b' } }, 'invalid_auth', 'auth.username'],
      ['a default header name with a colon', { default_headers: { 'X:Bad': 'v' } }, 'invalid_header', 'default_headers.X:Bad'],
      ['a default header value with a line break', { default_headers: { 'X-Shop': 'a\r\nHost: evil' } }, 'invalid_header', 'default_headers.X-Shop'],
      ['Authorization as a default header', { default_headers: { Authorization: 'Bearer x' } }, 'reserved_header', 'default_headers.Authorization'],
      ['too many default headers', { default_headers: Object.fromEntries(Array.from({ length: 21 }, (_, i) => [`X-H${i}`, 'v'])) }, 'invalid_header', 'default_headers'],
      ['an empty name', { name: '  ' }, 'invalid_text', 'name'],
      ['credentials for auth none', { credentials: 'secret-for-nothing' }, 'invalid_credentials', 'credentials'],
      ['empty credentials', { auth: { kind: 'bearer' }, credentials: '' }, 'invalid_credentials', 'credentials'],
    ];
    for (const [label, change, code, field] of cases) {
      it(`400 for ${label}, on create and on update`, async () => {
        const created = await create(owner, { ...valid, ...change });
        expect(created.status, created.text).to.equal(400);
        expect(created.json.field, created.text).to.equal(field);
        if (code !== 'invalid_text') expect(created.json.code, created.text).to.equal(code);
        expect(await created.events()).to.deep.equal([]);
        const id = (await create(owner, valid)).json.id;
        const updated = await send(owner, 'PATCH', `/api/v1/integrations/${id}`, change);
        expect([updated.status, updated.json.field], updated.text).to.deep.equal([400, field]);
        expect(await updated.events()).to.deep.equal([]);
      });
    }
  });

  describe('secrets', () => {
    it('no credential given appears in any answer or any stored event', async () => {
      expect(secrets.length).to.be.greaterThan(5);
      const events = JSON.stringify(await server.platform.storedEvents.readAll({ fromPosition: 0, maxCount: 1_000_000 }));
      expect(events).to.include('IntegrationCreated');
      for (const secret of secrets) {
        expect(events, 'stored events').to.not.include(secret);
        for (const answer of answers) expect(answer, 'an answer').to.not.include(secret);
      }
    });
  });
});
