// The dispatcher's slots are shared between tenants: at most ORCHESTRATION_TENANT_CONCURRENCY
// of one tenant's events run at once, so one tenant's backlog (or its slow connector) never
// holds every slot while another tenant's events wait. Two organizations, each with the
// example connector as an SDK connection; every connector call is held a moment, so the calls
// in flight can be counted. Last, the slots kept busy through a backlog while the read models
// lag behind: a pass need not wait for them, and takes none of the attempts it ended again.

import { expect } from 'chai';
import type { ConnectorClient, ConnectorExchange, ConnectorRequest, ConnectorTarget } from '../../application/ports/connector-client';
import { orchestrationEventStream } from '../../domain/orchestration-event/orchestration-event';
import { allProjections } from '../../projections/index';
import { orchestrationEventsProjection } from '../../projections/orchestration-events';
import type { Account } from '../support/identity';
import { heldOrchestrationEvents, organizationWithConnector, signedConnectorClient } from '../support/orchestration';
import { type TestServer, startTestServer } from '../support/server';

/** Holds each warehouse call 40 ms and counts the calls in flight, per connector endpoint and in all. */
class HoldingClient implements ConnectorClient {
  readonly order: string[] = [];
  private readonly inFlight = new Map<string, number>();
  readonly peak = new Map<string, number>();
  peakTotal = 0;
  private total = 0;

  /** Calls to this endpoint also wait until `released` settles (a test sets it). */
  held: { endpoint: string; released: Promise<void> } | null = null;

  constructor(private readonly client: ConnectorClient) {}

  async call(target: ConnectorTarget, request: ConnectorRequest): Promise<ConnectorExchange> {
    if (request.type !== 'tool.invoke' || request.tool !== 'notify_warehouse') return this.client.call(target, request);
    const key = target.endpoint;
    this.order.push(key);
    this.inFlight.set(key, (this.inFlight.get(key) ?? 0) + 1);
    this.total += 1;
    this.peak.set(key, Math.max(this.peak.get(key) ?? 0, this.inFlight.get(key) as number));
    this.peakTotal = Math.max(this.peakTotal, this.total);
    try {
      await new Promise((resolve) => setTimeout(resolve, 40));
      if (this.held?.endpoint === key) await this.held.released;
      return await this.client.call(target, request);
    } finally {
      this.inFlight.set(key, (this.inFlight.get(key) as number) - 1);
      this.total -= 1;
    }
  }
}

describe('orchestration dispatcher: slots shared between tenants (ORCHESTRATION_TENANT_CONCURRENCY)', () => {
  let server: TestServer;
  let client: HoldingClient;
  const closers: Array<() => Promise<void>> = [];
  const endpoints = new Map<string, string>();

  async function shopOf(slug: string): Promise<Account> {
    const { owner, endpoint } = await organizationWithConnector(server, slug, closers);
    endpoints.set(slug, endpoint);
    return owner;
  }

  before(async () => {
    client = new HoldingClient(signedConnectorClient());
    server = await startTestServer(
      { SCRYPT_LOG_N: '12', OUTBOUND_ALLOW_INSECURE: 'true', OUTBOUND_ALLOW_PRIVATE_NETWORKS: 'true', ORCHESTRATION_DISPATCH_CONCURRENCY: '4', ORCHESTRATION_TENANT_CONCURRENCY: '2' },
      { connectorClient: client, orchestrationDispatcher: false },
    );
  });
  after(async () => {
    for (const close of closers) await close().catch(() => undefined);
    await server.close();
  });

  it("runs at most two of a tenant's events at once, and another tenant's events alongside a backlog", async () => {
    const busy = await shopOf('busy-shop');
    const quiet = await shopOf('quiet-shop');
    const emit = async (owner: Account, order: string): Promise<void> => {
      const response = await server.request('POST', '/api/v1/org/events', { headers: { authorization: `Bearer ${owner.token}` }, body: { name: 'shop.order.created', payload: { order_id: order } } });
      expect(response.status, response.text).to.equal(201);
    };
    // A backlog deeper than a pass reads: the quiet tenant's events are older than none of it.
    for (let index = 0; index < 12; index += 1) await emit(busy, `busy-${index}`);
    for (let index = 0; index < 2; index += 1) await emit(quiet, `quiet-${index}`);

    await server.platform.dispatcher.drain();

    const busyEndpoint = endpoints.get('busy-shop') as string;
    const quietEndpoint = endpoints.get('quiet-shop') as string;
    expect(client.order.filter((endpoint) => endpoint === busyEndpoint)).to.have.length(12);
    expect(client.order.filter((endpoint) => endpoint === quietEndpoint)).to.have.length(2);
    expect(client.peak.get(busyEndpoint)).to.equal(2);
    expect(client.peakTotal).to.be.at.most(4);
    // The quiet tenant's events were emitted last but did not wait for the busy one's backlog:
    // both are among the first four calls.
    expect(client.order.slice(0, 4).filter((endpoint) => endpoint === quietEndpoint)).to.have.length(2);
  });
});

