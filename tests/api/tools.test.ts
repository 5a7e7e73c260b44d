// Business tools over HTTP (spec 4.12, issue #12 point 3): every route's success, 401, 403 for
// a member whose team only reads the workspace, 404 for another tenant's and an ungranted
// workspace, 400 per bad field, 409 for a name taken (ignoring case), 412 on a stale If-Match,
// 429 at the plan's business tools limit; deleting an integration that tools call; and every
// event in the audit log.

import { expect } from 'chai';
import { createTool } from '../../application/tool/tools';
import { expectEveryEventAudited } from '../support/audit';
import { userContext } from '../support/context';
import { type Account } from '../support/identity';
import { type TestResponse, type TestServer, startTestServer } from '../support/server';
import { castWorkspaceRoles } from '../support/workspace-cast';

const ADMIN = { email: 'root@tools.test', password: 'root password 123' };
const BASE = 'https://93.184.215.16/api';

describe('business tools (spec 4.12)', () => {
  let server: TestServer;
  let adminToken: string;
  let owner: Account;
  let writer: Account;
  let reader: Account;
  let stranger: Account;
  let outsider: Account;
  let workspaceId: string;
  let otherWorkspaceId: string;
  let foreignWorkspaceId: string;
  let integrationId: string;
  let otherIntegrationId: string;
  let foreignIntegrationId: string;

  const as = (account: Account, extra: Record<string, string> = {}) => ({ authorization: `Bearer ${account.token}`, ...extra });
  const send = (account: Account | null, method: string, path: string, body?: unknown, extra: Record<string, string> = {}): Promise<TestResponse> =>
    server.request(method, path, { headers: account ? as(account, extra) : extra, body });
  const create = (account: Account, body: Record<string, unknown>, workspace = workspaceId) => send(account, 'POST', `/api/v1/workspaces/${workspace}/tools`, body);
  const tool = (name: string, over: Record<string, unknown> = {}): Record<string, unknown> => ({ integration_id: integrationId, name, method: 'GET', path: '/pets', ...over });
  const integration = async (account: Account, workspace: string, name = 'Pet store'): Promise<string> => {
    const created = await send(account, 'POST', `/api/v1/workspaces/${workspace}/integrations`, { name, base_url: BASE, auth: { kind: 'none' } });
    expect(created.status, created.text).to.equal(201);
    return created.json.id;
  };
  const setQuotas = async (overrides: Record<string, number | null>): Promise<void> => {
    const response = await server.request('PUT', `/api/v1/admin/tenants/${owner.tenant_id}/quotas`, { headers: { authorization: `Bearer ${adminToken}` }, body: { overrides, reason: 'tools suite' } });
    expect(response.status, response.text).to.equal(200);
  };
  const usedTools = async (): Promise<number> =>
    (await server.request('GET', `/api/v1/admin/tenants/${owner.tenant_id}/quotas`, { headers: { authorization: `Bearer ${adminToken}` } })).json.used.business_tools;
  async function expectRefused(response: TestResponse, status: number, code: string, field?: string): Promise<void> {
    expect(response.status, response.text).to.equal(status);
    expect(response.json.code, response.text).to.equal(code);
    if (field !== undefined) expect(response.json.field, response.text).to.equal(field);
    // A refused request records nothing, except that a 403 is itself recorded (access denials are audited).
    expect(await response.events(), 'a refused request records nothing').to.deep.equal(status === 403 ? ['AccessDenied@accessDenial'] : []);
  }

  before(async () => {
    server = await startTestServer({ SCRYPT_LOG_N: '12', SUPER_ADMIN_EMAIL: ADMIN.email, SUPER_ADMIN_PASSWORD: ADMIN.password });
    adminToken = (await server.request('POST', '/api/v1/admin/auth/login', { body: ADMIN })).json.token;
    ({ owner, writer, reader, stranger, outsider, workspaceId, otherWorkspaceId, foreignWorkspaceId } = await castWorkspaceRoles(server, 'tools', ['business_tools']));
    integrationId = await integration(owner, workspaceId);
    otherIntegrationId = await integration(owner, otherWorkspaceId, 'Internal API');
    foreignIntegrationId = await integration(outsider, foreignWorkspaceId);
  });
  after(() => server.close());

  describe('create, read, list, change, delete', () => {
    it('creates a tool with the defaults: no parameters, an object schema, chat and enabled, risk read for GET and write otherwise', async () => {
      const created = await create(writer, tool('listPets'));
      expect(created.status, created.text).to.equal(201);
      expect(created.headers.get('location')).to.equal(`/api/v1/tools/${created.json.id}`);
      expect(created.headers.get('etag')).to.equal('"0"');
      expect(created.json).to.deep.include({
        workspace_id: workspaceId,
        integration_id: integrationId,
        connection_id: null,
        source: 'manual',
        name: 'listPets',
        description: '',
        method: 'GET',
        path: '/pets',
        parameters: [],
        input_schema: { type: 'object', properties: {} },
        chat: true,
        risk: 'read',
        enabled: true,
        origin: null,
        edited_fields: [],
        updated_by: { kind: 'user', id: writer.user_id },
      });
      expect(await created.events()).to.deep.equal(['ReservationClaimed@reservation', 'ToolCreated@tool']);
      for (const method of ['POST', 'PUT', 'PATCH', 'DELETE']) {
        const written = await create(writer, tool(`${method.toLowerCase()}Pets`, { method }));
        expect([written.status, written.json.risk], written.text).to.deep.equal([201, 'write']);
      }
    });

    it('creates a tool with every field given, trimmed where it is text', async () => {
      const body = tool('updatePet', {
        description: '  Changes a pet.  ',
        method: 'PUT',
        path: '/pets/{petId}',
        parameters: [
          { argument: 'petId', in: 'path', name: 'petId' },
          { argument: 'pet', in: 'body', name: null },
          { argument: 'shop', in: 'header', name: 'X-Shop' },
          { argument: 'dryRun', in: 'query', name: 'dry_run' },
        ],
        input_schema: {
          type: 'object',
          properties: { petId: { type: 'integer' }, pet: { type: 'object', properties: { name: { type: 'string' } } }, shop: { type: 'string' }, dryRun: { type: 'boolean' } },
          required: ['petId', 'pet'],
        },
        chat: false,
        risk: 'approval_required',
        enabled: false,
      });
      const created = await create(owner, body);
      expect(created.status, created.text).to.equal(201);
      expect(created.json).to.deep.include({ ...body, description: 'Changes a pet.' });
    });

    it('lists oldest first by cursor pages, filtered by integration and source; reads one with its ETag', async () => {
      const second = await integration(owner, workspaceId, 'Second API');
      await create(owner, tool('secondOne', { integration_id: second }));
      await create(owner, tool('secondTwo', { integration_id: second }));
      const firstPage = await send(reader, 'GET', `/api/v1/workspaces/${workspaceId}/tools?limit=2`);
      expect(firstPage.status, firstPage.text).to.equal(200);
      expect(firstPage.json.items.map((item: { name: string }) => item.name)).to.deep.equal(['listPets', 'postPets']);
      const nextPage = await send(reader, 'GET', `/api/v1/workspaces/${workspaceId}/tools?limit=2&cursor=${encodeURIComponent(firstPage.json.next_cursor)}`);
      expect(nextPage.json.items.map((item: { name: string }) => item.name)).to.deep.equal(['putPets', 'patchPets']);
      const ofSecond = await send(reader, 'GET', `/api/v1/workspaces/${workspaceId}/tools?integration_id=${second}`);
      expect(ofSecond.json).to.deep.include({ next_cursor: null });
      expect(ofSecond.json.items.map((item: { name: string }) => item.name)).to.deep.equal(['secondOne', 'secondTwo']);
      const manual = await send(reader, 'GET', `/api/v1/workspaces/${workspaceId}/tools?source=manual&limit=1000`);
      expect(manual.json.items).to.have.length(8);
      expect((await send(reader, 'GET', `/api/v1/workspaces/${workspaceId}/tools?source=openapi`)).json.items).to.deep.equal([]);
      await expectRefused(await send(reader, 'GET', `/api/v1/workspaces/${workspaceId}/tools?source=mine`), 400, 'invalid_request', 'source');
      await expectRefused(await send(reader, 'GET', `/api/v1/workspaces/${workspaceId}/tools?limit=0`), 400, 'invalid_limit', 'limit');
      const one = await send(reader, 'GET', `/api/v1/tools/${firstPage.json.items[1].id}`);
      expect(one.status).to.equal(200);
      expect(one.headers.get('etag')).to.equal('"0"');
      expect(one.json).to.deep.equal(firstPage.json.items[1]);
    });

    it('changes the fields given; the same again records nothing; a rename frees the old name', async () => {
      const created = await create(writer, tool('findPet'));
      const path = `/api/v1/tools/${created.json.id}`;
      const changed = await send(writer, 'PATCH', path, { description: 'Finds pets', risk: 'approval_required', chat: false }, { 'if-match': created.headers.get('etag')! });
      expect(changed.status, changed.text).to.equal(200);
      expect(changed.headers.get('etag')).to.equal('"1"');
      expect(changed.json).to.deep.include({ name: 'findPet', description: 'Finds pets', risk: 'approval_required', chat: false, method: 'GET', enabled: true });
      expect(await changed.events()).to.deep.equal(['ToolUpdated@tool']);
      const again = await send(writer, 'PATCH', path, { description: 'Finds pets', integration_id: integrationId });
      expect([again.status, again.headers.get('etag')]).to.deep.equal([200, '"1"']);
      expect(await again.events()).to.deep.equal([]);
      const recased = await send(writer, 'PATCH', path, { name: 'FindPet' });
      expect([recased.status, recased.json.name]).to.deep.equal([200, 'FindPet']);
      expect(await recased.events()).to.deep.equal(['ToolUpdated@tool']);
      const renamed = await send(writer, 'PATCH', path, { name: 'searchPets' });
      expect(renamed.json.name).to.equal('searchPets');
      expect(await renamed.events()).to.deep.equal(['ReservationClaimed@reservation', 'ToolUpdated@tool', 'ReservationReleased@reservation']);
      expect((await create(writer, tool('findpet'))).status).to.equal(201);
    });

    it('deletes (204; then 404) and frees the name', async () => {
      const created = await create(writer, tool('doomed'));
      const path = `/api/v1/tools/${created.json.id}`;
      const deleted = await send(writer, 'DELETE', path, undefined, { 'if-match': created.headers.get('etag')! });
      expect([deleted.status, deleted.text]).to.deep.equal([204, '']);
      expect(await deleted.events()).to.deep.equal(['ToolDeleted@tool', 'ReservationReleased@reservation']);
      await expectRefused(await send(writer, 'GET', path), 404, 'tool_not_found');
      await expectRefused(await send(writer, 'PATCH', path, { description: 'x' }), 404, 'tool_not_found');
      await expectRefused(await send(writer, 'DELETE', path), 404, 'tool_not_found');
      const listed = await send(writer, 'GET', `/api/v1/workspaces/${workspaceId}/tools?limit=1000`);
      expect(listed.json.items.map((item: { id: string }) => item.id)).to.not.include(created.json.id);
      expect((await create(writer, tool('Doomed'))).status).to.equal(201);
    });

    it('answers an imported tool with its origin and the fields a person edited since', async () => {
      const principal = { kind: 'user' as const, user_id: owner.user_id, tenant_id: owner.tenant_id, role: 'owner' as const, jti: 'tools-suite' };
      const input = { integration_id: integrationId, name: 'getPetById', description: 'Returns a pet', method: 'GET' as const, path: '/pets/{petId}', parameters: [{ argument: 'petId', in: 'path' as const, name: 'petId' }], input_schema: { type: 'object', properties: { petId: { type: 'integer' } } } };
      const origin = { operation_key: 'getPetById', imported: { ...input, chat: true, risk: 'read' as const, enabled: true, parameters: input.parameters }, imported_at: new Date().toISOString() };
      delete (origin.imported as Record<string, unknown>).integration_id;
      const imported = await createTool(server.platform.identity, principal, workspaceId, input, userContext({ tenant_id: owner.tenant_id, actor: { kind: 'user', id: owner.user_id } }), { origin });
      const listed = await send(reader, 'GET', `/api/v1/workspaces/${workspaceId}/tools?source=openapi`);
      expect(listed.json.items.map((item: { id: string }) => item.id)).to.deep.equal([imported.value.id]);
      expect(listed.json.items[0]).to.deep.include({ source: 'openapi', origin: { operation_key: 'getPetById', imported_at: origin.imported_at }, edited_fields: [] });
      const edited = await send(owner, 'PATCH', `/api/v1/tools/${imported.value.id}`, { description: 'Our pets', enabled: false });
      expect(edited.json.edited_fields).to.deep.equal(['description']);
      const reverted = await send(owner, 'PATCH', `/api/v1/tools/${imported.value.id}`, { description: 'Returns a pet' });
      expect(reverted.json.edited_fields).to.deep.equal([]);
    });
  });

  describe('who may call', () => {
    let toolId: string;
    let internalToolId: string;
    let foreignToolId: string;
    before(async () => {
      toolId = (await create(owner, tool('guarded'))).json.id;
      internalToolId = (await create(owner, tool('internal', { integration_id: otherIntegrationId }), otherWorkspaceId)).json.id;
      foreignToolId = (await create(outsider, tool('foreign', { integration_id: foreignIntegrationId }), foreignWorkspaceId)).json.id;
    });

    it('401 without a user token, on every route', async () => {
      for (const [method, path, body] of [
        ['GET', `/api/v1/workspaces/${workspaceId}/tools`],
        ['POST', `/api/v1/workspaces/${workspaceId}/tools`, tool('anonymous')],
        ['GET', `/api/v1/tools/${toolId}`],
        ['PATCH', `/api/v1/tools/${toolId}`, { description: 'x' }],
        ['DELETE', `/api/v1/tools/${toolId}`],
      ] as const) {
        const response = await send(null, method, path, body);
        expect([response.status, response.json.code], `${method} ${path}`).to.deep.equal([401, 'unauthenticated']);
      }
      const bogus = await send({ ...owner, token: 'v4.public.nonsense' }, 'GET', `/api/v1/tools/${toolId}`);
      expect(bogus.status).to.equal(401);
    });

    it('403 workspace_read_only for a member whose team only reads the workspace, on every change; reading is allowed', async () => {
      await expectRefused(await create(reader, tool('readersTool')), 403, 'workspace_read_only');
      await expectRefused(await send(reader, 'PATCH', `/api/v1/tools/${toolId}`, { description: 'x' }), 403, 'workspace_read_only');
      await expectRefused(await send(reader, 'DELETE', `/api/v1/tools/${toolId}`), 403, 'workspace_read_only');
      expect((await send(reader, 'GET', `/api/v1/tools/${toolId}`)).status).to.equal(200);
      expect((await send(reader, 'GET', `/api/v1/workspaces/${workspaceId}/tools`)).status).to.equal(200);
    });

    it('lets a member whose team has the write flag change tools, as admins and owners always may', async () => {
      const written = await send(writer, 'PATCH', `/api/v1/tools/${toolId}`, { description: 'by a writer' });
      expect([written.status, written.json.updated_by]).to.deep.equal([200, { kind: 'user', id: writer.user_id }]);
      const internal = await send(owner, 'PATCH', `/api/v1/tools/${internalToolId}`, { description: 'by the owner' });
      expect(internal.status).to.equal(200);
    });

    it('404 for a workspace not granted, another tenant’s, and their tools', async () => {
      await expectRefused(await send(stranger, 'GET', `/api/v1/workspaces/${workspaceId}/tools`), 404, 'workspace_not_found');
      await expectRefused(await create(stranger, tool('strangers')), 404, 'workspace_not_found');
      await expectRefused(await send(writer, 'GET', `/api/v1/workspaces/${otherWorkspaceId}/tools`), 404, 'workspace_not_found');
      await expectRefused(await create(writer, tool('elsewhere', { integration_id: otherIntegrationId }), otherWorkspaceId), 404, 'workspace_not_found');
      await expectRefused(await send(owner, 'GET', `/api/v1/workspaces/${foreignWorkspaceId}/tools`), 404, 'workspace_not_found');
      await expectRefused(await create(owner, tool('foreigners', { integration_id: foreignIntegrationId }), foreignWorkspaceId), 404, 'workspace_not_found');
      for (const [account, id] of [[stranger, toolId], [writer, internalToolId], [outsider, toolId], [owner, foreignToolId], [owner, 'none']] as const) {
        await expectRefused(await send(account, 'GET', `/api/v1/tools/${id}`), 404, 'tool_not_found');
        await expectRefused(await send(account, 'PATCH', `/api/v1/tools/${id}`, { description: 'x' }), 404, 'tool_not_found');
        await expectRefused(await send(account, 'DELETE', `/api/v1/tools/${id}`), 404, 'tool_not_found');
      }
    });
  });

  describe('bad fields', () => {
    const cases: Array<[string, () => Record<string, unknown>, string, string]> = [
      ['no integration', () => ({ integration_id: undefined }), 'invalid_request', 'integration_id'],
      ['an integration of another workspace', () => ({ integration_id: otherIntegrationId }), 'integration_not_found', 'integration_id'],
      ['an integration of another tenant', () => ({ integration_id: foreignIntegrationId }), 'integration_not_found', 'integration_id'],
      ['an unknown integration', () => ({ integration_id: 'none' }), 'integration_not_found', 'integration_id'],
      ['no name', () => ({ name: undefined }), 'invalid_request', 'name'],
      ['a name with a space', () => ({ name: 'get pets' }), 'invalid_name', 'name'],
      ['a name starting with a digit', () => ({ name: '2pets' }), 'invalid_name', 'name'],
      ['a name of 65 characters', () => ({ name: `a${'b'.repeat(64)}` }), 'invalid_name', 'name'],
      ['a number for a name', () => ({ name: 42 }), 'invalid_request', 'name'],
      ['a description that is no text', () => ({ description: ['x'] }), 'invalid_request', 'description'],
      ['a description of 1025 characters', () => ({ description: 'x'.repeat(1025) }), 'invalid_request', 'description'],
      ['a description with a control character', () => ({ description: 'a\u0000b' }), 'invalid_request', 'description'],
      ['an unknown method', () => ({ method: 'HEAD' }), 'invalid_request', 'method'],
      ['a lower-case method', () => ({ method: 'get' }), 'invalid_request', 'method'],
      ['no path', () => ({ path: undefined }), 'invalid_request', 'path'],
      ['a path without its leading /', () => ({ path: 'pets' }), 'invalid_path', 'path'],
      ['a path with a query', () => ({ path: '/pets?limit=10' }), 'invalid_path', 'path'],
      ['a path with an unclosed placeholder', () => ({ path: '/pets/{petId' }), 'invalid_path', 'path'],
      ['parameters that are no list', () => ({ parameters: 'petId' }), 'invalid_request', 'parameters'],
      ['a parameter in a cookie', () => ({ parameters: [{ argument: 'petId', in: 'cookie', name: 'petId' }] }), 'invalid_request', 'parameters.0.in'],
      ['a parameter without its argument', () => ({ parameters: [{ in: 'query', name: 'petId' }] }), 'invalid_request', 'parameters.0.argument'],
      ['a path placeholder without a mapping', () => ({ path: '/pets/{petId}' }), 'invalid_parameters', 'parameters'],
      [
        'a mapped argument the schema lacks',
        () => ({ parameters: [{ argument: 'colour', in: 'query', name: 'colour' }], input_schema: { type: 'object', properties: { limit: { type: 'integer' } } } }),
        'invalid_parameters',
        'parameters.0.argument',
      ],
      [
        'a credential header as a parameter',
        () => ({ parameters: [{ argument: 'token', in: 'header', name: 'Authorization' }], input_schema: { type: 'object', properties: { token: { type: 'string' } } } }),
        'reserved_header',
        'parameters.0.name',
      ],
      ['101 parameters', () => ({ parameters: Array.from({ length: 101 }, (_, i) => ({ argument: `a${i}`, in: 'query', name: `q${i}` })) }), 'invalid_request', 'parameters'],
      ['an input schema that is a list', () => ({ input_schema: [] }), 'invalid_request', 'input_schema'],
      ['an input schema that is no JSON Schema', () => ({ input_schema: { type: 'object', properties: { limit: { type: 'whole number' } } } }), 'invalid_input_schema', 'input_schema'],
      ['an input schema with a dangling $ref', () => ({ input_schema: { type: 'object', properties: { pet: { $ref: '#/$defs/Pet' } } } }), 'invalid_input_schema', 'input_schema'],
      ['an input schema of another type than object', () => ({ input_schema: { type: 'array', items: {} } }), 'invalid_input_schema', 'input_schema'],
      ['an input schema with an $id', () => ({ input_schema: { $id: 'https://example.com/pet', type: 'object' } }), 'invalid_input_schema', 'input_schema'],
      ['a chat flag that is no boolean', () => ({ chat: 'yes' }), 'invalid_request', 'chat'],
      ['an unknown risk tier', () => ({ risk: 'dangerous' }), 'invalid_request', 'risk'],
      ['an enabled flag that is no boolean', () => ({ enabled: 1 }), 'invalid_request', 'enabled'],
    ];
    for (const [label, change, code, field] of cases) {
      // A change refuses the same, except a field left out (which a change keeps) and the integration (which never changes).
      const key = field.split('.')[0];
      const onChange = key !== 'integration_id' && change()[key] !== undefined;
      it(`400 ${code} naming ${field} for ${label}, on create${onChange ? ' and on change' : ''}`, async () => {
        const body = { ...tool('validTool'), ...change() };
        const created = await create(owner, body);
        await expectRefused(created, 400, code, field);
        if (!onChange) return;
        const id = (await create(owner, tool(`valid${Math.random().toString(36).slice(2, 10)}`))).json.id;
        const changed = await send(owner, 'PATCH', `/api/v1/tools/${id}`, change());
        await expectRefused(changed, 400, code, field);
      });
    }

    it('400 for a body that is no object, and integration_fixed for a change of integration', async () => {
      await expectRefused(await send(owner, 'POST', `/api/v1/workspaces/${workspaceId}/tools`, ['x']), 400, 'invalid_request');
      const id = (await create(owner, tool('fixedTool'))).json.id;
      await expectRefused(await send(owner, 'PATCH', `/api/v1/tools/${id}`, { integration_id: otherIntegrationId }), 400, 'integration_fixed', 'integration_id');
      await expectRefused(await send(owner, 'PATCH', `/api/v1/tools/${id}`, { integration_id: 7 }), 400, 'invalid_request', 'integration_id');
    });
  });

  describe('names', () => {
    it('409 tool_name_taken for a name used in the workspace, ignoring case, on create and rename; free in another workspace', async () => {
      const first = await create(owner, tool('getOrders'));
      expect(first.status).to.equal(201);
      await expectRefused(await create(writer, tool('getOrders')), 409, 'tool_name_taken');
      await expectRefused(await create(writer, tool('GETORDERS')), 409, 'tool_name_taken');
      const second = await create(writer, tool('getInvoices'));
      await expectRefused(await send(writer, 'PATCH', `/api/v1/tools/${second.json.id}`, { name: 'getorders' }), 409, 'tool_name_taken');
      expect((await send(writer, 'GET', `/api/v1/tools/${second.json.id}`)).json.name).to.equal('getInvoices');
      const elsewhere = await create(owner, tool('getOrders', { integration_id: otherIntegrationId }), otherWorkspaceId);
      expect(elsewhere.status, elsewhere.text).to.equal(201);
    });

    it('keeps a name free when the create or rename is refused for another reason', async () => {
      await expectRefused(await create(owner, tool('neverMade', { path: '/pets/{petId}' })), 400, 'invalid_parameters');
      await expectRefused(await create(owner, tool('neverMade', { input_schema: { type: 'object', properties: { a: { type: 'nope' } } } })), 400, 'invalid_input_schema');
      const kept = await create(owner, tool('keptName'));
      await expectRefused(await send(owner, 'PATCH', `/api/v1/tools/${kept.json.id}`, { name: 'neverMade', path: 'nope' }), 400, 'invalid_path');
      expect((await create(owner, tool('neverMade'))).status).to.equal(201);
    });
  });

  describe('versions', () => {
    it('412 on a stale If-Match for PATCH and DELETE, recording nothing (not even a name claim)', async () => {
      const created = await create(writer, tool('staleTool'));
      const path = `/api/v1/tools/${created.json.id}`;
      await send(writer, 'PATCH', path, { description: 'fresh' });
      await expectRefused(await send(writer, 'PATCH', path, { name: 'staleRename' }, { 'if-match': created.headers.get('etag')! }), 412, 'revision_mismatch');
      await expectRefused(await send(writer, 'DELETE', path, undefined, { 'if-match': created.headers.get('etag')! }), 412, 'revision_mismatch');
      expect((await send(writer, 'GET', path)).json.name).to.equal('staleTool');
      expect((await create(writer, tool('staleRename'))).status).to.equal(201);
    });
  });

  describe('the plan’s business tools limit', () => {
    it('429 quota_exceeded with the numbers at the limit, recording nothing; deleting a tool frees its place', async () => {
      const used = await usedTools();
      expect(used).to.be.greaterThan(10);
      await setQuotas({ users: null, business_tools: used + 1 });
      const last = await create(owner, tool('lastOne'));
      expect(last.status, last.text).to.equal(201);
      expect(await usedTools()).to.equal(used + 1);
      const refused = await create(owner, tool('oneTooMany'));
      expect(refused.status, refused.text).to.equal(429);
      expect(refused.json).to.deep.include({ code: 'quota_exceeded', quota: 'business_tools', limit: used + 1, used: used + 1, resets_at: null });
      expect(await refused.events()).to.deep.equal([]);
      expect((await send(owner, 'DELETE', `/api/v1/tools/${last.json.id}`)).status).to.equal(204);
      expect(await usedTools()).to.equal(used);
      expect((await create(owner, tool('oneTooMany'))).status).to.equal(201);
      await setQuotas({ users: null, business_tools: null });
    });
  });

  describe('deleting an integration that tools call', () => {
    it('409 integration_has_tools with how many, unless cascade=true, which deletes them first', async () => {
      const doomed = await integration(writer, workspaceId, 'Doomed API');
      const made = [await create(writer, tool('doomedOne', { integration_id: doomed })), await create(writer, tool('doomedTwo', { integration_id: doomed }))];
      const kept = await create(writer, tool('notDoomed'));
      const used = await usedTools();
      const path = `/api/v1/integrations/${doomed}`;
      const refused = await send(writer, 'DELETE', path);
      await expectRefused(refused, 409, 'integration_has_tools');
      expect(refused.json.tools).to.equal(2);
      await expectRefused(await send(writer, 'DELETE', `${path}?cascade=yes`), 400, 'invalid_request', 'cascade');
      await expectRefused(await send(reader, 'DELETE', `${path}?cascade=true`), 403, 'workspace_read_only');
      await expectRefused(await send(writer, 'DELETE', `${path}?cascade=true`, undefined, { 'if-match': '"7"' }), 412, 'revision_mismatch');
      const deleted = await send(writer, 'DELETE', `${path}?cascade=true`);
      expect(deleted.status, deleted.text).to.equal(204);
      expect(await deleted.events()).to.deep.equal([
        'ToolDeleted@tool',
        'ReservationReleased@reservation',
        'ToolDeleted@tool',
        'ReservationReleased@reservation',
        'IntegrationDeleted@integration',
      ]);
      for (const response of made) await expectRefused(await send(writer, 'GET', `/api/v1/tools/${response.json.id}`), 404, 'tool_not_found');
      expect((await send(writer, 'GET', `/api/v1/tools/${kept.json.id}`)).status).to.equal(200);
      expect(await usedTools()).to.equal(used - 2);
      expect((await create(writer, tool('doomedOne'))).status).to.equal(201);
    });

    it('deletes an integration without tools at once, with or without cascade', async () => {
      for (const query of ['', '?cascade=false', '?cascade=true']) {
        const unused = await integration(writer, workspaceId, `Unused API ${query}`);
        const deleted = await send(writer, 'DELETE', `/api/v1/integrations/${unused}${query}`);
        expect(deleted.status, deleted.text).to.equal(204);
        expect(await deleted.events()).to.deep.equal(['IntegrationDeleted@integration']);
      }
    });
  });

  describe('the audit log, after everything above', () => {
    it('puts every event recorded in an audit log with its actor, the tool events among them', async () => {
      const seen = await expectEveryEventAudited(server);
      expect([...seen]).to.include.members(['ToolCreated', 'ToolUpdated', 'ToolDeleted', 'ReservationClaimed', 'ReservationReleased', 'IntegrationDeleted']);
    });
  });
});
