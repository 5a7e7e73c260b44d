// Every operation the OpenAPI document describes, sent malformed input with the credential it
// documents (an owner's token, the super admin's, the widget's with a visitor; an owner's where
// it documents none): ids that name nothing (long, encoded NUL, spaces), each documented query
// parameter with values of the wrong kind, and JSON bodies of the wrong shape, each documented
// field with values of the wrong type; the parameters and bodies once more on a path naming
// real records (a team, a workspace, an event, a conversation and its message, a tool, an
// integration, the widget visitor's conversation, another organization for the admin's routes),
// so that they are checked rather than stopped at 404.
//
// Whatever the route, the answer is a 4xx with `{code, message}` (an HTML page only outside the
// API, for the browser pages), never a 5xx; the one 5xx allowed is 503 `configuration_error`, a
// feature its operator has not configured (speech, here). A refusal writes nothing but the
// record of an access denial. Routes added later are swept once described, which
// openapi.test.ts requires.

import { expect } from 'chai';
import { type Account, registerOwner, widgetTokenOf } from '../support/identity';
import { type TestResponse, type TestServer, startTestServer } from '../support/server';
import { asVisitor, newVisitorId, visitorAsks, widgetOf } from '../support/widget-visitors';
import { answeredConversation } from '../support/conversations';
import { createToolAs, recordIntegration } from '../support/tools';
import { PLANS } from '../../projections/plans';

const ADMIN = { email: 'root@sweep.test', password: 'root password 123' };

const METHODS = ['get', 'post', 'put', 'patch', 'delete'] as const;
const PATH_IDS = ['nope', 'x'.repeat(600), '\u0000', 'a b', '..'];
const QUERY_VALUES = ['', 'x'.repeat(3000), '-1', '1e309', 'null', '[]', '9007199254740993', '2026-13-45T99:99:99Z', ' ', 'é'];
const BODY_VALUES: unknown[] = [null, -1, 1e308, 'x', 'x'.repeat(100_000), true, [], {}, [1, 'a'], { a: { b: { c: 1 } } }, '2026-01-01T00:00:00Z', ''];
/** The recorded answer to a refusal: a 403 leaves its trace for the audit log. */
const DENIAL = /^AccessDenied@/;

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = any;

/** Ids of records the sweep's routes may name: by the path parameter's own name, or by the collection before `{id}`. */
interface RealRecords {
  byParameter: Record<string, string>;
  byCollection: Record<string, string>;
}

async function realRecords(server: TestServer, owner: Account, visitorId: string): Promise<RealRecords> {
  const as = { authorization: `Bearer ${owner.token}` };
  const other = await registerOwner(server, 'malformed-input-other');
  const workspaceId = (await server.request('GET', '/api/v1/org/workspaces', { headers: as })).json.items[0].id as string;
  const team = await server.request('POST', '/api/v1/org/teams', { headers: as, body: { name: 'Sweepers' } });
  const event = await server.request('POST', '/api/v1/org/events', { headers: as, body: { name: 'sweep.order.created' } });
  const conversation = await answeredConversation(server, owner, { title: 'Swept' });
  const integrationId = await recordIntegration(server, owner.tenant_id, workspaceId, { name: 'Swept API', base_url: 'http://127.0.0.1:9/api', auth: { kind: 'none' } });
  const toolId = await createToolAs(server, owner, workspaceId, {
    integration_id: integrationId,
    name: 'swept_tool',
    method: 'GET',
    path: '/orders',
    parameters: [],
    input_schema: { type: 'object', properties: {} },
    risk: 'read',
  });
  const visit = await visitorAsks(server, await widgetOf(server, owner), visitorId, 'Where is my order?');
  const plans = await server.platform.readStore.collection(PLANS).find({ limit: 1 });
  for (const created of [team, event]) expect(created.status, created.text).to.equal(201);
  return {
    byParameter: { user_id: owner.user_id, tenant_id: owner.tenant_id, workspace_id: workspaceId, message_id: conversation.answer },
    byCollection: {
      '/api/v1/org/members': owner.user_id,
      '/api/v1/org/teams': team.json.id,
      '/api/v1/org/workspaces': workspaceId,
      '/api/v1/org/events': event.json.id,
      '/api/v1/conversations': conversation.id,
      '/api/v1/tools': toolId,
      '/api/v1/integrations': integrationId,
      '/api/v1/widget/conversations': visit.conversation_id,
      ...(visit.answer ? { '/api/v1/widget/messages': visit.answer.message_id } : {}),
      // The admin's routes act on another organization than the owner's, who sweeps on.
      '/api/v1/admin/tenants': other.tenant_id,
      ...(plans.items[0] ? { '/api/v1/admin/plans': plans.items[0].id as string } : {}),
    },
  };
}

/** The template with each parameter set to a real record's id; null when one of them names none the sweep holds. */
function realPath(template: string, records: RealRecords): string | null {
  let unresolved = false;
  const path = template.replace(/\{([^}]+)\}/g, (_whole, name: string, offset: number) => {
    const id = records.byParameter[name] ?? (name === 'id' ? records.byCollection[template.slice(0, offset - 1)] : undefined);
    if (id === undefined) unresolved = true;
    return encodeURIComponent(id ?? '');
  });
  return unresolved ? null : path;
}

