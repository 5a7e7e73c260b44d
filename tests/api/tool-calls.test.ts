// Business tools executed over HTTP (spec 4.12, issue #12 points 3 and 4) against a local API
// (tests/support/tenant-api.ts; the deployment allows plain http and private addresses here,
// as a development one would): each auth kind reaches the API with its credential, while no
// event, log line, API answer or execution log holds it, nor the end user's token or session;
// arguments checked (every bad field listed); failures recorded as outcomes; the execution
// log; approvals (a member's call waits, an admin approves and the saga runs it once, or
// refuses it and it never runs; an owner's own test runs at once). Every route's 401, 403, 404,
// 409 and 400 per bad field. The platform's clock is a manual one, moved between calls, so the
// log's order is the calls' order.

import type pino from 'pino';
import { expect } from 'chai';
import { handleCommand } from '../../application/command-handling/handle-command';
import { integrationAggregate } from '../../application/integration/integrations';
import { approvedToolCallsSaga } from '../../application/tool-call/approved-tool-calls';
import { callTool } from '../../application/tool-call/tool-calls';
import { deleteTool, editTool } from '../../application/tool/tools';
import type { RecordedOf } from '../../application/ports/domain-event-store';
import { silentLogger } from '../../application/ports/logger';
import { createLogger } from '../../infrastructure/logging/logger';
import { userContext } from '../support/context';
import { type Account, gql } from '../support/identity';
import { type TestResponse, type TestServer, startTestServer } from '../support/server';
import { ManualClock, eventually } from '../support/stores';
import { type TenantApi, startTenantApi } from '../support/tenant-api';
import { type IntegrationBody, createIntegrationAs, createToolAs, principalOf } from '../support/tools';
import { deadAddress } from '../support/webhook-receiver';
import { castWorkspaceRoles } from '../support/workspace-cast';

const CLIENT_ID = 'platform-client';
const SECRETS = {
  apiKeyHeader: 'HeaderKey-7f3a9c-Secret',
  apiKeyQuery: 'QueryKey-2b8d41-Secret',
  bearer: 'BearerToken-c19e77-Secret',
  basicPassword: 'BasicPassword-5a0f3e-Secret',
  clientSecret: 'ClientSecret-913bd2-Secret',
  endUserToken: 'EndUserToken-44e1aa-Secret',
  endUserSession: 'EndUserSession-8c6f02-Secret',
};
const BASIC_PAIR = Buffer.from(`shop:${SECRETS.basicPassword}`).toString('base64');
const END_USER = { 'x-end-user-token': SECRETS.endUserToken, 'x-end-user-session': SECRETS.endUserSession };
const MAX_RESPONSE_BYTES = 256 * 1024;

const PET_SCHEMA = {
  type: 'object',
  properties: { petId: { type: 'string', minLength: 1 }, tags: { type: 'array', items: { type: 'string' } }, trace: { type: 'string' } },
  required: ['petId'],
  additionalProperties: false,
};
const PET_PARAMETERS = [
  { argument: 'petId', in: 'path' as const, name: 'petId' },
  { argument: 'tags', in: 'query' as const, name: 'tag' },
  { argument: 'trace', in: 'header' as const, name: 'X-Trace' },
];

