// Issue #14's done-when, end to end: the example connector as its own process
// (`npm run example:connector`), the platform in this process on its real clock with a short
// back-off; a connection created, enabled and synced through the API. An emitted
// shop.order.created runs the advertised prepare_order flow, which calls the connector's
// notify_warehouse (the connector echoes the request id it was sent); a connector failing
// twice ends processed after three attempts; one that keeps failing is dead-lettered and a
// retry after it recovers ends processed; a replay runs the flow again; a range replay
// replays exactly the root events of the range (not the follow-on events the flow emitted).

import { type ChildProcess, spawn } from 'node:child_process';
import path from 'node:path';
import readline from 'node:readline';
import { expect } from 'chai';
import { stepRequestId } from '../../domain/orchestration-event/orchestration-event';
import { type Account, liftSeatLimit, registerOwner } from '../support/identity';
import { type TestResponse, type TestServer, startTestServer } from '../support/server';
import { subscribeTo } from '../support/subscriptions';

const DIST = path.resolve(__dirname, '..', '..');
const SECRET = 'ssec_e2e-orchestration-secret-0123456789';
const SETTLED = ['processed', 'dead_letter', 'expired'];

describe('orchestration end to end: the example connector as its own process (#14)', function () {
  this.timeout(60_000);
  let connector: ChildProcess;
  let connectorUrl: string;
  let server: TestServer;
  let owner: Account;
  let connectionId: string;

  const send = (method: string, p: string, body?: unknown): Promise<TestResponse> => server.request(method, p, { headers: { authorization: `Bearer ${owner.token}` }, body });
  const get = async (id: string) => (await send('GET', `/api/v1/org/events/${id}`)).json;
  async function emit(body: Record<string, unknown>): Promise<string> {
    const response = await send('POST', '/api/v1/org/events', body);
    expect(response.status, response.text).to.equal(201);
    return response.json.id;
  }
  /** Runs the dispatcher until the event is settled; a back-off of at most 40 ms lies between attempts. */
  async function settled(id: string) {
    for (let round = 0; round < 500; round += 1) {
      await server.platform.dispatcher.drain();
      const event = await get(id);
      if (SETTLED.includes(event.status)) return event;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    throw new Error(`event ${id} never settled: ${JSON.stringify(await get(id))}`);
  }
  const flowKey = () => `prepare_order@${connectionId}`;

  before(async () => {
    connector = spawn(process.execPath, [path.join(DIST, 'adapters/connector-sdk/example/main.js')], {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, SVC_SIGNING_SECRET: SECRET, PORT: '0', HOST: '127.0.0.1' },
    });
    connectorUrl = await new Promise<string>((resolve, reject) => {
      readline.createInterface({ input: connector.stdout! }).on('line', (line) => {
        const match = /listening on (http:\/\/127\.0\.0\.1:\d+)\/svc/.exec(line);
        if (match) resolve(match[1]);
      });
      connector.once('exit', (code) => reject(new Error(`the example connector exited with ${code}`)));
    });
    server = await startTestServer({
      SCRYPT_LOG_N: '12',
      OUTBOUND_ALLOW_INSECURE: 'true',
      OUTBOUND_ALLOW_PRIVATE_NETWORKS: 'true',
      ORCHESTRATION_MAX_ATTEMPTS: '3',
      ORCHESTRATION_RETRY_BASE_MS: '10',
      ORCHESTRATION_RETRY_MAX_MS: '40',
    });
    owner = await registerOwner(server, 'e2e-orchestration-org');
    await liftSeatLimit(server, owner.tenant_id);
    await subscribeTo(server, owner.tenant_id, 'premium');
    const created = await send('POST', '/api/v1/org/sdk-connections', { name: 'Coffee shop', webhook_url: connectorUrl, signing_secret: SECRET, enabled: true });
    expect(created.status, created.text).to.equal(201);
    connectionId = created.json.id;
    const synced = await send('POST', `/api/v1/org/sdk-connections/${connectionId}/sync-tools`, {});
    expect(synced.status, synced.text).to.equal(200);
    const flows = await send('GET', `/api/v1/org/sdk-connections/${connectionId}/flows`);
    expect(flows.json.items.map((flow: { id: string }) => flow.id)).to.include('prepare_order');
  });
  after(async () => {
    await server?.close();
    if (connector && connector.exitCode === null) {
      connector.kill('SIGTERM');
      await new Promise((resolve) => connector.once('exit', resolve));
    }
  });

  it('an emitted event runs the advertised flow, which calls the connector tool with the derived request id', async () => {
    const id = await emit({ name: 'shop.order.created', payload: { order_id: 'E2E-1' } });
    const event = await settled(id);
    expect(event.status).to.equal('processed');
    const step = event.attempts[0].flow_runs[0].steps[0];
    expect(step.outcome).to.equal('succeeded');
    // The connector process answers with the request id it received.
    expect(step.output).to.deep.include({ order_id: 'E2E-1', ticket: 'WH-E2E-1', calls: 1, request_id: stepRequestId(id, 1, flowKey(), 0) });
    const followOn = await settled(event.attempts[0].flow_runs[0].steps[1].output.event_id);
    expect(followOn).to.include({ name: 'shop.order.prepared', causation_id: id, depth: 1 });
  });

  it('a connector failing twice then succeeding ends processed after three attempts', async () => {
    const event = await settled(await emit({ name: 'shop.order.created', payload: { order_id: 'E2E-2', fail_first: 2 } }));
    expect(event.status).to.equal('processed');
    expect(event.attempts.map((attempt: { outcome: string }) => attempt.outcome)).to.deep.equal(['failed', 'failed', 'processed']);
  });

  it('one that keeps failing ends dead_letter; a retry after it recovers ends processed', async () => {
    const id = await emit({ name: 'shop.order.created', payload: { order_id: 'E2E-3', fail_first: 5 } });
    const dead = await settled(id);
    expect(dead.status).to.equal('dead_letter');
    expect(dead.attempts).to.have.length(3);
    expect((await send('POST', `/api/v1/org/events/${id}/retry`)).status).to.equal(200);
    const event = await settled(id);
    expect(event.status).to.equal('processed');
    expect(event.attempts).to.have.length(6);
  });

  it('a replay creates a new event with replay_of that runs the flow again', async () => {
    const original = await emit({ name: 'shop.order.created', payload: { order_id: 'E2E-4' } });
    await settled(original);
    const replay = await send('POST', `/api/v1/org/events/${original}/replay`, {});
    expect(replay.json.replay_of).to.equal(original);
    const event = await settled(replay.json.id);
    expect(event.status).to.equal('processed');
    expect(event.attempts[0].flow_runs[0].steps[0].output).to.deep.include({ order_id: 'E2E-4', calls: 2, request_id: stepRequestId(replay.json.id, 1, flowKey(), 0) });
  });

  it('a range replay replays exactly the root events of the range, not the events the flows emitted', async () => {
    const from = new Date().toISOString();
    const roots = [await emit({ name: 'shop.order.created', payload: { order_id: 'E2E-5' } }), await emit({ name: 'shop.order.created', payload: { order_id: 'E2E-6' } })];
    for (const id of roots) await settled(id);
    const to = new Date(Date.now() + 1).toISOString();
    const listed = await send('GET', `/api/v1/org/events?from=${encodeURIComponent(from)}&to=${encodeURIComponent(to)}&limit=100`);
    expect(listed.json.items.length, 'the follow-on events are in the range too').to.equal(4);
    const replayed = await send('POST', '/api/v1/org/events/replay', { from, to });
    expect(replayed.status, replayed.text).to.equal(200);
    expect(replayed.json.items.map((item: { replay_of: string }) => item.replay_of).sort()).to.deep.equal([...roots].sort());
    for (const item of replayed.json.items) expect((await settled(item.id)).status).to.equal('processed');
  });
});
