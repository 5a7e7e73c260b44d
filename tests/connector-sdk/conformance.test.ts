// Conformance of the connector SDK to spec 4.1, 5.2, 7.2 and 9: every error code and every
// HTTP status of the listening path, run as one table over both entry points (the raw
// `handle()` and real HTTP to `listen()`), with an injected clock so nothing sleeps.
import { expect } from 'chai';
import http from 'node:http';
import net from 'node:net';
import {
  ConnectorError,
  createConnector,
  protocolError,
  type Connector,
  type ConnectorServer,
} from '../../adapters/connector-sdk';
import {
  TestClock,
  expectConnectorHeaders,
  expectProtocolError,
  handleTransport,
  httpExchange,
  httpTransport,
  protocolBody,
  signed,
  type Exchange,
  type TestRequest,
  type Transport,
} from './helpers';

const NEW_SECRET = 'new-signing-secret-0123456789';
const OLD_SECRET = 'old-signing-secret-9876543210';
const OTHER_SECRET = 'someone-elses-secret';
const MAX_BODY_BYTES = 4096;
const LEAKY_MESSAGE = 'db password hunter2 at /srv/app/handlers.ts';

interface Fixture {
  clock: TestClock;
  connector: Connector;
  /** A connector under an unrelated secret, minting tokens that must not open at `connector`. */
  stranger: Connector;
  /** A connector still on the old secret only, as before a rotation. */
  beforeRotation: Connector;
  reported: unknown[];
}

function buildConnector(clock: TestClock, secrets: string[], reported: unknown[]): Connector {
  const connector = createConnector({
    signingSecrets: secrets,
    now: clock.now,
    maxBodyBytes: MAX_BODY_BYTES,
    resumeTokenTtlSeconds: 600,
    onError: (error) => reported.push(error),
  });
  connector.tool<{ message: string; count?: number; reply_to?: string }>('echo', {
    description: 'Echoes its input and the context it received',
    input_schema: {
      type: 'object',
      properties: {
        message: { type: 'string', minLength: 1 },
        count: { type: 'integer', minimum: 1, maximum: 3 },
        reply_to: { type: 'string', format: 'email' },
      },
      required: ['message'],
      additionalProperties: false,
    },
    handler: (context) => ({
      output: {
        message: context.parameters.message,
        trace_id: context.trace_id,
        request_id: context.request_id,
        organization_id: context.organization_id ?? null,
        conversation_id: context.conversation_id ?? null,
        channel: context.channel ?? null,
        identity: context.identity ?? null,
        authentication: context.authentication ?? null,
        person: context.person ?? null,
        platform: context.platform ?? null,
      },
    }),
  });
  connector.tool<{ item: string }>('confirm_order', {
    description: 'Asks for a code before confirming',
    input_schema: { type: 'object', properties: { item: { type: 'string' } }, required: ['item'] },
    handler: ({ parameters }) => ({ challenge: { kind: 'otp', length: 4 }, state: { expected: '4321', item: parameters.item } }),
    resume: (context, { state, challenge_response }) => {
      const sealed = state as { expected: string; item: string };
      if (challenge_response !== sealed.expected) return protocolError('denied', 'Wrong code');
      return { output: { confirmed: sealed.item, trace_id: context.trace_id }, authentication_context: { method: 'otp' } };
    },
  });
  connector.tool<{ code: 'denied' | 'customer_not_found' | 'person_not_found' | 'configuration_error' }>('fail_with', {
    description: 'Throws the protocol error it is asked for',
    input_schema: { type: 'object', properties: { code: { type: 'string' } }, required: ['code'] },
    handler: ({ parameters }) => {
      throw new ConnectorError(parameters.code, `Failed with ${parameters.code}`);
    },
  });
  connector.tool('use_storage', {
    description: 'Touches installation storage, which an external connector does not have',
    handler: async (context) => {
      await context.storage.set('key', 'value');
      return { output: {} };
    },
  });
  connector.tool('explode', {
    description: 'Throws an unexpected error carrying secrets',
    handler: () => {
      throw new Error(LEAKY_MESSAGE);
    },
  });
  connector.tool('no_output', {
    description: 'Returns nothing usable',
    handler: () => ({}) as { output: Record<string, unknown> },
  });
  connector.advertise({ flows: [{ id: 'welcome', label: 'Welcome flow' }], organization: { version: 1, tasks: [{ id: 't', label: 'T', priority: 'high' }] } });
  return connector;
}