describe('orchestration dispatcher: another tenant’s events emitted while a backlog runs (the saga waking it)', () => {
  let server: TestServer;
  let client: HoldingClient;
  const closers: Array<() => Promise<void>> = [];

  before(async () => {
    client = new HoldingClient(signedConnectorClient());
    // The dispatcher saga runs: events wake the runner as they are queued and processed.
    server = await startTestServer(
      { SCRYPT_LOG_N: '12', OUTBOUND_ALLOW_INSECURE: 'true', OUTBOUND_ALLOW_PRIVATE_NETWORKS: 'true', ORCHESTRATION_DISPATCH_CONCURRENCY: '4', ORCHESTRATION_TENANT_CONCURRENCY: '2' },
      { connectorClient: client },
    );
  });
  after(async () => {
    for (const close of closers) await close().catch(() => undefined);
    await server.close();
  });

  const until = async (done: () => boolean, what: string): Promise<void> => {
    const deadline = Date.now() + 20_000;
    while (!done()) {
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  };

  it('starts them alongside the backlog, not after it', async () => {
    const busy = await organizationWithConnector(server, 'busy-live-shop', closers);
    const quiet = await organizationWithConnector(server, 'quiet-live-shop', closers);
    const emit = async (owner: Account, order: string): Promise<void> => {
      const response = await server.request('POST', '/api/v1/org/events', { headers: { authorization: `Bearer ${owner.token}` }, body: { name: 'shop.order.created', payload: { order_id: order } } });
      expect(response.status, response.text).to.equal(201);
    };
    // The backlog's calls are held until the quiet tenant's events have run: they can run only
    // alongside it, whatever the machine's speed (timing them against a running backlog made
    // this test fail on a loaded machine).
    let release = (): void => undefined;
    client.held = { endpoint: busy.endpoint, released: new Promise<void>((resolve) => (release = resolve)) };
    for (let index = 0; index < 16; index += 1) await emit(busy.owner, `busy-${index}`);
    const calls = (endpoint: string) => client.order.filter((called) => called === endpoint).length;
    try {
      await until(() => calls(busy.endpoint) >= 2, 'the backlog to start');
      // By now the other tenants' queue was read and found empty; only the quiet tenant's new
      // events can say that something came for it.
      for (let index = 0; index < 2; index += 1) await emit(quiet.owner, `quiet-${index}`);
      await until(() => calls(quiet.endpoint) === 2, "the quiet tenant's calls while the backlog's are held");
      expect(calls(busy.endpoint), 'the backlog held at its tenant share').to.equal(2);
    } finally {
      release();
    }
    await until(() => calls(busy.endpoint) === 16 && calls(quiet.endpoint) === 2, 'every call');
  });
});

/** Holds the warehouse call of one order until released; records every order called. */
class OneSlowOrderClient implements ConnectorClient {
  readonly called: string[] = [];
  private release: () => void = () => undefined;
  private readonly released = new Promise<void>((resolve) => {
    this.release = resolve;
  });

  constructor(
    private readonly client: ConnectorClient,
    private readonly slowOrder: string,
  ) {}

  async call(target: ConnectorTarget, request: ConnectorRequest): Promise<ConnectorExchange> {
    const order = request.type === 'tool.invoke' ? String(request.parameters?.order_id) : null;
    if (order !== null) this.called.push(order);
    if (order === this.slowOrder) await this.released;
    return this.client.call(target, request);
  }

  answerTheSlowOne(): void {
    this.release();
  }
}

describe('orchestration dispatcher: a slow connector call holds its own slot, not the others', () => {
  let server: TestServer;
  let client: OneSlowOrderClient;
  const closers: Array<() => Promise<void>> = [];

  before(async () => {
    client = new OneSlowOrderClient(signedConnectorClient(), 'slow');
    server = await startTestServer(
      { SCRYPT_LOG_N: '12', OUTBOUND_ALLOW_INSECURE: 'true', OUTBOUND_ALLOW_PRIVATE_NETWORKS: 'true', ORCHESTRATION_DISPATCH_CONCURRENCY: '4', ORCHESTRATION_TENANT_CONCURRENCY: '4' },
      { connectorClient: client },
    );
  });
  after(async () => {
    client.answerTheSlowOne();
    for (const close of closers) await close().catch(() => undefined);
    await server.close();
  });

  it('runs the events emitted after it while its call is still unanswered, and ends it when it is answered', async () => {
    const { owner } = await organizationWithConnector(server, 'slow-call-shop', closers);
    const headers = { authorization: `Bearer ${owner.token}` };
    const emit = async (order: string): Promise<string> => {
      const response = await server.request('POST', '/api/v1/org/events', { headers, body: { name: 'shop.order.created', payload: { order_id: order } } });
      expect(response.status, response.text).to.equal(201);
      return response.json.id as string;
    };
    const statusOf = async (id: string): Promise<string> => (await server.request('GET', `/api/v1/org/events/${id}`, { headers })).json.status as string;
    const until = async (done: () => Promise<boolean>, what: string): Promise<void> => {
      const deadline = Date.now() + 20_000;
      while (!(await done())) {
        if (Date.now() > deadline) throw new Error(`timed out waiting for ${what} (called: ${client.called.join(', ')})`);
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
    };

    const slow = await emit('slow');
    await until(async () => client.called.includes('slow'), 'the slow call to start');
    // More than the slots left beside the slow call: they take turns in the three others.
    const fast = [];
    for (let index = 0; index < 7; index += 1) fast.push(await emit(`fast-${index}`));
    for (const id of fast) await until(async () => (await statusOf(id)) === 'processed', `event ${id} to be processed`);
    expect(await statusOf(slow)).to.equal('dispatched');

    client.answerTheSlowOne();
    await until(async () => (await statusOf(slow)) === 'processed', 'the slow event to be processed');
    expect(client.called.filter((order) => order === 'slow')).to.have.length(1);
  });
});

/** Polls `done` every 10 ms until it holds; fails naming `what` after 20 s. */
async function eventually(done: () => boolean | Promise<boolean>, what: () => string): Promise<void> {
  const deadline = Date.now() + 20_000;
  while (!(await done())) {
    if (Date.now() > deadline) throw new Error(what());
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

describe('orchestration dispatcher: a backlog runs while the read models lag behind', () => {
  let server: TestServer;
  let client: OneSlowOrderClient;
  let readModel: ReturnType<typeof heldOrchestrationEvents>;
  const closers: Array<() => Promise<void>> = [];

  before(async () => {
    client = new OneSlowOrderClient(signedConnectorClient(), 'none');
    readModel = heldOrchestrationEvents();
    // Projections on this thread, so that this one can be held; a read-your-writes wait as long
    // as a test allows, so that a pass waiting for the read models would be seen waiting.
    server = await startTestServer(
      { SCRYPT_LOG_N: '12', OUTBOUND_ALLOW_INSECURE: 'true', OUTBOUND_ALLOW_PRIVATE_NETWORKS: 'true', PROJECTION_THREAD: 'main', READ_YOUR_WRITES_TIMEOUT_MS: '60000', ORCHESTRATION_DISPATCH_CONCURRENCY: '2', ORCHESTRATION_TENANT_CONCURRENCY: '2' },
      { connectorClient: client, orchestrationDispatcher: false, projections: allProjections.map((projection) => (projection.name === orchestrationEventsProjection.name ? readModel.projection : projection)) },
    );
  });
  after(async () => {
    readModel.release();
    for (const close of closers) await close().catch(() => undefined);
    await server.close();
  });

  it('takes the queue as the read model shows it without waiting for it to catch up, and none of the ended attempts again', async () => {
    const { owner } = await organizationWithConnector(server, 'lagging-shop', closers);
    const headers = { authorization: `Bearer ${owner.token}` };
    const orders = Array.from({ length: 8 }, (_, index) => `lag-${index}`);
    const ids: string[] = [];
    for (const order of orders) {
      const response = await server.request('POST', '/api/v1/org/events', { headers, body: { name: 'shop.order.created', payload: { order_id: order } } });
      expect(response.status, response.text).to.equal(201);
      ids.push(response.json.id as string);
    }
    const listed = async (status: string): Promise<number> => (await server.request('GET', `/api/v1/org/events?status=${status}&name=shop.order.created`, { headers })).json.items.length as number;
    await eventually(async () => (await listed('queued')) === orders.length, () => 'the read model never showed the events queued');

    // From here the read model shows all eight queued, whatever the dispatcher does: four
    // passes of two slots, each finding the attempts ended before it still due there.
    readModel.hold();
    const draining = server.platform.dispatcher.drain();
    // Well within the read-your-writes wait (60 s): a pass that waited would not get here.
    await eventually(() => client.called.length >= orders.length, () => `a pass waited for the read model (called: ${client.called.join(', ')})`);
    expect([...client.called].sort()).to.deep.equal([...orders].sort());
    // Each ends in its stream (the last answer is being recorded as the last call returns).
    const streams = async () => Promise.all(ids.map((id) => server.platform.eventStore.readStream(orchestrationEventStream(id))));
    await eventually(async () => (await streams()).every((events) => events.at(-1)?.type === 'OrchestrationEventProcessed'), () => 'the attempts never ended');
    for (const events of await streams()) {
      expect(events.filter((event) => event.type === 'OrchestrationDispatchStarted')).to.have.length(1);
      expect(events.at(-1)?.type).to.equal('OrchestrationEventProcessed');
    }

    readModel.release();
    await draining;
    // The read model catches up with what the streams say.
    await eventually(async () => (await listed('processed')) === orders.length, () => 'the read model never caught up');
    for (const id of ids) {
      const event = (await server.request('GET', `/api/v1/org/events/${id}`, { headers })).json;
      expect(event.status).to.equal('processed');
      expect(event.attempts).to.have.length(1);
    }
    expect(client.called).to.have.length(orders.length);
  });
});
