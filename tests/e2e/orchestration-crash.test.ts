// Issue #14's durability done-when: the platform server as its own process (`node
// dist/infrastructure/main.js`) killed with SIGKILL while the dispatcher is in the middle of
// connector calls, then started again on the same data folder. No emitted event is lost (each
// ends processed, with its one follow-on event), and the connector never sees one step with two
// different request ids: a call the dead process made but never recorded is made once more with
// the same request id (the documented at-least-once at the crash point), and no other call is
// repeated.
//
// The connector runs in this process and records every request id it receives. After a few
// calls it holds every call it gets (the gate), so the kill lands while calls are in flight:
// made, seen by the connector, never answered, never recorded.

import { expect } from 'chai';
import { type ChildProcess, spawn } from 'node:child_process';
import path from 'node:path';
import readline from 'node:readline';
import { createConnector } from '../../adapters/connector-sdk';
import { stepRequestId } from '../../domain/orchestration-event/orchestration-event';
import { type Account, registerOwner } from '../support/identity';
import { temporaryDirectory } from '../support/files';
import { startTestServer } from '../support/server';
import { subscribeTo } from '../support/subscriptions';

const SERVER = path.join(__dirname, '..', '..', 'infrastructure', 'main.js');
const SECRET = 'ssec_e2e-orchestration-crash-0123456789';
const EVENTS = 30;
/** Calls answered before the gate holds every call: the kill lands after some steps ran, before most did. */
const ANSWERED_BEFORE_GATE = 10;
/** Each answered call takes this long, so several are in flight at once. */
const CALL_MS = 20;
const STEPS = ['reserve_stock', 'notify_warehouse'] as const;
const DEADLINE_MS = 120_000;

/** The server's settings, both runs: a short resume-after and lease, generous connector timeout. */
const serverEnv = (dataDir: string): Record<string, string> => ({
  DATA_DIR: dataDir,
  PORT: '0',
  HOST: '127.0.0.1',
  LOG_LEVEL: 'info',
  NODE_ENV: 'test',
  SCRYPT_LOG_N: '12',
  RATE_LIMIT_PER_IP: '100000',
  OUTBOUND_ALLOW_INSECURE: 'true',
  OUTBOUND_ALLOW_PRIVATE_NETWORKS: 'true',
  // The lease of the killed process lapses quickly, so the new one runs the sagas soon.
  LEASE_TTL_MS: '1000',
  // An attempt whose process died is resumed this long after it started.
  ORCHESTRATION_RESUME_AFTER_MS: '200',
  ORCHESTRATION_DISPATCH_CONCURRENCY: '4',
  CONNECTOR_TIMEOUT_MS: '60000',
});

interface ServerProcess {
  child: ChildProcess;
  url: string;
  exited: Promise<void>;
  output: () => string;
}

/** Starts the platform server as a child process on `dataDir`; resolves with its address once it listens. */
function startServer(dataDir: string): Promise<ServerProcess> {
  const child = spawn(process.execPath, [SERVER], { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ...serverEnv(dataDir) } });
  const lines: string[] = [];
  child.stderr!.on('data', (chunk) => lines.push(String(chunk)));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const output = (): string => lines.slice(-40).join('\n');
  return new Promise((resolve, reject) => {
    readline.createInterface({ input: child.stdout! }).on('line', (line) => {
      lines.push(line);
      if (!line.includes('platform listening')) return;
      const port = /"port":(\d+)/.exec(line)?.[1];
      if (port) resolve({ child, url: `http://127.0.0.1:${port}`, exited, output });
    });
    void exited.then(() => reject(new Error(`the server exited before it listened:\n${output()}`)));
  });
}

/** The connector's record: every call, in the order they came. */
interface SeenCall {
  tool: string;
  order_id: string;
  request_id: string;
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

async function until<T>(what: string, probe: () => Promise<T | null | undefined | false>, detail: () => string = () => ''): Promise<T> {
  const deadline = Date.now() + DEADLINE_MS;
  for (;;) {
    const value = await probe();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`${what} did not happen in time ${detail()}`);
    await sleep(50);
  }
}

