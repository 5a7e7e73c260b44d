// The platform's connector client (adapters/connector-client): signed protocol requests to the
// example connector of the SDK, run in-process, and to scripted servers answering garbage,
// hanging, or closing the connection. Every call either answers the expected type or rejects
// with a ConnectorCallError naming its reason; nothing else escapes.

import { expect } from 'chai';
import { verifySignature } from '../../adapters/connector-sdk/signing';
import type { ConnectorServer } from '../../adapters/connector-sdk';
import { createExampleConnector } from '../../adapters/connector-sdk/example/connector';
import { SignedConnectorClient, connectorEndpointUrl } from '../../adapters/connector-client/connector-client';
import { ConnectorCallError, type ConnectorExchange, type ConnectorFailureReason, type ConnectorRequest, type ConnectorTarget } from '../../application/ports/connector-client';
import { GuardedOutboundHttp } from '../../infrastructure/outbound/signed-http';
import { systemClock } from '../../infrastructure/system';
import { type ScriptedConnector, closeConnection, closedPort, cutShort, hang, json, pong, raw, startScriptedConnector } from '../support/scripted-connector';

const SECRET = 'example-connector-secret-0123456789';
const open = { allowInsecureUrls: true, allowPrivateNetworks: true };
const strict = { allowInsecureUrls: false, allowPrivateNetworks: false };
const MAX_RESPONSE_BYTES = 64 * 1024;

const client = (policy = open, timeoutMs = 5000): SignedConnectorClient =>
  new SignedConnectorClient(new GuardedOutboundHttp(policy), { timeoutMs, maxResponseBytes: MAX_RESPONSE_BYTES, clock: systemClock });

let requestCounter = 0;
const requestOf = (type: ConnectorRequest['type'], fields: Partial<ConnectorRequest> = {}): ConnectorRequest => {
  requestCounter += 1;
  return { type, request_id: `client-test-${requestCounter}`, ...fields };
};

/** The ConnectorCallError a call rejects with (fails the test when it answers). */
async function failureOf(call: Promise<ConnectorExchange>): Promise<ConnectorCallError> {
  try {
    const exchange = await call;
    expect.fail(`expected a failure, got ${JSON.stringify(exchange)}`);
  } catch (error) {
    expect(error).to.be.instanceOf(ConnectorCallError);
    return error as ConnectorCallError;
  }
  throw new Error('unreachable');
}

async function expectFailure(call: Promise<ConnectorExchange>, reason: ConnectorFailureReason, detail?: RegExp): Promise<ConnectorCallError> {
  const error = await failureOf(call);
  expect(error.reason, error.message).to.equal(reason);
  if (detail) expect(error.detail).to.match(detail);
  expect(error.latencyMs).to.be.at.least(0);
  return error;
}

