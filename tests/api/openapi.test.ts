// The OpenAPI document at GET /api/v1/openapi.json is valid OpenAPI 3.1, describes every route
// the app registers and nothing else, states request bodies as the routers decode them, and
// the API answers as it says: responses of a walk through the routes match the documented
// schemas. The GraphQL SDL is served at GET /graphql/schema.graphql.

import { createHmac } from 'node:crypto';
import { Validator } from '@seriousme/openapi-schema-validator';
import Ajv2020 from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import { expect } from 'chai';
import { printSchema } from 'graphql';
import * as t from 'io-ts';
import { graphqlSchema } from '../../adapters/graphql/schema';
import { bodyKindOf } from '../../adapters/http/bodies/kinds';
import { honoursIdempotencyKey } from '../../adapters/http/middleware/idempotency';
import { type ApiArea, schemaOfCodec } from '../../adapters/http/openapi/describe';
import { buildOpenApiDocument } from '../../adapters/http/openapi/document';
import { answeredConversation } from '../support/conversations';
import { type Account, PASSWORD, gql, joinAs, liftSeatLimit, registerOwner, widgetTokenOf } from '../support/identity';
import { identitySignature } from '../../application/widget/widget-access';
import { unsubscribeToken } from '../../application/notification/unsubscribe-links';
import { type TestResponse, type TestServer, startTestServer } from '../support/server';
import { SANDBOX_SIGNATURE_HEADER, signSandboxWebhook } from '../../infrastructure/payments/sandbox';
import { conversationsOf } from '../support/conversation-events';
import { subscribeTo } from '../support/subscriptions';
import { multipartForm, pdfOf, windowsExecutable } from '../support/documents';
import { createToolAs, liftToolLimit, recordIntegration } from '../support/tools';
import { openApiFixture } from '../support/openapi-documents';
import { createExampleConnector } from '../../adapters/connector-sdk/example/connector';
import { createConnector } from '../../adapters/connector-sdk';
import { fail as failToDeadLetter } from '../support/orchestration';
import { asVisitor, newVisitorId, visitorAsks, widgetOf } from '../support/widget-visitors';

const ADMIN = { email: 'root@openapi.test', password: 'root password 123' };
const SANDBOX_WEBHOOK_SECRET = 'openapi sandbox webhook secret';
const CONNECTOR_MANAGER_TOKEN = 'openapi-connector-manager-token';
const METHODS = ['get', 'post', 'put', 'patch', 'delete', 'options'] as const;

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = any;

/** `/api/v1/org/teams/:id` (a router's path) as OpenAPI writes it: `/api/v1/org/teams/{id}`; a wildcard `/*path` as `/{path}`. */
function openApiPath(routerPath: string): string {
  return routerPath.replace(/[:*]([A-Za-z0-9_]+)/g, '{$1}');
}

/** Every method and path the app's routers register (HEAD comes with GET by itself). */
async function registeredRoutes(server: TestServer): Promise<Map<string, ReturnType<typeof bodyKindOf>>> {
  const routes = new Map<string, ReturnType<typeof bodyKindOf>>();
  for (const router of await server.platform.httpRouters()) {
    for (const layer of router.stack) {
      if (layer.methods.length === 0) continue;
      if (typeof layer.path !== 'string') throw new Error(`a route with a RegExp path cannot be described: ${String(layer.path)}`);
      for (const method of layer.methods) if (method !== 'HEAD') routes.set(`${method} ${openApiPath(layer.path)}`, bodyKindOf(layer));
    }
  }
  return routes;
}

function describedRoutes(document: Json): Set<string> {
  const routes = new Set<string>();
  for (const [path, item] of Object.entries<Json>(document.paths)) {
    for (const method of METHODS) if (item[method]) routes.add(`${method.toUpperCase()} ${path}`);
  }
  return routes;
}

