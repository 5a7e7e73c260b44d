// An emitted event started in the append that receives it (DispatchOnReceipt): when the
// dispatcher has a slot free and nothing waits for one, an event due at once outside any
// sequence is appended already claimed for its first attempt, answered `dispatched`, and runs
// in that slot with no pass of the queue; one no flow matches is processed on receipt. A
// delayed or sequenced event, or one emitted while others wait for a slot (even at the moment a
// slot has come free and no pass has read them yet), is queued for a pass as before, and the
// waiting ones go first. The example connector listens here; its warehouse calls for orders
// named `hold-*` are held until the test lets them go.

import { expect } from 'chai';
import type { ConnectorClient, ConnectorExchange, ConnectorRequest, ConnectorTarget } from '../../application/ports/connector-client';
import { eventIdOfKey } from '../../application/orchestration/orchestration-events';
import { orchestrationEventStream, stepRequestId } from '../../domain/orchestration-event/orchestration-event';
import { allProjections } from '../../projections/index';
import { orchestrationEventsProjection } from '../../projections/orchestration-events';
import type { Account } from '../support/identity';
import { heldOrchestrationEvents, organizationWithConnector, signedConnectorClient } from '../support/orchestration';
import { type TestResponse, type TestServer, startTestServer } from '../support/server';
import { eventually } from '../support/stores';

/** Records each warehouse call's order id and request id; holds those of `hold-*` orders until `letGo`. */
class GateClient implements ConnectorClient {
  readonly calls: Array<{ order: string; request_id: string }> = [];
  private readonly held = new Map<string, () => void>();

  constructor(private readonly client: ConnectorClient) {}

  async call(target: ConnectorTarget, request: ConnectorRequest): Promise<ConnectorExchange> {
    if (request.type === 'tool.invoke' && request.tool === 'notify_warehouse') {
      const order = String(request.parameters?.order_id);
      this.calls.push({ order, request_id: request.request_id });
      if (order.startsWith('hold-')) await new Promise<void>((resolve) => this.held.set(order, resolve));
    }
    return this.client.call(target, request);
  }

  holding(order: string): boolean {
    return this.held.has(order);
  }

  letGo(order: string): void {
    this.held.get(order)?.();
    this.held.delete(order);
  }
}

