// The connector-manager over HTTP (adapters/connector-manager): mounted in the main server at
// /connector-manager/v1/invoke when CONNECTOR_MANAGER_TOKEN is set, run alone by
// `npm run connector-manager` at /v1/invoke; and the client that sends the platform's
// connector calls through it (CONNECTOR_MANAGER_URL). Every route and failure: 404 when not
// configured, 401, 400 per header and field, 200 with the connector's answer, 502 per reason,
// retries counted on flaky local servers, and tool calls retried only with their request_id.

import type http from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect } from 'chai';
import type { ConnectorServer } from '../../adapters/connector-sdk';
import { createExampleConnector } from '../../adapters/connector-sdk/example/connector';
import { ConnectorManagerClient } from '../../adapters/connector-manager/remote-client';
import { ConnectorCallError, type ConnectorExchange } from '../../application/ports/connector-client';
import { silentLogger } from '../../application/ports/logger';
import { createConnectorManagerProcess, loadConnectorManagerConfig } from '../../infrastructure/composition-root';
import { ConfigError, loadConfig } from '../../infrastructure/config/config';
import { GuardedOutboundHttp } from '../../infrastructure/outbound/signed-http';
import { type TestServer, startTestServer } from '../support/server';
import { type ScriptedConnector, closeConnection, closedPort, hang, json, pong, raw, startScriptedConnector } from '../support/scripted-connector';

const TOKEN = 'connector-manager-token-0123456789';
const SECRET = 'example-connector-secret-0123456789';
const PATH = '/connector-manager/v1/invoke';
const DEVELOPMENT = { OUTBOUND_ALLOW_INSECURE: 'true', OUTBOUND_ALLOW_PRIVATE_NETWORKS: 'true', CONNECTOR_MANAGER_RETRY_BASE_MS: '1' };
const TENANCY = { 'x-svc-tenant-id': 'tenant-1', 'x-svc-workspace-id': 'workspace-1' };
const AUTHORIZED = { authorization: `Bearer ${TOKEN}`, ...TENANCY };

