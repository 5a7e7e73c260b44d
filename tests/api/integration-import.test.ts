// The OpenAPI import over HTTP (spec 4.12, issue #12 point 2): preview by URL (served by a
// local server, which the test deployment may reach: OUTBOUND_ALLOW_INSECURE and
// OUTBOUND_ALLOW_PRIVATE_NETWORKS) and by upload (JSON and YAML); apply creates the
// integration and the chosen tools with their events; a reimport of a changed Petstore shows
// the right difference and keeps a tool's local edit (made with PATCH /api/v1/tools/{id})
// unless told to overwrite it. Failures:
// 401, 403 for a reader, 404 for another tenant's and an ungranted workspace or integration,
// 400 per bad field and per unreadable document, the guard's refusal of a private URL under
// the default configuration, 409, 413, and 429 when the batch exceeds the business tools
// limit. No credential given appears in any answer or stored event.

import { expect } from 'chai';
import type { BusinessToolDocument } from '../../projections/business-tools';
import { BUSINESS_TOOLS } from '../../projections/business-tools';
import { multipartForm } from '../support/documents';
import { type Account, registerOwner } from '../support/identity';
import { type DocumentServer, openApiFixture, startDocumentServer } from '../support/openapi-documents';
import { type TestResponse, type TestServer, startTestServer } from '../support/server';
import { castWorkspaceRoles } from '../support/workspace-cast';

const MAX_BYTES = 64 * 1024;