describe('malformed input on every documented route: a 4xx with {code, message}, never a 5xx', function () {
  // About seven thousand requests.
  this.timeout(180_000);
  let server: TestServer;
  let owner: Account;

  before(async () => {
    server = await startTestServer({ SCRYPT_LOG_N: '12', SUPER_ADMIN_EMAIL: ADMIN.email, SUPER_ADMIN_PASSWORD: ADMIN.password }, { orchestrationDispatcher: false });
    owner = await registerOwner(server, 'malformed-input-org');
  });
  after(() => server.close());

  it('answers each one as documented, and a refusal changes nothing', async () => {
    const document: Json = (await server.request('GET', '/api/v1/openapi.json')).json;
    const admin = await server.request('POST', '/api/v1/admin/auth/login', { body: ADMIN });
    expect(admin.status, admin.text).to.equal(200);
    const visitorId = newVisitorId();
    const credentials: Record<string, Record<string, string>> = {
      userToken: { authorization: `Bearer ${owner.token}` },
      adminToken: { authorization: `Bearer ${admin.json.token}` },
      widgetToken: asVisitor(await widgetTokenOf(server, owner), visitorId),
    };
    /** The first credential the operation documents that the sweep holds; an owner's otherwise. */
    const credentialOf = (operation: Json): Record<string, string> => {
      for (const requirement of operation.security ?? document.security ?? []) {
        for (const scheme of Object.keys(requirement)) if (credentials[scheme]) return credentials[scheme];
      }
      return credentials.userToken;
    };
    const records = await realRecords(server, owner, visitorId);
    const problems: string[] = [];
    let sent = 0;
    let resolved = 0;

    const send = async (headers: Record<string, string>, method: string, path: string, options: { body?: unknown; rawBody?: string }, what: string): Promise<void> => {
      sent += 1;
      const head = await server.platform.eventStore.headPosition();
      const typed = options.rawBody === undefined ? headers : { ...headers, 'content-type': 'application/json' };
      const response: TestResponse = await server.request(method, path, { headers: typed, ...options });
      const where = `${method} ${path.slice(0, 80)} (${what})`;
      const type = response.headers.get('content-type') ?? '';
      if (response.status >= 500) {
        if (!(response.status === 503 && response.json?.code === 'configuration_error')) problems.push(`${where}: ${response.status} ${response.text.slice(0, 160)}`);
        return;
      }
      if (response.status < 400) return;
      if (type.includes('text/html')) {
        if (path.startsWith('/api/') || path.startsWith('/graphql')) problems.push(`${where}: ${response.status} as an HTML page`);
      } else if (typeof response.json?.code !== 'string' || typeof response.json?.message !== 'string') {
        problems.push(`${where}: ${response.status} without {code, message}: ${response.text.slice(0, 120)}`);
      }
      if ((await server.platform.eventStore.headPosition()) === head) return;
      const written = (await response.events()).filter((event) => !DENIAL.test(event));
      if (written.length > 0) problems.push(`${where}: ${response.status} and wrote ${written.join(', ')}`);
    };

    for (const [template, item] of Object.entries<Json>(document.paths)) {
      for (const method of METHODS) {
        const operation = item[method];
        if (!operation) continue;
        const verb = method.toUpperCase();
        const as = credentialOf(operation);
        const pathWith = (id: string): string => template.replace(/\{[^}]+\}/g, encodeURIComponent(id));
        for (const id of PATH_IDS) await send(as, verb, pathWith(id), {}, `id ${JSON.stringify(id.slice(0, 12))}`);
        const path = pathWith('nope');
        const query = [...(item.parameters ?? []), ...(operation.parameters ?? [])].filter((parameter: Json) => parameter.in === 'query');
        for (const { name } of query) {
          for (const value of QUERY_VALUES) await send(as, verb, `${path}?${name}=${encodeURIComponent(value)}`, {}, `${name}=${JSON.stringify(value.slice(0, 12))}`);
          await send(as, verb, `${path}?${name}=a&${name}=b`, {}, `${name} twice`);
        }
        const body = operation.requestBody?.content?.['application/json']?.schema;
        const sendBodies = async (target: string): Promise<void> => {
          if (!body) return;
          await send(as, verb, target, { rawBody: '{"broken":' }, 'broken JSON');
          for (const value of BODY_VALUES) await send(as, verb, target, { body: value }, `body ${JSON.stringify(value).slice(0, 12)}`);
          for (const field of Object.keys(body.properties ?? {})) {
            for (const value of BODY_VALUES) await send(as, verb, target, { body: { [field]: value } }, `${field}: ${JSON.stringify(value).slice(0, 12)}`);
          }
        };
        await sendBodies(path);
        // The same on records that exist (never a DELETE: the records serve the routes after it).
        const real = template.includes('{') && verb !== 'DELETE' ? realPath(template, records) : null;
        if (real === null) continue;
        resolved += 1;
        for (const { name } of query) for (const value of QUERY_VALUES) await send(as, verb, `${real}?${name}=${encodeURIComponent(value)}`, {}, `${name}=${JSON.stringify(value.slice(0, 12))}`);
        await sendBodies(real);
      }
    }

    expect(problems, problems.join('\n')).to.deep.equal([]);
    // The sweep reached the document's routes (a document read wrong would pass with none), and
    // real records on the routes that take a body on one.
    expect(sent).to.be.greaterThan(3000);
    expect(resolved).to.be.greaterThan(20);
  });
});