describe('connector-manager (POST /connector-manager/v1/invoke)', () => {
  let server: TestServer;
  let connector: ConnectorServer;
  let scripted: ScriptedConnector;
  const codes: string[] = [];

  const body = (request: Record<string, unknown>, fields: Record<string, unknown> = {}) => ({
    target_id: 'sdk:conn-1',
    endpoint: `http://127.0.0.1:${connector.port}`,
    signing_secret: SECRET,
    request,
    ...fields,
  });
  const invoke = (payload: unknown, headers: Record<string, string> = AUTHORIZED) => server.request('POST', PATH, { body: payload, headers });
  const scriptedBody = (request: Record<string, unknown>, fields: Record<string, unknown> = {}) => body(request, { endpoint: scripted.url, ...fields });

  before(async () => {
    server = await startTestServer({ CONNECTOR_MANAGER_TOKEN: TOKEN, ...DEVELOPMENT });
    connector = await createExampleConnector({ signingSecret: SECRET, otpDelivery: { send: ({ code }) => void codes.push(code) } }).listen(0, '127.0.0.1');
    scripted = await startScriptedConnector(pong);
  });
  after(async () => {
    await scripted.close();
    await connector.close();
    await server.close();
  });
  beforeEach(() => {
    scripted.calls.length = 0;
    scripted.answerWith(pong);
  });

  describe('answers', () => {
    it('a ping with the pong, the status, the latency and one attempt', async () => {
      const response = await invoke(body({ type: 'ping', request_id: 'ping-1' }));
      expect(response.status, response.text).to.equal(200);
      expect(response.json.answer).to.include({ type: 'pong', protocol_version: '1' });
      expect(response.json).to.include({ status: 200, attempts: 1 });
      expect(response.json.latency_ms).to.be.a('number');
      expect(await response.events()).to.deep.equal([]);
    });

    it('the capabilities of the connector', async () => {
      const response = await invoke(body({ type: 'capabilities.list', protocol_version: '1' }));
      expect(response.status).to.equal(200);
      expect(response.json.answer.type).to.equal('capabilities.list');
      expect(response.json.answer.tools.map((tool: { name: string }) => tool.name)).to.include('order_status');
    });

    it("the OTP-protected tool's challenge, then its result on tool.resume", async () => {
      codes.length = 0;
      const invoked = await invoke(body({ type: 'tool.invoke', request_id: 'order-1', tool: 'order_status', parameters: { order_id: 'A-1003' } }));
      expect(invoked.status).to.equal(200);
      expect(invoked.json.answer.type).to.equal('challenge');
      const resumed = await invoke(body({ type: 'tool.resume', tool: 'order_status', resume_token: invoked.json.answer.resume_token, challenge_response: codes[0] }));
      expect(resumed.status).to.equal(200);
      expect(resumed.json.answer.type).to.equal('result');
      expect(resumed.json.answer.output).to.include({ order_id: 'A-1003', status: 'delayed' });
    });

    it("a tool's error answer as an answer", async () => {
      const response = await invoke(body({ type: 'tool.invoke', tool: 'order_status', parameters: { order_id: 'Z-9' } }));
      expect(response.status).to.equal(200);
      expect(response.json.answer).to.include({ type: 'error', code: 'customer_not_found' });
    });

    it('signs and posts to {endpoint}/svc, forwarding the trace id, the end user and the tenancy; the request id made up when absent', async () => {
      const response = await invoke(scriptedBody({ type: 'ping' }, { endpoint: `${scripted.url}/` }), {
        ...AUTHORIZED,
        'x-svc-workspace-id': '*',
        'x-svc-trace-id': 'trace-42',
        'x-end-user-token': 'eu-token',
        'x-end-user-session': 'eu-session',
      });
      expect(response.status).to.equal(200);
      const [call] = scripted.calls;
      expect(call.path).to.equal('/svc');
      expect(call.headers).to.include({ 'x-svc-protocol': '1', 'x-svc-trace-id': 'trace-42', 'x-end-user-token': 'eu-token', 'x-end-user-session': 'eu-session', 'x-svc-tenant-id': 'tenant-1', 'x-svc-workspace-id': '*' });
      expect(call.headers['x-svc-signature']).to.match(/^v1=[0-9a-f]{64}$/);
      expect(call.json).to.include({ protocol_version: '1', type: 'ping' });
      expect(call.json.request_id).to.be.a('string').and.not.equal('');
      expect(call.body.toString()).to.not.include('signing_secret');
    });
  });

  describe('refuses', () => {
    it('401 without the bearer token, with another one, or another scheme; nothing is sent', async () => {
      for (const headers of [TENANCY, { ...TENANCY, authorization: 'Bearer not-the-token-at-all-0000' }, { ...TENANCY, authorization: `Basic ${TOKEN}` }, { ...TENANCY, authorization: `Bearer ${TOKEN}x` }]) {
        const response = await invoke(scriptedBody({ type: 'ping' }), headers);
        expect(response.status, JSON.stringify(headers)).to.equal(401);
        expect(response.json.code).to.equal('unauthorized');
        expect(response.headers.get('www-authenticate')).to.equal('Bearer');
      }
      expect(scripted.calls).to.have.length(0);
    });

    it('400 naming a missing or bad tenancy header', async () => {
      for (const [name, value] of [['x-svc-tenant-id', undefined], ['x-svc-workspace-id', undefined], ['x-svc-tenant-id', 'two words']] as const) {
        const headers: Record<string, string> = { ...AUTHORIZED };
        if (value === undefined) delete headers[name];
        else headers[name] = value;
        const response = await invoke(scriptedBody({ type: 'ping' }), headers);
        expect(response.status, name).to.equal(400);
        expect(response.json).to.include({ code: 'invalid_request', field: name });
      }
      expect(scripted.calls).to.have.length(0);
    });

    it('400 naming each bad field of the body', async () => {
      const cases: Array<[unknown, string]> = [
        [{ ...scriptedBody({ type: 'ping' }), target_id: undefined }, 'target_id'],
        [{ ...scriptedBody({ type: 'ping' }), target_id: 'conn-1' }, 'target_id'],
        [{ ...scriptedBody({ type: 'ping' }), target_id: 'sdk:' }, 'target_id'],
        [{ ...scriptedBody({ type: 'ping' }), endpoint: undefined }, 'endpoint'],
        [{ ...scriptedBody({ type: 'ping' }), endpoint: ' ' }, 'endpoint'],
        [{ ...scriptedBody({ type: 'ping' }), signing_secret: undefined }, 'signing_secret'],
        [{ ...scriptedBody({ type: 'ping' }), signing_secret: 42 }, 'signing_secret'],
        [{ ...scriptedBody({ type: 'ping' }), request: undefined }, 'request'],
        [scriptedBody({ type: 'pong' }), 'request.type'],
        [scriptedBody({}), 'request.type'],
        [scriptedBody({ type: 'ping', protocol_version: '2' }), 'request.protocol_version'],
        [scriptedBody({ type: 'ping', request_id: '' }), 'request.request_id'],
        [scriptedBody({ type: 'tool.invoke', parameters: [] }), 'request.parameters'],
        [scriptedBody({ type: 'tool.invoke', tool: 'x', identity: 'me' }), 'request.identity'],
        [scriptedBody({ type: 'tool.invoke' }), 'request.tool'],
        [scriptedBody({ type: 'tool.resume', tool: '' }), 'request.tool'],
        [scriptedBody({ type: 'ping' }, { timeout_ms: 0 }), 'timeout_ms'],
        [scriptedBody({ type: 'ping' }, { timeout_ms: 1.5 }), 'timeout_ms'],
        [scriptedBody({ type: 'ping' }, { timeout_ms: 120_001 }), 'timeout_ms'],
      ];
      for (const [payload, field] of cases) {
        const response = await invoke(payload);
        expect(response.status, `${field}: ${response.text}`).to.equal(400);
        expect(response.json, JSON.stringify(payload)).to.include({ code: 'invalid_request', field });
      }
      const malformed = await server.request('POST', PATH, { rawBody: '{"target_id":', headers: { ...AUTHORIZED, 'content-type': 'application/json' } });
      expect(malformed.status).to.equal(400);
      expect(malformed.json.code).to.equal('malformed_json');
      expect(scripted.calls).to.have.length(0);
    });
  });

  describe('502 with the reason when no usable answer comes', () => {
    it('invalid_signature for a secret the connector does not have', async () => {
      const response = await invoke(body({ type: 'ping' }, { signing_secret: 'not-the-connector-secret' }));
      expect(response.status).to.equal(502);
      expect(response.json).to.include({ code: 'invalid_signature', attempts: 1 });
      expect(response.json.message).to.match(/HTTP 401/);
    });

    it('bad_response naming what was wrong', async () => {
      scripted.answerWith(json(200, { type: 'tools.list', tools: [{ description: 'no name' }] }));
      const response = await invoke(scriptedBody({ type: 'tools.list' }));
      expect(response.status).to.equal(502);
      expect(response.json).to.include({ code: 'bad_response', message: 'HTTP 200: tools[0].name: expected string, got nothing', attempts: 1 });
    });

    it('protocol_mismatch for a pong of another version', async () => {
      scripted.answerWith(json(200, { type: 'pong', protocol_version: '7' }));
      const response = await invoke(scriptedBody({ type: 'ping' }));
      expect(response.json).to.include({ code: 'protocol_mismatch', attempts: 1 });
    });

    it('refused_address for an endpoint that is no http(s) URL', async () => {
      for (const endpoint of ['not a url', 'ftp://127.0.0.1/']) {
        const response = await invoke(body({ type: 'ping' }, { endpoint }));
        expect(response.status, endpoint).to.equal(502);
        expect(response.json).to.include({ code: 'refused_address', attempts: 1 });
      }
    });

    it('timeout within timeout_ms, not retried (the budget is spent)', async () => {
      scripted.answerWith(hang);
      const response = await invoke(scriptedBody({ type: 'ping' }, { timeout_ms: 200 }));
      expect(response.status).to.equal(502);
      expect(response.json).to.include({ code: 'timeout', attempts: 1 });
      expect(scripted.calls).to.have.length(1);
    });

    it('unreachable after every attempt when nothing listens', async () => {
      const response = await invoke(body({ type: 'ping' }, { endpoint: `http://127.0.0.1:${await closedPort()}` }));
      expect(response.status).to.equal(502);
      expect(response.json).to.include({ code: 'unreachable', attempts: 3 });
    });
  });

  describe('retries', () => {
    it('ping after 5xx answers and a closed connection, with the same request id, until the pong', async () => {
      scripted.answerWith(raw(503, 'busy'), closeConnection, pong);
      const response = await invoke(scriptedBody({ type: 'ping' }));
      expect(response.status).to.equal(200);
      expect(response.json).to.include({ attempts: 3 });
      expect(response.json.answer.type).to.equal('pong');
      expect(scripted.calls).to.have.length(3);
      const ids = new Set(scripted.calls.map((call) => call.json.request_id));
      expect(ids.size).to.equal(1);
    });

    it('capabilities.list at most CONNECTOR_MANAGER_MAX_ATTEMPTS times, then the last failure', async () => {
      scripted.answerWith(json(500, { type: 'error', code: 'internal_error', message: 'Internal error' }));
      const response = await invoke(scriptedBody({ type: 'capabilities.list' }));
      expect(response.status).to.equal(502);
      expect(response.json).to.include({ code: 'bad_response', attempts: 3 });
      expect(scripted.calls).to.have.length(3);
    });

    it('not after an answer that asking again cannot change (a 4xx, a malformed 2xx, a refused signature)', async () => {
      for (const script of [json(200, { type: 'pong', protocol_version: 1 }), raw(404, 'no'), raw(401, 'no')]) {
        scripted.calls.length = 0;
        scripted.answerWith(script);
        const response = await invoke(scriptedBody({ type: 'ping' }));
        expect(response.status).to.equal(502);
        expect(response.json.attempts).to.equal(1);
        expect(scripted.calls).to.have.length(1);
      }
    });

    it('tool.invoke with its request_id: sent again with the same id after a 500 and a closed connection', async () => {
      scripted.answerWith(json(500, { type: 'error', code: 'internal_error', message: 'Internal error' }), closeConnection, json(200, { type: 'result', output: { ok: true } }));
      const response = await invoke(scriptedBody({ type: 'tool.invoke', request_id: 'call-7', tool: 'order_status' }));
      expect(response.status).to.equal(200);
      expect(response.json).to.include({ attempts: 3, status: 200 });
      expect(response.json.answer).to.deep.equal({ type: 'result', output: { ok: true } });
      expect(scripted.calls.map((call) => call.json.request_id)).to.deep.equal(['call-7', 'call-7', 'call-7']);
    });

    it('tool.invoke and tool.resume without a request_id: never, whatever happened', async () => {
      scripted.answerWith(json(500, { type: 'error', code: 'internal_error', message: 'Internal error' }), json(200, { type: 'result', output: {} }));
      const failed = await invoke(scriptedBody({ type: 'tool.invoke', tool: 'order_status' }));
      expect(failed.status).to.equal(200);
      expect(failed.json).to.include({ attempts: 1, status: 500 });
      expect(failed.json.answer).to.include({ type: 'error', code: 'internal_error' });
      expect(scripted.calls).to.have.length(1);

      scripted.calls.length = 0;
      scripted.answerWith(closeConnection, json(200, { type: 'result', output: {} }));
      const closed = await invoke(scriptedBody({ type: 'tool.resume', tool: 'order_status', resume_token: 'rt' }));
      expect(closed.status).to.equal(502);
      expect(closed.json).to.include({ code: 'unreachable', attempts: 1 });
      expect(scripted.calls).to.have.length(1);
    });
  });
});

