// Every operation the OpenAPI document describes, sent malformed input with the credential it
// documents (an owner's token, the super admin's, the widget's with a visitor; an owner's where
// it documents none): ids that name nothing (long, encoded NUL, spaces), each documented query parameter with
// values of the wrong kind, and JSON bodies of the wrong shape, each documented field with
// values of the wrong type. Whatever the route, the answer is a 4xx with `{code, message}`
// (an HTML page only outside the API, for the browser pages), never a 5xx; the one 5xx
// allowed is 503 `configuration_error`, a feature its operator has not configured (speech,
// here). A refusal writes nothing but the record of an access denial. Routes added later are
// covered by describing them, which openapi.test.ts requires.

import { expect } from 'chai';
import { type Account, registerOwner, widgetTokenOf } from '../support/identity';
import { type TestResponse, type TestServer, startTestServer } from '../support/server';
import { asVisitor, newVisitorId } from '../support/widget-visitors';

const ADMIN = { email: 'root@sweep.test', password: 'root password 123' };

const METHODS = ['get', 'post', 'put', 'patch', 'delete'] as const;
const PATH_IDS = ['nope', 'x'.repeat(600), '\u0000', 'a b', '..'];
const QUERY_VALUES = ['', 'x'.repeat(3000), '-1', '1e309', 'null', '[]', '9007199254740993', '2026-13-45T99:99:99Z', ' ', 'é'];
const BODY_VALUES: unknown[] = [null, -1, 1e308, 'x', 'x'.repeat(100_000), true, [], {}, [1, 'a'], { a: { b: { c: 1 } } }, '2026-01-01T00:00:00Z', ''];
/** The recorded answer to a refusal: a 403 leaves its trace for the audit log. */
const DENIAL = /^AccessDenied@/;

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = any;

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
    const credentials: Record<string, Record<string, string>> = {
      userToken: { authorization: `Bearer ${owner.token}` },
      adminToken: { authorization: `Bearer ${admin.json.token}` },
      widgetToken: asVisitor(await widgetTokenOf(server, owner), newVisitorId()),
    };
    /** The first credential the operation documents that the sweep holds; an owner's otherwise. */
    const credentialOf = (operation: Json): Record<string, string> => {
      for (const requirement of operation.security ?? document.security ?? []) {
        for (const scheme of Object.keys(requirement)) if (credentials[scheme]) return credentials[scheme];
      }
      return credentials.userToken;
    };
    const problems: string[] = [];
    let sent = 0;

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
        if (!body) continue;
        await send(as, verb, path, { rawBody: '{"broken":' }, 'broken JSON');
        for (const value of BODY_VALUES) await send(as, verb, path, { body: value }, `body ${JSON.stringify(value).slice(0, 12)}`);
        for (const field of Object.keys(body.properties ?? {})) {
          for (const value of BODY_VALUES) await send(as, verb, path, { body: { [field]: value } }, `${field}: ${JSON.stringify(value).slice(0, 12)}`);
        }
      }
    }

    expect(problems, problems.join('\n')).to.deep.equal([]);
    // The sweep reached the document's routes (a document read wrong would pass with none).
    expect(sent).to.be.greaterThan(3000);
  });
});