describe('orchestration events started on receipt (a free slot and nothing waiting)', () => {
  let server: TestServer;
  let client: GateClient;
  let owner: Account;
  let connectionId: string;
  const closers: Array<() => Promise<void>> = [];

  const send = (method: string, path: string, body?: unknown): Promise<TestResponse> => server.request(method, path, { headers: { authorization: `Bearer ${owner.token}` }, body });
  async function emit(body: Record<string, unknown>): Promise<{ id: string; status: string; attempts: Array<Record<string, unknown>>; received_at: string; etag: string | null }> {
    const response = await send('POST', '/api/v1/org/events', body);
    expect(response.status, response.text).to.equal(201);
    return { ...response.json, etag: response.headers.get('etag') };
  }
  const order = (orderId: string, more: Record<string, unknown> = {}) => ({ name: 'shop.order.created', payload: { order_id: orderId }, ...more });
  const get = async (id: string) => (await send('GET', `/api/v1/org/events/${id}`)).json;
  const flowKey = () => `prepare_order@${connectionId}`;
  const settled = async (id: string): Promise<void> => eventually(async () => (await get(id)).status === 'processed', 10_000, `event ${id} processed`);

  before(async () => {
    client = new GateClient(signedConnectorClient());
    server = await startTestServer(
      { SCRYPT_LOG_N: '12', OUTBOUND_ALLOW_INSECURE: 'true', OUTBOUND_ALLOW_PRIVATE_NETWORKS: 'true', ORCHESTRATION_DISPATCH_CONCURRENCY: '4', ORCHESTRATION_TENANT_CONCURRENCY: '2', METRICS_PUBLIC: 'true' },
      { connectorClient: client },
    );
    ({ owner, connectionId } = await organizationWithConnector(server, 'on-receipt-shop', closers));
  });
  // Each test starts with the queue read after every wake: nothing waits.
  beforeEach(() => server.platform.dispatcher.drain());
  after(async () => {
    for (const close of closers) await close().catch(() => undefined);
    await server.close();
  });

  it('answers 201 with the event already dispatched: queued and claimed in one append; the flow runs once and it ends processed', async () => {
    const event = await emit(order('R-1'));
    expect(event.status).to.equal('dispatched');
    expect(event.attempts).to.have.length(1);
    expect(event.attempts[0]).to.deep.include({ attempt: 1, flows: [flowKey()], outcome: 'running', started_at: event.received_at });
    // Its two first events, one after the other in the log: one append.
    const [queued, started] = await server.platform.eventStore.readStream(orchestrationEventStream(event.id));
    expect([queued.type, started.type]).to.deep.equal(['OrchestrationEventQueued', 'OrchestrationDispatchStarted']);
    expect(started.position).to.equal(queued.position + 1);
    // The answer's version is the stream's after those two (revision 1), as GET and If-Match have it.
    expect(event.etag).to.equal('"1"');

    await settled(event.id);
    const done = await get(event.id);
    expect(done.attempts).to.have.length(1);
    expect(done.attempts[0].flow_runs[0].steps[0]).to.deep.include({ step: 0, outcome: 'succeeded', request_id: stepRequestId(event.id, 1, flowKey(), 0) });
    expect(client.calls.filter((call) => call.order === 'R-1')).to.deep.equal([{ order: 'R-1', request_id: stepRequestId(event.id, 1, flowKey(), 0) }]);
  });

  it('processes on receipt an event no flow matches: answered processed, its attempt recording no flow and counted', async () => {
    const attempts = async (): Promise<number> => {
      const line = (await server.request('GET', '/metrics')).text.split('\n').find((candidate) => candidate.startsWith('orchestration_attempts_total{event_name="crm.contact.updated"} '));
      return line === undefined ? 0 : Number(line.split(' ')[1]);
    };
    const before = { calls: client.calls.length, attempts: await attempts() };
    const event = await emit({ name: 'crm.contact.updated', payload: { id: 'c-1' } });
    expect(event.status).to.equal('processed');
    expect(event.attempts).to.have.length(1);
    expect(event.attempts[0]).to.deep.include({ attempt: 1, flows: [], outcome: 'processed' });
    expect(client.calls.length).to.equal(before.calls);
    expect(await attempts()).to.equal(before.attempts + 1);
  });

  it('queues a delayed event and a sequenced one for a pass of the queue, as before', async () => {
    const delayed = await emit(order('D-1', { delay_seconds: 1 }));
    expect(delayed.status).to.equal('queued');
    const sequenced = await emit(order('S-1', { sequence_key: 'till-1', sequence_n: 1 }));
    expect(sequenced.status).to.equal('queued');
    await settled(sequenced.id);
    await settled(delayed.id);
    expect(client.calls.filter((call) => call.order === 'D-1' || call.order === 'S-1')).to.have.length(2);
  });

  it('50 parallel emits with one idempotency_key: one event, started once, its step called once; every slot is given back', async () => {
    const answers = await Promise.all(Array.from({ length: 50 }, () => send('POST', '/api/v1/org/events', order('K-1', { idempotency_key: 'order-K-1' }))));
    const created = answers.filter((answer) => answer.status === 201);
    expect(created).to.have.length(1);
    expect(answers.every((answer) => answer.status === 201 || answer.status === 200)).to.equal(true);
    expect(new Set(answers.map((answer) => answer.json.id)).size).to.equal(1);
    await settled(created[0].json.id);
    expect(client.calls.filter((call) => call.order === 'K-1')).to.have.length(1);
    // The slots the other 49 reserved are free again: of the tenant's two, one held by hold-5
    // leaves the other to R-6, which starts on receipt too.
    await server.platform.dispatcher.drain();
    const holding = await emit(order('hold-5'));
    expect(holding.status).to.equal('dispatched');
    await eventually(() => client.holding('hold-5'), 5000, 'the held call under way');
    const after = await emit(order('R-6'));
    expect(after.status).to.equal('dispatched');
    client.letGo('hold-5');
    await settled(after.id);
    await settled(holding.id);
  });
});

