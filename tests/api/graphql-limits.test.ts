// GraphQL refuses hostile queries before running them: too deep, too many fields (aliases and
// fragment uses counted), too costly; and introspection is off in production unless enabled.

import { expect } from 'chai';
import { getIntrospectionQuery } from 'graphql';
import { type Account, LOGIN, PASSWORD, gql, registerOwner } from '../support/identity';
import { type TestServer, startTestServer } from '../support/server';

const PRODUCTION = { NODE_ENV: 'production', METRICS_PUBLIC: 'true', MAIL_OUTBOX_ONLY: 'true' };

describe('GraphQL query limits', () => {
  let server: TestServer;
  let owner: Account;

  before(async () => {
    server = await startTestServer({ SCRYPT_LOG_N: '12' });
    owner = await registerOwner(server, 'limits-org');
  });
  after(() => server.close());

  it('refuses 2,000 aliases of me with 400 query_too_many_fields, before authentication', async () => {
    const query = `{ ${Array.from({ length: 2000 }, (_, i) => `a${i}: me { role }`).join(' ')} }`;
    for (const token of [owner.token, undefined]) {
      const response = await gql(server, query, {}, token);
      expect(response.status).to.equal(400);
      expect(response.json.data).to.equal(null);
      expect(response.json.errors).to.have.length(1);
      expect(response.json.errors[0].extensions).to.deep.equal({ code: 'query_too_many_fields', status: 400, limit: 300, actual: 4000 });
      expect(response.json.errors[0].message).to.match(/selects 4000 fields.*at most 300/);
    }
  });

  it('counts every use of a fragment, so nesting fragments does not multiply fields for free', async () => {
    const fragments = [
      'fragment R on MePayload { role }',
      'fragment R4 on MePayload { ...R ...R ...R ...R }',
      'fragment R16 on MePayload { ...R4 ...R4 ...R4 ...R4 }',
      'fragment R64 on MePayload { ...R16 ...R16 ...R16 ...R16 }',
    ].join(' ');
    const query = `{ ${Array.from({ length: 8 }, (_, i) => `m${i}: me { ...R64 }`).join(' ')} } ${fragments}`;
    const response = await gql(server, query, {}, owner.token);
    expect(response.status).to.equal(400);
    expect(response.json.errors[0].extensions).to.deep.include({ code: 'query_too_many_fields', actual: 8 + 8 * 64 });
  });

  it('refuses a query deeper than the limit with 400 query_too_deep', async () => {
    const deep = `{ __schema { types { ${'ofType { '.repeat(20)}name${' }'.repeat(20)} } } }`;
    const response = await gql(server, deep, {}, owner.token);
    expect(response.status).to.equal(400);
    expect(response.json.errors[0].extensions).to.deep.equal({ code: 'query_too_deep', status: 400, limit: 15, actual: 23 });
  });

  it('refuses a costly query with 400 query_too_complex and runs none of it', async () => {
    const logins = Array.from({ length: 5 }, (_, i) => `l${i}: login(email: $email, password: $password) { token }`).join(' ');
    const response = await gql(server, `mutation ($email: String!, $password: String!) { ${logins} }`, { email: owner.email, password: 'a wrong password' });
    expect(response.status).to.equal(400);
    expect(response.json.errors[0].extensions).to.deep.include({ code: 'query_too_complex', status: 400, limit: 1000 });
    expect(response.json.errors[0].extensions.actual).to.be.greaterThan(1000);
    // No login was tried: no LoginFailed, nothing appended.
    expect(await response.events()).to.deep.equal([]);

    const workspaces = `{ ${Array.from({ length: 30 }, (_, i) => `w${i}: workspaces { id name is_default created_at }`).join(' ')} }`;
    const lists = await gql(server, workspaces, {}, owner.token);
    expect(lists.status).to.equal(400);
    expect(lists.json.errors[0].extensions).to.deep.include({ code: 'query_too_complex', actual: 30 * (1 + 10 * 4) });
  });

  it('still serves what a console asks, and the standard introspection query', async () => {
    const dashboard = await gql(server, '{ me { role user { id email name email_verified } tenant { id name slug status } } workspaces { id name is_default created_at } settings { timezone display_name widget_token } }', {}, owner.token);
    expect(dashboard.status).to.equal(200);
    expect(dashboard.json.errors).to.equal(undefined);
    const login = await gql(server, LOGIN, { email: owner.email, password: PASSWORD });
    expect(login.status).to.equal(200);
    const introspection = await gql(server, getIntrospectionQuery({ descriptions: true, specifiedByUrl: true, directiveIsRepeatable: true, inputValueDeprecation: true }));
    expect(introspection.status).to.equal(200);
    expect(introspection.json.data.__schema.queryType.name).to.equal('Query');
  });

  it('answers a fragment cycle and a syntax error with 400 invalid_request', async () => {
    const cycle = await gql(server, '{ me { ...A } } fragment A on MePayload { ...B } fragment B on MePayload { ...A }', {}, owner.token);
    expect(cycle.status).to.equal(400);
    expect(cycle.json.errors[0].extensions).to.deep.equal({ code: 'invalid_request', status: 400 });
    const syntax = await gql(server, '{ me { role }', {}, owner.token);
    expect(syntax.status).to.equal(400);
    expect(syntax.json.errors[0].extensions.code).to.equal('invalid_request');
  });

  it('answers a subscription operation with 400 invalid_request: the schema has none (#9.10)', async () => {
    for (const query of ['subscription { me { role } }', 'subscription Events { events { id } }']) {
      const response = await gql(server, query, {}, owner.token);
      expect(response.status, query).to.equal(400);
      expect(response.json.data, query).to.equal(null);
      expect(response.json.errors[0].extensions, query).to.deep.equal({ code: 'invalid_request', status: 400 });
    }
  });
});

