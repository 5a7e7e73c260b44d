// Issue #13's "done when", end to end: the example connector runs as its own process
// (`npm run example:connector`'s entry point, dist/adapters/connector-sdk/example/main.js),
// and the platform reaches it over HTTP through its real connector client. Through the API a
// premium organization creates an SDK connection to it, tests it (healthy), deep-tests it
// (every conformance case passes) and syncs its tools into a workspace with auto_register.
// Then, with a scripted OpenAI-compatible server as the model, a chat turn calls the
// connector's OTP-protected tool (`order_status`): the challenge reaches the user as an SSE
// `tool` event with its prompt; the user's answer (the OTP, which the example's development
// delivery prints on its console: "[example-connector] OTP for order ... : 123456") resumes
// the call; the result reaches the model; the final answer streams.

import { expect } from 'chai';
import { type ChildProcess, spawn } from 'node:child_process';
import path from 'node:path';
import readline from 'node:readline';
import { type Account, registerOwner } from '../support/identity';
import { OpenAiCompatibleServer } from '../support/openai-compatible-server';
import { type TestServer, startTestServer } from '../support/server';
import { subscribeTo } from '../support/subscriptions';

const DIST = path.join(__dirname, '..', '..');
const SECRET = 'e2e-connector-chat-signing-secret-0123';
const BASE = '/api/v1/org/sdk-connections';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = any;

/** The named Server-Sent Events of a complete body (keep-alive comments left out). */
function framesOf(text: string): Array<{ event: string; data: Json }> {
  return text
    .split('\n\n')
    .map((block) => block.split('\n'))
    .filter((lines) => lines.some((line) => line.startsWith('event: ')))
    .map((lines) => ({ event: lines.find((line) => line.startsWith('event: '))!.slice(7), data: JSON.parse(lines.find((line) => line.startsWith('data: '))!.slice(6)) }));
}

/** The example connector as its own process: its URL once it listens, and each OTP it prints, as it prints it. */
class ExampleConnectorProcess {
  private readonly codes: Array<{ order: string; code: string }> = [];
  private readonly waiters: Array<() => void> = [];
  private stderr = '';

  private constructor(
    private readonly child: ChildProcess,
    readonly exited: Promise<number | null>,
    /** The base URL the platform is given (it posts to `{url}/svc`). */
    readonly url: string,
  ) {}

  static start(): Promise<ExampleConnectorProcess> {
    const child = spawn(process.execPath, [path.join(DIST, 'adapters/connector-sdk/example/main.js')], {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, SVC_SIGNING_SECRET: SECRET, PORT: '0', HOST: '127.0.0.1' },
    });
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    return new Promise((resolve, reject) => {
      let started: ExampleConnectorProcess | null = null;
      let stderr = '';
      child.stderr!.on('data', (chunk) => {
        stderr += String(chunk);
        if (started) started.stderr = stderr;
      });
      readline.createInterface({ input: child.stdout! }).on('line', (line) => {
        const listening = /listening on (http:\/\/127\.0\.0\.1:\d+)\/svc/.exec(line);
        if (listening && !started) {
          started = new ExampleConnectorProcess(child, exited, listening[1]);
          resolve(started);
        }
        const otp = /OTP for order (\S+) to \S+: (\d{6})$/.exec(line);
        if (otp && started) {
          started.codes.push({ order: otp[1], code: otp[2] });
          for (const wake of started.waiters.splice(0)) wake();
        }
      });
      void exited.then((code) => reject(new Error(`the example connector exited with ${code} before it listened: ${stderr}`)));
    });
  }

  /** The next code printed for `order` after the first `seen` of them. */
  async codeFor(order: string, seen = 0): Promise<string> {
    for (;;) {
      const printed = this.codes.filter((one) => one.order === order);
      if (printed.length > seen) return printed[seen].code;
      if (this.child.exitCode !== null) throw new Error(`the example connector exited: ${this.stderr}`);
      await new Promise<void>((resolve) => this.waiters.push(resolve));
    }
  }

  async stop(): Promise<void> {
    if (this.child.exitCode !== null) return;
    this.child.kill('SIGTERM');
    await this.exited;
  }
}