function newFixture(): Fixture {
  const clock = new TestClock();
  const reported: unknown[] = [];
  return {
    clock,
    reported,
    connector: buildConnector(clock, [NEW_SECRET, OLD_SECRET], reported),
    stranger: buildConnector(clock, [OTHER_SECRET], reported),
    beforeRotation: buildConnector(clock, [OLD_SECRET], reported),
  };
}

/** One row of the table: a request built against the fixture, and what must come back. */
interface Row {
  name: string;
  request(fixture: Fixture): TestRequest;
  expect(exchange: Exchange, fixture: Fixture): void;
}

const sign = (fixture: Fixture, body: Record<string, unknown> | string | Buffer, extra: Partial<Parameters<typeof signed>[1]> = {}) =>
  signed(body, { secret: NEW_SECRET, clock: fixture.clock, ...extra });

const ok = (type: string) => (exchange: Exchange) => {
  expect(exchange.status, exchange.text).to.equal(200);
  expect(exchange.json).to.have.property('type', type);
};

const notFound = (exchange: Exchange) => {
  expect(exchange.status).to.equal(404);
  expect(exchange.json).to.deep.equal({ error: 'not_found' });
};

const ROWS: Row[] = [
  // 200: valid requests
  {
    name: 'ping answers pong with versions',
    request: (f) => sign(f, protocolBody('ping')),
    expect: (x) => {
      ok('pong')(x);
      expect(x.json).to.deep.equal({ type: 'pong', protocol_version: '1', sdk_version: x.headers['x-svc-version'] });
    },
  },
  {
    name: 'tools.list answers tools only',
    request: (f) => sign(f, protocolBody('tools.list')),
    expect: (x) => {
      ok('tools.list')(x);
      const body = x.json as Record<string, unknown>;
      expect(body).to.not.have.property('flows');
      expect(body).to.not.have.property('organization');
      const echo = (body.tools as Record<string, unknown>[]).find((tool) => tool.name === 'echo');
      expect(echo).to.include({ description: 'Echoes its input and the context it received', auth: 'none', chat: true });
      expect(echo).to.have.nested.property('input_schema.type', 'object');
    },
  },
  {
    name: 'capabilities.list answers tools, flows, metadata and versions',
    request: (f) => sign(f, protocolBody('capabilities.list')),
    expect: (x) => {
      ok('capabilities.list')(x);
      const body = x.json as Record<string, unknown>;
      expect(body.tools).to.have.length(6);
      expect(body.flows).to.deep.equal([{ id: 'welcome', label: 'Welcome flow' }]);
      expect(body.organization).to.deep.equal({ version: 1, tasks: [{ id: 't', label: 'T', priority: 'high' }] });
      expect(body).to.include({ protocol_version: '1', sdk_name: x.headers['x-svc-sdk'], sdk_version: x.headers['x-svc-version'] });
    },
  },
  {
    name: 'tool.invoke runs the handler with the request context',
    request: (f) =>
      sign(
        f,
        protocolBody('tool.invoke', {
          tool: 'echo',
          parameters: { message: 'hi', count: 2 },
          organization_id: 'org-1',
          conversation_id: 'conv-1',
          channel: 'widget',
          identity: { email: 'a@example.com' },
          authentication: { method: 'otp' },
          person: null,
          platform: { storage: {} },
          request_id: 'req-context',
        }),
      ),
    expect: (x) => {
      ok('result')(x);
      expect((x.json as { output: unknown }).output).to.deep.equal({
        message: 'hi',
        trace_id: 'req-context',
        request_id: 'req-context',
        organization_id: 'org-1',
        conversation_id: 'conv-1',
        channel: 'widget',
        identity: { email: 'a@example.com' },
        authentication: { method: 'otp' },
        person: null,
        platform: { storage: {} },
      });
    },
  },
  {
    name: 'the trace id header reaches the tool context',
    request: (f) => sign(f, protocolBody('tool.invoke', { tool: 'echo', parameters: { message: 'hi' } }), { headers: { 'x-svc-trace-id': 'trace-77' } }),
    expect: (x) => {
      ok('result')(x);
      expect(x.json).to.have.nested.property('output.trace_id', 'trace-77');
    },
  },
  {
    name: 'optional fields sent as null are treated as absent',
    request: (f) => sign(f, protocolBody('tool.invoke', { tool: 'echo', parameters: { message: 'hi' }, conversation_id: null, channel: null })),
    expect: (x) => {
      ok('result')(x);
      expect(x.json).to.have.nested.property('output.conversation_id', null);
    },
  },
  {
    name: 'a request without x-svc-protocol header is accepted',
    request: (f) => sign(f, protocolBody('ping'), { omit: ['x-svc-protocol'] }),
    expect: ok('pong'),
  },
  {
    name: 'a body exactly at the size limit is accepted',
    request: (f) => {
      const body = protocolBody('ping', { padding: '' });
      const padding = MAX_BODY_BYTES - Buffer.byteLength(JSON.stringify(body));
      return sign(f, JSON.stringify({ ...body, padding: 'x'.repeat(padding) }));
    },
    expect: ok('pong'),
  },

  // 401: signature (spec 5.2)
  {
    name: 'tampered body is refused 401',
    request: (f) => {
      const request = sign(f, protocolBody('tool.invoke', { tool: 'echo', parameters: { message: 'pay 1' } }));
      return { ...request, body: (request.body as string).replace('pay 1', 'pay 9') };
    },
    expect: (x) => expectProtocolError(x, 401, 'invalid_signature'),
  },
  {
    name: 'wrong secret is refused 401',
    request: (f) => signed(protocolBody('ping'), { secret: OTHER_SECRET, clock: f.clock }),
    expect: (x) => expectProtocolError(x, 401, 'invalid_signature'),
  },
  {
    name: 'rotation: the new secret verifies',
    request: (f) => signed(protocolBody('ping'), { secret: NEW_SECRET, clock: f.clock }),
    expect: ok('pong'),
  },
  {
    name: 'rotation: the old secret still verifies during the grace period',
    request: (f) => signed(protocolBody('ping'), { secret: OLD_SECRET, clock: f.clock }),
    expect: ok('pong'),
  },
  {
    name: 'timestamp 300 s in the past (just inside the window) is accepted',
    request: (f) => sign(f, protocolBody('ping'), { timestamp: f.clock.seconds - 300 }),
    expect: ok('pong'),
  },
  {
    name: 'timestamp 301 s in the past (just outside the window) is refused 401',
    request: (f) => sign(f, protocolBody('ping'), { timestamp: f.clock.seconds - 301 }),
    expect: (x) => expectProtocolError(x, 401, 'invalid_signature'),
  },
  {
    name: 'timestamp 300 s in the future (just inside the window) is accepted',
    request: (f) => sign(f, protocolBody('ping'), { timestamp: f.clock.seconds + 300 }),
    expect: ok('pong'),
  },
  {
    name: 'timestamp 301 s in the future (just outside the window) is refused 401',
    request: (f) => sign(f, protocolBody('ping'), { timestamp: f.clock.seconds + 301 }),
    expect: (x) => expectProtocolError(x, 401, 'invalid_signature'),
  },
  {
    name: 'missing x-svc-signature is refused 401',
    request: (f) => sign(f, protocolBody('ping'), { omit: ['x-svc-signature'] }),
    expect: (x) => expectProtocolError(x, 401, 'invalid_signature'),
  },
  {
    name: 'missing x-svc-timestamp is refused 401',
    request: (f) => sign(f, protocolBody('ping'), { omit: ['x-svc-timestamp'] }),
    expect: (x) => expectProtocolError(x, 401, 'invalid_signature'),
  },
  {
    name: 'an unsigned request is refused 401',
    request: (f) => sign(f, protocolBody('ping'), { omit: ['x-svc-signature', 'x-svc-timestamp', 'x-svc-protocol'] }),
    expect: (x) => expectProtocolError(x, 401, 'invalid_signature'),
  },
  {
    name: 'uppercase hex signature is refused 401 (spec says lowercase)',
    request: (f) => {
      const request = sign(f, protocolBody('ping'));
      return { ...request, headers: { ...request.headers, 'x-svc-signature': request.headers['x-svc-signature'].replace(/^v1=/, '').toUpperCase().replace(/^/, 'v1=') } };
    },
    expect: (x) => expectProtocolError(x, 401, 'invalid_signature'),
  },
  {
    name: 'a non-numeric timestamp is refused 401',
    request: (f) => sign(f, protocolBody('ping'), { timestamp: undefined, headers: { 'x-svc-timestamp': `${f.clock.seconds}.0` } }),
    expect: (x) => expectProtocolError(x, 401, 'invalid_signature'),
  },
  {
    name: 'broken JSON without a valid signature is refused 401 (signature before parsing)',
    request: (f) => signed('{"type": "ping"', { secret: OTHER_SECRET, clock: f.clock }),
    expect: (x) => expectProtocolError(x, 401, 'invalid_signature'),
  },
  {
    name: 'a bad signature with a mismatching protocol header is 401 (signature first)',
    request: (f) => signed(protocolBody('ping'), { secret: OTHER_SECRET, clock: f.clock, headers: { 'x-svc-protocol': '2' } }),
    expect: (x) => expectProtocolError(x, 401, 'invalid_signature'),
  },

  // 404: method and path (spec 4.1 rule 1)
  { name: 'GET is 404', request: (f) => sign(f, protocolBody('ping'), { method: 'GET' }), expect: notFound },
  { name: 'PUT is 404', request: (f) => sign(f, protocolBody('ping'), { method: 'PUT' }), expect: notFound },
  { name: 'a wrong path is 404', request: (f) => sign(f, protocolBody('ping'), { path: '/svc-other' }), expect: notFound },
  { name: 'a sub-path is 404', request: (f) => sign(f, protocolBody('ping'), { path: '/svc/extra' }), expect: notFound },
  {
    name: 'an unsigned request to a wrong path is 404 (route before signature)',
    request: (f) => sign(f, protocolBody('ping'), { path: '/', omit: ['x-svc-signature'] }),
    expect: notFound,
  },
  {
    name: 'a query string does not change the path',
    request: (f) => sign(f, protocolBody('ping'), { path: '/svc?probe=1' }),
    expect: ok('pong'),
  },

  // 413: body size
  {
    name: 'an oversized body is 413, before the signature is checked',
    request: (f) => signed(JSON.stringify(protocolBody('ping', { padding: 'x'.repeat(MAX_BODY_BYTES) })), { secret: OTHER_SECRET, clock: f.clock }),
    expect: (x) => expectProtocolError(x, 413, 'invalid_request'),
  },

  // 400: protocol header and broken JSON (spec 9)
  {
    name: 'a mismatching x-svc-protocol header is 400 protocol_mismatch',
    request: (f) => sign(f, protocolBody('ping'), { headers: { 'x-svc-protocol': '2' } }),
    expect: (x) => expectProtocolError(x, 400, 'protocol_mismatch'),
  },
  {
    name: 'a mismatching protocol header with broken JSON is 400 protocol_mismatch (header before JSON)',
    request: (f) => sign(f, '{not json', { headers: { 'x-svc-protocol': '2' } }),
    expect: (x) => expectProtocolError(x, 400, 'protocol_mismatch'),
  },
  {
    name: 'signed broken JSON is 400 invalid_request',
    request: (f) => sign(f, '{"protocol_version": "1", "type": "ping"'),
    expect: (x) => expectProtocolError(x, 400, 'invalid_request'),
  },
  {
    name: 'a signed empty body is 400 invalid_request',
    request: (f) => sign(f, ''),
    expect: (x) => expectProtocolError(x, 400, 'invalid_request'),
  },

  // 200 {type:'error'}: protocol-level errors (spec 7.2)
  {
    name: "body protocol_version '2' is 200 protocol_mismatch",
    request: (f) => sign(f, { ...protocolBody('ping'), protocol_version: '2' }),
    expect: (x) => expectProtocolError(x, 200, 'protocol_mismatch'),
  },
  {
    name: 'a body that is not an object is 200 invalid_request',
    request: (f) => sign(f, '[1,2,3]'),
    expect: (x) => expectProtocolError(x, 200, 'invalid_request'),
  },
  {
    name: 'a missing request_id is 200 invalid_request naming it',
    request: (f) => sign(f, { protocol_version: '1', type: 'ping' }),
    expect: (x) => {
      expectProtocolError(x, 200, 'invalid_request');
      expect(x.json).to.have.property('message').that.includes('request_id');
    },
  },
  {
    name: 'an unknown request type is 200 invalid_request',
    request: (f) => sign(f, protocolBody('tool.delete')),
    expect: (x) => {
      expectProtocolError(x, 200, 'invalid_request');
      expect(x.json).to.have.property('message').that.includes('type');
    },
  },
  {
    name: 'tool.invoke without tool is 200 invalid_request',
    request: (f) => sign(f, protocolBody('tool.invoke', { parameters: {} })),
    expect: (x) => expectProtocolError(x, 200, 'invalid_request'),
  },
  {
    name: 'tool.resume without tool is 200 invalid_request',
    request: (f) => sign(f, protocolBody('tool.resume', { resume_token: 'x', challenge_response: '1' })),
    expect: (x) => expectProtocolError(x, 200, 'invalid_request'),
  },
  {
    name: 'tool.resume without resume_token is 200 invalid_request',
    request: (f) => sign(f, protocolBody('tool.resume', { tool: 'confirm_order', challenge_response: '1' })),
    expect: (x) => {
      expectProtocolError(x, 200, 'invalid_request');
      expect(x.json).to.have.property('message').that.includes('resume_token');
    },
  },
  {
    name: 'tool.resume without challenge_response is 200 invalid_request',
    request: (f) => sign(f, protocolBody('tool.resume', { tool: 'confirm_order', resume_token: 'x' })),
    expect: (x) => {
      expectProtocolError(x, 200, 'invalid_request');
      expect(x.json).to.have.property('message').that.includes('challenge_response');
    },
  },
  {
    name: 'an unknown tool is 200 not_found',
    request: (f) => sign(f, protocolBody('tool.invoke', { tool: 'no_such_tool', parameters: {} })),
    expect: (x) => expectProtocolError(x, 200, 'not_found'),
  },
  {
    name: 'an unknown resume token is 200 not_found',
    request: (f) => sign(f, protocolBody('tool.resume', { tool: 'confirm_order', resume_token: 'AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA', challenge_response: '4321' })),
    expect: (x) => expectProtocolError(x, 200, 'not_found'),
  },
  {
    name: 'parameters missing a required field are 200 invalid_request naming it',
    request: (f) => sign(f, protocolBody('tool.invoke', { tool: 'echo', parameters: {} })),
    expect: (x) => {
      expectProtocolError(x, 200, 'invalid_request');
      expect(x.json).to.have.property('message', 'parameters.message is required');
    },
  },
  {
    name: 'parameters of the wrong type are 200 invalid_request naming the field',
    request: (f) => sign(f, protocolBody('tool.invoke', { tool: 'echo', parameters: { message: 'hi', count: 1.5 } })),
    expect: (x) => {
      expectProtocolError(x, 200, 'invalid_request');
      expect(x.json).to.have.property('message', 'parameters.count must be an integer');
    },
  },
  {
    name: 'parameters out of range are 200 invalid_request naming the field',
    request: (f) => sign(f, protocolBody('tool.invoke', { tool: 'echo', parameters: { message: 'hi', count: 4 } })),
    expect: (x) => expect(x.json).to.have.property('message', 'parameters.count must be at most 3'),
  },
  {
    name: 'parameters breaking a format the tool advertises are 200 invalid_request naming the field',
    request: (f) => sign(f, protocolBody('tool.invoke', { tool: 'echo', parameters: { message: 'hi', reply_to: 'not an address' } })),
    expect: (x) => {
      expectProtocolError(x, 200, 'invalid_request');
      expect(x.json).to.have.property('message', 'parameters.reply_to must be a valid email');
    },
  },
  {
    name: 'undeclared parameters are 200 invalid_request when additionalProperties is false',
    request: (f) => sign(f, protocolBody('tool.invoke', { tool: 'echo', parameters: { message: 'hi', admin: true } })),
    expect: (x) => {
      expectProtocolError(x, 200, 'invalid_request');
      expect(x.json).to.have.property('message', 'parameters.admin is not allowed');
    },
  },
  ...(['denied', 'customer_not_found', 'person_not_found', 'configuration_error'] as const).map(
    (code): Row => ({
      name: `a handler throwing ${code} answers 200 ${code}`,
      request: (f) => sign(f, protocolBody('tool.invoke', { tool: 'fail_with', parameters: { code } })),
      expect: (x) => {
        expectProtocolError(x, 200, code);
        expect(x.json).to.have.property('message', `Failed with ${code}`);
      },
    }),
  ),
  {
    name: 'storage without an installation scope is 200 configuration_error',
    request: (f) => sign(f, protocolBody('tool.invoke', { tool: 'use_storage' })),
    expect: (x) => expectProtocolError(x, 200, 'configuration_error'),
  },

  // 500: uncaught errors (spec 7.2)
  {
    name: 'a throwing handler is 500 internal_error without leaking the error',
    request: (f) => sign(f, protocolBody('tool.invoke', { tool: 'explode' })),
    expect: (x, f) => {
      expect(x.status).to.equal(500);
      expect(x.json).to.deep.equal({ type: 'error', code: 'internal_error', message: 'Internal error' });
      expect(x.text).to.not.include('hunter2');
      expect(x.text).to.not.include('handlers.ts');
      expect(f.reported.some((error) => error instanceof Error && error.message === LEAKY_MESSAGE)).to.equal(true);
    },
  },
  {
    name: 'a handler returning no output is 500 internal_error',
    request: (f) => sign(f, protocolBody('tool.invoke', { tool: 'no_output' })),
    expect: (x) => expect(x.json).to.deep.equal({ type: 'error', code: 'internal_error', message: 'Internal error' }),
  },
];

