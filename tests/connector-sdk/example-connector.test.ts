// The example connector an organization copies: catalog search, an order status behind an
// OTP challenge, a manager-only refund tool, and advertised flows and metadata.
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { expect } from 'chai';
import type { Connector } from '../../adapters/connector-sdk';
import { createExampleConnector } from '../../adapters/connector-sdk/example/connector';
import { TestClock, protocolBody, signed } from './helpers';

const SECRET = 'example-secret';

describe('example connector', () => {
  const clock = new TestClock();
  const sent: { destination: string; code: string; order_id: string }[] = [];
  let connector: Connector;

  before(() => {
    connector = createExampleConnector({ signingSecret: SECRET, now: clock.now, otpDelivery: { send: (message) => void sent.push(message) } });
  });

  async function call(body: Record<string, unknown>): Promise<Record<string, unknown>> {
    const request = signed(body, { secret: SECRET, clock });
    const response = await connector.handle({ method: 'POST', path: '/svc', headers: request.headers, rawBody: request.body });
    expect(response.status, response.body).to.equal(200);
    return JSON.parse(response.body) as Record<string, unknown>;
  }

  const invoke = (tool: string, parameters: Record<string, unknown>, fields: Record<string, unknown> = {}) =>
    call(protocolBody('tool.invoke', { tool, parameters, ...fields }));

  it('advertises its tools, flows and organization metadata', async () => {
    const body = await call(protocolBody('capabilities.list'));
    const tools = body.tools as { name: string; chat: boolean; auth: string }[];
    expect(tools.map((tool) => tool.name)).to.deep.equal(['search_products', 'order_status', 'approve_refund', 'notify_warehouse']);
    expect(tools.find((tool) => tool.name === 'approve_refund')).to.include({ chat: false });
    expect(tools.find((tool) => tool.name === 'order_status')).to.include({ auth: 'optional' });
    expect(body.flows).to.have.length(2);
    for (const list of ['events', 'webhooks', 'schedules', 'marketing']) expect(body[list], list).to.be.an('array').that.is.not.empty;
    expect(body.organization).to.deep.include({ version: 1, tasks: [{ id: 'review_refund', label: 'Review a refund request', priority: 'high' }] });
    expect(body.organization).to.have.property('events').that.deep.includes({ id: 'order_delayed', label: 'Order delayed' });
    expect(body.organization).to.have.property('actions').with.length(1);
  });

  describe('search_products', () => {
    it('finds products by keywords', async () => {
      const body = await invoke('search_products', { query: 'beans' });
      expect(body.type).to.equal('result');
      expect(body).to.have.nested.property('output.total', 3);
    });

    it('filters by category and stock and limits results', async () => {
      const body = await invoke('search_products', { query: 'coffee', in_stock_only: true, max_results: 1, category: 'coffee' });
      const output = body.output as { products: { sku: string; in_stock: boolean }[]; total: number };
      expect(output.total).to.equal(2);
      expect(output.products).to.have.length(1);
      expect(output.products[0].in_stock).to.equal(true);
    });

    it('refuses parameters outside its schema, naming the field', async () => {
      expect(await invoke('search_products', { query: '' })).to.deep.equal({
        type: 'error',
        code: 'invalid_request',
        message: 'parameters.query must be at least 1 characters long',
      });
      expect(await invoke('search_products', { query: 'x', category: 'tea' })).to.include({ code: 'invalid_request' });
    });
  });

  describe('order_status', () => {
    it('demands an OTP sent to the phone on the order, then answers with the code', async () => {
      const challenged = await invoke('order_status', { order_id: 'A-1001' }, { conversation_id: 'c-1' });
      expect(challenged.type).to.equal('challenge');
      expect(challenged.challenge).to.deep.include({ kind: 'otp', destination: '***1234', length: 6 });
      const delivered = sent[sent.length - 1];
      expect(delivered).to.include({ order_id: 'A-1001', destination: '+4915100001234' });
      expect(delivered.code).to.match(/^\d{6}$/);
      const answered = await call(
        protocolBody('tool.resume', { tool: 'order_status', resume_token: challenged.resume_token, challenge_response: ` ${delivered.code} ` }),
      );
      expect(answered).to.deep.include({ type: 'result', authentication_context: { method: 'otp', order_id: 'A-1001' } });
      expect(answered.output).to.include({ order_id: 'A-1001', status: 'shipped', carrier: 'DHL' });
    });

    it('denies a wrong code', async () => {
      const challenged = await invoke('order_status', { order_id: 'A-1002' });
      const wrong = sent[sent.length - 1].code === '000000' ? '111111' : '000000';
      const answered = await call(protocolBody('tool.resume', { tool: 'order_status', resume_token: challenged.resume_token, challenge_response: wrong }));
      expect(answered).to.include({ type: 'error', code: 'denied' });
    });

    it('answers without a new challenge when the conversation already passed the OTP for that order', async () => {
      const body = await invoke('order_status', { order_id: 'a-1003' }, { authentication: { method: 'otp', order_id: 'A-1003' } });
      expect(body).to.have.nested.property('output.status', 'delayed');
    });

    it('still challenges for another order', async () => {
      const body = await invoke('order_status', { order_id: 'A-1001' }, { authentication: { method: 'otp', order_id: 'A-1003' } });
      expect(body.type).to.equal('challenge');
    });

    it('answers customer_not_found for an unknown order', async () => {
      expect(await invoke('order_status', { order_id: 'Z-9999' })).to.include({ type: 'error', code: 'customer_not_found' });
    });
  });

  describe('approve_refund (manager only)', () => {
    it('approves within the limit', async () => {
      const body = await invoke('approve_refund', { order_id: 'A-1003', amount_cents: 8900, reason: 'late' });
      expect(body).to.have.nested.property('output.approved', true);
      expect(body).to.have.nested.property('output.refund_id').that.matches(/^RF-/);
    });

    it('denies above the single-approver limit and refuses more than the order total', async () => {
      const strict = createExampleConnector({ signingSecret: SECRET, now: clock.now, refundApprovalLimitCents: 1000 });
      const request = signed(protocolBody('tool.invoke', { tool: 'approve_refund', parameters: { order_id: 'A-1001', amount_cents: 5000 } }), { secret: SECRET, clock });
      const response = await strict.handle({ method: 'POST', path: '/svc', headers: request.headers, rawBody: request.body });
      expect(JSON.parse(response.body)).to.include({ type: 'error', code: 'denied' });
      expect(await invoke('approve_refund', { order_id: 'A-1001', amount_cents: 999999 })).to.include({ code: 'invalid_request' });
    });
  });

  describe('main.ts', () => {
    const main = path.join(__dirname, '../../adapters/connector-sdk/example/main.js');
    let child: ChildProcess | undefined;

    afterEach(() => {
      if (child !== undefined && child.exitCode === null) child.kill('SIGTERM');
      child = undefined;
    });

    function run(env: Record<string, string>): Promise<{ output: string; code: number | null }> {
      return new Promise((resolve) => {
        const started = spawn(process.execPath, [main], { env: { PATH: process.env.PATH ?? '', ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
        child = started;
        let output = '';
        const collect = (chunk: Buffer) => {
          output += chunk.toString();
          if (output.includes('listening on')) resolve({ output, code: null });
        };
        started.stdout?.on('data', collect);
        started.stderr?.on('data', collect);
        started.on('exit', (code) => resolve({ output, code }));
      });
    }

    it('listens on PORT with SVC_SIGNING_SECRET and stops on SIGTERM', async () => {
      const { output } = await run({ PORT: '0', HOST: '127.0.0.1', SVC_SIGNING_SECRET: SECRET });
      expect(output).to.match(/listening on http:\/\/127\.0\.0\.1:\d+\/svc/);
      const exited = new Promise<number | null>((resolve) => child?.on('exit', resolve));
      child?.kill('SIGTERM');
      expect(await exited).to.equal(0);
    });

    it('exits 1 with a clear message without a secret', async () => {
      const { output, code } = await run({ PORT: '0', HOST: '127.0.0.1' });
      expect(code).to.equal(1);
      expect(output).to.include('SVC_SIGNING_SECRET');
    });
  });
});