describe('GraphQL limits from the environment', () => {
  let server: TestServer;
  before(async () => {
    server = await startTestServer({ SCRYPT_LOG_N: '12', GRAPHQL_MAX_DEPTH: '2', GRAPHQL_MAX_FIELDS: '3', GRAPHQL_MAX_COST: '2' });
  });
  after(() => server.close());

  it('applies GRAPHQL_MAX_DEPTH, GRAPHQL_MAX_FIELDS and GRAPHQL_MAX_COST', async () => {
    expect((await gql(server, '{ me { user { id } } }')).json.errors[0].extensions).to.deep.include({ code: 'query_too_deep', limit: 2, actual: 3 });
    expect((await gql(server, '{ a: __typename b: __typename c: __typename d: __typename }')).json.errors[0].extensions).to.deep.include({ code: 'query_too_many_fields', limit: 3, actual: 4 });
    expect((await gql(server, '{ a: __typename b: __typename c: __typename }')).json.errors[0].extensions).to.deep.include({ code: 'query_too_complex', limit: 2, actual: 3 });
    const fine = await gql(server, '{ a: __typename b: __typename }');
    expect(fine.status).to.equal(200);
    expect(fine.json.data).to.deep.equal({ a: 'Query', b: 'Query' });
  });
});

describe('GraphQL introspection', () => {
  const INTROSPECT = '{ __schema { queryType { name } } }';

  it('is on in development and test', async () => {
    const server = await startTestServer({ NODE_ENV: 'development' });
    try {
      const response = await gql(server, INTROSPECT);
      expect(response.status).to.equal(200);
      expect(response.json.data.__schema.queryType.name).to.equal('Query');
    } finally {
      await server.close();
    }
  });

  it('is off in production: 400 introspection_disabled for __schema and __type; __typename still answers', async () => {
    const server = await startTestServer(PRODUCTION);
    try {
      for (const query of [INTROSPECT, '{ __type(name: "Query") { name } }', getIntrospectionQuery()]) {
        const response = await gql(server, query);
        expect(response.status, query).to.equal(400);
        expect(response.json.data).to.equal(null);
        expect(response.json.errors[0].extensions).to.deep.equal({ code: 'introspection_disabled', status: 400 });
        expect(response.json.errors[0].message).to.match(/GRAPHQL_INTROSPECTION=true/);
      }
      const typename = await gql(server, '{ __typename }');
      expect(typename.status).to.equal(200);
      expect(typename.json.data).to.deep.equal({ __typename: 'Query' });
      // The SDL would tell what introspection does not.
      const sdl = await server.request('GET', '/graphql/schema.graphql');
      expect(sdl.status).to.equal(404);
      expect(sdl.json.code).to.equal('not_found');
    } finally {
      await server.close();
    }
  });

  it('is on in production when GRAPHQL_INTROSPECTION=true', async () => {
    const server = await startTestServer({ ...PRODUCTION, GRAPHQL_INTROSPECTION: 'true' });
    try {
      const response = await gql(server, INTROSPECT);
      expect(response.status).to.equal(200);
      expect(response.json.data.__schema.queryType.name).to.equal('Query');
      const sdl = await server.request('GET', '/graphql/schema.graphql');
      expect(sdl.status).to.equal(200);
      expect(sdl.text).to.contain('type Query');
    } finally {
      await server.close();
    }
  });
});