describe('connector tools in chat, end to end (the example connector as its own process)', function () {
  this.timeout(60_000);
  let connector: ExampleConnectorProcess;
  let llm: OpenAiCompatibleServer;
  let server: TestServer;
  let owner: Account;

  const as = (account: Account) => ({ authorization: `Bearer ${account.token}` });

  before(async () => {
    connector = await ExampleConnectorProcess.start();
    llm = await OpenAiCompatibleServer.start();
    server = await startTestServer({
      SCRYPT_LOG_N: '12',
      LLM_BASE_URL: llm.baseUrl,
      LLM_MODEL: 'scripted-model',
      LLM_API_KEY: 'sk-local-test',
      // The connector listens on plain http on 127.0.0.1: allowed here, as in development only.
      OUTBOUND_ALLOW_INSECURE: 'true',
      OUTBOUND_ALLOW_PRIVATE_NETWORKS: 'true',
      CONNECTOR_TIMEOUT_MS: '10000',
    });
    owner = await registerOwner(server, 'connector-chat-e2e-org');
    await subscribeTo(server, owner.tenant_id, 'premium');
  });
  after(async () => {
    await server?.close();
    await llm?.close();
    await connector?.stop();
  });

  it('connects, tests, deep-tests and syncs the connector; a chat turn calls its OTP-protected tool, the OTP resumes it, the model gets the result and the answer streams', async () => {
    const workspaceId: string = (await server.request('GET', '/api/v1/org/workspaces', { headers: as(owner) })).json.items[0].id;

    const created = await server.request('POST', BASE, { headers: as(owner), body: { name: 'Coffee shop', webhook_url: connector.url, signing_secret: SECRET, enabled: true } });
    expect(created.status, created.text).to.equal(201);
    const connectionId: string = created.json.id;

    const tested = await server.request('POST', `${BASE}/${connectionId}/test`, { headers: as(owner) });
    expect(tested.status, tested.text).to.equal(200);
    expect(tested.json).to.include({ status: 'healthy', reason: null, protocol_version: '1' });

    const deep = await server.request('POST', `${BASE}/${connectionId}/test?deep=true`, { headers: as(owner) });
    expect(deep.status, deep.text).to.equal(200);
    expect(deep.json.status).to.equal('healthy');
    const cases = deep.json.deep.cases as Array<{ name: string; passed: boolean }>;
    expect(cases.filter((one) => !one.passed), JSON.stringify(cases)).to.deep.equal([]);
    expect(deep.json.deep.passed).to.equal(deep.json.deep.total).and.to.be.greaterThan(10);

    const synced = await server.request('POST', `${BASE}/${connectionId}/sync-tools`, { headers: as(owner), body: { workspace_id: workspaceId, auto_register: true } });
    expect(synced.status, synced.text).to.equal(200);
    const registered = synced.json.registration.created as Array<{ id: string; name: string }>;
    expect(registered.map((tool) => tool.name).sort()).to.deep.equal(['order_status', 'search_products']);
    const orderStatus = registered.find((tool) => tool.name === 'order_status')!;

    // The model asks for the order's status; the connector challenges.
    llm.script({ tool_calls: [{ id: 'call_1', name: 'order_status', arguments: ['{"order_id":', '"A-1001"}'] }] });
    const asked = await server.request('POST', '/api/v1/chat/stream', { headers: as(owner), body: { message: 'Where is my order A-1001?', workspace_id: workspaceId } });
    expect(asked.status, asked.text).to.equal(200);
    const frames = framesOf(asked.text);
    expect(frames.map((frame) => frame.event)).to.deep.equal(['tool', 'tool', 'delta', 'done']);
    expect(frames[0].data).to.include({ tool_name: 'order_status', tool_id: orderStatus.id, status: 'requested' });
    expect(frames[1].data).to.include({ tool_name: 'order_status', status: 'challenge', prompt: 'Enter the 6-digit code we sent to ***1234.' });
    expect(frames[2].data.text).to.include('Enter the 6-digit code we sent to ***1234.');
    expect(llm.requests[0].body.tools!.map((tool) => tool.function.name).sort()).to.deep.equal(['order_status', 'search_products']);
    const conversationId: string = frames[3].data.conversation_id;

    // The user answers with the code the connector sent (printed on its console, in development).
    const code = await connector.codeFor('A-1001');
    llm.script({ deltas: ['Your order A-1001 has shipped with DHL ', '(tracking JD0146000012345).'] });
    const answered = await server.request('POST', '/api/v1/chat/stream', { headers: as(owner), body: { message: code, conversation_id: conversationId } });
    expect(answered.status, answered.text).to.equal(200);
    const resumed = framesOf(answered.text);
    expect(resumed.map((frame) => frame.event)).to.deep.equal(['tool', 'delta', 'delta', 'done']);
    expect(resumed[0].data).to.include({ tool_name: 'order_status', status: 'succeeded', tool_call_id: frames[1].data.tool_call_id });
    expect(resumed.filter((frame) => frame.event === 'delta').map((frame) => frame.data.text).join('')).to.equal('Your order A-1001 has shipped with DHL (tracking JD0146000012345).');

    // The result reached the model, paired with its call; the code did not.
    const final = llm.requests[1].body.messages;
    const result = final.find((message) => message.role === 'tool' && message.tool_call_id === 'call_1');
    expect(JSON.parse(result!.content as string)).to.deep.include({ status: 'succeeded', http_status: 200 });
    expect(JSON.parse(result!.content as string).result).to.deep.include({ order_id: 'A-1001', status: 'shipped', carrier: 'DHL', tracking_number: 'JD0146000012345' });
    expect(final.filter((message) => message.role === 'user').map((message) => message.content)).to.deep.equal(['Where is my order A-1001?']);
  });
});