describe('OpenAPI import (spec 4.12)', () => {
  let server: TestServer;
  let documents: DocumentServer;
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
  const imports = (workspace: string) => `/api/v1/workspaces/${workspace}/integrations/import`;
  const preview = (account: Account | null, url: string, workspace = workspaceId) => send(account, 'POST', `${imports(workspace)}/preview`, { url });
  const upload = async (account: Account | null, filename: string, content: Buffer, workspace = workspaceId): Promise<TestResponse> => {
    const form = multipartForm([{ name: 'file', filename, content }]);
    const response = await server.request('POST', `${imports(workspace)}/preview/upload`, { headers: { ...(account ? as(account) : {}), ...form.headers }, rawBody: form.rawBody });
    answers.push(response.text);
    return response;
  };
  const apply = (account: Account | null, body: unknown, workspace = workspaceId, extra: Record<string, string> = {}) => send(account, 'POST', `${imports(workspace)}/apply`, body, extra);
  const reimport = (account: Account | null, integrationId: string, body: unknown) => send(account, 'POST', `/api/v1/integrations/${integrationId}/reimport`, body);
  const documentUrl = (name: string) => `${documents.url}/specs/${name}`;
  const baseUrl = () => `${documents.url}/v2`;
  const toolsOf = async (integrationId: string): Promise<BusinessToolDocument[]> =>
    (await server.platform.readStore.collection<BusinessToolDocument>(BUSINESS_TOOLS).find({ where: { integration_id: integrationId }, sort: { field: 'created_at', direction: 'asc' }, limit: 1000 })).items;
  const byOperation = (tools: BusinessToolDocument[]): Record<string, BusinessToolDocument> => Object.fromEntries(tools.map((tool) => [tool.origin?.operation_key, tool]));
  const importEvents = async (response: TestResponse) => (await response.events()).filter((event) => /^(Integration|Tool)/.test(event));

  async function expectRefused(response: TestResponse, status: number, code: string, field?: string): Promise<void> {
    expect(response.status, response.text).to.equal(status);
    expect(response.json.code, response.text).to.equal(code);
    if (field !== undefined) expect(response.json.field, response.text).to.equal(field);
    expect(await importEvents(response)).to.deep.equal([]);
  }

  before(async () => {
    documents = await startDocumentServer();
    for (const name of ['petstore-expanded.yaml', 'petstore.json', 'catalog-3.1.yaml', 'swagger-2.0.json']) documents.serve(`/specs/${name}`, openApiFixture(name));
    documents.serve('/specs/big.json', JSON.stringify({ openapi: '3.0.3', info: { title: 'Big', version: '1', description: 'x'.repeat(MAX_BYTES) }, paths: {} }));
    documents.serve('/specs/readme.txt', 'This is not an API description.');
    documents.serve('/specs/moved.yaml', '', { status: 301, headers: { location: '/specs/petstore-expanded.yaml' } });
    documents.serve('/specs/broken.json', '', { status: 500 });
    server = await startTestServer({ SCRYPT_LOG_N: '12', OUTBOUND_ALLOW_INSECURE: 'true', OUTBOUND_ALLOW_PRIVATE_NETWORKS: 'true', OPENAPI_MAX_BYTES: String(MAX_BYTES) });
    ({ owner, writer, reader, stranger, outsider, workspaceId, otherWorkspaceId, foreignWorkspaceId } = await castWorkspaceRoles(server, 'import', ['business_tools']));
  });
  after(async () => {
    await server.close();
    await documents.close();
  });

  describe('preview', () => {
    it('previews the Petstore by URL, fetched through the guard: operations, names, inputs and the integration; writes nothing', async () => {
      const response = await preview(reader, documentUrl('petstore-expanded.yaml'));
      expect(response.status, response.text).to.equal(200);
      expect(await response.events()).to.deep.equal([]);
      expect(documents.requests).to.include('/specs/petstore-expanded.yaml');
      expect(response.json.document).to.include({ openapi: '3.0.0', title: 'Swagger Petstore', version: '1.0.0', url: documentUrl('petstore-expanded.yaml') });
      expect(response.json.integration).to.deep.equal({ name: 'Swagger Petstore', base_url: 'https://petstore.swagger.io/v2', auth: { kind: 'none' }, default_headers: {}, notes: [] });
      expect(response.json.operations.map((operation: { operation_key: string; name: string }) => [operation.operation_key, operation.name])).to.deep.equal([
        ['findPets', 'findPets'],
        ['addPet', 'addPet'],
        ['find pet by id', 'find_pet_by_id'],
        ['deletePet', 'deletePet'],
      ]);
      expect(response.json.operations[1]).to.deep.include({
        method: 'POST',
        path: '/pets',
        description: 'Creates a new pet in the store. Duplicates are allowed',
        parameters: [
          { argument: 'name', in: 'body', name: 'name' },
          { argument: 'tag', in: 'body', name: 'tag' },
        ],
        input_schema: { type: 'object', properties: { name: { type: 'string' }, tag: { type: 'string' } }, required: ['name'], additionalProperties: false },
        risk: 'write',
      });
      expect(response.json.skipped).to.deep.equal([]);
    });

    it('previews the 3.1 document with nested and circular $refs by URL, resolving its relative server and token URL against it', async () => {
      const response = await preview(owner, documentUrl('catalog-3.1.yaml'));
      expect(response.status, response.text).to.equal(200);
      expect(response.json.integration.base_url).to.equal(`${documents.url}/api/v2`);
      expect(response.json.integration.auth).to.deep.equal({ kind: 'oauth2_client_credentials', token_url: `${documents.url}/oauth/token`, client_id: '', scopes: ['catalog:read', 'catalog:write'] });
      const create = response.json.operations.find((operation: { operation_key: string }) => operation.operation_key === 'createCategory');
      expect(create.input_schema.properties.parent).to.deep.equal({ type: 'object', description: '(recursive: Category)' });
      expect(response.json.skipped.map((operation: { operation_key: string }) => operation.operation_key)).to.deep.equal(['uploadProductImage', 'currentSession']);
    });

    it('previews an upload, JSON or YAML', async () => {
      const json = await upload(reader, 'petstore.json', openApiFixture('petstore.json'));
      expect(json.status, json.text).to.equal(200);
      expect(json.json.document.url).to.equal(null);
      expect(json.json.operations.map((operation: { name: string }) => operation.name)).to.deep.equal(['listPets', 'createPets', 'showPetById']);
      const yaml = await upload(reader, 'catalog.yaml', openApiFixture('catalog-3.1.yaml'));
      expect(yaml.status, yaml.text).to.equal(200);
      expect(yaml.json.operations).to.have.length(5);
      expect(yaml.json.integration.base_url).to.equal(null);
      expect(await yaml.events()).to.deep.equal([]);
    });

    it('refuses what is not a readable OpenAPI 3 document, with a code per failure', async () => {
      await expectRefused(await preview(owner, documentUrl('readme.txt')), 400, 'not_openapi', 'url');
      await expectRefused(await preview(owner, documentUrl('swagger-2.0.json')), 400, 'swagger_not_supported', 'url');
      await expectRefused(await preview(owner, documentUrl('big.json')), 400, 'openapi_too_large', 'url');
      await expectRefused(await preview(owner, documentUrl('missing.yaml')), 400, 'openapi_unreachable', 'url');
      await expectRefused(await preview(owner, documentUrl('broken.json')), 400, 'openapi_unreachable', 'url');
      const moved = await preview(owner, documentUrl('moved.yaml'));
      await expectRefused(moved, 400, 'openapi_unreachable', 'url');
      expect(moved.json.message).to.include('301');
      await expectRefused(await preview(owner, 'not a url'), 400, 'invalid_url', 'url');
      await expectRefused(await preview(owner, 'ftp://127.0.0.1/spec.yaml'), 400, 'invalid_url', 'url');
      await expectRefused(await send(owner, 'POST', `${imports(workspaceId)}/preview`, { url: 42 }), 400, 'invalid_request', 'url');
      await expectRefused(await upload(owner, 'swagger.json', openApiFixture('swagger-2.0.json')), 400, 'swagger_not_supported', 'file');
      await expectRefused(await upload(owner, 'empty.yaml', Buffer.from('openapi: 3.0.3\n')), 400, 'invalid_openapi', 'file');
      await expectRefused(await upload(owner, 'big.json', Buffer.alloc(MAX_BYTES + 1, 'x')), 413, 'openapi_too_large');
      const noFile = multipartForm([{ name: 'document', value: 'openapi: 3.0.3' }]);
      await expectRefused(await server.request('POST', `${imports(workspaceId)}/preview/upload`, { headers: { ...as(owner), ...noFile.headers }, rawBody: noFile.rawBody }), 400, 'invalid_request', 'file');
    });
  });

  describe('apply', () => {
    it('creates the integration and a tool per operation, with their events; the credential is sealed and never answered', async () => {
      const secret = credential('Bearer');
      const response = await apply(writer, { source: { url: documentUrl('petstore-expanded.yaml') }, integration: { base_url: baseUrl(), auth: { kind: 'bearer' }, credentials: secret } });
      expect(response.status, response.text).to.equal(201);
      expect(response.headers.get('location')).to.equal(`/api/v1/integrations/${response.json.integration.id}`);
      expect(response.json.integration).to.include({ name: 'Swagger Petstore', base_url: baseUrl(), workspace_id: workspaceId, has_credentials: true });
      expect(response.json.integration.openapi_source).to.include({ url: documentUrl('petstore-expanded.yaml'), api_version: '1.0.0' });
      expect(response.json.integration.openapi_source.sha256).to.match(/^[0-9a-f]{64}$/);
      expect(response.json.tools.map((tool: { operation_key: string; name: string }) => [tool.operation_key, tool.name])).to.deep.equal([
        ['findPets', 'findPets'],
        ['addPet', 'addPet'],
        ['find pet by id', 'find_pet_by_id'],
        ['deletePet', 'deletePet'],
      ]);
      expect(await importEvents(response)).to.deep.equal(['IntegrationCreated@integration', 'ToolCreated@tool', 'ToolCreated@tool', 'ToolCreated@tool', 'ToolCreated@tool', 'IntegrationOpenApiImported@integration']);
      const tools = byOperation(await toolsOf(response.json.integration.id));
      expect(tools.addPet).to.deep.include({ source: 'openapi', workspace_id: workspaceId, edited_fields: [] });
      expect(tools.addPet.definition).to.deep.include({ name: 'addPet', method: 'POST', path: '/pets', chat: true, risk: 'write', enabled: true });
      expect(tools.addPet.origin?.imported).to.deep.equal(tools.addPet.definition);
      expect(tools.findPets.definition.risk).to.equal('read');
      const stream = await server.platform.eventStore.readStream(`integration-${response.json.integration.id}`);
      expect(stream.map((event) => event.type)).to.deep.equal(['IntegrationCreated', 'IntegrationOpenApiImported']);
      expect((stream[0].data as { credentials_sealed: string }).credentials_sealed).to.be.a('string').and.not.include(secret);
      const read = await send(reader, 'GET', `/api/v1/integrations/${response.json.integration.id}`);
      expect(read.json.openapi_source).to.deep.equal(response.json.integration.openapi_source);
    });

    it('imports the chosen operations of an uploaded 3.1 document with per-operation choices; base_url is needed when the document has none', async () => {
      const document = openApiFixture('catalog-3.1.yaml').toString();
      const body = {
        source: { document },
        integration: { name: 'Catalog', auth: { kind: 'oauth2_client_credentials', token_url: `${documents.url}/oauth/token`, client_id: 'platform', scopes: ['catalog:read'] }, credentials: credential('Client') },
        operations: ['createCategory', 'replaceProduct', 'addNodes'],
        overrides: { replaceProduct: { risk: 'approval_required', chat: false, name: 'putProduct' } },
      };
      await expectRefused(await apply(owner, body, otherWorkspaceId), 400, 'invalid_url', 'integration.base_url');
      const response = await apply(owner, { ...body, integration: { ...body.integration, base_url: `${documents.url}/api/v2` } }, otherWorkspaceId);
      expect(response.status, response.text).to.equal(201);
      expect(response.json.integration.openapi_source.url).to.equal(null);
      expect(response.json.tools.map((tool: { name: string }) => tool.name)).to.deep.equal(['createCategory', 'putProduct', 'addNodes']);
      expect(response.json.skipped.map((operation: { operation_key: string }) => operation.operation_key)).to.deep.equal(['uploadProductImage', 'currentSession']);
      const tools = byOperation(await toolsOf(response.json.integration.id));
      expect(tools.replaceProduct.definition).to.deep.include({ name: 'putProduct', risk: 'approval_required', chat: false });
      expect(tools.addNodes.definition.input_schema.properties).to.have.property('body');
      expect(JSON.stringify(tools.createCategory.definition.input_schema)).to.include('(recursive: Category)');
    });

    it('adds tools to an existing integration of the workspace; an operation imported there already is 409', async () => {
      const created = await send(owner, 'POST', `/api/v1/workspaces/${otherWorkspaceId}/integrations`, { name: 'Pets', base_url: baseUrl(), auth: { kind: 'none' } });
      const response = await apply(owner, { source: { document: openApiFixture('petstore.json').toString() }, integration: { integration_id: created.json.id }, operations: ['listPets'] }, otherWorkspaceId);
      expect(response.status, response.text).to.equal(201);
      expect(response.json.integration.id).to.equal(created.json.id);
      expect(await importEvents(response)).to.deep.equal(['ToolCreated@tool', 'IntegrationOpenApiImported@integration']);
      await expectRefused(await apply(owner, { source: { document: openApiFixture('petstore.json').toString() }, integration: { integration_id: created.json.id }, operations: ['listPets'] }, otherWorkspaceId), 409, 'operation_imported');
    });

    it('answers a retry with the same Idempotency-Key with the first answer, creating nothing twice', async () => {
      const body = { source: { document: openApiFixture('petstore.json').toString() }, integration: { name: 'Idempotent pets', base_url: baseUrl() }, operations: ['showPetById'] };
      const first = await apply(owner, body, otherWorkspaceId, { 'idempotency-key': 'import-once' });
      expect(first.status, first.text).to.equal(201);
      const again = await apply(owner, body, otherWorkspaceId, { 'idempotency-key': 'import-once' });
      expect([again.status, again.headers.get('idempotent-replayed')]).to.deep.equal([201, 'true']);
      expect(again.json).to.deep.equal(first.json);
      expect(await again.events()).to.deep.equal([]);
    });

    it('refuses a name the workspace uses (409), before writing anything', async () => {
      const taken = await apply(owner, { source: { url: documentUrl('petstore.json') }, integration: { base_url: baseUrl() }, operations: ['listPets'], overrides: { listPets: { name: 'ADDPET' } } });
      await expectRefused(taken, 409, 'tool_name_taken');
    });
  });

  describe('reimport', () => {
    let integrationId: string;
    const live = '/specs/live.yaml';

    before(async () => {
      documents.serve(live, openApiFixture('petstore-expanded.yaml'));
      const applied = await apply(owner, { source: { url: `${documents.url}${live}` }, integration: { name: 'Live pets', base_url: baseUrl() } }, otherWorkspaceId);
      expect(applied.status, applied.text).to.equal(201);
      integrationId = applied.json.integration.id;
      // A person rewrites one tool's description.
      const deletePet = byOperation(await toolsOf(integrationId)).deletePet;
      expect((await send(owner, 'PATCH', `/api/v1/tools/${deletePet.id}`, { description: 'Removes a pet for good: ask first.' })).status).to.equal(200);
      documents.serve(live, openApiFixture('petstore-expanded-v2.yaml'));
    });

    it('shows the difference to the changed Petstore in a dry run, from the remembered URL, writing nothing', async () => {
      const tools = byOperation(await toolsOf(integrationId));
      const dry = await reimport(owner, integrationId, { dry_run: true });
      expect(dry.status, dry.text).to.equal(200);
      expect(await dry.events()).to.deep.equal([]);
      expect(dry.json.dry_run).to.equal(true);
      expect(dry.json.document).to.include({ version: '1.1.0', url: `${documents.url}${live}` });
      expect(dry.json.added).to.deep.equal([{ operation_key: 'updatePet', name: 'updatePet', method: 'PATCH', path: '/pets/{id}', chosen: true, tool_id: null }]);
      expect(dry.json.changed).to.deep.equal([
        { operation_key: 'findPets', tool_id: tools.findPets.id, name: 'findPets', fields: ['parameters', 'input_schema'], kept_edits: [], overwritten_edits: [] },
        { operation_key: 'deletePet', tool_id: tools.deletePet.id, name: 'deletePet', fields: ['description'], kept_edits: ['description'], overwritten_edits: [] },
      ]);
      expect(dry.json.removed).to.deep.equal([{ operation_key: 'find pet by id', tool_id: tools['find pet by id'].id, name: 'find_pet_by_id', reason: 'the document no longer has it', action: 'disable' }]);
      expect(dry.json.unchanged).to.deep.equal([{ operation_key: 'addPet', tool_id: tools.addPet.id, name: 'addPet' }]);
    });

    it('applies it: adds the new operation, updates the changed tools keeping the local edit, disables the removed one', async () => {
      await expectRefused(await reimport(reader, integrationId, {}), 404, 'integration_not_found');
      const response = await reimport(owner, integrationId, {});
      expect(response.status, response.text).to.equal(200);
      expect(response.json.dry_run).to.equal(false);
      expect(await importEvents(response)).to.deep.equal(['ToolCreated@tool', 'ToolUpdated@tool', 'ToolUpdated@tool', 'ToolUpdated@tool', 'IntegrationOpenApiImported@integration']);
      const tools = byOperation(await toolsOf(integrationId));
      expect(response.json.added[0].tool_id).to.equal(tools.updatePet.id);
      expect(tools.updatePet.definition).to.deep.include({ method: 'PATCH', path: '/pets/{id}' });
      expect(tools.deletePet.definition.description).to.equal('Removes a pet for good: ask first.');
      expect(tools.deletePet.origin?.imported.description).to.equal('Deletes a single pet based on the ID supplied; its adoption records are kept');
      expect(tools.deletePet.edited_fields).to.deep.equal(['description']);
      expect(tools.findPets.definition.parameters.map((mapping) => mapping.argument)).to.deep.equal(['tags', 'status', 'limit']);
      expect(tools['find pet by id'].definition.enabled).to.equal(false);
      const integration = await send(owner, 'GET', `/api/v1/integrations/${integrationId}`);
      expect(integration.json.openapi_source.api_version).to.equal('1.1.0');
      const again = await reimport(owner, integrationId, { dry_run: true });
      expect([again.json.added, again.json.changed]).to.deep.equal([[], []]);
      expect(again.json.removed.map((entry: { name: string }) => entry.name)).to.deep.equal(['find_pet_by_id']);
    });

    it('overwrites local edits when asked, and deletes removed operations when asked', async () => {
      const applied = await apply(owner, { source: { document: openApiFixture('petstore-expanded.yaml').toString() }, integration: { name: 'Overwritten pets', base_url: baseUrl() } });
      expect(applied.status, applied.text).to.equal(201);
      const id = applied.json.integration.id;
      const before = byOperation(await toolsOf(id));
      expect(before.deletePet.definition.name).to.equal('deletePet_2');
      expect((await send(owner, 'PATCH', `/api/v1/tools/${before.deletePet.id}`, { description: 'A local description.' })).status).to.equal(200);
      await expectRefused(await reimport(owner, id, {}), 400, 'no_openapi_source', 'source');
      const response = await reimport(owner, id, { source: { document: openApiFixture('petstore-expanded-v2.yaml').toString() }, overwrite_edits: true, removed: 'delete', add: [] });
      expect(response.status, response.text).to.equal(200);
      expect(response.json.changed.find((entry: { operation_key: string }) => entry.operation_key === 'deletePet')).to.deep.include({ kept_edits: [], overwritten_edits: ['description'] });
      expect(response.json.added).to.deep.equal([{ operation_key: 'updatePet', name: 'updatePet', method: 'PATCH', path: '/pets/{id}', chosen: false, tool_id: null }]);
      expect(await importEvents(response)).to.deep.equal(['ToolUpdated@tool', 'ToolUpdated@tool', 'ToolDeleted@tool', 'IntegrationOpenApiImported@integration']);
      const after = byOperation(await toolsOf(id));
      expect(after.deletePet.definition.description).to.equal('Deletes a single pet based on the ID supplied; its adoption records are kept');
      expect(after.deletePet.edited_fields).to.deep.equal([]);
      expect(after).to.not.have.property('find pet by id');
      expect(after).to.not.have.property('updatePet');
    });
  });

  describe('who may call', () => {
    let integrationId: string;
    before(async () => {
      integrationId = (await apply(owner, { source: { url: documentUrl('petstore.json') }, integration: { name: 'Guarded pets', base_url: baseUrl() }, operations: ['listPets'] }, otherWorkspaceId)).json.integration.id;
    });

    it('401 without a user token, on every route', async () => {
      for (const response of [
        await preview(null, documentUrl('petstore.json')),
        await upload(null, 'petstore.json', openApiFixture('petstore.json')),
        await apply(null, { source: { url: documentUrl('petstore.json') } }),
        await reimport(null, integrationId, { dry_run: true }),
      ]) {
        expect([response.status, response.json.code]).to.deep.equal([401, 'unauthenticated']);
      }
    });

    it('403 workspace_read_only for a reader applying or reimporting; previewing is allowed', async () => {
      await expectRefused(await apply(reader, { source: { url: documentUrl('petstore.json') }, integration: { base_url: baseUrl() } }), 403, 'workspace_read_only');
      const mine = await apply(writer, { source: { url: documentUrl('petstore.json') }, integration: { name: 'Writers pets', base_url: baseUrl() }, operations: ['showPetById'], overrides: { showPetById: { name: 'showPetForWriters' } } });
      expect(mine.status, mine.text).to.equal(201);
      await expectRefused(await reimport(reader, mine.json.integration.id, {}), 403, 'workspace_read_only');
      expect((await reimport(reader, mine.json.integration.id, { dry_run: true })).status).to.equal(200);
    });

    it('404 for another tenant’s or an ungranted workspace, and for their integrations', async () => {
      for (const [account, workspace] of [[outsider, workspaceId], [owner, foreignWorkspaceId], [stranger, workspaceId], [writer, otherWorkspaceId]] as const) {
        await expectRefused(await preview(account, documentUrl('petstore.json'), workspace), 404, 'workspace_not_found');
        await expectRefused(await upload(account, 'petstore.json', openApiFixture('petstore.json'), workspace), 404, 'workspace_not_found');
        await expectRefused(await apply(account, { source: { url: documentUrl('petstore.json') }, integration: { base_url: baseUrl() } }, workspace), 404, 'workspace_not_found');
      }
      for (const account of [outsider, writer, stranger]) await expectRefused(await reimport(account, integrationId, { dry_run: true }), 404, 'integration_not_found');
      await expectRefused(await reimport(owner, 'none', { dry_run: true }), 404, 'integration_not_found');
    });
  });

  describe('bad fields', () => {
    const petstore = () => ({ source: { url: documentUrl('petstore.json') }, integration: { name: 'Bad', base_url: baseUrl() } });
    const cases: Array<[string, () => Record<string, unknown>, string, string]> = [
      ['no source', () => ({ integration: {} }), 'invalid_request', 'source'],
      ['both a URL and a document', () => ({ ...petstore(), source: { url: documentUrl('petstore.json'), document: 'openapi: 3.0.3' } }), 'invalid_request', 'source'],
      ['a source URL that is no URL', () => ({ ...petstore(), source: { url: 'petstore' } }), 'invalid_url', 'source.url'],
      ['a document that is no OpenAPI', () => ({ ...petstore(), source: { document: '{"hello": 1}' } }), 'not_openapi', 'source.document'],
      ['an unknown operation', () => ({ ...petstore(), operations: ['listPets', 'adoptPet'] }), 'unknown_operation', 'operations.1'],
      ['an operation chosen twice', () => ({ ...petstore(), operations: ['listPets', 'listPets'] }), 'invalid_request', 'operations.1'],
      ['an operation that cannot be a tool', () => ({ ...petstore(), source: { url: documentUrl('catalog-3.1.yaml') }, operations: ['uploadProductImage'] }), 'operation_not_importable', 'operations.0'],
      ['an override of an operation not chosen', () => ({ ...petstore(), operations: ['listPets'], overrides: { createPets: { chat: false } } }), 'unknown_operation', 'overrides.createPets'],
      ['an override name unfit for a model', () => ({ ...petstore(), overrides: { listPets: { name: 'list pets' } } }), 'invalid_name', 'overrides.listPets.name'],
      ['two tools of one name', () => ({ ...petstore(), overrides: { listPets: { name: 'pets' }, createPets: { name: 'PETS' } } }), 'tool_name_taken', 'overrides.createPets.name'],
      ['an unknown risk', () => ({ ...petstore(), overrides: { listPets: { risk: 'yolo' } } }), 'invalid_request', 'overrides.listPets.risk'],
      ['an integration id with fields', () => ({ ...petstore(), integration: { integration_id: 'x', name: 'y' } }), 'invalid_request', 'integration'],
      ['an integration of no workspace of the caller', () => ({ ...petstore(), integration: { integration_id: 'none' } }), 'integration_not_found', 'integration.integration_id'],
      ['an empty integration name', () => ({ ...petstore(), integration: { name: ' ', base_url: baseUrl() } }), 'invalid_text', 'integration.name'],
      ['basic auth without a user name', () => ({ ...petstore(), integration: { base_url: baseUrl(), auth: { kind: 'basic', username: '' } } }), 'invalid_auth', 'integration.auth.username'],
      ['credentials for auth none', () => ({ ...petstore(), integration: { base_url: baseUrl(), credentials: 'a-secret-for-nothing' } }), 'invalid_credentials', 'integration.credentials'],
      ['a reserved default header', () => ({ ...petstore(), integration: { base_url: baseUrl(), default_headers: { Authorization: 'Bearer x' } } }), 'reserved_header', 'integration.default_headers.Authorization'],
    ];
    for (const [label, body, code, field] of cases) {
      it(`400 for ${label} on apply`, async () => {
        const response = await apply(owner, body());
        expect(response.status, response.text).to.equal(400);
        expect(response.json.field, response.text).to.equal(field);
        if (code !== 'invalid_text') expect(response.json.code, response.text).to.equal(code);
        expect(await importEvents(response)).to.deep.equal([]);
      });
    }

    it('400 per bad field on reimport', async () => {
      const id = (await apply(owner, { source: { url: documentUrl('petstore.json') }, integration: { name: 'Reimported pets', base_url: baseUrl() }, operations: ['listPets'] }, otherWorkspaceId)).json.integration.id;
      await expectRefused(await reimport(owner, id, { dry_run: 'yes' }), 400, 'invalid_request', 'dry_run');
      await expectRefused(await reimport(owner, id, { removed: 'vanish' }), 400, 'invalid_request', 'removed');
      await expectRefused(await reimport(owner, id, { add: ['adoptPet'] }), 400, 'unknown_operation', 'add.0');
      await expectRefused(await reimport(owner, id, { add: ['listPets'] }), 400, 'unknown_operation', 'add.0');
      await expectRefused(await reimport(owner, id, { source: { url: documentUrl('readme.txt') } }), 400, 'not_openapi', 'source.url');
      await expectRefused(await reimport(owner, id, { source: {} }), 400, 'invalid_request', 'source');
    });
  });

  describe('the business tools limit', () => {
    it('429 when the batch exceeds it, with nothing written; within it, the import goes through', async () => {
      // The free plan takes 2 business tools; the Petstore has 3 operations.
      const body = { source: { url: documentUrl('petstore.json') }, integration: { base_url: baseUrl() } };
      const refused = await apply(outsider, body, foreignWorkspaceId);
      await expectRefused(refused, 429, 'quota_exceeded');
      expect(refused.json).to.include({ quota: 'business_tools', limit: 2, used: 0 });
      expect(await refused.events()).to.deep.equal([]);
      const fits = await apply(outsider, { ...body, operations: ['listPets', 'showPetById'] }, foreignWorkspaceId);
      expect(fits.status, fits.text).to.equal(201);
      await expectRefused(await apply(outsider, { ...body, operations: ['createPets'] }, foreignWorkspaceId), 429, 'quota_exceeded');
    });
  });

  describe('secrets', () => {
    it('no credential given appears in any answer or any stored event', async () => {
      expect(secrets.length).to.be.greaterThan(1);
      const events = JSON.stringify(await server.platform.storedEvents.readAll({ fromPosition: 0, maxCount: 1_000_000 }));
      expect(events).to.include('IntegrationOpenApiImported');
      for (const secret of secrets) {
        expect(events, 'stored events').to.not.include(secret);
        for (const answer of answers) expect(answer, 'an answer').to.not.include(secret);
      }
    });
  });
});

