// Orchestration events over HTTP (spec 2.7, 3, 4.13, 6; issue #14 points 1 and 2): every
// route's success, 401, 403 for a member, 403 for another tenant on ingest, 404, 409 retry
// of a queued or processed event, 400 per envelope field naming it; one event for 50 parallel
// emits with one idempotency_key; sequence order over 200 shuffled events and a gap that waits
// then goes on; expiry; depth; delay; retry; replay; range replay. The flow runner does not
// runs elsewhere (tests/api/orchestration-dispatch.test.ts) and is off here: events are
// dispatched, processed and failed through the dispatch queue's commands
// (tests/support/orchestration.ts). Time is a ManualClock.

import { expect } from 'chai';
import { type Account, joinAs, liftSeatLimit, registerOwner } from '../support/identity';
import { dispatch, dispatchable, fail, process } from '../support/orchestration';
import { type TestResponse, type TestServer, startTestServer } from '../support/server';
import { ManualClock, eventually } from '../support/stores';

const GAP_WAIT_MS = 30_000;

describe('orchestration events (spec 4.13)', () => {
  let server: TestServer;
  const clock = new ManualClock();
  let owner: Account;
  let admin: Account;
  let member: Account;
  let outsider: Account;

  const as = (account: Account, extra: Record<string, string> = {}) => ({ authorization: `Bearer ${account.token}`, ...extra });
  const send = (account: Account | null, method: string, path: string, body?: unknown, extra: Record<string, string> = {}): Promise<TestResponse> =>
    server.request(method, path, { headers: account ? as(account, extra) : extra, body });
  const emit = (account: Account, body: Record<string, unknown>, extra: Record<string, string> = {}) => send(account, 'POST', '/api/v1/org/events', body, extra);
  const emitted = async (account: Account, body: Record<string, unknown>): Promise<{ id: string; received_at: string; [field: string]: unknown }> => {
    const response = await emit(account, body);
    expect(response.status, response.text).to.equal(201);
    return response.json;
  };
  const ref = (id: string, account: Account = owner) => ({ event_id: id, tenant_id: account.tenant_id });
  const get = async (id: string, account: Account = owner) => (await send(account, 'GET', `/api/v1/org/events/${id}`)).json;
  async function expectRefused(response: TestResponse, status: number, code: string, field?: string): Promise<void> {
    expect(response.status, response.text).to.equal(status);
    expect(response.json.code, response.text).to.equal(code);
    if (field !== undefined) expect(response.json.field, response.text).to.equal(field);
    expect((await response.events()).filter((event) => event.endsWith('@orchestrationEvent'))).to.deep.equal([]);
  }

  before(async () => {
    server = await startTestServer({ SCRYPT_LOG_N: '12', ORCHESTRATION_SEQUENCE_GAP_WAIT_MS: String(GAP_WAIT_MS) }, { clock, orchestrationDispatcher: false });
    owner = await registerOwner(server, 'orchestration-org');
    await liftSeatLimit(server, owner.tenant_id);
    admin = await joinAs(server, await registerOwner(server, 'orch-adm-home', 'orch-adm@example.com'), owner.tenant_id, 'admin');
    member = await joinAs(server, await registerOwner(server, 'orch-mem-home', 'orch-mem@example.com'), owner.tenant_id, 'member');
    outsider = await registerOwner(server, 'orchestration-other-org');
  });
  after(() => server.close());

  describe('emit, get, list, ingest', () => {
    it('emits: 201 with the stored event (defaults filled), its Location and ETag; GET answers the same', async () => {
      const response = await emit(admin, { name: 'shop.order.created', source: 'shop-backend', payload: { order: 'o-1', total: 42.5 }, version: 2, ttl_seconds: 600 });
      expect(response.status, response.text).to.equal(201);
      const event = response.json;
      expect(response.headers.get('location')).to.equal(`/api/v1/org/events/${event.id}`);
      expect(response.headers.get('etag')).to.equal('"0"');
      expect(event).to.include({
        name: 'shop.order.created',
        source: 'shop-backend',
        version: 2,
        correlation_id: event.id,
        causation_id: null,
        idempotency_key: null,
        sequence_key: null,
        sequence_n: null,
        ttl_seconds: 600,
        depth: 0,
        delay_seconds: 0,
        replay_of: null,
        received_via: 'emit',
        status: 'queued',
        next_attempt_at: null,
        settled_at: null,
      });
      expect(event.payload).to.deep.equal({ order: 'o-1', total: 42.5 });
      expect(event.received_at).to.equal(clock.now().toISOString());
      expect(event.not_before).to.equal(event.received_at);
      expect(event.expires_at).to.equal(new Date(clock.now().getTime() + 600_000).toISOString());
      expect([event.attempts, event.requeues, event.replays, event.sequence_gap]).to.deep.equal([[], [], [], null]);
      expect(await response.events()).to.deep.equal(['OrchestrationEventQueued@orchestrationEvent']);
      const stored = await server.platform.eventStore.readStream(`orchestrationEvent-${event.id}`);
      expect(stored[0].metadata.actor).to.deep.equal({ kind: 'user', id: admin.user_id });
      const read = await send(owner, 'GET', `/api/v1/org/events/${event.id}`);
      expect(read.status).to.equal(200);
      expect(read.headers.get('etag')).to.equal('"0"');
      expect(read.json).to.deep.equal(event);
    });

    it('ingests into the caller\'s own tenant only: 403 tenant_mismatch for another', async () => {
      const response = await send(owner, 'POST', `/api/v1/org/events/ingest/${owner.tenant_id}`, { name: 'crm.contact.updated', payload: { contact: 'c-1' } });
      expect(response.status, response.text).to.equal(201);
      expect(response.json).to.include({ name: 'crm.contact.updated', received_via: 'ingest', status: 'queued' });
      expect(await response.events()).to.deep.equal(['OrchestrationEventQueued@orchestrationEvent']);
      await expectRefused(await send(owner, 'POST', `/api/v1/org/events/ingest/${outsider.tenant_id}`, { name: 'crm.contact.updated' }), 403, 'tenant_mismatch');
      await expectRefused(await send(outsider, 'POST', `/api/v1/org/events/ingest/${owner.tenant_id}`, { name: 'crm.contact.updated' }), 403, 'tenant_mismatch');
      // The tenant is checked before the body: another tenant's path is 403 whatever is sent.
      await expectRefused(await send(owner, 'POST', `/api/v1/org/events/ingest/${outsider.tenant_id}`, { name: 'Not A Name' }), 403, 'tenant_mismatch');
      await expectRefused(await send(owner, 'POST', `/api/v1/org/events/ingest/${owner.tenant_id}`, { name: 'Not A Name' }), 400, 'invalid_event_name', 'name');
    });

    it('lists newest first, filtered by status, name (exact or prefix.*) and received_at, in cursor pages', async () => {
      const org = await registerOwner(server, 'orchestration-list-org');
      const names = ['list.order.created', 'list.order.paid', 'list.invoice.sent', 'list.order.created'];
      const ids: string[] = [];
      const times: string[] = [];
      for (const name of names) {
        clock.advance(1000);
        const event = await emitted(org, { name });
        ids.push(event.id);
        times.push(event.received_at);
      }
      await process(server, ref(ids[1], org));
      const list = async (query: string) => {
        const response = await send(org, 'GET', `/api/v1/org/events${query}`);
        expect(response.status, response.text).to.equal(200);
        return response.json as { items: Array<{ id: string }>; next_cursor: string | null };
      };
      const idsOf = (page: { items: Array<{ id: string }> }) => page.items.map((item) => item.id);
      expect(idsOf(await list(''))).to.deep.equal([...ids].reverse());
      expect(idsOf(await list('?status=processed'))).to.deep.equal([ids[1]]);
      expect(idsOf(await list('?status=queued&name=list.order.created'))).to.deep.equal([ids[3], ids[0]]);
      expect(idsOf(await list('?name=list.order.*'))).to.deep.equal([ids[3], ids[1], ids[0]]);
      expect(idsOf(await list('?name=list.*'))).to.deep.equal([...ids].reverse());
      expect(idsOf(await list(`?from=${times[1]}&to=${times[3]}`))).to.deep.equal([ids[2], ids[1]]);
      const first = await list('?limit=3');
      expect(idsOf(first)).to.deep.equal([ids[3], ids[2], ids[1]]);
      const second = await list(`?limit=3&cursor=${encodeURIComponent(first.next_cursor!)}`);
      expect([idsOf(second), second.next_cursor]).to.deep.equal([[ids[0]], null]);
      // Another tenant's list holds none of them.
      expect(idsOf(await (await send(owner, 'GET', '/api/v1/org/events?name=list.*')).json)).to.deep.equal([]);
      for (const [query, code, field] of [
        ['?status=lost', 'invalid_status', 'status'],
        ['?name=List.Order', 'invalid_request', 'name'],
        ['?name=list.*.created', 'invalid_request', 'name'],
        ['?from=yesterday', 'invalid_request', 'from'],
        [`?from=${times[2]}&to=${times[1]}`, 'invalid_request', 'to'],
        ['?limit=101', 'invalid_limit', 'limit'],
        ['?limit=0', 'invalid_limit', 'limit'],
        ['?cursor=nope', 'invalid_cursor', undefined],
      ] as const) {
        await expectRefused(await send(org, 'GET', `/api/v1/org/events${query}`), 400, code, field);
      }
    });

    it('lists one chain by correlation_id: the root and every event it caused, not other chains nor another tenant\'s', async () => {
      const org = await registerOwner(server, 'orchestration-chain-org');
      const at = async (body: Record<string, unknown>, account = org) => {
        clock.advance(1000);
        return emitted(account, body);
      };
      const root = await at({ name: 'chain.order.created' });
      const caused = await at({ name: 'chain.order.prepared', causation_id: root.id });
      const causedAgain = await at({ name: 'chain.order.shipped', causation_id: caused.id });
      const named = await at({ name: 'chain.order.created', correlation_id: 'order-77' });
      await at({ name: 'chain.order.created' });
      // Another organization may give any correlation: its events stay its own.
      await at({ name: 'chain.order.created', correlation_id: root.id }, owner);
      const list = async (query: string) => {
        const response = await send(org, 'GET', `/api/v1/org/events${query}`);
        expect(response.status, response.text).to.equal(200);
        return response.json as { items: Array<{ id: string; correlation_id: string }>; next_cursor: string | null };
      };
      const idsOf = (page: { items: Array<{ id: string }> }) => page.items.map((item) => item.id);
      const chain = await list(`?correlation_id=${root.id}`);
      expect(idsOf(chain)).to.deep.equal([causedAgain.id, caused.id, root.id]);
      expect(chain.items.map((item) => item.correlation_id)).to.deep.equal([root.id, root.id, root.id]);
      expect(idsOf(await list('?correlation_id=order-77'))).to.deep.equal([named.id]);
      expect(idsOf(await list(`?correlation_id=${root.id}&name=chain.order.prepared`))).to.deep.equal([caused.id]);
      expect(idsOf(await list('?correlation_id=nothing-here'))).to.deep.equal([]);
      const first = await list(`?correlation_id=${root.id}&limit=2`);
      expect(idsOf(first)).to.deep.equal([causedAgain.id, caused.id]);
      const second = await list(`?correlation_id=${root.id}&limit=2&cursor=${encodeURIComponent(first.next_cursor!)}`);
      expect([idsOf(second), second.next_cursor]).to.deep.equal([[root.id], null]);
      for (const query of ['?correlation_id=', '?correlation_id=with%20space', `?correlation_id=${'x'.repeat(201)}`]) {
        await expectRefused(await send(org, 'GET', `/api/v1/org/events${query}`), 400, 'invalid_request', 'correlation_id');
      }
    });
  });

  describe('who may call', () => {
    const routes = (id: string, tenantId: string): Array<[string, string, unknown?]> => [
      ['GET', '/api/v1/org/events'],
      ['POST', '/api/v1/org/events', { name: 'shop.order.created' }],
      ['GET', `/api/v1/org/events/${id}`],
      ['POST', `/api/v1/org/events/${id}/retry`],
      ['POST', `/api/v1/org/events/${id}/replay`, {}],
      ['POST', '/api/v1/org/events/replay', { from: '2020-01-01T00:00:00Z', to: '2030-01-01T00:00:00Z' }],
      ['POST', `/api/v1/org/events/ingest/${tenantId}`, { name: 'shop.order.created' }],
    ];

    it('401 without a token or with a bad one; 403 insufficient_role for a member, recorded as a denial', async () => {
      const { id } = await emitted(owner, { name: 'auth.check.done' });
      for (const [method, path, body] of routes(id, owner.tenant_id)) {
        for (const headers of [{}, { authorization: 'Bearer nope' }] as Array<Record<string, string>>) {
          const response = await send(null, method, path, body, headers);
          expect(response.status, `${method} ${path}`).to.equal(401);
          expect(await response.events()).to.deep.equal([]);
        }
        const refused = await send(member, method, path, body);
        await expectRefused(refused, 403, 'insufficient_role');
        expect(await refused.events(), `${method} ${path}`).to.deep.equal(['AccessDenied@accessDenial']);
      }
    });

    it("404 for an unknown event and for another tenant's, on get, retry and replay", async () => {
      const foreign = await emitted(outsider, { name: 'other.org.event' });
      for (const id of ['none', foreign.id]) {
        await expectRefused(await send(owner, 'GET', `/api/v1/org/events/${id}`), 404, 'orchestration_event_not_found');
        await expectRefused(await send(owner, 'POST', `/api/v1/org/events/${id}/retry`), 404, 'orchestration_event_not_found');
        await expectRefused(await send(owner, 'POST', `/api/v1/org/events/${id}/replay`, {}), 404, 'orchestration_event_not_found');
      }
      expect((await get(foreign.id, outsider)).replays).to.deep.equal([]);
    });
  });

  describe('the envelope rules (400 naming the field)', () => {
    it('refuses every broken rule with its code and field, and records nothing', async () => {
      const later = (seconds: number) => new Date(clock.now().getTime() + seconds * 1000).toISOString();
      const cases: Array<[Record<string, unknown>, string, string]> = [
        [{}, 'invalid_request', 'name'],
        [{ name: 42 }, 'invalid_request', 'name'],
        [{ name: 'shop.order' }, 'invalid_event_name', 'name'],
        [{ name: 'Shop.Order.Created' }, 'invalid_event_name', 'name'],
        [{ name: 'shop order created' }, 'invalid_event_name', 'name'],
        [{ name: `shop.order.${'x'.repeat(200)}` }, 'invalid_event_name', 'name'],
        [{ source: 7 }, 'invalid_request', 'source'],
        [{ source: 'svc\u202E' }, 'invalid_request', 'source'],
        [{ payload: [1, 2] }, 'invalid_request', 'payload'],
        [{ payload: 'text' }, 'invalid_request', 'payload'],
        [{ payload: { blob: 'x'.repeat(64 * 1024) } }, 'payload_too_large', 'payload'],
        [{ version: 'v1' }, 'invalid_request', 'version'],
        [{ version: 0 }, 'invalid_request', 'version'],
        [{ correlation_id: 'with space' }, 'invalid_request', 'correlation_id'],
        [{ causation_id: 12 }, 'invalid_request', 'causation_id'],
        [{ idempotency_key: '' }, 'invalid_request', 'idempotency_key'],
        [{ sequence_key: 'order-1' }, 'sequence_incomplete', 'sequence_n'],
        [{ sequence_n: 1 }, 'sequence_incomplete', 'sequence_key'],
        [{ sequence_key: 'order-1', sequence_n: 0 }, 'invalid_request', 'sequence_n'],
        [{ sequence_key: 'order-1', sequence_n: 1.5 }, 'invalid_request', 'sequence_n'],
        [{ expires_at: later(60), ttl_seconds: 60 }, 'expiry_conflict', 'ttl_seconds'],
        [{ expires_at: 'soon' }, 'invalid_request', 'expires_at'],
        [{ expires_at: later(-1) }, 'already_expired', 'expires_at'],
        [{ ttl_seconds: 0 }, 'invalid_request', 'ttl_seconds'],
        [{ ttl_seconds: '60' }, 'invalid_request', 'ttl_seconds'],
        [{ delay_seconds: -5 }, 'invalid_request', 'delay_seconds'],
        [{ delay_seconds: 120, ttl_seconds: 60 }, 'delay_past_expiry', 'delay_seconds'],
        [{ depth: -1 }, 'invalid_request', 'depth'],
        [{ depth: 9 }, 'depth_exceeded', 'depth'],
        [{ replay_of: 'evt-1' }, 'replay_of_reserved', 'replay_of'],
      ];
      for (const [fields, code, field] of cases) {
        const body = { name: 'shop.order.created', ...fields };
        if (!('name' in fields) && Object.keys(fields).length === 0) delete (body as { name?: string }).name;
        await expectRefused(await emit(owner, body), 400, code, field);
      }
      await expectRefused(await send(owner, 'POST', '/api/v1/org/events', undefined, { 'content-type': 'application/json' }), 400, 'invalid_request', 'name');
    });

    it('refuses a depth past the bound, whether given or reached through causation_id', async () => {
      let cause = await emitted(owner, { name: 'loop.step.ran' });
      expect(cause.depth).to.equal(0);
      for (let depth = 1; depth <= 8; depth += 1) {
        // The cause is one of the tenant's events: its depth + 1, whatever the body says.
        cause = await emitted(owner, { name: 'loop.step.ran', causation_id: cause.id, depth: 0 });
        expect(cause).to.include({ depth, correlation_id: (await get(cause.causation_id as string)).correlation_id });
      }
      await expectRefused(await emit(owner, { name: 'loop.step.ran', causation_id: cause.id }), 400, 'depth_exceeded', 'depth');
      // The flow runner's follow-on events take the same rule.
      const { appendCausedEvent } = await import('../support/orchestration');
      const { dispatcherContext } = await import('../../application/orchestration/dispatch-queue');
      const deps = server.platform.orchestration;
      const context = dispatcherContext(owner.tenant_id, cause.id);
      let refusal: unknown = null;
      // The runner gives the cause as its stream has it.
      await appendCausedEvent(deps, { ...ref(cause.id), depth: cause.depth as number, correlation_id: cause.correlation_id as string }, { name: 'loop.step.ran' }, context).catch((error: unknown) => (refusal = error));
      expect(refusal).to.deep.include({ kind: 'invalid', code: 'depth_exceeded', field: 'depth' });
      const previous = await get(cause.causation_id as string);
      const followOn = await appendCausedEvent(deps, { ...ref(previous.id as string), depth: previous.depth as number, correlation_id: previous.correlation_id as string }, { name: 'loop.step.ran', payload: { from: 'flow' } }, context);
      await server.platform.readYourWrites(followOn.position);
      expect(await get(followOn.event_id)).to.include({ causation_id: cause.causation_id, depth: 8, received_via: 'emit' });
      const stored = await server.platform.eventStore.readStream(`orchestrationEvent-${followOn.event_id}`);
      expect(stored[0].metadata.actor).to.deep.equal({ kind: 'system', id: 'orchestration_dispatcher' });
      // A cause from elsewhere takes the depth as given.
      expect(await emitted(owner, { name: 'loop.step.ran', causation_id: 'upstream-42', depth: 8 })).to.include({ depth: 8, causation_id: 'upstream-42' });
    });
  });

  describe('idempotency_key', () => {
    it('50 parallel emits with one key queue one event: one 201, the others 200 with the same event', async () => {
      const responses = await Promise.all(
        Array.from({ length: 50 }, (_, index) => emit(index % 2 === 0 ? owner : admin, { name: 'pay.charge.captured', idempotency_key: 'charge-ch_1', payload: { attempt: index } })),
      );
      const statuses = responses.map((response) => response.status).sort();
      expect(statuses.filter((status) => status === 201), JSON.stringify(responses.map((r) => r.text).slice(0, 3))).to.have.length(1);
      expect(statuses.filter((status) => status === 200)).to.have.length(49);
      const ids = new Set(responses.map((response) => response.json.id));
      expect(ids.size).to.equal(1);
      const [id] = [...ids];
      const stored = await server.platform.eventStore.readStream(`orchestrationEvent-${id}`);
      expect(stored.map((event) => event.type)).to.deep.equal(['OrchestrationEventQueued']);
      const queued = await server.platform.eventStore.readAll({ direction: 'backwards', filter: { kind: 'event_type', types: ['OrchestrationEventQueued'] }, maxCount: 500 });
      expect(queued.filter((event) => (event.data as { idempotency_key: string | null }).idempotency_key === 'charge-ch_1')).to.have.length(1);
      const list = await send(owner, 'GET', '/api/v1/org/events?name=pay.charge.captured');
      expect(list.json.items.map((item: { id: string }) => item.id)).to.deep.equal([id]);
      // Later, with another payload: still the first event, nothing queued.
      clock.advance(3600_000);
      const again = await emit(owner, { name: 'pay.charge.captured', idempotency_key: 'charge-ch_1', payload: { later: true } });
      expect(again.status).to.equal(200);
      expect(again.json.id).to.equal(id);
      expect(again.headers.get('location')).to.equal(null);
      expect(await again.events()).to.deep.equal([]);
      // The key is the tenant's: another tenant's same key is another event.
      const foreign = await emit(outsider, { name: 'pay.charge.captured', idempotency_key: 'charge-ch_1' });
      expect(foreign.status).to.equal(201);
      expect(foreign.json.id).to.not.equal(id);
    });

    it('answers a repeated key with its event whatever the body, even once the body\'s expires_at has passed', async () => {
      const body = { name: 'pay.refund.issued', idempotency_key: 'refund-rf_1', expires_at: new Date(clock.now().getTime() + 60_000).toISOString() };
      const first = await emit(owner, body);
      expect(first.status).to.equal(201);
      clock.advance(120_000);
      const again = await emit(owner, body);
      expect([again.status, again.json.id]).to.deep.equal([200, first.json.id]);
      const refused = await emit(owner, { ...body, idempotency_key: 'refund-rf_2' });
      await expectRefused(refused, 400, 'already_expired', 'expires_at');
    });

    it("a request's Idempotency-Key answers the first emit again and queues nothing", async () => {
      const first = await emit(owner, { name: 'req.key.used' }, { 'idempotency-key': 'emit-once' });
      const again = await emit(owner, { name: 'req.key.used' }, { 'idempotency-key': 'emit-once' });
      expect([first.status, again.status, again.headers.get('idempotent-replayed')]).to.deep.equal([201, 201, 'true']);
      expect(again.json).to.deep.equal(first.json);
      expect(await again.events()).to.deep.equal([]);
    });
  });

  describe('the dispatch queue', () => {
    it('holds a delayed event until not_before', async () => {
      const org = await registerOwner(server, 'orchestration-delay-org');
      const event = await emitted(org, { name: 'delay.reminder.due', delay_seconds: 30 });
      expect(event.not_before).to.equal(new Date(Date.parse(event.received_at) + 30_000).toISOString());
      expect(await dispatchable(server, org.tenant_id)).to.deep.equal([]);
      clock.advance(29_999);
      expect(await dispatchable(server, org.tenant_id)).to.deep.equal([]);
      clock.advance(1);
      expect((await dispatchable(server, org.tenant_id)).map((candidate) => candidate.event_id)).to.deep.equal([event.id]);
    });

    it('never offers an expired event; the expiry pass ends it expired, and it is not retried', async () => {
      const org = await registerOwner(server, 'orchestration-expiry-org');
      const short = await emitted(org, { name: 'expiry.offer.made', ttl_seconds: 60 });
      const absolute = await emitted(org, { name: 'expiry.offer.made', expires_at: new Date(clock.now().getTime() + 60_000).toISOString() });
      const lasting = await emitted(org, { name: 'expiry.offer.made' });
      const failing = await emitted(org, { name: 'expiry.offer.made', ttl_seconds: 60 });
      await fail(server, ref(failing.id, org), new Date(clock.now().getTime() + 120_000));
      expect((await dispatchable(server, org.tenant_id)).map((candidate) => candidate.event_id)).to.have.members([short.id, absolute.id, lasting.id]);
      clock.advance(60_000);
      // Past the expiry, before any pass: no longer offered.
      expect((await dispatchable(server, org.tenant_id)).map((candidate) => candidate.event_id)).to.deep.equal([lasting.id]);
      await server.platform.sagas.runDue();
      await server.platform.readYourWrites((await server.platform.eventStore.readAll({ direction: 'backwards', maxCount: 1 }))[0].position);
      for (const id of [short.id, absolute.id, failing.id]) {
        const read = await get(id, org);
        expect(read).to.include({ status: 'expired', settled_at: clock.now().toISOString() });
        const stored = await server.platform.eventStore.readStream(`orchestrationEvent-${id}`);
        expect(stored[stored.length - 1].type).to.equal('OrchestrationEventExpired');
      }
      expect((await get(lasting.id, org)).status).to.equal('queued');
      clock.advance(120_000);
      expect((await dispatchable(server, org.tenant_id)).map((candidate) => candidate.event_id)).to.deep.equal([lasting.id]);
      await expectRefused(await send(org, 'POST', `/api/v1/org/events/${short.id}/retry`), 409, 'event_not_retryable');
    });

    it('offers the events of one sequence_key in sequence_n order, one at a time, though emitted shuffled (200 events)', async function () {
      this.timeout(120_000);
      const org = await registerOwner(server, 'orchestration-sequence-org');
      const numbers = Array.from({ length: 200 }, (_, index) => index + 1);
      // A fixed shuffle (a linear congruential generator), so that a failure can be replayed.
      let seed = 7;
      for (let index = numbers.length - 1; index > 0; index -= 1) {
        seed = (seed * 1103515245 + 12345) % 2 ** 31;
        const other = seed % (index + 1);
        [numbers[index], numbers[other]] = [numbers[other], numbers[index]];
      }
      expect(numbers.slice(0, 5)).to.not.deep.equal([1, 2, 3, 4, 5]);
      for (let start = 0; start < numbers.length; start += 20) {
        await Promise.all(numbers.slice(start, start + 20).map((n) => emitted(org, { name: 'seq.order.changed', sequence_key: 'order-77', sequence_n: n, payload: { n } })));
      }
      const other = await emitted(org, { name: 'seq.order.changed' });
      const order: number[] = [];
      let unsequencedSeen = false;
      for (let round = 0; round < 250 && order.length < 200; round += 1) {
        const candidates = await dispatchable(server, org.tenant_id);
        const sequenced = candidates.filter((candidate) => candidate.sequence_key === 'order-77');
        expect(sequenced, `round ${round}`).to.have.length(1);
        expect(sequenced[0].gap).to.equal(null);
        if (candidates.some((candidate) => candidate.event_id === other.id)) unsequencedSeen = true;
        order.push(sequenced[0].sequence_n as number);
        await process(server, ref(sequenced[0].event_id, org));
      }
      expect(order).to.deep.equal(Array.from({ length: 200 }, (_, index) => index + 1));
      expect(unsequencedSeen, 'an event outside the sequence is offered alongside it').to.equal(true);
    });

    it('waits ORCHESTRATION_SEQUENCE_GAP_WAIT_MS for a missing sequence_n, then goes on and records the gap', async () => {
      const org = await registerOwner(server, 'orchestration-gap-org');
      const first = await emitted(org, { name: 'gap.ticket.moved', sequence_key: 'ticket-9', sequence_n: 1 });
      const fourth = await emitted(org, { name: 'gap.ticket.moved', sequence_key: 'ticket-9', sequence_n: 4 });
      // The head goes first; the later one waits while it runs.
      expect((await dispatchable(server, org.tenant_id)).map((candidate) => candidate.event_id)).to.deep.equal([first.id]);
      const attempt = await dispatch(server, ref(first.id, org));
      expect(await dispatchable(server, org.tenant_id)).to.deep.equal([]);
      clock.advance(5000);
      const { markProcessed } = await import('../../application/orchestration/dispatch-queue');
      await server.platform.readYourWrites(await markProcessed(server.platform.orchestration, ref(first.id, org), attempt));
      // 2 and 3 never came: it waits the gap time from when 1 settled.
      expect(await dispatchable(server, org.tenant_id)).to.deep.equal([]);
      clock.advance(GAP_WAIT_MS - 1);
      expect(await dispatchable(server, org.tenant_id)).to.deep.equal([]);
      clock.advance(1);
      const [candidate] = await dispatchable(server, org.tenant_id);
      expect(candidate).to.deep.include({ event_id: fourth.id, sequence_n: 4, gap: { missing_from: 2, missing_to: 3, waited_ms: GAP_WAIT_MS } });
      const { startDispatch } = await import('../../application/orchestration/dispatch-queue');
      const started = await startDispatch(server.platform.orchestration, candidate, ['tickets']);
      await server.platform.readYourWrites(started!.position);
      const stored = await server.platform.eventStore.readStream(`orchestrationEvent-${fourth.id}`);
      expect(stored.map((event) => event.type)).to.deep.equal(['OrchestrationEventQueued', 'OrchestrationSequenceGapRecorded', 'OrchestrationDispatchStarted']);
      const read = await get(fourth.id, org);
      expect(read.status).to.equal('dispatched');
      expect(read.sequence_gap).to.deep.equal({ missing_from: 2, missing_to: 3, waited_ms: GAP_WAIT_MS, recorded_at: clock.now().toISOString() });
      expect(read.attempts).to.have.length(1);
      expect(read.attempts[0]).to.deep.include({ attempt: 1, flows: ['tickets'], outcome: 'running' });
      // A late 2 is not held back any more: its predecessor 1 settled, so it goes at once.
      const late = await emitted(org, { name: 'gap.ticket.moved', sequence_key: 'ticket-9', sequence_n: 2 });
      expect((await dispatchable(server, org.tenant_id)).map((c) => c.event_id)).to.deep.equal([late.id]);
    });

    it('shows every attempt with its error and flow runs', async () => {
      const org = await registerOwner(server, 'orchestration-attempts-org');
      const event = await emitted(org, { name: 'runs.refund.asked' });
      const { failAttempt, markProcessed, recordSteps, startDispatch } = await import('../../application/orchestration/dispatch-queue');
      const { stepRequestId } = await import('../../domain/orchestration-event/orchestration-event');
      const deps = server.platform.orchestration;
      const at = (attempt: number, step: number) => stepRequestId(event.id, attempt, 'refunds', step);
      await startDispatch(deps, { ...ref(event.id, org), gap: null }, ['refunds']);
      await recordSteps(deps, ref(event.id, org), 1, [{ flow: 'refunds', step: 0, request_id: at(1, 0), outcome: 'failed', error: { code: 'timeout', message: 'no answer' }, output: null, tool_call_id: null }], false);
      await failAttempt(deps, ref(event.id, org), 1, { code: 'step_failed', message: 'step 0 of refunds failed' }, new Date(clock.now().getTime() + 1000));
      clock.advance(1000);
      await startDispatch(deps, { ...ref(event.id, org), gap: null }, ['refunds']);
      await recordSteps(deps, ref(event.id, org), 2, [{ flow: 'refunds', step: 0, request_id: at(2, 0), outcome: 'succeeded', error: null, output: { refund: 'r-1' }, tool_call_id: 'call-1' }], false);
      await recordSteps(deps, ref(event.id, org), 2, [{ flow: 'refunds', step: 1, request_id: at(2, 1), outcome: 'succeeded', error: null, output: null, tool_call_id: null }], false);
      await server.platform.readYourWrites(await markProcessed(deps, ref(event.id, org), 2));
      const read = await get(event.id, org);
      expect(read.status).to.equal('processed');
      expect(read.attempts.map((attempt: { attempt: number; outcome: string; error: unknown }) => [attempt.attempt, attempt.outcome, attempt.error])).to.deep.equal([
        [1, 'failed', { code: 'step_failed', message: 'step 0 of refunds failed' }],
        [2, 'processed', null],
      ]);
      expect(read.attempts[1].flow_runs).to.deep.equal([
        {
          flow: 'refunds',
          steps: [
            { step: 0, request_id: at(2, 0), outcome: 'succeeded', error: null, output: { refund: 'r-1' }, tool_call_id: 'call-1', recorded_at: clock.now().toISOString() },
            { step: 1, request_id: at(2, 1), outcome: 'succeeded', error: null, output: null, tool_call_id: null, recorded_at: clock.now().toISOString() },
          ],
        },
      ]);
    });
  });

  describe('retry', () => {
    it('409 for a queued or processed event, and for one running', async () => {
      const queued = await emitted(owner, { name: 'retry.job.ran' });
      await expectRefused(await send(owner, 'POST', `/api/v1/org/events/${queued.id}/retry`), 409, 'event_not_retryable');
      await dispatch(server, ref(queued.id));
      await expectRefused(await send(owner, 'POST', `/api/v1/org/events/${queued.id}/retry`), 409, 'event_not_retryable');
      // A running attempt is found again by the runner that resumes stalled ones.
      const { inFlightDispatches } = await import('../../application/orchestration/dispatch-queue');
      const stalled = await inFlightDispatches(server.platform.orchestration, { startedBefore: clock.now() });
      expect(stalled.filter((entry) => entry.event_id === queued.id)).to.deep.equal([{ event_id: queued.id, tenant_id: owner.tenant_id, attempt: 1, started_at: clock.now().toISOString() }]);
      expect((await inFlightDispatches(server.platform.orchestration, { startedBefore: new Date(clock.now().getTime() - 1) })).map((entry) => entry.event_id)).to.not.include(queued.id);
      const processed = await emitted(owner, { name: 'retry.job.ran' });
      await process(server, ref(processed.id));
      await expectRefused(await send(owner, 'POST', `/api/v1/org/events/${processed.id}/retry`), 409, 'event_not_retryable');
    });

    it('re-queues a dead-lettered or failed event from its stream, due at once; If-Match guards it', async () => {
      const dead = await emitted(owner, { name: 'retry.job.ran' });
      await fail(server, ref(dead.id), null);
      expect((await get(dead.id)).status).to.equal('dead_letter');
      const stale = await send(admin, 'POST', `/api/v1/org/events/${dead.id}/retry`, undefined, { 'if-match': '"1"' });
      await expectRefused(stale, 412, 'revision_mismatch');
      const retried = await send(admin, 'POST', `/api/v1/org/events/${dead.id}/retry`, undefined, { 'if-match': '"3"' });
      expect(retried.status, retried.text).to.equal(200);
      expect(retried.headers.get('etag')).to.equal('"4"');
      expect(retried.json).to.include({ status: 'queued', settled_at: null });
      expect(retried.json.requeues).to.deep.equal([{ previous_status: 'dead_letter', requeued_at: clock.now().toISOString(), by: { kind: 'user', id: admin.user_id } }]);
      expect(await retried.events()).to.deep.equal(['OrchestrationEventRequeued@orchestrationEvent']);
      expect((await dispatchable(server, owner.tenant_id)).map((candidate) => candidate.event_id)).to.include(dead.id);
      const failed = await emitted(owner, { name: 'retry.job.ran' });
      await fail(server, ref(failed.id), new Date(clock.now().getTime() + 3600_000));
      expect(await get(failed.id)).to.include({ status: 'failed', next_attempt_at: new Date(clock.now().getTime() + 3600_000).toISOString() });
      const again = await send(owner, 'POST', `/api/v1/org/events/${failed.id}/retry`);
      expect(again.json).to.include({ status: 'queued', next_attempt_at: null });
      const [candidate] = (await dispatchable(server, owner.tenant_id)).filter((c) => c.event_id === failed.id);
      expect(candidate).to.include({ attempt: 2, attempts_since_requeue: 0 });
    });
  });

  describe('redrive', () => {
    it('re-queues the dead letters of a name a page at a time, oldest first, skipping one that expired; failed ones on request', async () => {
      const dead: string[] = [];
      for (let index = 0; index < 3; index += 1) {
        const event = await emitted(owner, { name: 'redrive.job.ran', payload: { index } });
        await fail(server, ref(event.id), null);
        dead.push(event.id);
      }
      const expiring = await emitted(owner, { name: 'redrive.job.ran', ttl_seconds: 60 });
      await fail(server, ref(expiring.id), null);
      const waiting = await emitted(owner, { name: 'redrive.job.ran' });
      await fail(server, ref(waiting.id), new Date(clock.now().getTime() + 3600_000));
      const other = await emitted(owner, { name: 'redrive.other.ran' });
      await fail(server, ref(other.id), null);
      clock.advance(61_000);

      const first = await send(admin, 'POST', '/api/v1/org/events/redrive', { name: 'redrive.job.*', limit: 2 });
      expect(first.status, first.text).to.equal(200);
      expect(first.json).to.deep.include({ requeued: dead.slice(0, 2), skipped: [] });
      expect(first.json.next_cursor).to.be.a('string');
      expect(await first.events()).to.deep.equal(['OrchestrationEventRequeued@orchestrationEvent', 'OrchestrationEventRequeued@orchestrationEvent']);
      const requeued = [...first.json.requeued];
      const skipped = [...first.json.skipped];
      for (let cursor = first.json.next_cursor; cursor !== null; ) {
        const next = await send(admin, 'POST', '/api/v1/org/events/redrive', { name: 'redrive.job.*', limit: 2, cursor });
        expect(next.status, next.text).to.equal(200);
        requeued.push(...next.json.requeued);
        skipped.push(...next.json.skipped);
        cursor = next.json.next_cursor;
      }
      expect(requeued).to.deep.equal(dead);
      expect(skipped).to.deep.equal([{ id: expiring.id, code: 'event_expired' }]);
      for (const id of dead) {
        const event = await get(id);
        expect(event.status).to.equal('queued');
        expect(event.requeues.at(-1)).to.deep.include({ previous_status: 'dead_letter', by: { kind: 'user', id: admin.user_id } });
      }
      expect((await get(expiring.id)).status).to.equal('dead_letter');
      expect((await get(waiting.id)).status).to.equal('failed');
      expect((await get(other.id)).status).to.equal('dead_letter');
      // Again: nothing of that name is dead any more but the expired one.
      const again = await send(owner, 'POST', '/api/v1/org/events/redrive', { name: 'redrive.job.*' });
      expect(again.json).to.deep.equal({ requeued: [], skipped: [{ id: expiring.id, code: 'event_expired' }], next_cursor: null });
      const failed = await send(owner, 'POST', '/api/v1/org/events/redrive', { status: 'failed', name: 'redrive.job.ran' });
      expect(failed.json).to.deep.equal({ requeued: [waiting.id], skipped: [], next_cursor: null });
      expect((await get(waiting.id)).status).to.equal('queued');
    });

    it('400 naming each bad field, 403 for a member, 401 without a token; nothing re-queued', async () => {
      const redrive = (account: Account | null, body: unknown) => send(account, 'POST', '/api/v1/org/events/redrive', body);
      await expectRefused(await redrive(owner, { status: 'processed' }), 400, 'invalid_status', 'status');
      await expectRefused(await redrive(owner, { name: 'Not A Name' }), 400, 'invalid_request', 'name');
      await expectRefused(await redrive(owner, { from: 'yesterday' }), 400, 'invalid_request', 'from');
      await expectRefused(await redrive(owner, { from: '2026-12-02T00:00:00Z', to: '2026-12-01T00:00:00Z' }), 400, 'invalid_request', 'to');
      await expectRefused(await redrive(owner, { limit: 0 }), 400, 'invalid_limit', 'limit');
      await expectRefused(await redrive(owner, { limit: 101 }), 400, 'invalid_limit', 'limit');
      await expectRefused(await redrive(owner, { limit: 'ten' }), 400, 'invalid_request', 'limit');
      await expectRefused(await redrive(owner, { cursor: '' }), 400, 'invalid_cursor', 'cursor');
      await expectRefused(await redrive(member, {}), 403, 'insufficient_role');
      await expectRefused(await redrive(null, {}), 401, 'unauthenticated');
    });
  });

  describe('replay', () => {
    it('replays one event as a new envelope with replay_of; the original lists it', async () => {
      const original = await emitted(owner, { name: 'replay.order.shipped', payload: { order: 'o-9' }, idempotency_key: 'ship-o-9', sequence_key: 'o-9', sequence_n: 1, ttl_seconds: 60 });
      await process(server, ref(original.id));
      const replay = await send(admin, 'POST', `/api/v1/org/events/${original.id}/replay`, { reason: 'the warehouse missed it' });
      expect(replay.status, replay.text).to.equal(201);
      expect(replay.headers.get('location')).to.equal(`/api/v1/org/events/${replay.json.id}`);
      expect(replay.json.id).to.not.equal(original.id);
      expect(replay.json).to.include({
        name: 'replay.order.shipped',
        replay_of: original.id,
        status: 'queued',
        received_via: 'replay',
        correlation_id: original.id,
        idempotency_key: null,
        sequence_key: null,
        sequence_n: null,
        ttl_seconds: 60,
        expires_at: new Date(clock.now().getTime() + 60_000).toISOString(),
      });
      expect(replay.json.payload).to.deep.equal({ order: 'o-9' });
      expect(await replay.events()).to.deep.equal(['OrchestrationEventQueued@orchestrationEvent', 'OrchestrationEventReplayed@orchestrationEvent']);
      const originalNow = await get(original.id);
      expect(originalNow).to.include({ status: 'processed' });
      expect(originalNow.replays).to.deep.equal([replay.json.id]);
      const recorded = await server.platform.eventStore.readStream(`orchestrationEvent-${original.id}`);
      expect(recorded[recorded.length - 1].data).to.include({ replay_id: replay.json.id, reason: 'the warehouse missed it' });
      // Under one Idempotency-Key a retried replay makes nothing new.
      const keyed = await send(owner, 'POST', `/api/v1/org/events/${original.id}/replay`, {}, { 'idempotency-key': 'replay-once' });
      const keyedAgain = await send(owner, 'POST', `/api/v1/org/events/${original.id}/replay`, {}, { 'idempotency-key': 'replay-once' });
      expect(keyedAgain.json.id).to.equal(keyed.json.id);
      expect((await get(original.id)).replays).to.deep.equal([replay.json.id, keyed.json.id]);
      await expectRefused(await send(owner, 'POST', `/api/v1/org/events/${original.id}/replay`, { reason: 42 }), 400, 'invalid_request', 'reason');
    });

    it('replays exactly the root events of a time range (not the caused ones, not those outside), in cursor pages', async () => {
      const org = await registerOwner(server, 'orchestration-range-org');
      clock.advance(60_000);
      const before = await emitted(org, { name: 'range.order.created' });
      clock.advance(1000);
      const from = clock.now().toISOString();
      const a = await emitted(org, { name: 'range.order.created' });
      const caused = await emitted(org, { name: 'range.order.checked', causation_id: a.id });
      clock.advance(1000);
      const b = await emitted(org, { name: 'range.invoice.sent' });
      const c = await emitted(org, { name: 'range.order.created', causation_id: 'upstream-1' });
      clock.advance(1000);
      const d = await emitted(org, { name: 'range.order.paid' });
      clock.advance(1000);
      const to = clock.now().toISOString();
      const after = await emitted(org, { name: 'range.order.created' });
      clock.advance(1000);
      const replay = (body: Record<string, unknown>, account: Account = org) => send(account, 'POST', '/api/v1/org/events/replay', body);

      const first = await replay({ from, to, limit: 2 });
      expect(first.status, first.text).to.equal(200);
      expect(first.json.items.map((item: { replay_of: string }) => item.replay_of)).to.deep.equal([a.id, b.id]);
      expect(first.json.next_cursor).to.be.a('string');
      const second = await replay({ from, to, limit: 2, cursor: first.json.next_cursor });
      expect(second.json.items.map((item: { replay_of: string }) => item.replay_of)).to.deep.equal([d.id]);
      expect(second.json.next_cursor).to.equal(null);
      for (const item of [...first.json.items, ...second.json.items]) {
        const replayed = await get(item.id, org);
        expect(replayed).to.include({ replay_of: item.replay_of, status: 'queued', received_via: 'replay' });
        expect((await get(item.replay_of, org)).replays).to.deep.equal([item.id]);
      }
      for (const untouched of [before, caused, c, after]) expect((await get(untouched.id, org)).replays).to.deep.equal([]);

      // By name (exact or prefix); and the replays made meanwhile are not root events: a range
      // that covers them replays the originals only.
      const named = await replay({ from, to, name: 'range.order.*' });
      expect(named.json.items.map((item: { replay_of: string }) => item.replay_of)).to.deep.equal([a.id, d.id]);
      const everything = await replay({ from: '2000-01-01T00:00:00Z', to: new Date(clock.now().getTime() + 1000).toISOString(), name: 'range.invoice.sent' });
      expect(everything.json.items.map((item: { replay_of: string }) => item.replay_of)).to.deep.equal([b.id]);
      // Another tenant's range holds none of them.
      expect((await replay({ from, to }, owner)).json.items.filter((item: { replay_of: string }) => [a.id, b.id, d.id].includes(item.replay_of))).to.deep.equal([]);

      for (const [body, code, field] of [
        [{ to }, 'invalid_request', 'from'],
        [{ from }, 'invalid_request', 'to'],
        [{ from: to, to: from }, 'invalid_request', 'to'],
        [{ from: 'then', to }, 'invalid_request', 'from'],
        [{ from, to, limit: 0 }, 'invalid_limit', 'limit'],
        [{ from, to, limit: 101 }, 'invalid_limit', 'limit'],
        [{ from, to, name: 'Range' }, 'invalid_request', 'name'],
        [{ from, to, cursor: 'nope' }, 'invalid_cursor', undefined],
      ] as const) {
        await expectRefused(await replay(body as Record<string, unknown>), 400, code, field);
      }
    });

    it('replays a range in the background, page after page, with its progress', async () => {
      const org = await registerOwner(server, 'orchestration-background-org');
      clock.advance(60_000);
      const from = clock.now().toISOString();
      const roots: string[] = [];
      for (let index = 0; index < 5; index += 1) {
        clock.advance(1000);
        roots.push((await emitted(org, { name: 'bg.order.created', payload: { index } })).id);
      }
      const caused = await emitted(org, { name: 'bg.order.checked', causation_id: roots[0] });
      clock.advance(1000);
      const to = clock.now().toISOString();
      const started = await send(org, 'POST', '/api/v1/org/events/replay', { from, to, limit: 2, background: true, reason: 'backfill' });
      expect(started.status, started.text).to.equal(202);
      expect(started.headers.get('location')).to.equal(`/api/v1/org/events/replays/${started.json.id}`);
      // The answer shows the job as it stands: the saga may have run some pages, or all, by then.
      expect(started.json).to.include({ from, to, name: null, reason: 'backfill', page_size: 2 });
      expect(started.json.status).to.be.oneOf(['running', 'finished']);
      expect(await started.events()).to.deep.equal(['RangeReplayStarted@orchestrationRangeReplay']);
      const progress = () => send(org, 'GET', `/api/v1/org/events/replays/${started.json.id}`);
      await eventually(async () => (await progress()).json.status === 'finished', 10_000, 'the range replay to finish');
      const done = (await progress()).json;
      expect(done).to.include({ status: 'finished', pages: 3, replayed: 5, next_cursor: null });
      const stream = await server.platform.eventStore.readStream(`orchestrationRangeReplay-${started.json.id}`);
      expect(stream.map((event) => event.type)).to.deep.equal(['RangeReplayStarted', 'RangeReplayPageReplayed', 'RangeReplayPageReplayed', 'RangeReplayPageReplayed', 'RangeReplayFinished']);
      for (const id of roots) {
        const original = await get(id, org);
        expect(original.replays, id).to.have.length(1);
        expect(await get(original.replays[0], org)).to.include({ replay_of: id, received_via: 'replay' });
        const recorded = await server.platform.eventStore.readStream(`orchestrationEvent-${id}`);
        expect(recorded[recorded.length - 1].data).to.include({ reason: 'backfill' });
      }
      expect((await get(caused.id, org)).replays).to.deep.equal([]);
      await expectRefused(await send(owner, 'GET', `/api/v1/org/events/replays/${started.json.id}`), 404, 'range_replay_not_found');
      await expectRefused(await send(org, 'GET', '/api/v1/org/events/replays/none'), 404, 'range_replay_not_found');
      await expectRefused(await send(member, 'GET', `/api/v1/org/events/replays/${started.json.id}`), 403, 'insufficient_role');
      expect((await send(null, 'GET', `/api/v1/org/events/replays/${started.json.id}`)).status).to.equal(401);
      await expectRefused(await send(org, 'POST', '/api/v1/org/events/replay', { from, to, background: 'yes' }), 400, 'invalid_request', 'background');
      await expectRefused(await send(org, 'POST', '/api/v1/org/events/replay', { from: to, to: from, background: true }), 400, 'invalid_request', 'to');
    });
  });
});