function challengeToken(exchange: Exchange): string {
  expect(exchange.status, exchange.text).to.equal(200);
  expect(exchange.json).to.have.property('type', 'challenge');
  expect(exchange.json).to.have.deep.property('challenge', { kind: 'otp', length: 4 });
  return (exchange.json as { resume_token: string }).resume_token;
}

function resumeRequest(fixture: Fixture, token: string, answer: string, fields: Record<string, unknown> = {}): TestRequest {
  return sign(fixture, protocolBody('tool.resume', { tool: 'confirm_order', resume_token: token, challenge_response: answer, ...fields }));
}

function runConformance(entryPoint: 'handle' | 'listen'): void {
  let fixture: Fixture;
  let server: ConnectorServer | undefined;
  let transport: Transport;

  before(async () => {
    fixture = newFixture();
    if (entryPoint === 'listen') {
      server = await fixture.connector.listen(0, '127.0.0.1');
      transport = httpTransport(() => server as ConnectorServer);
    } else {
      transport = handleTransport(() => fixture.connector);
    }
  });

  after(async () => {
    await server?.close();
  });

  beforeEach(() => {
    fixture.clock.ms = new TestClock().ms;
  });

  for (const row of ROWS) {
    it(row.name, async () => {
      const exchange = await transport.send(row.request(fixture));
      expectConnectorHeaders(exchange);
      expect(exchange.headers['content-type']).to.match(/^application\/json/);
      row.expect(exchange, fixture);
    });
  }

  describe('challenge then resume', () => {
    const invoke = () => sign(fixture, protocolBody('tool.invoke', { tool: 'confirm_order', parameters: { item: 'kettle' }, organization_id: 'org-1' }));

    it('the right answer resumes the call, with the sealed state', async () => {
      const token = challengeToken(await transport.send(invoke()));
      const resumed = await transport.send(resumeRequest(fixture, token, '4321', { organization_id: 'org-1', request_id: 'req-resume' }));
      expectConnectorHeaders(resumed);
      expect(resumed.status).to.equal(200);
      expect(resumed.json).to.deep.equal({
        type: 'result',
        output: { confirmed: 'kettle', trace_id: 'req-resume' },
        authentication_context: { method: 'otp' },
      });
    });

    it('a wrong answer is 200 denied', async () => {
      const token = challengeToken(await transport.send(invoke()));
      expectProtocolError(await transport.send(resumeRequest(fixture, token, '0000', { organization_id: 'org-1' })), 200, 'denied');
    });

    it('a reused token is 200 not_found', async () => {
      const token = challengeToken(await transport.send(invoke()));
      expect((await transport.send(resumeRequest(fixture, token, '4321', { organization_id: 'org-1' }))).json).to.have.property('type', 'result');
      const again = await transport.send(resumeRequest(fixture, token, '4321', { organization_id: 'org-1' }));
      expectProtocolError(again, 200, 'not_found');
      expect(again.json).to.have.property('message').that.includes('already used');
    });

    it('a token used with a wrong answer cannot be retried', async () => {
      const token = challengeToken(await transport.send(invoke()));
      await transport.send(resumeRequest(fixture, token, '0000', { organization_id: 'org-1' }));
      expectProtocolError(await transport.send(resumeRequest(fixture, token, '4321', { organization_id: 'org-1' })), 200, 'not_found');
    });

    it('an expired token is 200 not_found', async () => {
      const token = challengeToken(await transport.send(invoke()));
      fixture.clock.advanceSeconds(601);
      const late = await transport.send(resumeRequest(fixture, token, '4321', { organization_id: 'org-1' }));
      expectProtocolError(late, 200, 'not_found');
      expect(late.json).to.have.property('message').that.includes('expired');
    });

    it('a token still inside its lifetime resumes', async () => {
      const token = challengeToken(await transport.send(invoke()));
      fixture.clock.advanceSeconds(599);
      expect((await transport.send(resumeRequest(fixture, token, '4321', { organization_id: 'org-1' }))).json).to.have.property('type', 'result');
    });

    it('a token sealed under another secret is 200 not_found', async () => {
      const request = signed(protocolBody('tool.invoke', { tool: 'confirm_order', parameters: { item: 'x' } }), { secret: OTHER_SECRET, clock: fixture.clock });
      const foreign = await fixture.stranger.handle({ method: 'POST', path: '/svc', headers: request.headers, rawBody: request.body });
      const token = (JSON.parse(foreign.body) as { resume_token: string }).resume_token;
      expect(token).to.be.a('string');
      expectProtocolError(await transport.send(resumeRequest(fixture, token, '4321')), 200, 'not_found');
    });

    it('a token sealed before a rotation (old secret) still resumes during the grace period', async () => {
      const request = signed(protocolBody('tool.invoke', { tool: 'confirm_order', parameters: { item: 'grinder' } }), { secret: OLD_SECRET, clock: fixture.clock });
      const before = await fixture.beforeRotation.handle({ method: 'POST', path: '/svc', headers: request.headers, rawBody: request.body });
      const token = (JSON.parse(before.body) as { resume_token: string }).resume_token;
      const resumed = await transport.send(resumeRequest(fixture, token, '4321'));
      expect(resumed.json).to.have.nested.property('output.confirmed', 'grinder');
    });

    it('a tampered token is 200 not_found', async () => {
      const token = challengeToken(await transport.send(invoke()));
      const tampered = token.slice(0, 20) + (token[20] === 'A' ? 'B' : 'A') + token.slice(21);
      expectProtocolError(await transport.send(resumeRequest(fixture, tampered, '4321', { organization_id: 'org-1' })), 200, 'not_found');
    });

    it('a token resumed under another tool is 200 not_found', async () => {
      const token = challengeToken(await transport.send(invoke()));
      const request = sign(fixture, protocolBody('tool.resume', { tool: 'echo', resume_token: token, challenge_response: '4321', organization_id: 'org-1' }));
      expectProtocolError(await transport.send(request), 200, 'not_found');
    });

    it('a token resumed for another organization is 200 not_found', async () => {
      const token = challengeToken(await transport.send(invoke()));
      expectProtocolError(await transport.send(resumeRequest(fixture, token, '4321', { organization_id: 'org-2' })), 200, 'not_found');
    });
  });

  if (entryPoint === 'listen') {
    describe('HTTP specifics', () => {
      it('HEAD is 404', async () => {
        const exchange = await httpExchange((server as ConnectorServer).port, { method: 'HEAD', headers: {}, body: '' });
        expect(exchange.status).to.equal(404);
        expectConnectorHeaders(exchange);
      });

      it('an oversized chunked body (no content-length) is 413', async () => {
        const request = sign(fixture, JSON.stringify(protocolBody('ping', { padding: 'x'.repeat(MAX_BODY_BYTES * 3) })));
        const exchange = await httpExchange((server as ConnectorServer).port, { ...request, chunked: true });
        expectProtocolError(exchange, 413, 'invalid_request');
        expectConnectorHeaders(exchange);
      });

      it('a signed chunked body within the limit is answered', async () => {
        const exchange = await httpExchange((server as ConnectorServer).port, { ...sign(fixture, protocolBody('ping')), chunked: true });
        expect(exchange.json).to.have.property('type', 'pong');
      });

      it('the server keeps answering after a 413', async () => {
        const big = sign(fixture, JSON.stringify(protocolBody('ping', { padding: 'x'.repeat(MAX_BODY_BYTES) })));
        expect((await httpExchange((server as ConnectorServer).port, big)).status).to.equal(413);
        expect((await httpExchange((server as ConnectorServer).port, sign(fixture, protocolBody('ping')))).status).to.equal(200);
      });

      it('answers many concurrent requests on kept-alive connections, each with its own answer', async () => {
        const agent = new http.Agent({ keepAlive: true, maxSockets: 8 });
        try {
          const answers = await Promise.all(
            Array.from({ length: 60 }, (_, index) => {
              const request = sign(fixture, protocolBody('tool.invoke', { tool: 'echo', parameters: { message: `concurrent-${index}` } }));
              return new Promise<string>((resolve, reject) => {
                const outgoing = http.request(
                  { host: '127.0.0.1', port: (server as ConnectorServer).port, method: 'POST', path: '/svc', headers: request.headers, agent },
                  (response) => {
                    const chunks: Buffer[] = [];
                    response.on('data', (chunk: Buffer) => chunks.push(chunk));
                    response.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
                  },
                );
                outgoing.on('error', reject);
                outgoing.end(request.body);
              });
            }),
          );
          answers.forEach((text, index) => expect(text).to.include(`"concurrent-${index}"`));
        } finally {
          agent.destroy();
        }
      });

      it('answers pipelined requests on one connection in order', async () => {
        const requests = [sign(fixture, protocolBody('ping')), sign(fixture, protocolBody('tool.invoke', { tool: 'echo', parameters: { message: 'pipelined-second' } }))];
        const wire = requests
          .map((request) => {
            const body = Buffer.from(request.body as string, 'utf8');
            const headers = Object.entries({ ...request.headers, host: '127.0.0.1', 'content-length': String(body.length) }).map(([name, value]) => `${name}: ${value}\r\n`);
            return `POST /svc HTTP/1.1\r\n${headers.join('')}\r\n${body.toString('utf8')}`;
          })
          .join('');
        const text = await new Promise<string>((resolve, reject) => {
          const socket = net.connect((server as ConnectorServer).port, '127.0.0.1', () => socket.end(wire));
          let received = '';
          socket.on('data', (chunk: Buffer) => (received += chunk.toString('utf8')));
          socket.on('end', () => resolve(received));
          socket.on('error', reject);
        });
        expect(text.match(/HTTP\/1\.1 200 OK/g)).to.have.length(2);
        expect(text.indexOf('"pong"')).to.be.greaterThan(-1);
        expect(text.indexOf('"pong"')).to.be.lessThan(text.indexOf('pipelined-second'));
      });

      it('keeps answering when clients leave before their answers are sent', async () => {
        const port = (server as ConnectorServer).port;
        const request = sign(fixture, protocolBody('ping'));
        const body = Buffer.from(request.body as string, 'utf8');
        const headers = Object.entries({ ...request.headers, host: '127.0.0.1', 'content-length': String(body.length) }).map(([name, value]) => `${name}: ${value}\r\n`);
        const wire = `POST /svc HTTP/1.1\r\n${headers.join('')}\r\n${body.toString('utf8')}`;
        await Promise.all(
          Array.from(
            { length: 20 },
            () =>
              new Promise<void>((resolve) => {
                const socket = net.connect(port, '127.0.0.1', () => {
                  socket.write(wire);
                  socket.destroy();
                  resolve();
                });
                socket.on('error', () => resolve());
              }),
          ),
        );
        const exchange = await httpExchange(port, sign(fixture, protocolBody('ping')));
        expect(exchange.json).to.have.property('type', 'pong');
      });

      it('answers carry a content-length, not chunked encoding', async () => {
        const exchange = await httpExchange((server as ConnectorServer).port, sign(fixture, protocolBody('ping')));
        expect(exchange.headers['content-length']).to.equal(String(Buffer.byteLength(exchange.text)));
        expect(exchange.headers).to.not.have.property('transfer-encoding');
        const accented = await httpExchange(
          (server as ConnectorServer).port,
          sign(fixture, protocolBody('tool.invoke', { tool: 'echo', parameters: { message: 'crème brûlée 🍮' } })),
        );
        expect(accented.headers['content-length']).to.equal(String(Buffer.byteLength(accented.text)));
        expect(accented.text).to.include('crème brûlée 🍮');
      });
    });
  } else {
    describe('raw-request specifics', () => {
      it('header names in any case are understood', async () => {
        const request = sign(fixture, protocolBody('tool.invoke', { tool: 'echo', parameters: { message: 'hi' } }), { headers: { 'x-svc-trace-id': 'T-1' } });
        const upper = Object.fromEntries(Object.entries(request.headers).map(([name, value]) => [name.toUpperCase(), value]));
        const response = await fixture.connector.handle({ method: 'post', path: '/svc', headers: upper, rawBody: Buffer.from(request.body) });
        expect(response.status).to.equal(200);
        expect(JSON.parse(response.body)).to.have.nested.property('output.trace_id', 'T-1');
      });

      it('repeated headers given as arrays use the first value', async () => {
        const request = sign(fixture, protocolBody('ping'));
        const headers = { ...request.headers, 'x-svc-signature': [request.headers['x-svc-signature'], 'v1=00'] };
        const response = await fixture.connector.handle({ method: 'POST', path: '/svc', headers, rawBody: request.body });
        expect(response.status).to.equal(200);
      });

      it('a Uint8Array body is accepted', async () => {
        const request = sign(fixture, protocolBody('ping'));
        const bytes = new Uint8Array(Buffer.from(request.body));
        const response = await fixture.connector.handle({ method: 'POST', path: '/svc', headers: request.headers, rawBody: bytes });
        expect(response.status).to.equal(200);
      });
    });
  }
}

describe('connector SDK conformance (spec 4.1, 5.2, 7.2, 9)', () => {
  describe('through handle()', () => runConformance('handle'));
  describe('through listen() over HTTP', () => runConformance('listen'));
});