describe('OpenAPI import under the default outbound guard', () => {
  let server: TestServer;
  let documents: DocumentServer;
  let owner: Account;

  before(async () => {
    documents = await startDocumentServer();
    documents.serve('/specs/petstore.json', openApiFixture('petstore.json'));
    server = await startTestServer({ SCRYPT_LOG_N: '12' });
    owner = await registerOwner(server, 'import-guarded-org');
  });
  after(async () => {
    await server.close();
    await documents.close();
  });

  it('refuses a private or plain-http document URL without fetching it', async () => {
    const workspaceId = (await server.request('GET', '/api/v1/org/workspaces', { headers: { authorization: `Bearer ${owner.token}` } })).json.items[0].id;
    const port = new URL(documents.url).port;
    for (const [url, code] of [
      [`${documents.url}/specs/petstore.json`, 'insecure_url'],
      [`https://127.0.0.1:${port}/specs/petstore.json`, 'private_address'],
      ['https://169.254.169.254/latest/openapi.json', 'private_address'],
      ['https://10.0.0.7/openapi.json', 'private_address'],
    ] as const) {
      const response = await server.request('POST', `/api/v1/workspaces/${workspaceId}/integrations/import/preview`, { headers: { authorization: `Bearer ${owner.token}` }, body: { url } });
      expect([response.status, response.json.code, response.json.field], url).to.deep.equal([400, code, 'url']);
    }
    expect(documents.requests).to.deep.equal([]);
  });
});