describe('OpenAPI description (GET /api/v1/openapi.json)', () => {
  let server: TestServer;
  let document: Json;

  before(async () => {
    server = await startTestServer({
      SCRYPT_LOG_N: '12',
      SUPER_ADMIN_EMAIL: ADMIN.email,
      SUPER_ADMIN_PASSWORD: ADMIN.password,
      BILLING_SANDBOX_WEBHOOK_SECRET: SANDBOX_WEBHOOK_SECRET,
      CONNECTOR_MANAGER_TOKEN: CONNECTOR_MANAGER_TOKEN,
    // The orchestration routes' calls drive the dispatch queue by hand (tests/support/orchestration.ts).
    }, { orchestrationDispatcher: false });
    const response = await server.request('GET', '/api/v1/openapi.json');
    expect(response.status).to.equal(200);
    document = response.json;
  });
  after(() => server.close());

  it('is served without a credential, as valid OpenAPI 3.1', async () => {
    expect(document.openapi).to.equal('3.1.0');
    const validator = new Validator();
    const result = await validator.validate(document);
    expect(result.errors, JSON.stringify(result.errors, null, 2)).to.equal(undefined);
    expect(result.valid).to.equal(true);
  });

  it('describes every route the app registers, and no route that does not exist', async () => {
    const registered = await registeredRoutes(server);
    const described = describedRoutes(document);
    const undescribed = [...registered.keys()].filter((route) => !described.has(route));
    const unregistered = [...described].filter((route) => !registered.has(route));
    expect(undescribed, `registered but not in the OpenAPI document (describe them in the area's *.openapi.ts): ${undescribed.join(', ')}`).to.deep.equal([]);
    expect(unregistered, `in the OpenAPI document but not registered: ${unregistered.join(', ')}`).to.deep.equal([]);
    expect(registered.size).to.be.greaterThan(40);
  });

  it("describes each route's request body in the body kind the route declares", async () => {
    const mismatches: string[] = [];
    for (const [route, kind] of await registeredRoutes(server)) {
      const [method, path] = route.split(' ');
      const body = document.paths[path][method.toLowerCase()].requestBody;
      if (!body) continue;
      const types = Object.keys(body.content);
      const expected =
        kind.kind === 'json' || kind.kind === 'json_in_route' ? ['application/json'] : kind.kind === 'multipart' ? ['multipart/form-data'] : kind.kind === 'form' ? ['application/x-www-form-urlencoded'] : [...kind.types];
      if (!expected.every((type) => types.includes(type))) mismatches.push(`${route} reads ${kind.kind} but is described as ${types.join(', ')}`);
    }
    expect(mismatches).to.deep.equal([]);
  });

  it('describes Idempotency-Key on exactly the routes that honour it, with its statuses and headers', async () => {
    const honouring = new Set<string>();
    for (const router of await server.platform.httpRouters()) {
      for (const layer of router.stack) {
        if (typeof layer.path !== 'string' || !layer.stack.some(honoursIdempotencyKey)) continue;
        for (const method of layer.methods) if (method !== 'HEAD') honouring.add(`${method} ${openApiPath(layer.path)}`);
      }
    }
    const described = new Set<string>();
    for (const [path, item] of Object.entries<Json>(document.paths)) {
      for (const method of METHODS) {
        const operation = item[method];
        if (!operation?.parameters?.some((parameter: Json) => parameter.in === 'header' && parameter.name === 'Idempotency-Key')) continue;
        described.add(`${method.toUpperCase()} ${path}`);
        expect(Object.keys(operation.responses), `${method} ${path}`).to.include.members(['409', '422']);
        const success = Object.entries<Json>(operation.responses).find(([status]) => status.startsWith('2'))![1];
        expect(Object.keys(success.headers ?? {}), `${method} ${path}`).to.include('Idempotent-Replayed');
      }
    }
    expect([...honouring].sort()).to.not.be.empty;
    expect([...described].sort()).to.deep.equal([...honouring].sort());
  });

  it('describes If-Match (and 412) on conditional updates, and the ETag they and single reads answer', () => {
    const team = document.paths['/api/v1/org/teams/{id}'];
    expect(team.get.responses['200'].headers).to.have.property('ETag');
    expect(team.patch.parameters.map((parameter: Json) => parameter.name)).to.include('If-Match');
    expect(team.patch.responses).to.have.property('412');
    expect(team.patch.responses['200'].headers).to.have.property('ETag');
    expect(team.delete.responses).to.have.property('412');
    expect(team.delete.responses['204'].headers).to.equal(undefined);
  });

  it('states request bodies as the routers decode them (required fields, enums, null)', () => {
    const role = document.paths['/api/v1/org/members/{id}/role'].put.requestBody.content['application/json'].schema;
    expect(role).to.deep.equal({ type: 'object', properties: { role: { type: 'string', enum: ['owner', 'admin', 'member'] } }, required: ['role'] });
    const update = document.paths['/api/v1/org/teams/{id}'].patch.requestBody.content;
    expect(Object.keys(update)).to.deep.equal(['application/json', 'application/merge-patch+json']);
    expect(update['application/json'].schema.required).to.equal(undefined);
    expect(update['application/json'].schema.properties.description).to.deep.equal({ type: ['string', 'null'] });
    const accept = document.paths['/api/v1/team/accept-invite'].post.requestBody.content['application/json'].schema;
    expect(accept.required).to.deep.equal(['token']);
    expect(accept.properties.token).to.include({ type: 'string', minLength: 1 });
  });

  it('lists the error statuses of a route with their {code, message, field?} body', () => {
    const responses = document.paths['/api/v1/org/teams'].post.responses;
    expect(Object.keys(responses)).to.deep.equal(['201', '400', '401', '403', '409', '413', '415', '422', '503']);
    expect(responses['403']).to.deep.equal({ $ref: '#/components/responses/Forbidden' });
    // A change is answered from the read models: read_model_behind when they lag, with Retry-After.
    expect(document.components.responses.ServiceUnavailable.headers).to.have.property('Retry-After');
    expect(Object.keys(document.paths['/api/v1/org/teams'].get.responses)).to.not.include('503');
    expect(document.components.schemas.Error.required).to.deep.equal(['code', 'message']);
    // A body that refuses fields it does not know says so.
    const quotas = document.paths['/api/v1/admin/tenants/{id}/quotas'].put.requestBody.content['application/json'].schema;
    expect(quotas.allOf[0].properties.overrides).to.include({ additionalProperties: false });
    expect(document.paths['/api/v1/org/teams'].post.security).to.deep.equal([{ userToken: [] }]);
    expect(document.paths['/api/v1/admin/emails'].get.security).to.deep.equal([{ adminToken: [] }]);
    expect(document.paths['/api/v1/public/tenant-branding'].get.security).to.deep.equal([]);
    expect(document.paths['/api/v1/org/members'].get.parameters.map((parameter: Json) => parameter.name)).to.deep.equal(['role', 'status', 'limit', 'cursor']);
  });

  it('refuses to build with a route or a schema described twice', () => {
    const area = (tag: string, schema: string): ApiArea => ({
      tag,
      schemas: { [schema]: { type: 'string' } },
      routes: { '/x': { get: { summary: 'x', access: 'public', success: { status: 204, description: 'nothing' } } } },
    });
    expect(() => buildOpenApiDocument([area('a', 'A'), area('b', 'B')])).to.throw('GET /x is described twice');
    expect(() => buildOpenApiDocument([area('a', 'A'), { ...area('b', 'A'), routes: {} }])).to.throw('the schema A is described twice');
  });

  it('turns every kind of request codec into JSON Schema, and names one it cannot', () => {
    const codec = t.type({ a: t.union([t.string, t.undefined]), b: t.union([t.number, t.null]), c: t.array(t.literal('x')), d: t.partial({ e: t.boolean }) });
    expect(schemaOfCodec(codec)).to.deep.equal({
      type: 'object',
      properties: { a: { type: 'string' }, b: { type: ['number', 'null'] }, c: { type: 'array', items: { const: 'x' } }, d: { type: 'object', properties: { e: { type: 'boolean' } } } },
      required: ['b', 'c', 'd'],
    });
    expect(() => schemaOfCodec(t.tuple([t.string]))).to.throw('no JSON Schema for the codec [string]');
  });

  describe('the API answers as it says', () => {
    const ajv = new Ajv2020({ strict: false, allErrors: true });
    addFormats(ajv);
    ajv.addFormat('binary', true);
    let compiled = false;
    const answered = new Set<string>();

    /** The documented operation of a request path: `/api/v1/org/teams/abc` matches `/api/v1/org/teams/{id}`. */
    function operationFor(method: string, requestPath: string): { path: string; operation: Json } {
      const pathOnly = requestPath.split('?')[0];
      for (const [path, item] of Object.entries<Json>(document.paths)) {
        const pattern = new RegExp(`^${path.replace(/\{[^}]+\}/g, '[^/]+')}$`);
        if (pattern.test(pathOnly) && item[method.toLowerCase()]) return { path, operation: item[method.toLowerCase()] };
      }
      throw new Error(`${method} ${pathOnly} is not described`);
    }

    /** Checks the answer's status and body against the document, and returns it (`on`: another server of the same build). */
    async function call(method: string, requestPath: string, options: Parameters<TestServer['request']>[2] = {}, on: TestServer = server): Promise<TestResponse> {
      if (!compiled) {
        ajv.addSchema(document, 'openapi.json');
        compiled = true;
      }
      const response = await on.request(method, requestPath, options);
      const { path, operation } = operationFor(method, requestPath);
      const where = `${method} ${requestPath} answered ${response.status} ${response.text.slice(0, 300)}`;
      let documented: Json = operation.responses[String(response.status)];
      expect(documented, `${where}: status not documented`).to.not.equal(undefined);
      if (documented.$ref) documented = ajv.getSchema(`openapi.json${documented.$ref}`)?.schema;
      const mediaType = (response.headers.get('content-type') ?? '').split(';')[0];
      if (!documented.content) {
        expect(response.text, `${where}: documented without a body`).to.equal('');
        answered.add(`${method} ${path}`);
        return response;
      }
      expect(Object.keys(documented.content), `${where}: media type`).to.include(mediaType);
      const pointer = documented === operation.responses[String(response.status)] ? `#/paths/${path.replace(/~/g, '~0').replace(/\//g, '~1')}/${method.toLowerCase()}/responses/${response.status}` : null;
      const schema = pointer
        ? ajv.getSchema(`openapi.json${pointer}/content/${mediaType.replace(/\//g, '~1')}/schema`)
        : ajv.compile({ $ref: `openapi.json#/components/schemas/Error` });
      const bodies = mediaType === 'application/x-ndjson' ? response.text.trim().split('\n').map((line) => JSON.parse(line)) : [mediaType.endsWith('json') ? response.json : response.text];
      for (const body of bodies) expect(schema!(body), `${where}: ${JSON.stringify(schema!.errors)}`).to.equal(true);
      answered.add(`${method} ${path}`);
      return response;
    }

    let owner: Account;
    let admin: Account;
    let member: Account;
    const as = (account: Account | string) => ({ authorization: `Bearer ${typeof account === 'string' ? account : account.token}` });

    async function invitationToken(email: string): Promise<string> {
      const queued = await server.platform.eventStore.readAll({ direction: 'backwards', filter: { kind: 'event_type', types: ['EmailQueued'] }, maxCount: 500 });
      const mine = queued.find((event) => (event.data as { to: string; kind: string }).to === email && (event.data as { kind: string }).kind === 'invitation');
      const text = server.platform.secrets.open((mine!.data as { body_sealed: string }).body_sealed);
      return /invitation token is ([A-Za-z0-9_-]+)/.exec(text)![1];
    }

    before(async () => {
      owner = await registerOwner(server, 'openapi-org');
      await liftSeatLimit(server, owner.tenant_id);
      admin = await joinAs(server, await registerOwner(server, 'openapi-adm-home', 'openapi-adm@example.com'), owner.tenant_id, 'admin');
      member = await joinAs(server, await registerOwner(server, 'openapi-mem-home', 'openapi-mem@example.com'), owner.tenant_id, 'member');
    });

    it('operations, the description itself, GraphQL and the public helpers', async () => {
      await call('GET', '/health');
      await call('GET', '/ready');
      await call('GET', '/metrics');
      await call('GET', '/api/v1/openapi.json');
      await call('GET', '/graphql/schema.graphql');
      await call('GET', '/graphql');
      await call('POST', '/graphql', { body: { query: '{ me { user { id } } }' }, headers: as(owner) });
      await call('POST', '/graphql', { body: { query: '{ nope }' } });
      await call('POST', '/graphql', { body: { variables: {} } });
      await call('GET', '/api/v1/public/tenant-branding?slug=openapi-org');
      await call('GET', '/api/v1/public/tenant-branding?slug=no-such-org');
      await call('GET', '/api/v1/public/tenant-slug-available?slug=openapi-org');
      await call('GET', '/api/v1/public/tenant-slug-available?slug=x');
      const script = await call('GET', '/widget.js');
      await call('GET', '/widget.js', { headers: { 'if-none-match': script.headers.get('etag')! } });
      await call('GET', '/chat/openapi-org');
      await call('GET', '/chat/no-such-org');
    });

    it('sessions and members', async () => {
      const sessions = await call('GET', '/api/v1/me/sessions', { headers: as(member) });
      await call('DELETE', `/api/v1/me/sessions/${sessions.json.items[0].jti}-nope`, { headers: as(member) });
      await call('GET', '/api/v1/me/sessions');
      await call('GET', '/api/v1/me/notifications', { headers: as(member) });
      await call('GET', '/api/v1/me/notifications');
      await call('PATCH', '/api/v1/me/notifications', { headers: as(member), body: { orchestration_alerts: false } });
      await call('PATCH', '/api/v1/me/notifications', { headers: as(member), body: { orchestration_alerts: 'off' } });
      const unsubscribe = `/notifications/unsubscribe?token=${unsubscribeToken(server.platform.secrets, { tenant_id: member.tenant_id, user_id: member.user_id, kind: 'orchestration_alerts' })}`;
      const browser = { accept: 'text/html' };
      await call('GET', unsubscribe);
      await call('GET', unsubscribe, { headers: browser });
      await call('GET', '/notifications/unsubscribe?token=forged.0');
      await call('GET', '/notifications/unsubscribe?token=forged.0', { headers: browser });
      await call('POST', unsubscribe, { headers: { 'content-type': 'application/x-www-form-urlencoded' }, rawBody: 'List-Unsubscribe=One-Click' });
      await call('POST', unsubscribe, { headers: browser });
      await call('POST', '/notifications/unsubscribe');
      await call('POST', unsubscribe, { body: {} });
      await call('POST', '/api/v1/me/close', { headers: as(member), body: { password: 'not the password' } });
      await call('POST', '/api/v1/me/close', { headers: as(member), body: {} });
      await call('POST', '/api/v1/me/close', { body: { password: PASSWORD } });
      const leaving = await registerOwner(server, 'openapi-closing');
      await call('POST', '/api/v1/me/close', { headers: as(leaving), body: { password: PASSWORD } });
      await call('POST', '/api/v1/me/close', { headers: as(leaving), body: { password: PASSWORD, delete_organizations: true } });
      await call('GET', '/api/v1/org/roles', { headers: as(member) });
      await call('GET', '/api/v1/org/members?role=member&limit=10', { headers: as(member) });
      await call('GET', '/api/v1/org/members?limit=0', { headers: as(member) });
      await call('GET', `/api/v1/org/members/${member.user_id}`, { headers: as(member) });
      await call('PUT', `/api/v1/org/members/${member.user_id}/role`, { headers: as(member), body: { role: 'admin' } });
      await call('PUT', `/api/v1/org/members/${member.user_id}/role`, { headers: as(admin), body: { role: 'superuser' } });
      await call('PUT', `/api/v1/org/members/${member.user_id}/status`, { headers: as(owner), rawBody: 'status=disabled' });
      const memberSessions = await call('GET', `/api/v1/org/members/${member.user_id}/sessions`, { headers: as(admin) });
      expect(memberSessions.json.items).to.have.length.greaterThan(0);
      await call('DELETE', `/api/v1/org/members/${member.user_id}/sessions/none`, { headers: as(admin) });
      await call('POST', '/api/v1/org/transfer-ownership', { headers: as(owner), body: { user_id: owner.user_id } });
    });

    it('teams and workspaces', async () => {
      const workspaces = await call('GET', '/api/v1/org/workspaces', { headers: as(member) });
      const workspaceId = workspaces.json.items[0].id;
      const team = await call('POST', '/api/v1/org/teams', { headers: as(admin), body: { name: 'Docs', description: 'the docs team' } });
      await call('POST', '/api/v1/org/teams', { headers: as(admin), body: { name: 'docs' } });
      await call('GET', '/api/v1/org/teams', { headers: as(admin) });
      await call('GET', `/api/v1/org/teams/${team.json.id}`, { headers: as(admin) });
      await call('PATCH', `/api/v1/org/teams/${team.json.id}`, { headers: { ...as(admin), 'content-type': 'application/merge-patch+json' }, rawBody: '{"description": null}' });
      await call('PUT', `/api/v1/org/teams/${team.json.id}/members`, { headers: as(admin), body: { members: [{ user_id: member.user_id }] } });
      await call('PUT', `/api/v1/org/teams/${team.json.id}/members/${member.user_id}/write`, { headers: as(admin), body: { can_write_documents: true } });
      await call('PUT', `/api/v1/org/teams/${team.json.id}/workspaces`, { headers: as(admin), body: { workspace_ids: [workspaceId] } });
      await call('GET', `/api/v1/org/workspaces/${workspaceId}`, { headers: as(member) });
      await call('PUT', `/api/v1/org/workspaces/${workspaceId}/teams`, { headers: as(admin), body: { team_ids: [] } });
      await call('PUT', `/api/v1/org/workspaces/${workspaceId}/teams`, { headers: as(member), body: { team_ids: [] } });
      await call('DELETE', `/api/v1/org/teams/${team.json.id}`, { headers: as(admin) });
      await call('GET', `/api/v1/org/teams/${team.json.id}`, { headers: as(admin) });
    });

    it('the audit log', async () => {
      await call('GET', '/api/v1/org/audit-logs?action=TeamCreated', { headers: as(admin) });
      await call('GET', '/api/v1/org/audit-logs?from=yesterday', { headers: as(admin) });
      await call('GET', '/api/v1/org/audit-logs/verify', { headers: as(admin) });
      await call('GET', '/api/v1/org/audit-logs/export', { headers: as(admin) });
    });

    it('conversations', async () => {
      const { id, answer } = await answeredConversation(server, admin, { title: 'Described conversation' });
      await call('GET', '/api/v1/conversations?status=open&channel=console&q=described&from=2020-01-01&sort=last_activity_at&limit=5', { headers: as(owner) });
      await call('GET', '/api/v1/conversations?status=closed', { headers: as(owner) });
      const one = await call('GET', `/api/v1/conversations/${id}`, { headers: as(owner) });
      await call('GET', '/api/v1/conversations/none', { headers: as(owner) });
      await call('PATCH', `/api/v1/conversations/${id}`, { headers: { ...as(owner), 'if-match': one.headers.get('etag')! }, body: { title: 'Described again' } });
      await call('PATCH', `/api/v1/conversations/${id}`, { headers: { ...as(owner), 'if-match': one.headers.get('etag')! }, body: { title: 'Lost update' } });
      await call('PATCH', `/api/v1/conversations/${id}`, { headers: as(owner), body: { title: '' } });
      await call('GET', `/api/v1/conversations/${id}/messages?limit=1`, { headers: as(owner) });
      await call('POST', `/api/v1/conversations/${id}/messages`, { headers: { ...as(owner), 'idempotency-key': 'openapi-reply' }, body: { text: 'A person here.' } });
      await call('POST', `/api/v1/conversations/${id}/messages`, { headers: as(owner), body: { text: '' } });
      await call('PUT', `/api/v1/conversations/${id}/status`, { headers: as(owner), body: { status: 'resolved' } });
      await call('PUT', `/api/v1/conversations/${id}/status`, { headers: as(owner), body: { status: 'pending' } });
      await call('POST', `/api/v1/conversations/${id}/messages/${answer}/feedback`, { headers: as(owner), body: { rating: 'up', comment: 'clear' } });
      await call('POST', `/api/v1/conversations/${id}/messages/${answer}/feedback`, { headers: as(owner), body: { rating: 'down' } });
      await call('POST', `/api/v1/conversations/${id}/messages/${answer}/feedback`, { headers: as(owner), body: { rating: 'meh' } });
      await call('DELETE', `/api/v1/conversations/${id}`, { headers: { ...as(owner), 'if-match': '"0"' } });
      await call('DELETE', `/api/v1/conversations/${id}`, { headers: as(owner) });
      await call('DELETE', `/api/v1/conversations/${id}`, { headers: as(owner) });
      await call('POST', `/api/v1/conversations/${id}/erase`, { headers: as(member) });
      await call('POST', `/api/v1/conversations/${id}/erase`, { headers: as(owner) });
      await call('POST', '/api/v1/conversations/none/erase', { headers: as(owner) });
    });

    it('invitations and membership', async () => {
      await call('GET', '/api/v1/team/members', { headers: as(member) });
      const invitation = await call('POST', '/api/v1/team/invite', { headers: as(admin), body: { email: 'openapi-new@example.com', role: 'member' } });
      await call('POST', '/api/v1/team/invite', { headers: as(admin), body: { email: 'openapi-new@example.com', role: 'member' } });
      const token = await invitationToken('openapi-new@example.com');
      await call('GET', `/api/v1/team/invite-preview?token=${token}`);
      await call('GET', '/api/v1/team/invitations?status=pending', { headers: as(admin) });
      const accepted = await call('POST', '/api/v1/team/accept-invite', { body: { token, name: 'New Person', password: 'a long enough password' } });
      await call('POST', `/api/v1/team/invitations/${invitation.json.id}/revoke`, { headers: as(admin) });
      await call('POST', `/api/v1/team/invitations/${invitation.json.id}/erase`, { headers: as(admin) });
      await call('POST', '/api/v1/team/invitations/none/erase', { headers: as(admin) });
      await call('GET', '/api/v1/team/my-tenants', { headers: as(admin) });
      await call('POST', '/api/v1/team/switch-tenant', { headers: as(admin), body: { tenant_id: owner.tenant_id } });
      await call('DELETE', `/api/v1/team/members/${accepted.json.user.id}`, { headers: as(member) });
      await call('DELETE', `/api/v1/team/members/${accepted.json.user.id}`, { headers: as(admin) });
    });

    it('the super admin', async () => {
      await call('POST', '/api/v1/admin/auth/login', { body: { email: ADMIN.email, password: 'wrong password 123' } });
      const login = await call('POST', '/api/v1/admin/auth/login', { body: ADMIN });
      const emails = await call('GET', '/api/v1/admin/emails?status=queued', { headers: as(login.json.token) });
      await call('GET', '/api/v1/admin/emails', { headers: as(owner) });
      await call('GET', `/api/v1/admin/emails/${emails.json.items[0]?.id ?? 'none'}`, { headers: as(login.json.token) });
      await call('GET', '/api/v1/admin/emails/none', { headers: as(login.json.token) });
    });

    it('plans and tenant quotas (super admin)', async () => {
      const { token } = (await call('POST', '/api/v1/admin/auth/login', { body: ADMIN })).json;
      const terms = { name: 'Team', prices: [{ interval: 'month', amount: 4900, currency: 'usd' }], limits: { messages_per_month: 1000, documents: 50, users: 5, business_tools: 5 } };
      const plan = await call('POST', '/api/v1/admin/plans', { headers: as(token), body: { code: 'openapi-team', ...terms } });
      await call('POST', '/api/v1/admin/plans', { headers: as(token), body: { code: 'openapi-team', ...terms } });
      await call('POST', '/api/v1/admin/plans', { headers: as(token), body: { code: 'Bad Code', ...terms } });
      await call('GET', '/api/v1/admin/plans?status=sellable', { headers: as(token) });
      await call('GET', '/api/v1/admin/plans', { headers: as(owner) });
      await call('GET', `/api/v1/admin/plans/${plan.json.id}`, { headers: as(token) });
      await call('PUT', `/api/v1/admin/plans/${plan.json.id}`, { headers: { ...as(token), 'if-match': '"0"' }, body: { ...terms, name: 'Team plan', sellable: false } });
      await call('PUT', `/api/v1/admin/plans/${plan.json.id}`, { headers: { ...as(token), 'if-match': '"0"' }, body: terms });
      await call('DELETE', `/api/v1/admin/plans/${plan.json.id}`, { headers: as(token) });
      await call('DELETE', '/api/v1/admin/plans/free', { headers: as(token) });
      await call('GET', `/api/v1/admin/plans/${plan.json.id}`, { headers: as(token) });
      await call('GET', `/api/v1/admin/tenants/${owner.tenant_id}/quotas`, { headers: as(token) });
      await call('PUT', `/api/v1/admin/tenants/${owner.tenant_id}/quotas`, { headers: as(token), body: { overrides: { users: 10, documents: null }, reason: 'pilot' } });
      await call('PUT', `/api/v1/admin/tenants/${owner.tenant_id}/quotas`, { headers: as(token), body: { overrides: { users: -1 } } });
      await call('GET', '/api/v1/admin/tenants/none/quotas', { headers: as(token) });
      await call('GET', '/api/v1/admin/audit-logs?action=PlanCreated', { headers: as(token) });
      await call('GET', '/api/v1/admin/audit-logs?from=never', { headers: as(token) });
      await call('GET', '/api/v1/admin/audit-logs/verify', { headers: as(token) });
    });

    it("the super admin's tenants and platform settings", async () => {
      const root = as((await call('POST', '/api/v1/admin/auth/login', { body: ADMIN })).json.token);
      const created = await call('POST', '/api/v1/admin/tenants', { headers: root, body: { name: 'Described Org', slug: 'described-org', owner_email: 'described@example.com', owner_name: 'Dee' } });
      await call('POST', '/api/v1/admin/tenants', { headers: root, body: { name: 'Described Org', slug: 'described-org', owner_email: 'described@example.com' } });
      await call('POST', '/api/v1/admin/tenants', { headers: root, body: { name: 'No slug' } });
      const id = created.json.tenant.id;
      await call('GET', '/api/v1/admin/tenants?q=described&status=active&limit=5', { headers: root });
      await call('GET', '/api/v1/admin/tenants?status=gone', { headers: root });
      await call('GET', '/api/v1/admin/tenants', { headers: as(owner) });
      const one = await call('GET', `/api/v1/admin/tenants/${id}`, { headers: root });
      await call('GET', '/api/v1/admin/tenants/none', { headers: root });
      await call('PUT', `/api/v1/admin/tenants/${id}`, { headers: { ...root, 'if-match': one.headers.get('etag')! }, body: { name: 'Described Again', branding: { primary_color: '#abcdef' } } });
      await call('PUT', `/api/v1/admin/tenants/${id}`, { headers: { ...root, 'if-match': one.headers.get('etag')! }, body: { name: 'Lost Update' } });
      await call('PUT', `/api/v1/admin/tenants/${id}`, { headers: root, body: { settings: { widget_enabled: 'yes' } } });
      await call('POST', `/api/v1/admin/tenants/${id}/suspend`, { headers: root, body: { reason: 'described' } });
      await call('POST', `/api/v1/admin/tenants/${id}/suspend`, { headers: root, body: { reason: 'described' } });
      await call('POST', `/api/v1/admin/tenants/${id}/unsuspend`, { headers: root });
      await call('POST', `/api/v1/admin/tenants/${id}/unsuspend`, { headers: root });
      await call('POST', `/api/v1/admin/tenants/${owner.tenant_id}/impersonate`, { headers: root, body: {} });
      await call('POST', `/api/v1/admin/tenants/${id}/impersonate`, { headers: root, body: {} });
      await call('DELETE', `/api/v1/admin/tenants/${id}`, { headers: root });
      await call('DELETE', `/api/v1/admin/tenants/${id}`, { headers: root });
      const settings = await call('GET', '/api/v1/admin/settings', { headers: root });
      await call('PUT', '/api/v1/admin/settings', { headers: { ...root, 'if-match': settings.headers.get('etag')! }, body: { signup_open: false } });
      await call('PUT', '/api/v1/admin/settings', { headers: { ...root, 'if-match': settings.headers.get('etag')! }, body: { signup_open: true } });
      await call('PUT', '/api/v1/admin/settings', { headers: root, body: { signup_open: 'yes' } });
      await call('PUT', '/api/v1/admin/settings', { headers: root, body: { signup_open: true } });
    });

    it("the sandbox payment provider's checkout page", async () => {
      const checkout = await server.platform.paymentProvider.createCheckout({
        checkout_id: 'openapi-checkout',
        tenant_id: owner.tenant_id,
        plan: { id: 'openapi-plan', code: 'growth', name: 'Growth' },
        interval: 'month',
        amount: 4900,
        currency: 'usd',
        customer_email: null,
        success_url: `${server.url}/done`,
        cancel_url: `${server.url}/billing`,
        webhook_url: `${server.url}/api/v1/billing/webhook`,
      });
      const form = { 'content-type': 'application/x-www-form-urlencoded' };
      await call('GET', checkout.url);
      await call('GET', '/billing/sandbox/checkout/cs_sandbox_none');
      await call('POST', checkout.url, { headers: form, rawBody: 'card_number=4111111111111111&expiry=12%2F40&cvc=123' });
      await call('POST', '/billing/sandbox/checkout/cs_sandbox_none', { headers: form, rawBody: 'card_number=4242424242424242&expiry=12%2F40&cvc=123' });
    });

    it('analytics and usage (super admin)', async () => {
      const { token } = (await call('POST', '/api/v1/admin/auth/login', { body: ADMIN })).json;
      await call('GET', '/api/v1/admin/analytics/overview', { headers: as(token) });
      await call('GET', '/api/v1/admin/analytics/overview', { headers: as(owner) });
      await call('GET', '/api/v1/admin/analytics/tenants?sort=name&limit=2', { headers: as(token) });
      await call('GET', '/api/v1/admin/analytics/tenants?status=closed', { headers: as(token) });
      await call('GET', '/api/v1/admin/usage/messages?from=2026-01-01&to=2026-01-31', { headers: as(token) });
      await call('GET', '/api/v1/admin/usage/messages?from=2026-02-30', { headers: as(token) });
      await call('GET', '/api/v1/admin/usage/documents', { headers: as(token) });
      await call('GET', '/api/v1/admin/usage/revenue', { headers: as(token) });
      await call('GET', '/api/v1/admin/usage/revenue?from=2026-02-01&to=2026-01-01', { headers: as(token) });
    });

    it('billing', async () => {
      await call('GET', '/api/v1/billing/plans', { headers: as(member) });
      await call('GET', '/api/v1/billing/subscription', { headers: as(member) });
      const checkout = await call('POST', '/api/v1/billing/checkout', { headers: as(admin), body: { plan_code: 'starter', interval: 'month' } });
      await call('POST', '/api/v1/billing/checkout', { headers: as(admin), body: { plan_code: 'free', interval: 'month' } });
      await call('POST', '/api/v1/billing/checkout', { headers: as(member), body: { plan_code: 'starter', interval: 'month' } });
      await call('POST', '/api/v1/billing/confirm', { headers: as(admin), body: { checkout_id: checkout.json.id } });
      await call('POST', '/api/v1/billing/confirm', { headers: as(admin), body: { checkout_id: 'none' } });
      // Paid on the sandbox's page, which delivers its signed webhook to the platform (the
      // page then sends the browser on to the success URL, which this platform does not serve).
      const page = new URL(checkout.json.url).pathname;
      await server.request('POST', page, { headers: { 'content-type': 'application/x-www-form-urlencoded' }, rawBody: 'card_number=4242424242424242&expiry=12%2F40&cvc=123' });
      await call('POST', '/api/v1/billing/confirm', { headers: as(admin), body: { checkout_id: checkout.json.id } });
      const event = JSON.stringify({ id: 'evt_openapi', type: 'customer.created', created_at: new Date().toISOString(), data: {} });
      const signature = signSandboxWebhook(SANDBOX_WEBHOOK_SECRET, event, Math.floor(Date.now() / 1000));
      await call('POST', '/api/v1/billing/webhook', { headers: { 'content-type': 'application/json', [SANDBOX_SIGNATURE_HEADER]: signature }, rawBody: event });
      await call('POST', '/api/v1/billing/webhook', { headers: { 'content-type': 'application/json', [SANDBOX_SIGNATURE_HEADER]: 't=1,v1=00' }, rawBody: event });
      await call('GET', '/api/v1/billing/payments?limit=5', { headers: as(admin) });
      await call('GET', '/api/v1/billing/payments', { headers: as(member) });
      await call('POST', '/api/v1/billing/subscription', { headers: as(owner), body: { at_period_end: true } });
      await call('POST', '/api/v1/billing/cancel', { headers: as(owner), body: { at_period_end: false } });
      await call('POST', '/api/v1/billing/cancel', { headers: as(owner), body: {} });
    });

    it('the WhatsApp channel', async () => {
      const root = as((await call('POST', '/api/v1/admin/auth/login', { body: ADMIN })).json.token);
      const config = `/api/v1/admin/whatsapp/config?tenant_id=${owner.tenant_id}`;
      const appSecret = 'openapi-app-secret-0123456789abcd';
      await call('GET', config, { headers: root });
      await call('GET', config, { headers: as(owner) });
      await call('GET', '/api/v1/admin/whatsapp/config?tenant_id=none', { headers: root });
      await call('GET', '/api/v1/admin/whatsapp/config', { headers: root });
      await call('PUT', config, { headers: root, body: { phone_number_id: '300000000000001', display_phone_number: '+1 555 0199', verify_token: 'openapi-verify-token', app_secret: appSecret } });
      await call('PUT', config, { headers: { ...root, 'if-match': '"9"' }, body: { enabled: true } });
      await call('PUT', config, { headers: root, body: { phone_number_id: 'not digits' } });
      await call('PUT', '/api/v1/admin/whatsapp/config?tenant_id=none', { headers: root, body: { enabled: true } });
      const other = await registerOwner(server, 'openapi-wa-other');
      await call('PUT', `/api/v1/admin/whatsapp/config?tenant_id=${other.tenant_id}`, { headers: root, body: { phone_number_id: '300000000000001', verify_token: 'openapi-verify-other', app_secret: appSecret } });
      await call('GET', '/api/v1/admin/whatsapp/configs?enabled=true&limit=5', { headers: root });
      await call('GET', '/api/v1/admin/whatsapp/configs?enabled=maybe', { headers: root });
      await call('GET', '/api/v1/whatsapp/webhook?hub.mode=subscribe&hub.verify_token=openapi-verify-token&hub.challenge=1158201444');
      await call('GET', '/api/v1/whatsapp/webhook?hub.mode=subscribe&hub.verify_token=not-the-token&hub.challenge=1158201444');
      await call('GET', '/api/v1/whatsapp/webhook?hub.mode=subscribe&hub.verify_token=openapi-verify-token');
      const delivery = JSON.stringify({
        object: 'whatsapp_business_account',
        entry: [{ id: '102290129340398', changes: [{ field: 'messages', value: { messaging_product: 'whatsapp', metadata: { display_phone_number: '15550199', phone_number_id: '300000000000001' }, contacts: [{ profile: { name: 'Sheena' }, wa_id: '16505551234' }], messages: [{ from: '16505551234', id: 'wamid.openapi', timestamp: '1795860000', type: 'text', text: { body: 'Hello' } }] } }] }],
      });
      const signature = `sha256=${createHmac('sha256', appSecret).update(delivery).digest('hex')}`;
      await call('POST', '/api/v1/whatsapp/webhook', { headers: { 'content-type': 'application/json', 'x-hub-signature-256': signature }, rawBody: delivery });
      await call('POST', '/api/v1/whatsapp/webhook', { headers: { 'content-type': 'application/json', 'x-hub-signature-256': `sha256=${'0'.repeat(64)}` }, rawBody: delivery });
      await call('POST', '/api/v1/whatsapp/webhook', { headers: { 'content-type': 'application/json', 'x-hub-signature-256': signature }, rawBody: '{"object": "page"}' });
      await call('GET', `/api/v1/admin/whatsapp/outbox?tenant_id=${owner.tenant_id}&status=kept&limit=5`, { headers: root });
      await call('GET', '/api/v1/admin/whatsapp/outbox?status=lost', { headers: root });
      await call('GET', '/api/v1/admin/whatsapp/outbox', { headers: as(owner) });
    });

    it('the super admin’s payments', async () => {
      const login = await call('POST', '/api/v1/admin/auth/login', { body: ADMIN });
      await call('GET', `/api/v1/admin/payments?tenant_id=${owner.tenant_id}&status=succeeded`, { headers: as(login.json.token) });
      await call('GET', '/api/v1/admin/payments?status=refunded', { headers: as(login.json.token) });
      await call('GET', '/api/v1/admin/payments', { headers: as(owner) });
    });

    it('chat', async () => {
      const turn = await call('POST', '/api/v1/chat', { headers: { ...as(member), 'x-end-user-session': 'openapi-session' }, body: { message: 'How long do refunds take?' } });
      expect(turn.json.answer.answered_from_knowledge).to.equal(false);
      await call('POST', '/api/v1/chat', { headers: as(member), body: { message: 'And shipping?', conversation_id: turn.json.conversation_id } });
      await call('POST', '/api/v1/chat', { headers: as(member), body: { message: '' } });
      await call('POST', '/api/v1/chat', { headers: as(member), body: { message: 'Refunds?', conversation_id: 'none' } });
      await call('POST', '/api/v1/chat', { body: { message: 'Refunds?' } });
      const streamed = await call('POST', '/api/v1/chat/stream', { headers: as(member), body: { message: 'How long do refunds take?', conversation_id: turn.json.conversation_id } });
      expect(streamed.text).to.match(/^event: delta\ndata: /);
      await call('POST', '/api/v1/chat/stream', { headers: as(member), body: { message: 42 } });
      await call('POST', '/api/v1/chat/stream', { headers: as(member), body: { message: 'Refunds?', workspace_id: 'none' } });
    });

    it('the website widget and its configuration', async () => {
      const config = await call('GET', '/api/v1/tenant/widget', { headers: as(admin) });
      await call('GET', '/api/v1/tenant/widget', { headers: as(member) });
      const configured = await call('POST', '/api/v1/tenant/widget', { headers: { ...as(admin), 'if-match': config.headers.get('etag')! }, body: { title: 'Help', allowed_origins: ['https://shop.example'], theme: { radius: '8px' } } });
      await call('POST', '/api/v1/tenant/widget', { headers: { ...as(admin), 'if-match': config.headers.get('etag')! }, body: { title: 'Lost update' } });
      await call('POST', '/api/v1/tenant/widget', { headers: as(admin), body: { primary_color: 'red' } });
      await call('POST', '/api/v1/tenant/widget', { headers: as(admin), body: { workspace_id: 'none' } });
      await call('POST', '/api/v1/tenant/widget', { headers: as(admin), body: { identity_verification: 'required' } });
      const rotated = await call('POST', '/api/v1/tenant/widget/identity-secret', { headers: { ...as(admin), 'if-match': configured.headers.get('etag')! } });
      await call('POST', '/api/v1/tenant/widget/identity-secret', { headers: as(member) });
      await call('POST', '/api/v1/tenant/widget', { headers: as(admin), body: { identity_verification: 'optional' } });

      const token = await widgetTokenOf(server, owner);
      const visitor = { authorization: `Bearer ${token}`, 'x-widget-visitor': 'openapi-visitor-0123456789', origin: 'https://shop.example' };
      await call('OPTIONS', '/api/v1/widget/chat', { headers: { origin: 'https://shop.example', 'access-control-request-method': 'POST' } });
      await call('GET', '/api/v1/widget/settings', { headers: visitor });
      await call('GET', '/api/v1/widget/settings', { headers: { ...visitor, origin: 'https://evil.example' } });
      await call('GET', '/api/v1/widget/settings');
      const turn = await call('POST', '/api/v1/widget/chat', { headers: { ...visitor, 'x-end-user-token': 'openapi-end-user' }, body: { message: 'How long do refunds take?' } });
      const signed = { ...visitor, 'x-widget-user-id': 'host-user-1', 'x-widget-user-hash': identitySignature(rotated.json.identity_secret, 'host-user-1') };
      const streamed = await call('POST', '/api/v1/widget/chat', { headers: { ...signed, accept: 'text/event-stream' }, body: { message: 'And shipping?' } });
      expect(streamed.text).to.match(/^event: delta\ndata: /);
      await call('POST', '/api/v1/widget/chat', { headers: visitor, body: { message: '' } });
      await call('POST', '/api/v1/widget/chat', { headers: { ...visitor, 'x-widget-user-id': 'host-user-1', 'x-widget-user-hash': 'f'.repeat(64) }, body: { message: 'Hi' } });
      await call('POST', '/api/v1/widget/chat', { headers: visitor, body: { message: 'Refunds?', conversation_id: 'none' } });
      await call('GET', '/api/v1/widget/conversations?limit=5', { headers: visitor });
      await call('GET', '/api/v1/widget/conversations', { headers: { ...visitor, 'x-widget-visitor': 'short' } });
      const conversation = `/api/v1/widget/conversations/${turn.json.conversation_id}/messages`;
      await call('GET', `${conversation}?limit=1`, { headers: visitor });
      await call('GET', conversation, { headers: { ...visitor, 'x-widget-visitor': 'another-visitor-0123456789' } });
      await call('GET', conversation, { headers: { ...visitor, 'x-widget-visitor': 'short' } });
      await call('POST', '/api/v1/widget/identity/clear', { headers: visitor, body: { conversation_id: turn.json.conversation_id } });
      await call('POST', '/api/v1/widget/identity/clear', { headers: visitor, body: { conversation_id: 5 } });
      await call('POST', '/api/v1/widget/identity/clear', { headers: visitor, body: { conversation_id: 'none' } });
      await call('POST', `/api/v1/widget/conversations/${turn.json.conversation_id}/erase`, { headers: { ...visitor, 'x-widget-visitor': 'another-visitor-0123456789' } });
      await call('POST', `/api/v1/widget/conversations/${turn.json.conversation_id}/erase`, { headers: visitor });
      await gql(server, 'mutation { rotate_widget_token { widget_token } }', {}, owner.token);
      await call('POST', '/api/v1/widget/identity/clear', { headers: visitor, body: {} });
    });

    it('tenant configuration, feedback and analytics', async () => {
      await call('POST', '/api/v1/tenant/handoff', { headers: as(admin), body: { url: 'https://93.184.215.14/hooks/handoff' } });
      await call('GET', '/api/v1/tenant/handoff', { headers: as(admin) });
      await call('GET', '/api/v1/tenant/crm', { headers: as(member) });
      await subscribeTo(server, owner.tenant_id, 'growth');
      const handoff = await call('POST', '/api/v1/tenant/handoff', { headers: as(admin), body: { url: 'https://93.184.215.14/hooks/handoff' } });
      await call('POST', '/api/v1/tenant/handoff', { headers: { ...as(admin), 'if-match': handoff.headers.get('etag')! }, body: { url: 'https://93.184.215.14/hooks/handoff', secret: 'a-shared-secret-of-the-desk', enabled: false } });
      await call('POST', '/api/v1/tenant/handoff', { headers: { ...as(admin), 'if-match': '"0"' }, body: { url: 'https://93.184.215.14/hooks/handoff' } });
      await call('POST', '/api/v1/tenant/handoff', { headers: as(admin), body: { url: 'http://127.0.0.1/hook' } });
      await call('GET', '/api/v1/tenant/handoff', { headers: as(admin) });
      await call('GET', '/api/v1/tenant/handoff/deliveries?status=failed&limit=5', { headers: as(admin) });
      await call('GET', '/api/v1/tenant/handoff/deliveries?status=lost', { headers: as(admin) });
      const crm = await call('POST', '/api/v1/tenant/crm', { headers: as(admin), body: { kind: 'hubspot', url: 'https://93.184.215.15/crm', credential: 'pat-na1-0123456789', field_mapping: { email: 'email' } } });
      await call('POST', '/api/v1/tenant/crm', { headers: { ...as(admin), 'if-match': crm.headers.get('etag')! }, body: { kind: 'webhook', url: 'https://93.184.215.15/crm', credential: null } });
      await call('POST', '/api/v1/tenant/crm', { headers: { ...as(admin), 'if-match': '"0"' }, body: { kind: 'webhook', url: 'https://93.184.215.15/crm' } });
      await call('POST', '/api/v1/tenant/crm', { headers: as(admin), body: { kind: 'zoho', url: 'https://93.184.215.15/crm' } });
      await call('GET', '/api/v1/tenant/crm', { headers: as(admin) });
      const talk = conversationsOf(server.platform, owner.tenant_id, owner.user_id);
      const conversation = await talk.start();
      const question = await talk.ask(conversation, 'Do you ship abroad?');
      await talk.feedback(conversation, await talk.answer(conversation, question), 'up', 'thanks');
      await call('GET', '/api/v1/tenant/feedbacks?rating=up&from=2000-01-01', { headers: as(admin) });
      await call('GET', '/api/v1/tenant/feedbacks?rating=meh', { headers: as(admin) });
      await call('GET', '/api/v1/tenant/feedbacks', { headers: as(member) });
      await talk.answer(conversation, await talk.ask(conversation, 'Do you sell gift cards?'), { fromKnowledge: false });
      const unanswered = await call('GET', '/api/v1/tenant/unanswered-questions?from=2000-01-01', { headers: as(admin) });
      expect(unanswered.json.items.map((item: { question: string }) => item.question)).to.include('Do you sell gift cards?');
      await call('GET', '/api/v1/tenant/unanswered-questions?to=someday', { headers: as(admin) });
      await call('GET', '/api/v1/tenant/unanswered-questions', { headers: as(member) });
      await call('GET', '/api/v1/tenant/unanswered-questions');
      await call('GET', '/api/v1/tenant/unanswered-questions/summary?limit=5', { headers: as(admin) });
      await call('GET', '/api/v1/tenant/unanswered-questions/summary?limit=500', { headers: as(admin) });
      await call('GET', '/api/v1/tenant/unanswered-questions/summary', { headers: as(member) });
      await call('GET', '/api/v1/tenant/unanswered-questions/summary');
      await call('GET', '/api/v1/tenant/analytics', { headers: as(admin) });
      await call('GET', '/api/v1/tenant/analytics?from=2026-02-30', { headers: as(admin) });
      await call('GET', '/api/v1/tenant/analytics');
    });

    it('documents', async () => {
      const workspaceId = (await call('GET', '/api/v1/org/workspaces', { headers: as(admin) })).json.items[0].id;
      const pdf = multipartForm([{ name: 'workspace_id', value: workspaceId }, { name: 'file', filename: 'policy.pdf', content: pdfOf(['Refund policy']) }]);
      const document = await call('POST', '/api/v1/documents', { headers: { ...as(admin), ...pdf.headers }, rawBody: pdf.rawBody });
      const exe = multipartForm([{ name: 'workspace_id', value: workspaceId }, { name: 'file', filename: 'setup.pdf', content: windowsExecutable() }]);
      await call('POST', '/api/v1/documents', { headers: { ...as(admin), ...exe.headers }, rawBody: exe.rawBody });
      const noFile = multipartForm([{ name: 'workspace_id', value: workspaceId }]);
      await call('POST', '/api/v1/documents', { headers: { ...as(admin), ...noFile.headers }, rawBody: noFile.rawBody });
      await call('POST', '/api/v1/documents/text', { headers: as(admin), body: { workspace_id: workspaceId, title: 'Hours', text: 'Nine to five.' } });
      await call('POST', '/api/v1/documents/text', { headers: as(admin), body: { workspace_id: workspaceId, title: 'Hours' } });
      await call('POST', '/api/v1/documents/text', { headers: as(member), body: { workspace_id: workspaceId, title: 'Hours', text: 'x' } });
      await call('GET', `/api/v1/documents?workspace_id=${workspaceId}&status=queued&limit=10`, { headers: as(admin) });
      await call('GET', '/api/v1/documents?status=finished', { headers: as(admin) });
      await call('GET', `/api/v1/documents/${document.json.id}`, { headers: as(admin) });
      await call('GET', '/api/v1/documents/none', { headers: as(admin) });
      await call('GET', `/api/v1/documents/${document.json.id}/view`, { headers: as(admin) });
      await call('GET', '/api/v1/documents/none/view', { headers: as(admin) });
      await call('POST', `/api/v1/documents/${document.json.id}/reindex`, { headers: as(admin) });
      await call('POST', `/api/v1/documents/${document.json.id}/reindex`, { headers: { ...as(admin), 'if-match': '"0"' } });
      await call('DELETE', `/api/v1/documents/${document.json.id}`, { headers: as(admin) });
      await call('DELETE', `/api/v1/documents/${document.json.id}`, { headers: as(admin) });
    });

    it('integrations', async () => {
      const workspaceId = (await call('GET', '/api/v1/org/workspaces', { headers: as(admin) })).json.items[0].id;
      const body = { name: 'Orders API', base_url: 'https://93.184.215.16/api', auth: { kind: 'api_key', in: 'header', name: 'X-Api-Key' }, credentials: 'k-0123456789', default_headers: { Accept: 'application/json' } };
      const integration = await call('POST', `/api/v1/workspaces/${workspaceId}/integrations`, { headers: as(admin), body });
      await call('POST', `/api/v1/workspaces/${workspaceId}/integrations`, { headers: as(admin), body: { ...body, base_url: 'http://93.184.215.16/api' } });
      await call('POST', `/api/v1/workspaces/${workspaceId}/integrations`, { headers: as(member), body });
      await call('GET', `/api/v1/workspaces/${workspaceId}/integrations?limit=10`, { headers: as(admin) });
      await call('GET', '/api/v1/workspaces/none/integrations', { headers: as(admin) });
      await call('GET', `/api/v1/integrations/${integration.json.id}`, { headers: as(admin) });
      await call('GET', '/api/v1/integrations/none', { headers: as(admin) });
      await call('PATCH', `/api/v1/integrations/${integration.json.id}`, { headers: { ...as(admin), 'if-match': integration.headers.get('etag')! }, body: { auth: { kind: 'bearer' }, credentials: 'token-0123456789' } });
      await call('PATCH', `/api/v1/integrations/${integration.json.id}`, { headers: { ...as(admin), 'if-match': '"0"' }, body: { name: 'Orders' } });
      await call('PUT', `/api/v1/integrations/${integration.json.id}`, { headers: as(admin), body: { name: 'Orders' } });
      await call('PUT', `/api/v1/integrations/${integration.json.id}`, { headers: as(admin), body: { auth: { kind: 'magic' } } });
      await call('DELETE', `/api/v1/integrations/${integration.json.id}`, { headers: as(admin) });
      await call('DELETE', `/api/v1/integrations/${integration.json.id}`, { headers: as(admin) });
    });

    it('OpenAPI import', async () => {
      const workspaceId = (await call('GET', '/api/v1/org/workspaces', { headers: as(admin) })).json.items[0].id;
      const imports = `/api/v1/workspaces/${workspaceId}/integrations/import`;
      // This deployment keeps the outbound guard's defaults: a local document URL is refused.
      await call('POST', `${imports}/preview`, { headers: as(member), body: { url: 'http://127.0.0.1/openapi.json' } });
      await call('POST', `${imports}/preview`, { headers: as(admin), body: {} });
      await call('POST', '/api/v1/workspaces/none/integrations/import/preview', { headers: as(admin), body: { url: 'https://93.184.215.16/openapi.json' } });
      const petstore = multipartForm([{ name: 'file', filename: 'petstore.yaml', content: openApiFixture('petstore-expanded.yaml') }]);
      await call('POST', `${imports}/preview/upload`, { headers: { ...as(member), ...petstore.headers }, rawBody: petstore.rawBody });
      const swagger = multipartForm([{ name: 'file', filename: 'swagger.json', content: openApiFixture('swagger-2.0.json') }]);
      await call('POST', `${imports}/preview/upload`, { headers: { ...as(member), ...swagger.headers }, rawBody: swagger.rawBody });
      const body = { source: { document: openApiFixture('petstore-expanded.yaml').toString() }, integration: { base_url: 'https://93.184.215.16/pets', auth: { kind: 'bearer' }, credentials: 'token-0123456789' }, operations: ['findPets', 'deletePet'] };
      const applied = await call('POST', `${imports}/apply`, { headers: as(admin), body });
      await call('POST', `${imports}/apply`, { headers: as(member), body });
      await call('POST', `${imports}/apply`, { headers: as(admin), body: { ...body, operations: ['adoptPet'] } });
      const changed = { source: { document: openApiFixture('petstore-expanded-v2.yaml').toString() } };
      await call('POST', `/api/v1/integrations/${applied.json.integration.id}/reimport`, { headers: as(member), body: { ...changed, dry_run: true } });
      await call('POST', `/api/v1/integrations/${applied.json.integration.id}/reimport`, { headers: as(admin), body: { ...changed, add: [], removed: 'keep' } });
      await call('POST', `/api/v1/integrations/${applied.json.integration.id}/reimport`, { headers: as(admin), body: { removed: 'vanish' } });
      await call('POST', '/api/v1/integrations/none/reimport', { headers: as(admin), body: { dry_run: true } });
    });

    it('the connector-manager', async () => {
      const headers = { authorization: `Bearer ${CONNECTOR_MANAGER_TOKEN}`, 'x-svc-tenant-id': owner.tenant_id, 'x-svc-workspace-id': '*' };
      const body = { target_id: 'sdk:conn-1', endpoint: 'http://127.0.0.1:9/', signing_secret: 'a-signing-secret', request: { type: 'ping' } };
      // The guard of this server refuses a loopback address: a 502 without any network.
      await call('POST', '/connector-manager/v1/invoke', { headers, body });
      await call('POST', '/connector-manager/v1/invoke', { headers: { ...headers, authorization: 'Bearer nope' }, body });
      await call('POST', '/connector-manager/v1/invoke', { headers, body: { ...body, target_id: 'conn-1' } });
    });

    it('business tools', async () => {
      const workspaceId = (await call('GET', '/api/v1/org/workspaces', { headers: as(admin) })).json.items[0].id;
      const integration = await call('POST', `/api/v1/workspaces/${workspaceId}/integrations`, { headers: as(admin), body: { name: 'Pet store', base_url: 'https://93.184.215.16/api', auth: { kind: 'none' } } });
      const tools = `/api/v1/workspaces/${workspaceId}/tools`;
      const body = {
        integration_id: integration.json.id,
        name: 'getPet',
        description: 'Finds a pet by its id',
        method: 'GET',
        path: '/pets/{petId}',
        parameters: [{ argument: 'petId', in: 'path', name: 'petId' }],
        input_schema: { type: 'object', properties: { petId: { type: 'integer' } }, required: ['petId'] },
      };
      const tool = await call('POST', tools, { headers: as(admin), body });
      await call('POST', tools, { headers: as(admin), body: { ...body, name: 'GETPET' } });
      await call('POST', tools, { headers: as(admin), body: { ...body, input_schema: { type: 'object', properties: { petId: { type: 'whole number' } } } } });
      await call('POST', tools, { headers: as(member), body: { ...body, name: 'memberTool' } });
      await call('GET', `${tools}?source=manual&integration_id=${integration.json.id}&limit=10`, { headers: as(admin) });
      await call('GET', `${tools}?source=mine`, { headers: as(admin) });
      await call('GET', '/api/v1/workspaces/none/tools', { headers: as(admin) });
      await call('GET', `/api/v1/tools/${tool.json.id}`, { headers: as(admin) });
      await call('GET', '/api/v1/tools/none', { headers: as(admin) });
      await call('PATCH', `/api/v1/tools/${tool.json.id}`, { headers: { ...as(admin), 'if-match': tool.headers.get('etag')! }, body: { risk: 'approval_required', chat: false } });
      await call('PATCH', `/api/v1/tools/${tool.json.id}`, { headers: { ...as(admin), 'if-match': tool.headers.get('etag')! }, body: { description: 'Lost update' } });
      await call('PATCH', `/api/v1/tools/${tool.json.id}`, { headers: as(admin), body: { path: '/pets' } });
      await call('DELETE', `/api/v1/integrations/${integration.json.id}`, { headers: as(admin) });
      await call('DELETE', `/api/v1/tools/${tool.json.id}`, { headers: as(admin) });
      await call('DELETE', `/api/v1/tools/${tool.json.id}`, { headers: as(admin) });
      await call('POST', tools, { headers: as(admin), body });
      await call('DELETE', `/api/v1/integrations/${integration.json.id}?cascade=true`, { headers: as(admin) });
    });

    it('tool calls', async () => {
      // The integration is recorded at an address this deployment refuses to call: every run
      // fails at the guard (insecure_url), and nothing leaves the machine.
      await liftToolLimit(server, owner.tenant_id);
      const workspaceId = (await call('GET', '/api/v1/org/workspaces', { headers: as(admin) })).json.items[0].id;
      const integrationId = await recordIntegration(server, owner.tenant_id, workspaceId, { name: 'Refunds', base_url: 'http://127.0.0.1:9/api', auth: { kind: 'bearer' }, credentials: 'openapi-bearer-0123456789' });
      const toolId = await createToolAs(server, owner, workspaceId, {
        integration_id: integrationId,
        name: 'refund_order',
        method: 'POST',
        path: '/refunds/{orderId}',
        parameters: [{ argument: 'orderId', in: 'path', name: 'orderId' }],
        input_schema: { type: 'object', properties: { orderId: { type: 'string' } }, required: ['orderId'] },
        risk: 'approval_required',
      });
      const team = await server.request('POST', '/api/v1/org/teams', { headers: as(admin), body: { name: 'Refunders' } });
      await server.request('PUT', `/api/v1/org/teams/${team.json.id}/members`, { headers: as(admin), body: { members: [{ user_id: member.user_id, can_write_documents: true }] } });
      await server.request('PUT', `/api/v1/org/teams/${team.json.id}/workspaces`, { headers: as(admin), body: { workspace_ids: [workspaceId] } });
      const ran = await call('POST', `/api/v1/tools/${toolId}/test`, { headers: { ...as(admin), 'idempotency-key': 'openapi-tool-test', 'x-end-user-token': 'openapi-end-user' }, body: { arguments: { orderId: 'o-1' } } });
      expect(ran.json).to.include({ status: 'failed', result: null });
      const waiting = await call('POST', `/api/v1/tools/${toolId}/test`, { headers: as(member), body: { arguments: { orderId: 'o-2' } } });
      expect(waiting.status).to.equal(202);
      await call('POST', `/api/v1/tools/${toolId}/test`, { headers: as(member), body: { arguments: { orderId: 2, extra: true } } });
      await call('POST', `/api/v1/tools/${toolId}/test`, { headers: as(member), body: { arguments: 'o-3' } });
      await call('POST', '/api/v1/tools/none/test', { headers: as(admin), body: { arguments: {} } });
      await call('GET', `/api/v1/tools/${toolId}/logs?status=failed&limit=5`, { headers: as(member) });
      await call('GET', `/api/v1/tools/${toolId}/logs?status=done`, { headers: as(member) });
      await call('GET', '/api/v1/tools/none/logs', { headers: as(member) });
      await call('GET', '/api/v1/tool-calls?status=awaiting_approval', { headers: as(admin) });
      await call('GET', '/api/v1/tool-calls?status=later', { headers: as(admin) });
      await call('GET', `/api/v1/tool-calls/${waiting.json.id}`, { headers: as(member) });
      await call('GET', '/api/v1/tool-calls/none', { headers: as(member) });
      await call('POST', `/api/v1/tool-calls/${waiting.json.id}/approve`, { headers: as(member) });
      await call('POST', `/api/v1/tool-calls/${waiting.json.id}/approve`, { headers: as(admin) });
      await call('POST', `/api/v1/tool-calls/${waiting.json.id}/approve`, { headers: as(admin) });
      await call('POST', '/api/v1/tool-calls/none/approve', { headers: as(admin) });
      const refusable = await server.request('POST', `/api/v1/tools/${toolId}/test`, { headers: as(member), body: { arguments: { orderId: 'o-4' } } });
      await call('POST', `/api/v1/tool-calls/${refusable.json.id}/refuse`, { headers: as(admin), body: { reason: '' } });
      await call('POST', `/api/v1/tool-calls/${refusable.json.id}/refuse`, { headers: as(admin), body: { reason: 'Refunded by hand.' } });
      await call('POST', `/api/v1/tool-calls/${refusable.json.id}/refuse`, { headers: as(admin), body: { reason: 'Again.' } });
      await call('POST', `/api/v1/tool-calls/${refusable.json.id}/erase`, { headers: as(member) });
      await call('POST', `/api/v1/tool-calls/${refusable.json.id}/erase`, { headers: as(admin) });
      await call('POST', '/api/v1/tool-calls/none/erase', { headers: as(admin) });
      await call('POST', '/api/v1/tool-calls/none/refuse', { headers: as(member), body: { reason: 'No.' } });
    });

    it('sdk connections', async () => {
      await call('GET', '/api/v1/org/sdk-connections');
      await call('GET', '/api/v1/org/sdk-connections', { headers: as(member) });
      await call('POST', '/api/v1/org/sdk-connections', { headers: as(admin), body: { name: 'Not in plan', webhook_url: 'https://93.184.215.16' } });
      // A deployment that may call the example connector on 127.0.0.1, with a tenant on the plan that has SDK connections.
      const reachable = await startTestServer({ SCRYPT_LOG_N: '12', OUTBOUND_ALLOW_INSECURE: 'true', OUTBOUND_ALLOW_PRIVATE_NETWORKS: 'true' });
      const secret = 'openapi-connector-secret-0123456789';
      const connector = await createExampleConnector({ signingSecret: secret, otpDelivery: { send: async () => undefined } }).listen(0, '127.0.0.1');
      try {
        const tenantOwner = await registerOwner(reachable, 'openapi-sdk-org');
        await subscribeTo(reachable, tenantOwner.tenant_id, 'premium');
        const workspaceId = (await reachable.request('GET', '/api/v1/org/workspaces', { headers: as(tenantOwner) })).json.items[0].id;
        const base = '/api/v1/org/sdk-connections';
        const webhook = connector.url.replace(/\/svc$/, '');
        const created = await call('POST', base, { headers: as(tenantOwner), body: { name: 'Coffee shop', webhook_url: webhook, signing_secret: secret, enabled: true } }, reachable);
        await call('POST', base, { headers: as(tenantOwner), body: { name: 'coffee shop', webhook_url: webhook } }, reachable);
        await call('POST', base, { headers: as(tenantOwner), body: { name: 'Bad', webhook_url: 'ftp://x' } }, reachable);
        const path = `${base}/${created.json.id}`;
        await call('GET', `${base}?limit=5`, { headers: as(tenantOwner) }, reachable);
        await call('GET', `${base}/none`, { headers: as(tenantOwner) }, reachable);
        await call('POST', `${path}/test`, { headers: as(tenantOwner) }, reachable);
        await call('POST', `${path}/test?deep=true`, { headers: as(tenantOwner) }, reachable);
        await call('POST', `${path}/test?deep=maybe`, { headers: as(tenantOwner) }, reachable);
        await call('POST', `${path}/sync-tools`, { headers: as(tenantOwner), body: { workspace_id: workspaceId, auto_register: true } }, reachable);
        await call('POST', `${path}/sync-tools`, { headers: as(tenantOwner), body: { auto_register: true } }, reachable);
        await call('GET', `${path}/flows`, { headers: as(tenantOwner) }, reachable);
        await call('GET', `${path}/schedules`, { headers: as(tenantOwner) }, reachable);
        await call('GET', `${base}/none/schedules`, { headers: as(tenantOwner) }, reachable);
        // A connector with schedules: one the platform runs, one it cannot (listed with why).
        const scheduling = await createConnector({ signingSecret: secret })
          .advertise({ schedules: [{ id: 'nightly', cron: '0 2 * * *', event: 'shop.stock.sync_due' }, { id: 'broken', cron: 'every night', event: 'shop.stock.sync_due' }] })
          .listen(0, '127.0.0.1');
        try {
          const withSchedules = await call('POST', base, { headers: as(tenantOwner), body: { name: 'Warehouse', webhook_url: scheduling.url.replace(/\/svc$/, ''), signing_secret: secret, enabled: true } }, reachable);
          await call('POST', `${base}/${withSchedules.json.id}/sync-tools`, { headers: as(tenantOwner), body: {} }, reachable);
          const listed = await call('GET', `${base}/${withSchedules.json.id}/schedules`, { headers: as(tenantOwner) }, reachable);
          expect(listed.json.items.map((schedule: { problem: string | null }) => schedule.problem === null)).to.deep.equal([true, false]);
        } finally {
          await scheduling.close();
        }
        const read = await call('GET', path, { headers: as(tenantOwner) }, reachable);
        await call('PATCH', path, { headers: { ...as(tenantOwner), 'if-match': read.headers.get('etag')! }, body: { signing_secret: '', grace_seconds: 600 } }, reachable);
        await call('PATCH', path, { headers: { ...as(tenantOwner), 'if-match': read.headers.get('etag')! }, body: { name: 'Stale' } }, reachable);
        await call('PATCH', path, { headers: as(tenantOwner), body: { grace_seconds: 5 } }, reachable);
        await connector.close();
        await call('POST', `${path}/sync-tools`, { headers: as(tenantOwner), body: {} }, reachable);
        await call('DELETE', path, { headers: as(tenantOwner) }, reachable);
        await call('DELETE', path, { headers: as(tenantOwner) }, reachable);
      } finally {
        await connector.close().catch(() => undefined);
        await reachable.close();
      }
    });

    it('orchestration events', async () => {
      const emitted = await call('POST', '/api/v1/org/events', { headers: as(admin), body: { name: 'shop.order.created', source: 'shop', payload: { order: 'o-1' }, ttl_seconds: 600 } });
      await call('POST', '/api/v1/org/events', { headers: as(admin), body: { name: 'shop.order.created', idempotency_key: 'openapi-once', sequence_key: 'o-1', sequence_n: 1 } });
      await call('POST', '/api/v1/org/events', { headers: as(admin), body: { name: 'shop.order.created', idempotency_key: 'openapi-once' } });
      await call('POST', '/api/v1/org/events', { headers: as(admin), body: { name: 'Shop Order' } });
      await call('POST', '/api/v1/org/events', { headers: as(member), body: { name: 'shop.order.created' } });
      await call('POST', `/api/v1/org/events/ingest/${owner.tenant_id}`, { headers: as(owner), body: { name: 'crm.contact.updated', delay_seconds: 5 } });
      await call('POST', '/api/v1/org/events/ingest/another-tenant', { headers: as(owner), body: { name: 'crm.contact.updated' } });
      await call('GET', '/api/v1/org/events?status=queued&name=shop.order.*&limit=5', { headers: as(admin) });
      await call('GET', '/api/v1/org/events?status=lost', { headers: as(admin) });
      await call('GET', `/api/v1/org/events/${emitted.json.id}`, { headers: as(admin) });
      await call('GET', '/api/v1/org/events/none', { headers: as(admin) });
      await call('POST', `/api/v1/org/events/${emitted.json.id}/retry`, { headers: as(admin) });
      await call('POST', '/api/v1/org/events/none/retry', { headers: as(admin) });
      // Dead-lettered through the dispatch queue (the flow runner's commands), then retried.
      await failToDeadLetter(server, { event_id: emitted.json.id, tenant_id: owner.tenant_id }, null);
      await call('POST', `/api/v1/org/events/${emitted.json.id}/retry`, { headers: { ...as(admin), 'if-match': '"0"' } });
      const retried = await call('POST', `/api/v1/org/events/${emitted.json.id}/retry`, { headers: as(admin) });
      expect(retried.json.status).to.equal('queued');
      const replay = await call('POST', `/api/v1/org/events/${emitted.json.id}/replay`, { headers: as(admin), body: { reason: 'described' } });
      expect(replay.json.replay_of).to.equal(emitted.json.id);
      await call('POST', '/api/v1/org/events/none/replay', { headers: as(admin), body: {} });
      await call('GET', `/api/v1/org/events/${emitted.json.id}`, { headers: as(admin) });
      await call('POST', '/api/v1/org/events/replay', { headers: as(admin), body: { from: '2000-01-01T00:00:00Z', to: '2100-01-01T00:00:00Z', name: 'shop.order.created', limit: 1 } });
      await call('POST', '/api/v1/org/events/replay', { headers: as(admin), body: { from: '2100-01-01T00:00:00Z', to: '2000-01-01T00:00:00Z' } });
      const background = await call('POST', '/api/v1/org/events/replay', { headers: as(admin), body: { from: '2000-01-01T00:00:00Z', to: '2100-01-01T00:00:00Z', name: 'crm.contact.updated', background: true } });
      expect(background.status).to.equal(202);
      await call('GET', `/api/v1/org/events/replays/${background.json.id}`, { headers: as(admin) });
      await call('GET', '/api/v1/org/events/replays/none', { headers: as(admin) });
      await call('POST', '/api/v1/org/events/redrive', { headers: as(admin), body: { name: 'shop.order.*', limit: 10 } });
      await call('POST', '/api/v1/org/events/redrive', { headers: as(admin), body: { status: 'processed' } });
      await call('POST', '/api/v1/org/events/payloads/erase', { headers: as(admin), body: { before: '2020-01-01' } });
      await call('POST', '/api/v1/org/events/payloads/erase', { headers: as(admin), body: { before: '2100-01-01' } });
    });

    it('widget leads, feedback, handoff and speech', async () => {
      const widget = await widgetOf(server, owner);
      const visitorId = newVisitorId();
      const visitor = asVisitor(widget.token, visitorId);
      const turn = await visitorAsks(server, widget, visitorId, 'Can someone call me back?');
      await call('POST', '/api/v1/widget/leads', { headers: { ...visitor, 'idempotency-key': 'openapi-lead' }, body: { name: 'Ada Lovelace', email: 'ada@example.com', conversation_id: turn.conversation_id } });
      await call('POST', '/api/v1/widget/leads', { headers: visitor, body: { name: 'Ada Lovelace' } });
      await call('POST', '/api/v1/widget/leads', { headers: visitor, body: { email: 'ada@example.com', conversation_id: 'none' } });
      await call('POST', '/api/v1/widget/leads', { headers: { 'x-widget-visitor': visitorId }, body: { email: 'ada@example.com' } });
      const spam = await call('POST', '/api/v1/widget/leads', { headers: visitor, body: { email: 'spam@example.com' } });
      await call('DELETE', `/api/v1/tenant/leads/${spam.json.lead_id}`, { headers: as(member) });
      await call('DELETE', `/api/v1/tenant/leads/${spam.json.lead_id}`, { headers: as(admin) });
      await call('DELETE', '/api/v1/tenant/leads/none', { headers: as(admin) });
      await call('POST', `/api/v1/tenant/leads/${spam.json.lead_id}/erase`, { headers: as(member) });
      await call('POST', `/api/v1/tenant/leads/${spam.json.lead_id}/erase`, { headers: as(admin) });
      await call('POST', '/api/v1/tenant/leads/none/erase', { headers: as(admin) });
      await call('GET', '/api/v1/tenant/end-users/export?verified_user_id=openapi-customer', { headers: as(admin) });
      await call('GET', '/api/v1/tenant/end-users/export', { headers: as(admin) });
      await call('POST', '/api/v1/tenant/end-users/erase', { headers: as(admin), body: { verified_user_id: 'openapi-customer' } });
      await call('POST', '/api/v1/tenant/end-users/erase', { headers: as(admin), body: {} });
      await call('POST', '/api/v1/tenant/end-users/erase', { headers: as(member), body: { whatsapp_number: '+16505551234' } });
      await call('GET', '/api/v1/tenant/leads?crm_status=not_sent&from=2000-01-01&limit=5', { headers: as(admin) });
      await call('GET', '/api/v1/tenant/leads?crm_status=lost', { headers: as(admin) });
      await call('GET', '/api/v1/tenant/leads', { headers: as(member) });
      await call('POST', `/api/v1/widget/messages/${turn.answer!.message_id}/feedback`, { headers: visitor, body: { rating: 'up', comment: 'clear' } });
      await call('POST', `/api/v1/widget/messages/${turn.answer!.message_id}/feedback`, { headers: visitor, body: { rating: 'down' } });
      await call('POST', `/api/v1/widget/messages/${turn.user_message_id}/feedback`, { headers: visitor, body: { rating: 'up' } });
      await call('POST', `/api/v1/widget/messages/${turn.answer!.message_id}/feedback`, { headers: visitor, body: { rating: 'meh' } });
      await call('POST', `/api/v1/widget/conversations/${turn.conversation_id}/handoff`, { headers: visitor, body: { reason: 'A person, please' } });
      await call('POST', '/api/v1/widget/conversations/none/handoff', { headers: visitor, body: {} });
      await call('POST', `/api/v1/widget/conversations/${turn.conversation_id}/handoff`, { headers: { authorization: `Bearer ${widget.token}` }, body: {} });
      // This deployment has no speech server: both speech routes say so.
      const recording = multipartForm([{ name: 'file', filename: 'voice.wav', content: Buffer.from('RIFF\0\0\0\0WAVEfmt ') }]);
      await call('POST', '/api/v1/widget/stt', { headers: { ...as(member), ...recording.headers }, rawBody: recording.rawBody });
      await call('POST', '/api/v1/widget/stt', { headers: recording.headers, rawBody: recording.rawBody });
      await call('POST', '/api/v1/widget/tts', { headers: as(member), body: { text: 'Hello' } });
      await call('POST', '/api/v1/widget/tts', { headers: visitor, body: { text: 'Hello' } });
    });

    it('every described route was answered above', () => {
      const unanswered = [...describedRoutes(document)].filter((route) => !answered.has(route));
      expect(unanswered, `add a call for: ${unanswered.join(', ')}`).to.deep.equal([]);
    });
  });
});

describe('GraphQL SDL (GET /graphql/schema.graphql)', () => {
  let server: TestServer;
  before(async () => {
    server = await startTestServer();
  });
  after(() => server.close());

  it('serves the schema the server executes, as text', async () => {
    const response = await server.request('GET', '/graphql/schema.graphql');
    expect(response.status).to.equal(200);
    expect(response.headers.get('content-type')).to.equal('text/plain; charset=utf-8');
    expect(response.text).to.equal(`${printSchema(graphqlSchema())}\n`);
    expect(response.text).to.match(/type Mutation \{[^}]*\brotate_widget_token\b/s);
  });
});