describe('connector client: the example connector', () => {
  let connector: ConnectorServer;
  let target: ConnectorTarget;
  const codes: string[] = [];

  before(async () => {
    connector = await createExampleConnector({ signingSecret: SECRET, otpDelivery: { send: ({ code }) => void codes.push(code) } }).listen(0, '127.0.0.1');
    target = { endpoint: `http://127.0.0.1:${connector.port}`, signingSecret: SECRET };
  });
  after(() => connector.close());

  it('pings: a signed ping gets a pong of protocol 1', async () => {
    const exchange = await client().call(target, requestOf('ping'));
    expect(exchange.status).to.equal(200);
    expect(exchange.answer).to.include({ type: 'pong', protocol_version: '1' });
    expect(exchange.latency_ms).to.be.a('number').and.at.least(0);
  });

  it('lists tools and capabilities', async () => {
    const tools = await client().call(target, requestOf('tools.list'));
    expect(tools.answer.type).to.equal('tools.list');
    if (tools.answer.type !== 'tools.list') return;
    expect(tools.answer.tools.map((tool) => tool.name)).to.have.members(['search_products', 'order_status', 'approve_refund', 'notify_warehouse']);
    const capabilities = await client().call(target, requestOf('capabilities.list'));
    expect(capabilities.answer.type).to.equal('capabilities.list');
    if (capabilities.answer.type !== 'capabilities.list') return;
    expect(capabilities.answer.flows.map((flow) => flow.id)).to.deep.equal(['prepare_order', 'order_delay_follow_up']);
    expect(capabilities.answer.organization?.tasks?.[0]).to.deep.equal({ id: 'review_refund', label: 'Review a refund request', priority: 'high' });
  });

  it('invokes a tool and gets its result', async () => {
    const exchange = await client().call(target, requestOf('tool.invoke', { tool: 'search_products', parameters: { query: 'grinder' } }));
    expect(exchange.answer.type).to.equal('result');
    if (exchange.answer.type !== 'result') return;
    expect(exchange.answer.output.total).to.equal(1);
  });

  it('invokes the OTP-protected tool: a challenge, then tool.resume with the code gives the result', async () => {
    codes.length = 0;
    const invoked = await client().call(target, requestOf('tool.invoke', { tool: 'order_status', parameters: { order_id: 'A-1001' }, conversation_id: 'conv-1', channel: 'widget' }));
    expect(invoked.answer.type).to.equal('challenge');
    if (invoked.answer.type !== 'challenge') return;
    expect(invoked.answer.challenge).to.include({ kind: 'otp', destination: '***1234' });
    expect(codes).to.have.length(1);
    const resumed = await client().call(target, requestOf('tool.resume', { tool: 'order_status', resume_token: invoked.answer.resume_token, challenge_response: codes[0] }));
    expect(resumed.answer.type).to.equal('result');
    if (resumed.answer.type !== 'result') return;
    expect(resumed.answer.output).to.include({ order_id: 'A-1001', status: 'shipped' });
    expect(resumed.answer.authentication_context).to.deep.equal({ method: 'otp', order_id: 'A-1001' });
  });

  it("answers the connector's own errors of a tool call as answers: a wrong code is `denied`, an unknown tool `not_found`", async () => {
    const invoked = await client().call(target, requestOf('tool.invoke', { tool: 'order_status', parameters: { order_id: 'A-1002' } }));
    if (invoked.answer.type !== 'challenge') return expect.fail(`expected a challenge, got ${invoked.answer.type}`);
    const denied = await client().call(target, requestOf('tool.resume', { tool: 'order_status', resume_token: invoked.answer.resume_token, challenge_response: 'nope' }));
    expect(denied.answer).to.include({ type: 'error', code: 'denied' });
    const unknown = await client().call(target, requestOf('tool.invoke', { tool: 'no_such_tool' }));
    expect(unknown.answer).to.include({ type: 'error', code: 'not_found' });
  });

  it('fails `invalid_signature` when the secret is not the connector\'s', async () => {
    const error = await expectFailure(client().call({ ...target, signingSecret: 'another-secret-of-someone-else' }, requestOf('ping')), 'invalid_signature', /HTTP 401: Signature does not match/);
    expect(error.status).to.equal(401);
  });

  it('posts to {endpoint}/svc whether the endpoint ends in a slash or in /svc already', async () => {
    for (const endpoint of [`http://127.0.0.1:${connector.port}/`, `http://127.0.0.1:${connector.port}/svc`, `http://127.0.0.1:${connector.port}/svc/`]) {
      expect((await client().call({ ...target, endpoint }, requestOf('ping'))).answer.type, endpoint).to.equal('pong');
    }
  });
});

describe('connector client: what it sends', () => {
  let server: ScriptedConnector;

  before(async () => {
    server = await startScriptedConnector(pong);
  });
  after(() => server.close());
  beforeEach(() => {
    server.calls.length = 0;
    server.answerWith(pong);
  });

  it('signs the exact body per spec 5.2, which the SDK verifier accepts, with the protocol and trace headers', async () => {
    await client().call({ endpoint: server.url, signingSecret: SECRET, traceId: 'trace-abc-123' }, requestOf('ping', { organization_id: 'org-1' }));
    const [call] = server.calls;
    expect(call.path).to.equal('/svc');
    expect(call.headers).to.include({ 'x-svc-protocol': '1', 'x-svc-trace-id': 'trace-abc-123', 'content-type': 'application/json' });
    expect(call.json).to.deep.include({ protocol_version: '1', type: 'ping', organization_id: 'org-1' });
    const nowSeconds = Math.floor(Date.now() / 1000);
    const check = verifySignature({ secrets: [SECRET], signature: call.headers['x-svc-signature'], timestamp: call.headers['x-svc-timestamp'], rawBody: call.body, nowSeconds, maxSkewSeconds: 300 });
    expect(check).to.deep.equal({ valid: true, secretIndex: 0 });
    expect(verifySignature({ secrets: ['another secret'], signature: call.headers['x-svc-signature'], timestamp: call.headers['x-svc-timestamp'], rawBody: call.body, nowSeconds, maxSkewSeconds: 300 }).valid).to.equal(false);
  });

  it('forwards the request id as the trace id by default, the end user and the tenancy when the target has them', async () => {
    const request = requestOf('tool.invoke', { tool: 'order_status' });
    server.answerWith(json(200, { type: 'result', output: {} }));
    await client().call({ endpoint: server.url, signingSecret: SECRET, endUser: { token: 'eu-token', session: 'eu-session' }, tenantId: 't-1', workspaceId: 'w-1' }, request);
    await client().call({ endpoint: server.url, signingSecret: SECRET, endUser: { token: 'eu-token', session: null }, tenantId: 't-1' }, request);
    await client().call({ endpoint: server.url, signingSecret: SECRET }, request);
    const [full, partial, bare] = server.calls;
    expect(full.headers).to.include({ 'x-svc-trace-id': request.request_id, 'x-end-user-token': 'eu-token', 'x-end-user-session': 'eu-session', 'x-svc-tenant-id': 't-1', 'x-svc-workspace-id': 'w-1' });
    expect(partial.headers).to.include({ 'x-end-user-token': 'eu-token', 'x-svc-workspace-id': '*' });
    expect(partial.headers).to.not.have.property('x-end-user-session');
    for (const name of ['x-end-user-token', 'x-end-user-session', 'x-svc-tenant-id', 'x-svc-workspace-id']) expect(bare.headers).to.not.have.property(name);
  });

  it('keeps the path of an endpoint under which the connector lives, and its query', async () => {
    await client().call({ endpoint: `${server.url}/shop/?key=1`, signingSecret: SECRET }, requestOf('ping'));
    expect(server.calls[0].path).to.equal('/shop/svc?key=1');
  });
});