describe('connector-manager not configured', () => {
  let server: TestServer;
  before(async () => {
    server = await startTestServer();
  });
  after(() => server.close());

  it('answers 404 at /connector-manager/v1/invoke without CONNECTOR_MANAGER_TOKEN, whatever the request', async () => {
    const response = await server.request('POST', PATH, { body: {}, headers: { authorization: `Bearer ${TOKEN}`, ...TENANCY } });
    expect(response.status).to.equal(404);
    expect(response.json.code).to.equal('not_found');
    expect(response.json.message).to.match(/CONNECTOR_MANAGER_TOKEN/);
  });
});

describe('connector-manager as its own process (`npm run connector-manager`)', () => {
  let manager: http.Server;
  let managerUrl: string;
  let connector: ConnectorServer;

  before(async () => {
    const config = loadConnectorManagerConfig({ CONNECTOR_MANAGER_TOKEN: TOKEN, ...DEVELOPMENT });
    manager = await createConnectorManagerProcess(config, { logger: silentLogger }).httpServer();
    await new Promise<void>((resolve) => manager.listen(0, '127.0.0.1', resolve));
    managerUrl = `http://127.0.0.1:${(manager.address() as AddressInfo).port}`;
    connector = await createExampleConnector({ signingSecret: SECRET }).listen(0, '127.0.0.1');
  });
  after(async () => {
    await connector.close();
    manager.closeAllConnections();
    await new Promise<void>((resolve) => manager.close(() => resolve()));
  });

  it('reads only its own variables, and refuses to start without its token', () => {
    // A production setting the platform would refuse (no SMTP_URL) is not the connector-manager's concern.
    const config = loadConnectorManagerConfig({ NODE_ENV: 'production', CONNECTOR_MANAGER_TOKEN: TOKEN, CONNECTOR_MANAGER_PORT: '9000' });
    expect(config.connectorManager).to.deep.include({ port: 9000, maxAttempts: 3, retryBaseMs: 200 });
    expect(config.connectors).to.deep.equal({ timeoutMs: 30_000, maxResponseBytes: 1024 * 1024 });
    expect(config).to.include({ outboundAllowInsecure: false, outboundAllowPrivateNetworks: false });
    expect(() => loadConnectorManagerConfig({})).to.throw(ConfigError, /CONNECTOR_MANAGER_TOKEN: expected the bearer token/);
    expect(() => loadConnectorManagerConfig({ CONNECTOR_MANAGER_TOKEN: 'short' })).to.throw(ConfigError, /CONNECTOR_MANAGER_TOKEN: expected 16 to 512 printable characters without spaces, got \(hidden\)/);
    expect(() => loadConfig({ CONNECTOR_MANAGER_URL: 'http://manager:8090' })).to.throw(ConfigError, /CONNECTOR_MANAGER_TOKEN: expected the connector-manager's token/);
  });

  it('serves /health and /v1/invoke', async () => {
    const health = await fetch(`${managerUrl}/health`);
    expect(health.status).to.equal(200);
    expect(await health.json()).to.include({ status: 'ok' });
    const response = await fetch(`${managerUrl}/v1/invoke`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...AUTHORIZED },
      body: JSON.stringify({ target_id: 'sdk:c', endpoint: `http://127.0.0.1:${connector.port}`, signing_secret: SECRET, request: { type: 'ping' } }),
    });
    expect(response.status).to.equal(200);
    expect(((await response.json()) as { answer: { type: string } }).answer.type).to.equal('pong');
    const unauthorized = await fetch(`${managerUrl}/v1/invoke`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
    expect(unauthorized.status).to.equal(401);
  });

  describe('the platform calling through it (CONNECTOR_MANAGER_URL)', () => {
    let platform: TestServer;
    const codes: string[] = [];
    let otpConnector: ConnectorServer;

    before(async () => {
      platform = await startTestServer({ CONNECTOR_MANAGER_URL: managerUrl, CONNECTOR_MANAGER_TOKEN: TOKEN });
      otpConnector = await createExampleConnector({ signingSecret: SECRET, otpDelivery: { send: ({ code }) => void codes.push(code) } }).listen(0, '127.0.0.1');
    });
    after(async () => {
      await otpConnector.close();
      await platform.close();
    });

    it('sends every connector call through the connector-manager, which reaches what the platform alone may not', async () => {
      // The platform itself refuses http and 127.0.0.1 (no OUTBOUND_ALLOW_*); the connector-manager was started with them.
      expect(platform.platform.connectorClient).to.be.instanceOf(ConnectorManagerClient);
      const target = { endpoint: `http://127.0.0.1:${otpConnector.port}`, signingSecret: SECRET, connectionId: 'conn-9', tenantId: 'tenant-9' };
      const pinged = await platform.platform.connectorClient.call(target, { type: 'ping', request_id: 'p-1' });
      expect(pinged.answer.type).to.equal('pong');
      const invoked = await platform.platform.connectorClient.call(target, { type: 'tool.invoke', request_id: 'i-1', tool: 'order_status', parameters: { order_id: 'A-1001' } });
      if (invoked.answer.type !== 'challenge') return expect.fail(`expected a challenge, got ${invoked.answer.type}`);
      const resumed = await platform.platform.connectorClient.call(target, { type: 'tool.resume', request_id: 'r-1', tool: 'order_status', resume_token: invoked.answer.resume_token, challenge_response: codes[codes.length - 1] });
      expect(resumed.answer).to.deep.include({ type: 'result', authentication_context: { method: 'otp', order_id: 'A-1001' } });
    });

    it("maps the connector-manager's 502 to the reason, and a connector-manager it cannot use to unreachable", async () => {
      const failure = async (call: Promise<ConnectorExchange>): Promise<ConnectorCallError> => {
        try {
          await call;
        } catch (error) {
          expect(error).to.be.instanceOf(ConnectorCallError);
          return error as ConnectorCallError;
        }
        return expect.fail('expected a failure');
      };
      const target = { endpoint: `http://127.0.0.1:${otpConnector.port}`, signingSecret: 'wrong-secret-wrong-secret' };
      expect(await failure(platform.platform.connectorClient.call(target, { type: 'ping', request_id: 'p-2' }))).to.include({ reason: 'invalid_signature' });
      const outbound = new GuardedOutboundHttp({ allowInsecureUrls: true, allowPrivateNetworks: true });
      const options = { url: managerUrl, token: 'not-the-token-not-the-token', timeoutMs: 5000, maxResponseBytes: 1024 * 1024 };
      const refused = await failure(new ConnectorManagerClient(outbound, options).call({ ...target, signingSecret: SECRET }, { type: 'ping', request_id: 'p-3' }));
      expect(refused).to.include({ reason: 'unreachable', status: 401 });
      expect(refused.detail).to.match(/the connector-manager answered 401/);
      const down = await failure(new ConnectorManagerClient(outbound, { ...options, url: `http://127.0.0.1:${await closedPort()}` }).call(target, { type: 'ping', request_id: 'p-4' }));
      expect(down.reason).to.equal('unreachable');
      expect(down.detail).to.match(/the connector-manager did not answer/);
    });
  });
});