describe('business tool execution, logs and approvals (spec 4.12)', () => {
  let server: TestServer;
  let api: TenantApi;
  let clock: ManualClock;
  let owner: Account;
  let admin: Account;
  let writer: Account;
  let reader: Account;
  let stranger: Account;
  let outsider: Account;
  let workspaceId: string;
  let outsiderWorkspaceId: string;
  const logLines: string[] = [];
  /** Every answer of the platform: none may hold a credential. */
  const answers: string[] = [];
  let toolCount = 0;

  const as = (account: Account, extra: Record<string, string> = {}) => ({ authorization: `Bearer ${account.token}`, ...extra });
  const send = async (account: Account | null, method: string, path: string, body?: unknown, extra: Record<string, string> = {}): Promise<TestResponse> => {
    const response = await server.request(method, path, { headers: account ? as(account, extra) : extra, body });
    answers.push(response.text);
    return response;
  };
  const test = (account: Account, toolId: string, args: unknown, extra: Record<string, string> = {}) => {
    clock.advance(1000);
    return send(account, 'POST', `/api/v1/tools/${toolId}/test`, { arguments: args }, extra);
  };
  const integration = (body: Omit<IntegrationBody, 'name'>, account: Account = owner, workspace = workspaceId) => createIntegrationAs(server, account, workspace, { name: `API ${++toolCount}`, ...body });
  const tool = (integrationId: string, overrides: Record<string, unknown> = {}, account: Account = owner, workspace = workspaceId) =>
    createToolAs(server, account, workspace, {
      integration_id: integrationId,
      name: `tool_${++toolCount}`,
      description: 'Finds a pet',
      method: 'GET',
      path: '/pets/{petId}',
      parameters: PET_PARAMETERS,
      input_schema: PET_SCHEMA,
      ...overrides,
    });
  const lastReceived = () => api.received[api.received.length - 1];
  const streamOf = async (toolCallId: string) => server.platform.eventStore.readStream(`toolCall-${toolCallId}`);

  before(async () => {
    clock = new ManualClock(new Date());
    const logger = createLogger('trace', { write: (line: string) => void logLines.push(line) } as pino.DestinationStream);
    server = await startTestServer(
      { SCRYPT_LOG_N: '12', OUTBOUND_ALLOW_INSECURE: 'true', OUTBOUND_ALLOW_PRIVATE_NETWORKS: 'true', TOOL_TIMEOUT_MS: '2000', TOOL_MAX_RESPONSE_BYTES: String(MAX_RESPONSE_BYTES) },
      { clock, logger },
    );
    api = await startTenantApi({ clientId: CLIENT_ID, clientSecret: SECRETS.clientSecret, bigBytes: MAX_RESPONSE_BYTES * 2 });
    ({ owner, admin, writer, reader, stranger, outsider, workspaceId, foreignWorkspaceId: outsiderWorkspaceId } = await castWorkspaceRoles(server, 'tool-calls', ['business_tools']));
  });
  after(async () => {
    await api.close();
    await server.close();
  });

  describe('each auth kind', () => {
    const tools: Record<string, string> = {};
    before(async () => {
      tools.none = await tool(await integration({ base_url: api.url, auth: { kind: 'none' } }));
      tools.api_key_header = await tool(await integration({ base_url: api.url, auth: { kind: 'api_key', in: 'header', name: 'X-Api-Key' }, credentials: SECRETS.apiKeyHeader }));
      tools.api_key_query = await tool(await integration({ base_url: api.url, auth: { kind: 'api_key', in: 'query', name: 'api_key' }, credentials: SECRETS.apiKeyQuery }));
      tools.bearer = await tool(await integration({ base_url: api.url, auth: { kind: 'bearer' }, credentials: SECRETS.bearer }));
      tools.basic = await tool(await integration({ base_url: api.url, auth: { kind: 'basic', username: 'shop' }, credentials: SECRETS.basicPassword }));
      tools.oauth2 = await tool(
        await integration({
          base_url: `${api.url}/protected`,
          auth: { kind: 'oauth2_client_credentials', token_url: `${api.url}/oauth/token`, client_id: CLIENT_ID, scopes: ['pets:read', 'pets:write'] },
          credentials: SECRETS.clientSecret,
          default_headers: { 'X-Shop': 'north' },
        }),
      );
    });

    /** What the API must have received to authenticate the call, and where the echo shows it. */
    const credentialOf: Record<string, () => { header?: [string, string]; query?: [string, string] }> = {
      none: () => ({}),
      api_key_header: () => ({ header: ['x-api-key', SECRETS.apiKeyHeader] }),
      api_key_query: () => ({ query: ['api_key', SECRETS.apiKeyQuery] }),
      bearer: () => ({ header: ['authorization', `Bearer ${SECRETS.bearer}`] }),
      basic: () => ({ header: ['authorization', `Basic ${BASIC_PAIR}`] }),
      oauth2: () => ({ header: ['authorization', `Bearer ${api.issued[api.issued.length - 1]}`] }),
    };

    for (const kind of ['none', 'api_key_header', 'api_key_query', 'bearer', 'basic', 'oauth2']) {
      it(`${kind}: the API gets the credential, the arguments where the mapping puts them, and the end user's headers; the answer shows none of them`, async () => {
        const response = await test(owner, tools[kind], { petId: 'a/b c', tags: ['x', 'y'], trace: 't-1' }, END_USER);
        expect(response.status, response.text).to.equal(200);
        expect(response.json).to.include({ tool_id: tools[kind], status: 'succeeded', http_status: 200 });
        expect(await response.events()).to.deep.equal(['ToolCallRequested@toolCall', 'ToolCallSucceeded@toolCall']);

        const seen = lastReceived();
        const [path, query] = seen.url.split('?');
        expect(seen.method).to.equal('GET');
        expect(path).to.equal(kind === 'oauth2' ? '/protected/pets/a%2Fb%20c' : '/pets/a%2Fb%20c');
        const params = new URLSearchParams(query);
        expect(params.getAll('tag')).to.deep.equal(['x', 'y']);
        expect(seen.headers).to.include({ 'x-trace': 't-1', 'x-end-user-token': SECRETS.endUserToken, 'x-end-user-session': SECRETS.endUserSession, accept: 'application/json' });
        const credential = credentialOf[kind]();
        if (credential.header) expect(seen.headers[credential.header[0]]).to.equal(credential.header[1]);
        if (credential.query) expect(params.get(credential.query[0])).to.equal(credential.query[1]);
        if (kind === 'none') expect(seen.headers).to.not.have.property('authorization');
        if (kind === 'oauth2') expect(seen.headers['x-shop']).to.equal('north');

        // The echo holds the credential as the API got it: the answer has it redacted.
        const echoed = response.json.result;
        expect(echoed.headers['x-end-user-token']).to.equal('[redacted]');
        expect(echoed.headers['x-end-user-session']).to.equal('[redacted]');
        if (credential.header) expect(echoed.headers[credential.header[0]]).to.match(/\[redacted\]/);
        if (credential.query) expect(echoed.url).to.include(`${credential.query[0]}=[redacted]`);
        expect(response.json.request.headers).to.include({ 'x-end-user-token': '[redacted]', 'x-end-user-session': '[redacted]', 'x-trace': 't-1' });
        if (credential.header) expect(response.json.request.headers[credential.header[0]]).to.equal('[redacted]');
        if (credential.query) expect(response.json.request.url).to.include(`${credential.query[0]}=[redacted]`);
        expect(response.json.response).to.include({ status: 200, truncated: false });
        for (const secret of [...Object.values(SECRETS), BASIC_PAIR, ...api.issued]) expect(response.text).to.not.include(secret);
      });
    }

    it('OAuth2: asks the token URL with the client credentials once, and keeps the token for the next call', async () => {
      expect(api.tokenRequests).to.have.length(1);
      const [asked] = api.tokenRequests;
      expect(asked.method).to.equal('POST');
      expect(asked.headers['content-type']).to.equal('application/x-www-form-urlencoded');
      expect(Object.fromEntries(new URLSearchParams(asked.body))).to.deep.equal({ grant_type: 'client_credentials', scope: 'pets:read pets:write' });
      const again = await test(owner, tools.oauth2, { petId: 'p2' });
      expect(again.json.status).to.equal('succeeded');
      expect(api.tokenRequests).to.have.length(1);
      expect(lastReceived().headers.authorization).to.equal(`Bearer ${api.issued[0]}`);
    });

    it('OAuth2: a kept token the API refuses (401) is fetched anew, once, and the call goes through', async () => {
      api.revokeTokens();
      const before = api.received.length;
      const response = await test(owner, tools.oauth2, { petId: 'p3' });
      expect(response.json).to.include({ status: 'succeeded', http_status: 200 });
      expect(api.tokenRequests).to.have.length(2);
      expect(api.received.slice(before).map((request) => request.headers.authorization)).to.deep.equal([`Bearer ${api.issued[0]}`, `Bearer ${api.issued[1]}`]);
    });

    it('OAuth2: a client the token URL refuses fails the call with auth_failed, and the API gets nothing', async () => {
      const refused = await tool(
        await integration({
          base_url: `${api.url}/protected`,
          auth: { kind: 'oauth2_client_credentials', token_url: `${api.url}/oauth/token`, client_id: CLIENT_ID, scopes: [] },
          credentials: 'Wrong-Client-Secret-0123',
        }),
      );
      const before = api.received.length;
      const response = await test(owner, refused, { petId: 'p4' });
      expect(response.status).to.equal(200);
      expect(response.json).to.include({ status: 'failed', http_status: null, request: null, response: null, result: null });
      expect(response.json.error).to.deep.equal({ code: 'auth_failed', message: 'the token URL refused the client credentials: HTTP 401 (invalid_client)' });
      expect(api.received.length).to.equal(before);
      expect(response.text).to.not.include('Wrong-Client-Secret-0123');
    });

    it('no event, log line, API answer or execution log holds a credential, an access token or the end user’s token or session', async () => {
      for (const id of Object.values(tools)) {
        const logs = await send(reader, 'GET', `/api/v1/tools/${id}/logs?limit=1000`);
        expect(logs.status).to.equal(200);
        expect(logs.json.items.length).to.be.greaterThan(0);
      }
      expect((await send(owner, 'GET', '/api/v1/tool-calls?limit=1000')).json.items.length).to.be.greaterThan(6);
      const secrets = [...Object.values(SECRETS), BASIC_PAIR, ...api.issued];
      expect(api.issued).to.have.length(2);
      // The API did get every one of them (the token URL the client secret, as HTTP Basic).
      const sent = JSON.stringify(api.received);
      for (const secret of [SECRETS.apiKeyHeader, SECRETS.apiKeyQuery, SECRETS.bearer, BASIC_PAIR, SECRETS.endUserToken, SECRETS.endUserSession, ...api.issued]) expect(sent).to.include(secret);
      expect(api.tokenRequests[0].headers.authorization).to.equal(`Basic ${Buffer.from(`${CLIENT_ID}:${SECRETS.clientSecret}`).toString('base64')}`);

      const stored = JSON.stringify(await server.platform.storedEvents.readAll({ maxCount: 1_000_000 }));
      const logged = logLines.join('\n');
      expect(logged).to.include('tool call finished');
      const answered = answers.join('\n');
      for (const secret of secrets) {
        expect(stored, `an event holds ${secret}`).to.not.include(secret);
        expect(logged, `a log line holds ${secret}`).to.not.include(secret);
        expect(answered, `an answer holds ${secret}`).to.not.include(secret);
      }
      // The end user's token and session ride along sealed, for a call approved later.
      const requested = (await server.platform.eventStore.readAll({ filter: { kind: 'event_type', types: ['ToolCallRequested'] }, maxCount: 1000 })).find(
        (event) => event.type === 'ToolCallRequested' && event.data.end_user_token_sealed !== null,
      ) as RecordedOf<'ToolCallRequested'>;
      expect(server.platform.secrets.open(requested.data.end_user_token_sealed!)).to.equal(SECRETS.endUserToken);
    });
  });

  describe('arguments and the request', () => {
    let integrationId: string;
    let petTool: string;
    before(async () => {
      integrationId = await integration({ base_url: `${api.url}/v1/`, auth: { kind: 'none' }, default_headers: { Accept: 'application/vnd.pets+json' } });
      petTool = await tool(integrationId);
    });

    it('400 invalid_arguments lists every bad field, and records nothing', async () => {
      const before = api.received.length;
      const response = await test(owner, petTool, { petId: 5, tags: 'x', extra: true });
      expect(response.status).to.equal(400);
      expect(response.json.code).to.equal('invalid_arguments');
      expect(response.json.errors).to.have.deep.members([
        { field: 'arguments.petId', message: 'must be string' },
        { field: 'arguments.tags', message: 'must be array' },
        { field: 'arguments.extra', message: 'is not allowed' },
      ]);
      expect(await response.events()).to.deep.equal([]);
      const missing = await test(owner, petTool, {});
      expect(missing.status).to.equal(400);
      expect(missing.json.errors).to.deep.equal([{ field: 'arguments.petId', message: 'is required' }]);
      const header = await test(owner, petTool, { petId: 'p', trace: 'a\r\nX-Evil: 1' });
      expect(header.status).to.equal(400);
      expect(header.json.errors).to.deep.equal([{ field: 'arguments.trace', message: 'must not contain control characters (it is sent as a header)' }]);
      expect(api.received.length).to.equal(before);
    });

    it('400 invalid_request naming arguments when they are missing or not an object', async () => {
      for (const body of [{}, { arguments: [1] }, { arguments: 'petId' }]) {
        const response = await send(owner, 'POST', `/api/v1/tools/${petTool}/test`, body);
        expect(response.status).to.equal(400);
        expect(response.json).to.include({ code: 'invalid_request', field: 'arguments' });
      }
    });

    it('joins the base URL and path, keeps a default header unless an argument or the platform sets it', async () => {
      await test(owner, petTool, { petId: '7' });
      const seen = lastReceived();
      expect(seen.url).to.equal('/v1/pets/7');
      expect(seen.headers).to.include({ accept: 'application/vnd.pets+json', 'user-agent': 'svc-platform-tools/1' });
      expect(seen.body).to.equal('');
    });

    it('sends body arguments as JSON properties, an unmapped one in the body of a POST and in the query of a GET, and one argument as the whole body', async () => {
      const create = await tool(integrationId, {
        method: 'POST',
        path: '/pets',
        parameters: [{ argument: 'name', in: 'body', name: 'pet_name' }],
        input_schema: { type: 'object', properties: { name: { type: 'string' }, age: { type: 'integer' } }, required: ['name'] },
        risk: 'write',
      });
      const created = await test(writer, create, { name: 'Rex', age: 3 });
      expect(created.json.status).to.equal('succeeded');
      expect(lastReceived()).to.deep.include({ method: 'POST', url: '/v1/pets', body: '{"pet_name":"Rex","age":3}' });
      expect(lastReceived().headers['content-type']).to.equal('application/json');
      expect(created.json.request).to.deep.include({ method: 'POST', url: `${api.url}/v1/pets`, body: '{"pet_name":"Rex","age":3}' });

      const search = await tool(integrationId, { path: '/pets', parameters: [], input_schema: { type: 'object', properties: { q: { type: 'string' }, limit: { type: 'integer' } } } });
      await test(writer, search, { q: 'big dogs', limit: 5 });
      expect(lastReceived().url).to.equal('/v1/pets?q=big+dogs&limit=5');

      const replace = await tool(integrationId, {
        method: 'PUT',
        path: '/pets/{petId}',
        parameters: [
          { argument: 'petId', in: 'path', name: 'petId' },
          { argument: 'pet', in: 'body', name: null },
        ],
        input_schema: { type: 'object', properties: { petId: { type: 'string' }, pet: { type: 'object' } }, required: ['petId', 'pet'] },
      });
      await test(writer, replace, { petId: '9', pet: { name: 'Rex', tags: ['good'] } });
      expect(lastReceived()).to.deep.include({ method: 'PUT', url: '/v1/pets/9', body: '{"name":"Rex","tags":["good"]}' });
    });
  });

  describe('failures are outcomes, recorded', () => {
    let integrationId: string;
    const pathTool = (path: string) => tool(integrationId, { path, parameters: [], input_schema: { type: 'object', properties: {} } });
    before(async () => {
      integrationId = await integration({ base_url: api.url, auth: { kind: 'bearer' }, credentials: SECRETS.bearer });
    });

    it('a non-2xx answer fails with http_error and hands the answer back, redacted', async () => {
      const response = await test(owner, await pathTool('/fail'), {});
      expect(response.status).to.equal(200);
      expect(response.json).to.include({ status: 'failed', http_status: 500 });
      expect(response.json.error).to.deep.equal({ code: 'http_error', message: 'the API answered HTTP 500' });
      expect(response.json.result.error).to.equal('the pet store is closed');
      expect(response.json.result.echo.headers.authorization).to.equal('Bearer [redacted]');
      expect(response.json.response.status).to.equal(500);
      expect(await response.events()).to.deep.equal(['ToolCallRequested@toolCall', 'ToolCallFailed@toolCall']);
    });

    it('a text answer is handed back as text', async () => {
      const response = await test(owner, await pathTool('/text'), {});
      expect(response.json).to.include({ status: 'succeeded', result: 'plain words' });
    });

    it('an API that does not answer in time fails with timeout; a longer answer than the limit with response_too_large; one not listening with network', async () => {
      const slow = await test(owner, await pathTool('/slow'), {});
      expect(slow.json).to.include({ status: 'failed', http_status: null, response: null });
      expect(slow.json.error.code).to.equal('timeout');
      expect(slow.json.request).to.include({ method: 'GET', url: `${api.url}/slow` });
      expect(slow.json.request.headers.authorization).to.equal('[redacted]');
      const big = await test(owner, await pathTool('/big'), {});
      expect(big.json.error.code).to.equal('response_too_large');
      const dead = await tool(await integration({ base_url: await deadAddress(), auth: { kind: 'none' } }));
      const unreachable = await test(owner, dead, { petId: '1' });
      expect(unreachable.json).to.include({ status: 'failed', http_status: null });
      expect(unreachable.json.error.code).to.equal('network');
    });

    it('cuts a recorded body at 16 KiB, marked truncated; the caller still gets the whole answer', async () => {
      const echo = await tool(integrationId, {
        method: 'POST',
        path: '/echo',
        parameters: [{ argument: 'text', in: 'body', name: 'text' }],
        input_schema: { type: 'object', properties: { text: { type: 'string' } } },
      });
      const text = 'é'.repeat(20_000);
      const response = await test(owner, echo, { text });
      expect(response.json.status).to.equal('succeeded');
      expect(response.json.result.body).to.equal(JSON.stringify({ text }));
      expect(response.json.response.truncated).to.equal(true);
      expect(Buffer.byteLength(response.json.response.body)).to.be.at.most(16 * 1024);
      expect(Buffer.byteLength(response.json.request.body)).to.be.at.most(16 * 1024);
      const recorded = (await streamOf(response.json.id)).find((event) => event.type === 'ToolCallSucceeded') as RecordedOf<'ToolCallSucceeded'>;
      expect(recorded.data.exchange.response).to.deep.equal(response.json.response);
    });

    it('an integration deleted under a tool (a race: deleting one deletes its tools first) fails the call with integration_gone; a disabled tool is 409; a deleted one 404', async () => {
      const doomed = await integration({ base_url: api.url, auth: { kind: 'none' } });
      const orphan = await tool(doomed);
      const deleted = await handleCommand(server.platform.commands, integrationAggregate, `integration-${doomed}`, { type: 'DeleteIntegration', data: { tenant_id: owner.tenant_id } }, userContext({ tenant_id: owner.tenant_id }));
      await server.platform.readYourWrites(deleted.position);
      const gone = await test(owner, orphan, { petId: '1' });
      expect(gone.json).to.include({ status: 'failed', request: null });
      expect(gone.json.error.code).to.equal('integration_gone');
      const cascaded = await integration({ base_url: api.url, auth: { kind: 'none' } });
      const withIt = await tool(cascaded);
      expect((await send(owner, 'DELETE', `/api/v1/integrations/${cascaded}?cascade=true`)).status).to.equal(204);
      expect((await test(owner, withIt, { petId: '1' })).json.code).to.equal('tool_not_found');

      const disabled = await tool(integrationId);
      const context = userContext({ tenant_id: owner.tenant_id, actor: { kind: 'user', id: owner.user_id } });
      await editTool(server.platform.identity, principalOf(owner, 'owner'), disabled, { enabled: false }, context);
      const refused = await test(owner, disabled, { petId: '1' });
      expect(refused.status).to.equal(409);
      expect(refused.json.code).to.equal('tool_disabled');
      expect(await refused.events()).to.deep.equal([]);
      await deleteTool(server.platform.identity, principalOf(owner, 'owner'), disabled, context);
      expect((await test(owner, disabled, { petId: '1' })).json.code).to.equal('tool_not_found');
      expect((await send(owner, 'GET', `/api/v1/tools/${disabled}/logs`)).status).to.equal(404);
    });
  });

  describe('who may test a tool and read its log', () => {
    let petTool: string;
    let foreignTool: string;
    before(async () => {
      petTool = await tool(await integration({ base_url: api.url, auth: { kind: 'none' } }));
      foreignTool = await tool(await integration({ base_url: api.url, auth: { kind: 'none' } }, outsider, outsiderWorkspaceId), {}, outsider, outsiderWorkspaceId);
    });

    it('401 without a user token', async () => {
      for (const [method, path] of [
        ['POST', `/api/v1/tools/${petTool}/test`],
        ['GET', `/api/v1/tools/${petTool}/logs`],
        ['GET', '/api/v1/tool-calls'],
        ['GET', '/api/v1/tool-calls/none'],
        ['POST', '/api/v1/tool-calls/none/approve'],
        ['POST', '/api/v1/tool-calls/none/refuse'],
      ]) {
        expect((await send(null, method, path, method === 'POST' ? { arguments: {}, reason: 'x' } : undefined)).status, path).to.equal(401);
      }
    });

    it('a member with the write flag tests; a reader is 403 workspace_read_only and may read the log; a member without the workspace and another organization get 404', async () => {
      expect((await test(writer, petTool, { petId: '1' })).json.status).to.equal('succeeded');
      const readOnly = await test(reader, petTool, { petId: '1' });
      expect(readOnly.status).to.equal(403);
      expect(readOnly.json.code).to.equal('workspace_read_only');
      expect(await readOnly.events()).to.include('AccessDenied@accessDenial');
      expect((await send(reader, 'GET', `/api/v1/tools/${petTool}/logs`)).status).to.equal(200);
      for (const account of [stranger, outsider]) {
        expect((await test(account, petTool, { petId: '1' })).json.code).to.equal('tool_not_found');
        expect((await send(account, 'GET', `/api/v1/tools/${petTool}/logs`)).json.code).to.equal('tool_not_found');
      }
      expect((await test(owner, foreignTool, { petId: '1' })).status).to.equal(404);
    });

    it('a member sees the calls they made and no other; an admin sees every call of the organization', async () => {
      const made = await test(writer, petTool, { petId: 'mine' });
      const others = await test(owner, petTool, { petId: 'theirs' });
      const mine = await send(writer, 'GET', `/api/v1/tool-calls?tool_id=${petTool}&limit=1000`);
      expect(mine.json.items.map((item: { id: string }) => item.id)).to.include(made.json.id).and.not.include(others.json.id);
      expect(mine.json.items.every((item: { caller: { id: string } }) => item.caller.id === writer.user_id)).to.equal(true);
      expect((await send(writer, 'GET', `/api/v1/tool-calls/${made.json.id}`)).status).to.equal(200);
      expect((await send(writer, 'GET', `/api/v1/tool-calls/${others.json.id}`)).json.code).to.equal('tool_call_not_found');
      const all = await send(admin, 'GET', `/api/v1/tool-calls?tool_id=${petTool}&limit=1000`);
      expect(all.json.items.map((item: { id: string }) => item.id)).to.include.members([made.json.id, others.json.id]);
      expect((await send(outsider, 'GET', `/api/v1/tool-calls/${made.json.id}`)).json.code).to.equal('tool_call_not_found');
      expect((await send(outsider, 'GET', '/api/v1/tool-calls')).json.items).to.deep.equal([]);
    });
  });

  describe('the execution log', () => {
    let petTool: string;
    before(async () => {
      petTool = await tool(await integration({ base_url: api.url, auth: { kind: 'api_key', in: 'query', name: 'key' }, credentials: SECRETS.apiKeyQuery }));
    });

    it("lists a tool's calls newest first, a page at a time: time, caller, status, latency, the request and response redacted", async () => {
      const ids: string[] = [];
      for (const [account, petId] of [[owner, 'first'], [writer, 'second'], [owner, 'third']] as const) ids.push((await test(account, petTool, { petId }, END_USER)).json.id);
      const first = await send(reader, 'GET', `/api/v1/tools/${petTool}/logs?limit=2`);
      expect(first.status).to.equal(200);
      expect(first.json.items.map((item: { id: string }) => item.id)).to.deep.equal([ids[2], ids[1]]);
      const next = await send(reader, 'GET', `/api/v1/tools/${petTool}/logs?limit=2&cursor=${encodeURIComponent(first.json.next_cursor)}`);
      expect(next.json.items.map((item: { id: string }) => item.id)).to.deep.equal([ids[0]]);
      expect(next.json.next_cursor).to.equal(null);
      const [newest, older] = first.json.items;
      expect(Date.parse(newest.requested_at)).to.be.greaterThan(Date.parse(older.requested_at));
      expect(newest).to.deep.include({ tool_id: petTool, status: 'succeeded', http_status: 200, caller: { kind: 'user', id: owner.user_id }, origin: { kind: 'test' }, arguments: { petId: 'third' }, approval: null, refusal: null, error: null });
      expect(older.caller).to.deep.equal({ kind: 'user', id: writer.user_id });
      expect(newest.latency_ms).to.be.a('number').and.at.least(0);
      expect(newest.finished_at).to.be.a('string');
      expect(newest.request.url).to.equal(`${api.url}/pets/third?key=[redacted]`);
      expect(newest.request.headers).to.include({ 'x-end-user-token': '[redacted]', 'x-end-user-session': '[redacted]' });
      expect(newest.response.body).to.not.include(SECRETS.apiKeyQuery);
      expect(JSON.parse(newest.response.body).url).to.equal('/pets/third?key=[redacted]');
    });

    it('filters by status; 400 for an unknown status, a bad limit or cursor', async () => {
      const failed = await send(reader, 'GET', `/api/v1/tools/${petTool}/logs?status=failed`);
      expect(failed.json.items).to.deep.equal([]);
      expect((await send(reader, 'GET', `/api/v1/tools/${petTool}/logs?status=succeeded`)).json.items).to.have.length(3);
      for (const [query, field] of [
        ['status=done', 'status'],
        ['limit=0', 'limit'],
      ]) {
        const response = await send(reader, 'GET', `/api/v1/tools/${petTool}/logs?${query}`);
        expect(response.status, query).to.equal(400);
        expect(response.json.field, query).to.equal(field);
      }
      expect((await send(reader, 'GET', `/api/v1/tools/${petTool}/logs?cursor=nonsense`)).json.code).to.equal('invalid_cursor');
      expect((await send(admin, 'GET', '/api/v1/tool-calls?status=later')).json).to.include({ code: 'invalid_status', field: 'status' });
    });
  });

  describe('approvals', () => {
    let refund: string;
    const refundsBefore = () => api.received.filter((request) => request.url.startsWith('/refunds')).length;
    before(async () => {
      refund = await tool(await integration({ base_url: api.url, auth: { kind: 'bearer' }, credentials: SECRETS.bearer }), {
        name: 'refund_order',
        method: 'POST',
        path: '/refunds/{orderId}',
        parameters: [
          { argument: 'orderId', in: 'path', name: 'orderId' },
          { argument: 'amount', in: 'body', name: 'amount' },
        ],
        input_schema: { type: 'object', properties: { orderId: { type: 'string' }, amount: { type: 'number' } }, required: ['orderId', 'amount'] },
        risk: 'approval_required',
      });
    });

    it("a member's call waits (202 awaiting_approval) and sends nothing; the approval queue shows it to admins, and the member sees their own", async () => {
      const sent = refundsBefore();
      const waiting = await test(writer, refund, { orderId: 'o-1', amount: 12.5 }, END_USER);
      expect(waiting.status, waiting.text).to.equal(202);
      expect(waiting.json).to.include({ status: 'awaiting_approval', risk: 'approval_required', request: null, response: null, result: null, approval: null });
      expect(await waiting.events()).to.deep.equal(['ToolCallRequested@toolCall']);
      expect(refundsBefore()).to.equal(sent);
      const queue = await send(admin, 'GET', '/api/v1/tool-calls?status=awaiting_approval');
      expect(queue.json.items.map((item: { id: string }) => item.id)).to.include(waiting.json.id);
      expect((await send(writer, 'GET', '/api/v1/tool-calls?status=awaiting_approval')).json.items.map((item: { id: string }) => item.id)).to.deep.equal([waiting.json.id]);
      expect((await send(reader, 'GET', '/api/v1/tool-calls?status=awaiting_approval')).json.items).to.deep.equal([]);
    });

    it('only an owner or admin approves or refuses (403 insufficient_role); another organization gets 404; a missing call 404', async () => {
      const [waiting] = (await send(admin, 'GET', '/api/v1/tool-calls?status=awaiting_approval')).json.items;
      for (const path of [`/api/v1/tool-calls/${waiting.id}/approve`, `/api/v1/tool-calls/${waiting.id}/refuse`]) {
        const denied = await send(writer, 'POST', path, { reason: 'no' });
        expect(denied.status).to.equal(403);
        expect(denied.json.code).to.equal('insufficient_role');
        expect((await send(outsider, 'POST', path, { reason: 'no' })).json.code).to.equal('tool_call_not_found');
      }
      expect((await send(admin, 'POST', '/api/v1/tool-calls/none/approve')).status).to.equal(404);
      expect((await send(admin, 'POST', '/api/v1/tool-calls/none/refuse', { reason: 'no' })).status).to.equal(404);
    });

    it('an admin approves: the saga runs the call once, forwarding the end user’s headers; a second approval is 409; a redelivered approval sends nothing', async () => {
      const [waiting] = (await send(admin, 'GET', '/api/v1/tool-calls?status=awaiting_approval')).json.items;
      const sent = refundsBefore();
      const approved = await send(admin, 'POST', `/api/v1/tool-calls/${waiting.id}/approve`);
      expect(approved.status, approved.text).to.equal(200);
      expect(approved.json.approval.by).to.deep.equal({ kind: 'user', id: admin.user_id });
      expect(await approved.events()).to.deep.equal(['ToolCallApproved@toolCall']);
      await eventually(async () => (await streamOf(waiting.id)).length === 3, 10_000, 'the approved call run');
      const events = await streamOf(waiting.id);
      expect(events.map((event) => event.type)).to.deep.equal(['ToolCallRequested', 'ToolCallApproved', 'ToolCallSucceeded']);
      expect(events[2].metadata.actor).to.deep.equal({ kind: 'system', id: 'approved_tool_calls' });
      expect(events[2].metadata.causation_id).to.equal(events[1].id);
      expect(refundsBefore()).to.equal(sent + 1);
      const run = lastReceived();
      expect(run).to.deep.include({ method: 'POST', url: '/refunds/o-1', body: '{"amount":12.5}' });
      expect(run.headers).to.include({ authorization: `Bearer ${SECRETS.bearer}`, 'x-end-user-token': SECRETS.endUserToken, 'x-end-user-session': SECRETS.endUserSession });

      await server.platform.readYourWrites(await server.platform.storedEvents.headPosition());
      const done = await send(writer, 'GET', `/api/v1/tool-calls/${waiting.id}`);
      expect(done.json).to.include({ status: 'succeeded', http_status: 200 });
      expect(done.json.request.headers).to.include({ authorization: '[redacted]', 'x-end-user-token': '[redacted]' });
      const again = await send(admin, 'POST', `/api/v1/tool-calls/${waiting.id}/approve`);
      expect(again.status).to.equal(409);
      expect(again.json.code).to.equal('tool_call_not_awaiting_approval');

      const saga = approvedToolCallsSaga({ ...server.platform.toolCalls, logger: silentLogger });
      await saga.handle(events[1] as RecordedOf<'ToolCallApproved'>, { idempotencyKey: `approved_tool_calls:${events[1].id}`, attempt: 2, logger: silentLogger });
      expect(refundsBefore()).to.equal(sent + 1);
      expect(await streamOf(waiting.id)).to.have.length(3);
    });

    it('an admin refuses with a reason: the call never runs; refusing or approving it again is 409; a reason is required', async () => {
      const waiting = await test(writer, refund, { orderId: 'o-2', amount: 99 });
      const sent = refundsBefore();
      for (const body of [{}, { reason: '' }, { reason: 'x'.repeat(501) }]) {
        const bad = await send(admin, 'POST', `/api/v1/tool-calls/${waiting.json.id}/refuse`, body);
        expect(bad.status).to.equal(400);
        expect(bad.json.field).to.equal('reason');
      }
      const refused = await send(owner, 'POST', `/api/v1/tool-calls/${waiting.json.id}/refuse`, { reason: 'The order was already refunded by hand.' });
      expect(refused.status).to.equal(200);
      expect(refused.json).to.include({ status: 'refused' });
      expect(refused.json.refusal).to.deep.include({ by: { kind: 'user', id: owner.user_id }, reason: 'The order was already refunded by hand.' });
      expect(await refused.events()).to.deep.equal(['ToolCallRefused@toolCall']);
      expect((await send(owner, 'POST', `/api/v1/tool-calls/${waiting.json.id}/refuse`, { reason: 'again' })).json.code).to.equal('tool_call_not_awaiting_approval');
      expect((await send(owner, 'POST', `/api/v1/tool-calls/${waiting.json.id}/approve`)).json.code).to.equal('tool_call_not_awaiting_approval');
      expect((await streamOf(waiting.json.id)).map((event) => event.type)).to.deep.equal(['ToolCallRequested', 'ToolCallRefused']);
      expect(refundsBefore()).to.equal(sent);
    });

    it("an owner's or admin's own test runs at once, the approval recorded as theirs, and the saga leaves it alone", async () => {
      const sent = refundsBefore();
      const ran = await test(admin, refund, { orderId: 'o-3', amount: 1 });
      expect(ran.status).to.equal(200);
      expect(ran.json).to.include({ status: 'succeeded' });
      expect(ran.json.approval.by).to.deep.equal({ kind: 'user', id: admin.user_id });
      expect(await ran.events()).to.deep.equal(['ToolCallRequested@toolCall', 'ToolCallApproved@toolCall', 'ToolCallSucceeded@toolCall']);
      expect(refundsBefore()).to.equal(sent + 1);
      const events = await streamOf(ran.json.id);
      const saga = approvedToolCallsSaga({ ...server.platform.toolCalls, logger: silentLogger });
      await saga.handle(events[1] as RecordedOf<'ToolCallApproved'>, { idempotencyKey: 'x', attempt: 1, logger: silentLogger });
      expect(refundsBefore()).to.equal(sent + 1);
      expect(await streamOf(ran.json.id)).to.have.length(3);
    });

    it('a chat step calls the same way (callTool): a read tool runs at once, an approval_required one waits', async () => {
      const petTool = await tool(await integration({ base_url: api.url, auth: { kind: 'none' } }));
      const origin = { kind: 'chat' as const, conversation_id: 'c-1', reply_to: 'm-1', call_id: 'call_1' };
      const context = userContext({ tenant_id: owner.tenant_id, actor: { kind: 'end_user', id: 'visitor-1' } });
      const caller = { kind: 'end_user' as const, id: 'visitor-1' };
      const outcome = await callTool(server.platform.toolCalls, owner.tenant_id, { tool_id: petTool, arguments: { petId: 'chat' }, caller, origin, end_user: { token: SECRETS.endUserToken, session: null } }, context);
      expect(outcome).to.deep.include({ status: 'succeeded', http_status: 200 });
      expect((outcome as { result: { url: string } }).result.url).to.equal('/pets/chat');
      expect(lastReceived().headers['x-end-user-token']).to.equal(SECRETS.endUserToken);
      expect(lastReceived().headers).to.not.have.property('x-end-user-session');
      const waiting = await callTool(server.platform.toolCalls, owner.tenant_id, { tool_id: refund, arguments: { orderId: 'o-4', amount: 3 }, caller, origin }, context);
      expect(waiting).to.deep.equal({ status: 'awaiting_approval', tool_call_id: waiting.tool_call_id });
      const retried = await callTool(server.platform.toolCalls, owner.tenant_id, { tool_id: petTool, arguments: { petId: 'chat' }, caller, origin }, context, { idempotencyKey: 'chat-step-1' });
      const before = api.received.length;
      expect(await callTool(server.platform.toolCalls, owner.tenant_id, { tool_id: petTool, arguments: { petId: 'chat' }, caller, origin }, context, { idempotencyKey: 'chat-step-1' })).to.deep.equal(retried);
      expect(api.received.length).to.equal(before);
      const invalid = await callTool(server.platform.toolCalls, owner.tenant_id, { tool_id: petTool, arguments: { petId: 3 }, caller, origin }, context).catch((error: unknown) => error);
      expect(invalid).to.include({ code: 'invalid_arguments' });
    });
  });

  // Last: mocha runs a suite's own tests before its nested suites.
  describe('erasing a call (POST /api/v1/tool-calls/{id}/erase, docs/personal-data.md)', () => {
    it('erases its arguments and exchange for good, refusing it first while it waits; owners and admins only; again answers the first', async () => {
      const refund = await tool(await integration({ base_url: api.url, auth: { kind: 'bearer' }, credentials: SECRETS.bearer }), {
        name: 'refund_for_erasure',
        method: 'POST',
        path: '/refunds/{orderId}',
        parameters: [{ argument: 'orderId', in: 'path', name: 'orderId' }],
        input_schema: { type: 'object', properties: { orderId: { type: 'string' } }, required: ['orderId'] },
        risk: 'approval_required',
      });
      const waiting = await test(writer, refund, { orderId: 'o-erase-7' });
      expect(waiting.status, waiting.text).to.equal(202);
      const id: string = waiting.json.id;
      const erase = (account: Account | null, callId = id) => send(account, 'POST', `/api/v1/tool-calls/${callId}/erase`);
      expect((await erase(null)).status).to.equal(401);
      const denied = await erase(writer);
      expect([denied.status, denied.json.code]).to.deep.equal([403, 'insufficient_role']);
      for (const [account, callId] of [[outsider, id], [admin, 'none']] as const) {
        const missing = await erase(account, callId);
        expect([missing.status, missing.json.code]).to.deep.equal([404, 'tool_call_not_found']);
      }
      expect(JSON.stringify(await streamOf(id))).to.include('o-erase-7');
      expect((await streamOf(id)).map((event) => event.type)).to.deep.equal(['ToolCallRequested']);

      const erased = await erase(admin);
      expect(erased.status, erased.text).to.equal(200);
      expect(erased.json).to.deep.equal({ id, erased_at: clock.now().toISOString() });
      expect(await erased.events()).to.deep.equal(['ToolCallRefused@toolCall', 'ToolCallErased@toolCall']);
      const events = await streamOf(id);
      expect(events[0].data).to.deep.include({ arguments: {} });
      expect(JSON.stringify(events)).to.not.include('o-erase-7');
      const logged = await send(admin, 'GET', `/api/v1/tool-calls/${id}`);
      expect(logged.json).to.deep.include({ status: 'refused', arguments: {}, erased_at: erased.json.erased_at });
      clock.advance(1000);
      expect((await erase(admin)).json).to.deep.equal(erased.json);
      expect((await send(admin, 'POST', `/api/v1/tool-calls/${id}/approve`)).status).to.equal(404);
    });
  });

  describe('afterwards', () => {
    it("a tool in a workspace the member's teams were not granted is 404 to them", async () => {
      const other = (await gql(server, 'mutation { create_workspace(name: "Back office") { id } }', {}, owner.token)).json.data.create_workspace.id;
      const hidden = await tool(await integration({ base_url: api.url, auth: { kind: 'none' } }, owner, other), {}, owner, other);
      expect((await test(writer, hidden, { petId: '1' })).json.code).to.equal('tool_not_found');
      expect((await test(owner, hidden, { petId: '1' })).json.status).to.equal('succeeded');
    });
    it('never answered with a 500, and no answer, event or log line of the whole suite holds a credential', async () => {
      const secrets = [...Object.values(SECRETS), BASIC_PAIR, ...api.issued];
      const all = answers.join('\n');
      const stored = JSON.stringify(await server.platform.storedEvents.readAll({ maxCount: 1_000_000 }));
      const logged = logLines.join('\n');
      for (const secret of secrets) {
        expect(all, secret).to.not.include(secret);
        expect(stored, secret).to.not.include(secret);
        expect(logged, secret).to.not.include(secret);
      }
      expect(answers.filter((answer) => answer.includes('internal_error'))).to.deep.equal([]);
    });
  });
});