describe('connector client: endpoint URLs', () => {
  it('adds /svc once, whatever slashes the endpoint ends with', () => {
    expect(connectorEndpointUrl('https://c.example.com')).to.equal('https://c.example.com/svc');
    expect(connectorEndpointUrl('https://c.example.com/')).to.equal('https://c.example.com/svc');
    expect(connectorEndpointUrl('https://c.example.com//')).to.equal('https://c.example.com/svc');
    expect(connectorEndpointUrl('https://c.example.com/svc')).to.equal('https://c.example.com/svc');
    expect(connectorEndpointUrl('https://c.example.com/svc/')).to.equal('https://c.example.com/svc');
    expect(connectorEndpointUrl('https://c.example.com/shop')).to.equal('https://c.example.com/shop/svc');
    expect(connectorEndpointUrl('https://c.example.com/shop/svc#top')).to.equal('https://c.example.com/shop/svc');
    expect(connectorEndpointUrl('not a url')).to.equal('not a url');
  });
});

describe('connector client: answers it cannot use', () => {
  let server: ScriptedConnector;
  const target = (): ConnectorTarget => ({ endpoint: server.url, signingSecret: SECRET });

  before(async () => {
    server = await startScriptedConnector(pong);
  });
  after(() => server.close());

  it('`bad_response` for an answer that is not JSON, saying what came', async () => {
    server.answerWith(raw(200, '<html>Welcome to nginx</html>'));
    await expectFailure(client().call(target(), requestOf('ping')), 'bad_response', /HTTP 200: the answer is not JSON \("<html>Welcome to nginx<\/html>"\)/);
    server.answerWith(raw(200, ''));
    await expectFailure(client().call(target(), requestOf('ping')), 'bad_response', /not JSON \(empty body\)/);
    server.answerWith(json(200, [1, 2]));
    await expectFailure(client().call(target(), requestOf('ping')), 'bad_response', /not a JSON object/);
  });

  it('`bad_response` naming the field of the answer that is wrong', async () => {
    server.answerWith(json(200, { type: 'tools.list', tools: [{ name: 'a' }, { name: 42 }] }));
    await expectFailure(client().call(target(), requestOf('tools.list')), 'bad_response', /^HTTP 200: tools\[1\]\.name: expected string, got 42$/);
    server.answerWith(json(200, { type: 'capabilities.list', tools: [] }));
    await expectFailure(client().call(target(), requestOf('capabilities.list')), 'bad_response', /flows: expected Array<UnknownRecord>, got nothing/);
    server.answerWith(json(200, { type: 'challenge', challenge: {} }));
    await expectFailure(client().call(target(), requestOf('tool.invoke', { tool: 't' })), 'bad_response', /resume_token: expected string, got nothing/);
    server.answerWith(json(200, { type: 'error', code: 'denied' }));
    await expectFailure(client().call(target(), requestOf('tool.invoke', { tool: 't' })), 'bad_response', /an error answer with message: expected string, got nothing/);
  });

  it('`bad_response` for an answer of another type than the request expects', async () => {
    server.answerWith(pong);
    await expectFailure(client().call(target(), requestOf('capabilities.list')), 'bad_response', /type: expected capabilities\.list, got "pong"/);
    await expectFailure(client().call(target(), requestOf('tool.invoke', { tool: 't' })), 'bad_response', /type: expected result, challenge or error, got "pong"/);
    server.answerWith(json(200, { type: 'result', output: {} }));
    await expectFailure(client().call(target(), requestOf('ping')), 'bad_response', /type: expected pong, got "result"/);
    for (const type of ['constructor', '__proto__', 'toString', 42]) {
      server.answerWith(raw(200, `{"type":${JSON.stringify(type)}}`, 'application/json'));
      await expectFailure(client().call(target(), requestOf('tool.invoke', { tool: 't' })), 'bad_response', /type: expected result, challenge or error, got/);
    }
    server.answerWith(json(500, { type: 'error', code: 'internal_error', message: 'Internal error' }));
    const error = await expectFailure(client().call(target(), requestOf('ping')), 'bad_response', /HTTP 500: expected a pong answer, got error internal_error/);
    expect(error.status).to.equal(500);
    server.answerWith(json(404, { error: 'not_found' }));
    await expectFailure(client().call(target(), requestOf('ping')), 'bad_response', /HTTP 404: type: expected pong, got nothing \(nothing answers the connector protocol at this URL/);
  });

  it('`protocol_mismatch` for a pong of another version or a protocol_mismatch error', async () => {
    server.answerWith(json(200, { type: 'pong', protocol_version: '2' }));
    await expectFailure(client().call(target(), requestOf('ping')), 'protocol_mismatch', /speaks protocol "2"/);
    server.answerWith(json(400, { type: 'error', code: 'protocol_mismatch', message: 'Unsupported x-svc-protocol header' }));
    await expectFailure(client().call(target(), requestOf('ping')), 'protocol_mismatch', /HTTP 400: Unsupported x-svc-protocol header/);
  });

  it('`invalid_signature` for a 401 whatever its body, and for an invalid_signature error', async () => {
    server.answerWith(raw(401, 'go away'));
    await expectFailure(client().call(target(), requestOf('ping')), 'invalid_signature', /HTTP 401/);
    server.answerWith(json(200, { type: 'error', code: 'invalid_signature', message: 'nope' }));
    await expectFailure(client().call(target(), requestOf('tool.invoke', { tool: 't' })), 'invalid_signature', /nope/);
  });

  it('`bad_response` for an answer larger than the limit', async () => {
    server.answerWith(json(200, { type: 'pong', padding: 'x'.repeat(MAX_RESPONSE_BYTES) }));
    await expectFailure(client().call(target(), requestOf('ping')), 'bad_response', /larger than 65536 bytes/);
  });

  it('`timeout` when no answer comes in time', async () => {
    server.answerWith(hang);
    await expectFailure(client().call({ ...target(), timeoutMs: 150 }, requestOf('ping')), 'timeout', /150 ms/);
    await expectFailure(client(open, 150).call(target(), requestOf('ping')), 'timeout');
  });

  it('`unreachable` when the connection is refused, closed before an answer, or closed mid-answer', async () => {
    await expectFailure(client().call({ endpoint: `http://127.0.0.1:${await closedPort()}`, signingSecret: SECRET }, requestOf('ping')), 'unreachable', /ECONNREFUSED/);
    server.answerWith(closeConnection);
    await expectFailure(client().call(target(), requestOf('ping')), 'unreachable');
    server.answerWith(cutShort);
    await expectFailure(client().call(target(), requestOf('ping')), 'unreachable', /cut off before its end/);
  });

  it('`refused_address` for plain http and private addresses unless the operator allows them; nothing is sent', async () => {
    server.calls.length = 0;
    server.answerWith(pong);
    await expectFailure(client(strict).call(target(), requestOf('ping')), 'refused_address', /https/);
    await expectFailure(client({ allowInsecureUrls: true, allowPrivateNetworks: false }).call(target(), requestOf('ping')), 'refused_address', /127\.0\.0\.1/);
    await expectFailure(client(strict).call({ endpoint: `https://127.0.0.1:${server.port}`, signingSecret: SECRET }, requestOf('ping')), 'refused_address');
    await expectFailure(client(strict).call({ endpoint: 'https://169.254.169.254/latest', signingSecret: SECRET }, requestOf('ping')), 'refused_address');
    await expectFailure(client().call({ endpoint: 'not a url', signingSecret: SECRET }, requestOf('ping')), 'refused_address');
    expect(server.calls).to.have.length(0);
  });
});