describe('orchestration events emitted while others wait for a slot', () => {
  let server: TestServer;
  let client: GateClient;
  let owner: Account;
  let readModel: ReturnType<typeof heldOrchestrationEvents>;
  const closers: Array<() => Promise<void>> = [];

  const send = (method: string, path: string, body?: unknown): Promise<TestResponse> => server.request(method, path, { headers: { authorization: `Bearer ${owner.token}` }, body });
  const order = (orderId: string) => ({ name: 'shop.order.created', payload: { order_id: orderId }, idempotency_key: `order-${orderId}` });
  const streamOf = (orderId: string) => server.platform.eventStore.readStream(orchestrationEventStream(eventIdOfKey(server.platform.orchestration, owner.tenant_id, `order-${orderId}`)));

  before(async () => {
    client = new GateClient(signedConnectorClient());
    readModel = heldOrchestrationEvents();
    // The tenant's share is one slot. Projections on this thread, so that the queue's read model
    // can be held: a pass then waits for it (the read-your-writes wait as long as a test allows),
    // which keeps open the moment between a slot's end and the pass that reads what waits for it.
    server = await startTestServer(
      {
        SCRYPT_LOG_N: '12',
        OUTBOUND_ALLOW_INSECURE: 'true',
        OUTBOUND_ALLOW_PRIVATE_NETWORKS: 'true',
        PROJECTION_THREAD: 'main',
        READ_YOUR_WRITES_TIMEOUT_MS: '60000',
        ORCHESTRATION_DISPATCH_CONCURRENCY: '4',
        ORCHESTRATION_TENANT_CONCURRENCY: '1',
      },
      { connectorClient: client, projections: allProjections.map((projection) => (projection.name === orchestrationEventsProjection.name ? readModel.projection : projection)) },
    );
    ({ owner } = await organizationWithConnector(server, 'waiting-shop', closers));
  });
  after(async () => {
    readModel.release();
    for (const close of closers) await close().catch(() => undefined);
    await server.close();
  });

  it('is queued behind them, even when a slot has just come free and no pass has read them yet; they run first', async () => {
    await server.platform.dispatcher.drain();
    const holding = await send('POST', '/api/v1/org/events', order('hold-1'));
    expect(holding.json.status).to.equal('dispatched');
    await eventually(() => client.holding('hold-1'), 5000, 'the held call under way');

    // The queue's read model held: the pass W-2's queuing wakes waits for it to show W-2, so
    // W-2 stays unread (and the emits' answers wait for the read models too).
    readModel.hold();
    // The tenant's one slot is taken: W-2 is queued.
    const waiting = send('POST', '/api/v1/org/events', order('W-2'));
    await eventually(async () => (await streamOf('W-2')).length > 0, 5000, 'W-2 appended');
    // hold-1 ends: its slot is free, and no pass has read W-2.
    client.letGo('hold-1');
    await eventually(async () => (await streamOf('hold-1')).at(-1)?.type === 'OrchestrationEventProcessed', 5000, 'hold-1 processed');
    await new Promise((resolve) => setTimeout(resolve, 50));
    // N-3 comes now: it must not take the free slot before W-2.
    const next = send('POST', '/api/v1/org/events', order('N-3'));
    await eventually(async () => (await streamOf('N-3')).length > 0, 5000, 'N-3 appended');
    expect((await streamOf('N-3')).map((event) => event.type)).to.deep.equal(['OrchestrationEventQueued']);
    expect((await streamOf('W-2')).map((event) => event.type)).to.deep.equal(['OrchestrationEventQueued']);
    expect(client.calls.map((call) => call.order)).to.deep.equal(['hold-1']);

    readModel.release();
    expect((await waiting).json.status).to.equal('queued');
    expect((await next).json.status).to.equal('queued');
    await eventually(async () => (await streamOf('N-3')).at(-1)?.type === 'OrchestrationEventProcessed', 10_000, 'N-3 processed');
    expect(client.calls.map((call) => call.order)).to.deep.equal(['hold-1', 'W-2', 'N-3']);
  });
});