describe('orchestration: the server killed (SIGKILL) during dispatch, then restarted (#14 durability)', function () {
  this.timeout(4 * DEADLINE_MS);
  const dir = temporaryDirectory();
  const seen: SeenCall[] = [];
  /** open: calls are answered; holding: calls wait for the release; released: answered again (after the kill). */
  let gate: 'open' | 'holding' | 'released' = 'open';
  let release: () => void = () => undefined;
  const released = new Promise<void>((resolve) => (release = resolve));

  const connector = createConnector({ signingSecret: SECRET });
  for (const tool of STEPS) {
    connector.tool<{ order_id: string; ticket?: string }>(tool, {
      description: `${tool} for an order (run by the prepare_order flow)`,
      auth: 'none',
      chat: false,
      input_schema: { type: 'object', properties: { order_id: { type: 'string' }, ticket: { type: 'string' } }, required: ['order_id'], additionalProperties: false },
      handler: async ({ parameters, request_id }) => {
        seen.push({ tool, order_id: parameters.order_id, request_id });
        if (gate === 'open' && seen.length >= ANSWERED_BEFORE_GATE) gate = 'holding';
        if (gate === 'holding') await released;
        else await sleep(CALL_MS);
        return { output: { order_id: parameters.order_id, ticket: parameters.ticket ?? `T-${parameters.order_id}`, request_id } };
      },
    });
  }
  connector.advertise({
    flows: [
      {
        id: 'prepare_order',
        label: 'Prepare a new order',
        trigger: ['shop.order.created'],
        steps: [
          { tool: 'reserve_stock', parameters: { order_id: '$.payload.order_id' } },
          { tool: 'notify_warehouse', parameters: { order_id: '$.payload.order_id', ticket: '$.steps.0.output.ticket' } },
        ],
        emits: [{ name: 'shop.order.prepared', payload: { order_id: '$.payload.order_id' } }],
      },
    ],
  });

  let listening: { url: string; close(): Promise<void> };
  let owner: Account;
  let connectionId: string;
  let server: ServerProcess | null = null;

  const send = async (method: string, p: string, body?: unknown) => {
    const response = await fetch(`${server!.url}${p}`, {
      method,
      headers: { authorization: `Bearer ${owner.token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await response.text();
    return { status: response.status, text, json: text ? JSON.parse(text) : undefined };
  };

  before(async () => {
    listening = await connector.listen(0, '127.0.0.1');
    // The organization, its premium plan and its synced connection, written to the data folder
    // by an in-process platform that is closed before the server process starts on it.
    const setup = await startTestServer({ ...serverEnv(dir.path), LOG_LEVEL: 'silent' });
    try {
      owner = await registerOwner(setup, 'e2e-orchestration-crash');
      await subscribeTo(setup, owner.tenant_id, 'premium');
      const headers = { authorization: `Bearer ${owner.token}` };
      const created = await setup.request('POST', '/api/v1/org/sdk-connections', { headers, body: { name: 'Coffee shop', webhook_url: listening.url.replace(/\/svc$/, ''), signing_secret: SECRET, enabled: true } });
      expect(created.status, created.text).to.equal(201);
      connectionId = created.json.id;
      const synced = await setup.request('POST', `/api/v1/org/sdk-connections/${connectionId}/sync-tools`, { headers, body: {} });
      expect(synced.status, synced.text).to.equal(200);
    } finally {
      await setup.close();
    }
  });

  after(async () => {
    release();
    if (server && server.child.exitCode === null && server.child.signalCode === null) {
      server.child.kill('SIGKILL');
      await server.exited;
    }
    await listening?.close();
    dir.remove();
  });

  it('loses no event and calls no step twice with different request ids', async () => {
    server = await startServer(dir.path);
    const flows = await send('GET', `/api/v1/org/sdk-connections/${connectionId}/flows`);
    expect(flows.status, flows.text).to.equal(200);
    expect(flows.json.items.map((flow: { id: string }) => flow.id)).to.deep.equal(['prepare_order']);

    // Every event acknowledged (201) before the kill.
    const emitted: Array<{ id: string; order_id: string }> = [];
    for (let index = 0; index < EVENTS; index += 1) {
      const order_id = `CRASH-${index}`;
      const response = await send('POST', '/api/v1/org/events', { name: 'shop.order.created', payload: { order_id } });
      expect(response.status, response.text).to.equal(201);
      emitted.push({ id: response.json.id, order_id });
    }

    // The gate is closed: calls have reached the connector and are waiting for their answer.
    await until('the connector holding calls', async () => gate === 'holding' && seen.length >= ANSWERED_BEFORE_GATE, () => `(${seen.length} calls seen)`);
    const first = server;
    first.child.kill('SIGKILL');
    await first.exited;
    const seenBeforeKill = seen.length;
    expect(seenBeforeKill, 'the kill landed before every step was called').to.be.lessThan(EVENTS * STEPS.length);
    // The dead server's calls get their answers now, into closed connections; later calls are answered at once.
    gate = 'released';
    release();

    server = await startServer(dir.path);
    const restarted = server;
    const settled = new Map<string, any>(); // eslint-disable-line @typescript-eslint/no-explicit-any
    await until(
      'every emitted event processed',
      async () => {
        for (const { id } of emitted) {
          if (settled.has(id)) continue;
          const event = await send('GET', `/api/v1/org/events/${id}`);
          expect(event.status, event.text).to.equal(200);
          expect(['queued', 'dispatched', 'processed'], `${id}: ${event.text}`).to.include(event.json.status);
          if (event.json.status === 'processed') settled.set(id, event.json);
        }
        return settled.size === EVENTS;
      },
      () => `(${settled.size} of ${EVENTS} processed; server output:\n${restarted.output()})`,
    );

    const flowKey = `prepare_order@${connectionId}`;
    let repeated = 0;
    for (const { id, order_id } of emitted) {
      const event = settled.get(id);
      // Resumed, not retried: the attempt the dead process started is the one that ended.
      expect(event.attempts, id).to.have.length(1);
      const [run] = event.attempts[0].flow_runs;
      expect(run.flow).to.equal(flowKey);
      STEPS.forEach((tool, step) => {
        const calls = seen.filter((call) => call.tool === tool && call.order_id === order_id).map((call) => call.request_id);
        const expected = stepRequestId(id, 1, flowKey, step);
        expect(new Set(calls), `${order_id} ${tool}: one request id`).to.deep.equal(new Set([expected]));
        expect(calls.length, `${order_id} ${tool}: repeated at most once`).to.be.at.most(2);
        repeated += calls.length - 1;
        expect(run.steps[step]).to.include({ step, request_id: expected, outcome: 'succeeded' });
      });
      // The emit is recorded once; its event is the only follow-on of this one.
      expect(run.steps[STEPS.length]).to.include({ step: STEPS.length, outcome: 'succeeded' });
    }
    // The calls held at the kill were made, never recorded, and made again with the same id;
    // a call first made by the restarted server is never repeated.
    expect(repeated, 'the calls in flight at the kill were made again').to.be.at.least(1);
    const beforeKill = new Set(seen.slice(0, seenBeforeKill).map((call) => call.request_id));
    const firstAfterRestart = seen.slice(seenBeforeKill).map((call) => call.request_id).filter((id) => !beforeKill.has(id));
    expect(new Set(firstAfterRestart).size, 'only calls of the killed server are repeated').to.equal(firstAfterRestart.length);

    // Each event emitted exactly one follow-on, despite the resumed attempts.
    const followOns = await send('GET', '/api/v1/org/events?name=shop.order.prepared&limit=100');
    expect(followOns.status, followOns.text).to.equal(200);
    const causes = followOns.json.items.map((item: { causation_id: string }) => item.causation_id).sort();
    expect(causes).to.deep.equal(emitted.map((event) => event.id).sort());
  });
});
