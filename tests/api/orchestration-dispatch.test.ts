// The dispatcher and flow runner (issue #14 points 3 and 4) against the example connector
// started in process: its `prepare_order` flow (trigger shop.order.created, one step
// notify_warehouse, one follow-on event shop.order.prepared) synced through the API. An
// event runs the flow, the step's output is recorded and mapped into the follow-on event
// (causation_id, depth + 1); an event with no flow ends processed with `flows: []`; a
// connector that fails twice ends processed after three attempts; one that keeps failing is
// dead-lettered, and a retry after it recovers ends processed; a replay runs the flow again;
// 200 events of one sequence, emitted shuffled, reach the connector in sequence_n order; an
// expired event never reaches it; a flow the runner cannot read is recorded as skipped; an
// attempt left running (its process died) is resumed with the same request ids; a business
// tool step calls the tenant's API through its tool; /metrics counts attempts, failures and
// dead letters by event name.
//
// Time is a ManualClock: back-off and gap waits pass only when the test moves the clock, and
// `platform.dispatcher.drain()` runs the dispatcher until nothing is due.

import { expect } from 'chai';
import { ConnectorError, createConnector } from '../../adapters/connector-sdk';
import { createExampleConnector } from '../../adapters/connector-sdk/example/connector';
import { SignedConnectorClient } from '../../adapters/connector-client/connector-client';
import { DIGEST_GRACE_MS, ORCHESTRATION_ALERT_EMAILS } from '../../application/orchestration/alert-emails';
import { hourOf, orchestrationAlertDigestStream } from '../../domain/orchestration-alert-digest/alert-digest';
import { dispatcherContext, recordSteps, startDispatch } from '../../application/orchestration/dispatch-queue';
import { earlierFollowOnIdempotencyKey, followOnIdempotencyKey, nextAttemptAt } from '../../application/orchestration/dispatcher';
import { mapParameters, readFlow, triggerMatches } from '../../application/orchestration/flows';
import { stepRequestId } from '../../domain/orchestration-event/orchestration-event';
import { GuardedOutboundHttp } from '../../infrastructure/outbound/signed-http';
import { RecordingConnectorClient } from '../support/connector-client';
import { type Account, joinAs, liftSeatLimit, registerOwner } from '../support/identity';
import { appendCausedEvent } from '../support/orchestration';
import { type TestResponse, type TestServer, startTestServer } from '../support/server';
import { ManualClock, eventually } from '../support/stores';
import { subscribeTo } from '../support/subscriptions';
import { startTenantApi } from '../support/tenant-api';
import { createIntegrationAs, createToolAs } from '../support/tools';

const SECRET = 'ssec_dispatch-test-secret-0123456789abcdef';
const MAX_ATTEMPTS = 3;

describe('orchestration dispatcher and flow runner (#14 points 3, 4)', () => {
  const clock = new ManualClock(new Date('2026-12-01T09:00:00.000Z'));
  let server: TestServer;
  let client: RecordingConnectorClient;
  let owner: Account;
  let connectionId: string;
  const closers: Array<() => Promise<void>> = [];

  const as = (account: Account) => ({ authorization: `Bearer ${account.token}` });
  const send = (method: string, path: string, body?: unknown): Promise<TestResponse> => server.request(method, path, { headers: as(owner), body });
  async function emit(body: Record<string, unknown>): Promise<string> {
    const response = await send('POST', '/api/v1/org/events', body);
    expect(response.status, response.text).to.equal(201);
    return response.json.id;
  }
  const get = async (id: string) => (await send('GET', `/api/v1/org/events/${id}`)).json;
  const flowKey = () => `prepare_order@${connectionId}`;
  /** The notify_warehouse calls the connector was sent, in order. */
  const warehouseCalls = () => client.sent.filter((sent) => sent.request.type === 'tool.invoke' && sent.request.tool === 'notify_warehouse').map((sent) => sent.request);
  /** Runs the dispatcher until nothing is due, moving the clock past every back-off `times` times. */
  async function runFor(times = 1): Promise<void> {
    await server.platform.dispatcher.drain();
    for (let i = 1; i < times; i += 1) {
      clock.advance(10 * 60_000);
      await server.platform.dispatcher.drain();
    }
  }

  /** Drains the dispatcher until `done` holds (a saga emitted what the dispatcher then runs). */
  async function drainUntil(done: () => boolean, what: string): Promise<void> {
    await eventually(async () => {
      await server.platform.dispatcher.drain();
      return done();
    }, 10_000, what);
  }

  /** Emits the second of a sequence whose first never comes, with 30 s to live, and lets it expire undispatched; its id. */
  async function expiredBeforeItsTurn(name: string, sequenceKey: string, payload: Record<string, unknown>): Promise<string> {
    const id = await emit({ name, sequence_key: sequenceKey, sequence_n: 2, ttl_seconds: 30, payload });
    await runFor();
    clock.advance(45_000);
    await server.platform.sagas.runDue();
    await server.platform.readYourWrites(await server.platform.eventStore.headPosition());
    return id;
  }

  /** Serves `connector` locally, makes it an enabled SDK connection of the owner's and syncs its flows; the connection's id. */
  async function connected(connector: ReturnType<typeof createConnector>, name: string): Promise<string> {
    const listening = await connector.listen(0, '127.0.0.1');
    closers.push(() => listening.close());
    const created = await send('POST', '/api/v1/org/sdk-connections', { name, webhook_url: listening.url.replace(/\/svc$/, ''), signing_secret: SECRET, enabled: true });
    expect((await send('POST', `/api/v1/org/sdk-connections/${created.json.id}/sync-tools`, {})).status).to.equal(200);
    return created.json.id as string;
  }

  /** What a connector's call does in the erasure tests: two days pass, and the organization erases `day` (the day its event came in). */
  async function eraseDayDuringCall(day: string): Promise<void> {
    clock.advance(2 * 24 * 3600_000);
    const nextDay = new Date(Date.parse(`${day}T00:00:00.000Z`) + 24 * 3600_000).toISOString().slice(0, 10);
    // The erasure finds the day in the read model: the event may be running before it shows there (started on receipt).
    await server.platform.readYourWrites(await server.platform.eventStore.headPosition());
    const erased = await send('POST', '/api/v1/org/events/payloads/erase', { before: nextDay });
    expect(erased.json.erased_days, erased.text).to.include(day);
  }

  before(async () => {
    const outbound = new GuardedOutboundHttp({ allowInsecureUrls: true, allowPrivateNetworks: true });
    client = new RecordingConnectorClient(new SignedConnectorClient(outbound, { timeoutMs: 5000, maxResponseBytes: 1024 * 1024, clock }));
    server = await startTestServer(
      {
        SCRYPT_LOG_N: '12',
        OUTBOUND_ALLOW_INSECURE: 'true',
        OUTBOUND_ALLOW_PRIVATE_NETWORKS: 'true',
        ORCHESTRATION_MAX_ATTEMPTS: String(MAX_ATTEMPTS),
        ORCHESTRATION_SEQUENCE_GAP_WAIT_MS: '60000',
        ORCHESTRATION_RESUME_AFTER_MS: '30000',
        METRICS_PUBLIC: 'true',
        // The alert emails' unsubscribe links are made on it.
        PUBLIC_URL: 'https://svc.example.test',
        // The last test moves the clock two days on.
        TOKEN_TTL_SECONDS: String(30 * 24 * 3600),
      },
      { clock, connectorClient: client },
    );
    owner = await registerOwner(server, 'dispatch-org');
    await liftSeatLimit(server, owner.tenant_id);
    await subscribeTo(server, owner.tenant_id, 'premium');
    const listening = await createExampleConnector({ signingSecrets: [SECRET], now: () => clock.now().getTime(), otpDelivery: { send: async () => undefined } }).listen(0, '127.0.0.1');
    closers.push(() => listening.close());
    const created = await send('POST', '/api/v1/org/sdk-connections', { name: 'Coffee shop', webhook_url: listening.url.replace(/\/svc$/, ''), signing_secret: SECRET, enabled: true });
    expect(created.status, created.text).to.equal(201);
    connectionId = created.json.id;
    const synced = await send('POST', `/api/v1/org/sdk-connections/${connectionId}/sync-tools`, {});
    expect(synced.status, synced.text).to.equal(200);
    expect(synced.json.flows_count).to.equal(2);
  });
  after(async () => {
    for (const close of closers) await close().catch(() => undefined);
    await server.close();
  });

  it('runs the advertised flow: the step called with the derived request id, its output recorded and mapped into a follow-on event (causation, depth + 1)', async () => {
    const id = await emit({ name: 'shop.order.created', payload: { order_id: 'A-100' } });
    await runFor();
    const event = await get(id);
    expect(event.status).to.equal('processed');
    expect(event.attempts).to.have.length(1);
    const [run] = event.attempts[0].flow_runs;
    expect(run.flow).to.equal(flowKey());
    expect(run.steps[0]).to.deep.include({ step: 0, outcome: 'succeeded', request_id: stepRequestId(id, 1, flowKey(), 0), error: null });
    expect(run.steps[0].output).to.deep.include({ order_id: 'A-100', ticket: 'WH-A-100', request_id: stepRequestId(id, 1, flowKey(), 0) });
    const calls = warehouseCalls().filter((call) => call.parameters?.order_id === 'A-100');
    expect(calls.map((call) => call.request_id)).to.deep.equal([stepRequestId(id, 1, flowKey(), 0)]);
    // fail_first is absent from the payload: the parameter is left out, not sent as null.
    expect(calls[0].parameters).to.deep.equal({ order_id: 'A-100' });

    expect(run.steps[1]).to.deep.include({ step: 1, outcome: 'succeeded' });
    const followOn = await get(run.steps[1].output.event_id);
    expect(followOn).to.include({ name: 'shop.order.prepared', causation_id: id, depth: 1, correlation_id: event.correlation_id, source: 'flow:prepare_order' });
    expect(followOn.payload).to.deep.equal({ order_id: 'A-100', ticket: 'WH-A-100' });
    // shop.order.prepared triggers nothing: processed with no flow.
    expect(followOn.status).to.equal('processed');
    expect(followOn.attempts.map((attempt: { flows: string[] }) => attempt.flows)).to.deep.equal([[]]);
    // Its id is made from its key, and carries its cause's millisecond: it lands beside it in every index.
    expect(followOn.id.slice(0, 13)).to.equal(id.slice(0, 13));
    expect(followOn.idempotency_key).to.equal(followOnIdempotencyKey(server.platform.orchestration, id, flowKey(), 0));
  });

  it('an event no flow matches ends processed, its attempt recording no flow; the connector is not called', async () => {
    const before = client.sent.length;
    const id = await emit({ name: 'crm.contact.updated', payload: { id: 'c-1' } });
    await runFor();
    const event = await get(id);
    expect(event.status).to.equal('processed');
    expect(event.attempts).to.have.length(1);
    expect(event.attempts[0]).to.deep.include({ flows: [], outcome: 'processed', flow_runs: [] });
    expect(client.sent.length).to.equal(before);
  });

  it('a connector that fails twice then succeeds: failed, failed (each with its error and back-off), then processed after three attempts', async () => {
    const id = await emit({ name: 'shop.order.created', payload: { order_id: 'B-200', fail_first: 2 } });
    await runFor();
    const first = await get(id);
    expect(first.status).to.equal('failed');
    expect(first.attempts[0].error).to.deep.include({ code: 'internal_error' });
    expect(Date.parse(first.next_attempt_at)).to.be.greaterThan(clock.now().getTime());
    await runFor(3);
    const event = await get(id);
    expect(event.status).to.equal('processed');
    expect(event.attempts.map((attempt: { outcome: string }) => attempt.outcome)).to.deep.equal(['failed', 'failed', 'processed']);
    // Each attempt is a new request: its own request id.
    expect(warehouseCalls().filter((call) => call.parameters?.order_id === 'B-200').map((call) => call.request_id)).to.deep.equal([1, 2, 3].map((attempt) => stepRequestId(id, attempt, flowKey(), 0)));
  });

  it('one that keeps failing is dead-lettered after ORCHESTRATION_MAX_ATTEMPTS; a retry once it recovers gets a fresh budget and ends processed', async () => {
    const id = await emit({ name: 'shop.order.created', payload: { order_id: 'C-300', fail_first: 4 } });
    await runFor(MAX_ATTEMPTS + 2);
    const dead = await get(id);
    expect(dead.status).to.equal('dead_letter');
    expect(dead.attempts).to.have.length(MAX_ATTEMPTS);
    const retried = await send('POST', `/api/v1/org/events/${id}/retry`);
    expect(retried.status, retried.text).to.equal(200);
    await runFor(3);
    const event = await get(id);
    expect(event.status).to.equal('processed');
    expect(event.attempts.map((attempt: { outcome: string }) => attempt.outcome)).to.deep.equal(['failed', 'failed', 'failed', 'failed', 'processed']);
  });

  it('counts attempts, failures and dead letters by event name in /metrics, and shows the queue depth', async () => {
    const metric = async (line: string): Promise<number> => {
      const scraped = await server.request('GET', '/metrics');
      expect(scraped.status).to.equal(200);
      const found = scraped.text.split('\n').find((candidate) => candidate.startsWith(`${line} `));
      return found === undefined ? 0 : Number(found.slice(line.length + 1));
    };
    const byName = (name: string) => `${name}{event_name="shop.order.created"}`;
    const before = await Promise.all([metric(byName('orchestration_attempts_total')), metric(byName('orchestration_failures_total')), metric(byName('orchestration_dead_letters_total'))]);
    const id = await emit({ name: 'shop.order.created', payload: { order_id: 'M-900', fail_first: 99 } });
    await runFor(MAX_ATTEMPTS + 2);
    expect((await get(id)).status).to.equal('dead_letter');
    const after = await Promise.all([metric(byName('orchestration_attempts_total')), metric(byName('orchestration_failures_total')), metric(byName('orchestration_dead_letters_total'))]);
    expect(after.map((value, index) => value - before[index]!)).to.deep.equal([MAX_ATTEMPTS, MAX_ATTEMPTS, 1]);
    // Nothing waits once the dispatcher is drained; the gauge reads the queue when scraped.
    expect(await metric('orchestration_queue_depth{status="queued"}')).to.equal(0);
    expect(await metric('orchestration_queue_depth{status="dispatched"}')).to.equal(0);
  });

  it('tells a flow on svc.event.dead_lettered (svc.event.expired) of a dead-lettered (expired) event: the platform emits it, caused by that event, once', async () => {
    const notices = createConnector({ signingSecrets: [SECRET], now: () => clock.now().getTime() });
    const told: Array<Record<string, unknown>> = [];
    notices.tool('book_table', { description: 'book', auth: 'none', chat: false, handler: () => { throw new ConnectorError('internal_error', 'the bookings system is down'); } });
    notices.tool('tell_team', { description: 'tell', auth: 'none', chat: false, handler: ({ parameters }) => (told.push(parameters), { output: { told: true } }) });
    notices.advertise({
      flows: [
        { id: 'book', trigger: 'notice.table.requested', steps: [{ tool: 'book_table' }] },
        { id: 'tell', trigger: 'svc.event.dead_lettered', steps: [{ tool: 'tell_team', parameters: { event_id: '$.payload.event_id', name: '$.payload.name', code: '$.payload.error.code', attempts: '$.payload.attempts' } }] },
        { id: 'tell_expired', trigger: 'svc.event.expired', steps: [{ tool: 'tell_team', parameters: { event_id: '$.payload.event_id', name: '$.payload.name', expires_at: '$.payload.expires_at' } }] },
      ],
    });
    const connection = await connected(notices, 'Bookings');

    const id = await emit({ name: 'notice.table.requested', payload: { guests: 4 } });
    await runFor(MAX_ATTEMPTS + 2);
    const dead = await get(id);
    expect(dead.status).to.equal('dead_letter');
    await drainUntil(() => told.length > 0, 'the notice flow called');
    expect(told).to.deep.equal([{ event_id: id, name: 'notice.table.requested', code: 'internal_error', attempts: MAX_ATTEMPTS }]);
    await server.platform.readYourWrites(await server.platform.eventStore.headPosition());
    const listed = await send('GET', '/api/v1/org/events?name=svc.event.dead_lettered');
    const notice = listed.json.items.find((item: { causation_id: string }) => item.causation_id === id);
    expect(notice).to.deep.include({ name: 'svc.event.dead_lettered', received_via: 'platform', source: 'svc', causation_id: id, correlation_id: dead.correlation_id, depth: dead.depth + 1, status: 'processed' });
    expect(notice.payload).to.deep.include({ event_id: id, name: 'notice.table.requested', attempts: MAX_ATTEMPTS, error: { code: 'internal_error', message: 'the bookings system is down' } });

    // Nobody else emits under svc.: an emit is 400 naming the name, recording nothing.
    const spoofed = await send('POST', '/api/v1/org/events', { name: 'svc.event.dead_lettered', payload: { event_id: id } });
    expect([spoofed.status, spoofed.json.code, spoofed.json.field]).to.deep.equal([400, 'reserved_event_name', 'name']);
    expect(await spoofed.events()).to.deep.equal([]);
    // An event that expires before its turn (the second of a sequence whose first never comes).
    const expiring = await expiredBeforeItsTurn('notice.table.requested', 'notice-expiring', { guests: 2 });
    const expired = await get(expiring);
    expect(expired.status).to.equal('expired');
    await drainUntil(() => told.length > 1, 'the expiry notice flow called');
    expect(told[1]).to.deep.equal({ event_id: expiring, name: 'notice.table.requested', expires_at: expired.expires_at });

    // Its flows listen no more: the tests after dead-letter events of their own.
    expect((await send('PATCH', `/api/v1/org/sdk-connections/${connection}`, { enabled: false })).status).to.equal(200);
  });

  it('emails the owner and admins, not members, when an event is dead-lettered or expires: once an hour each; a person turns it off for themselves, the setting for everyone', async () => {
    const admin = await joinAs(server, await registerOwner(server, 'dispatch-alert-adm'), owner.tenant_id, 'admin');
    await joinAs(server, await registerOwner(server, 'dispatch-alert-mem'), owner.tenant_id, 'member');
    const toNextHour = (): void => clock.advance(3_600_000 - (clock.now().getTime() % 3_600_000) + 1000);
    /** The alert emails queued since `since`, once the saga has handled every end of `ids`. */
    const alertsSince = async (since: number, ids: string[]): Promise<Array<{ to: string; subject: string; text: string; unsubscribe: string | null }>> => {
      const ends = await Promise.all(ids.map(async (id) => (await server.platform.eventStore.readStream(`orchestrationEvent-${id}`)).filter((event) => ['OrchestrationEventDeadLettered', 'OrchestrationEventExpired'].includes(event.type)).at(-1)?.position ?? Infinity));
      const last = Math.max(...ends);
      await eventually(async () => ((await server.platform.readStore.getProjectionState(`saga:${ORCHESTRATION_ALERT_EMAILS}-v1`))?.checkpoint ?? 0) >= last, 10_000, 'the alert saga past the ends');
      const queued = await server.platform.eventStore.readAll({ fromPosition: since, filter: { kind: 'event_type', types: ['EmailQueued'] } });
      return queued.flatMap((event) => {
        if (event.type !== 'EmailQueued' || event.data.kind !== 'orchestration_alert') return [];
        const { to, subject, body_sealed, unsubscribe_url_sealed } = event.data;
        return [{ to, subject, text: server.platform.secrets.open(body_sealed), unsubscribe: unsubscribe_url_sealed === undefined ? null : server.platform.secrets.open(unsubscribe_url_sealed) }];
      });
    };

    toNextHour();
    let since = await server.platform.eventStore.headPosition();
    const dead = [await emit({ name: 'shop.order.created', payload: { order_id: 'AL-1', fail_first: 99 } }), await emit({ name: 'shop.order.created', payload: { order_id: 'AL-2', fail_first: 99 } })];
    await runFor(MAX_ATTEMPTS);
    for (const id of dead) expect((await get(id)).status).to.equal('dead_letter');
    // Two dead letters in one hour: one email each to the owner and the admin, about the first handled.
    const first = await alertsSince(since, dead);
    expect(first.map((email) => email.to).sort()).to.deep.equal([owner.email, admin.email].sort());
    expect(first[0].subject).to.equal('[Org dispatch-org] An orchestration event was dead-lettered');
    const told = dead.find((id) => first[0].text.includes(id))!;
    expect(first[0].text).to.contain(`The orchestration event shop.order.created (id ${told}) of Org dispatch-org was dead-lettered at `);
    expect(first[0].text).to.contain(`after ${MAX_ATTEMPTS} attempts; the last failed with internal_error.`);
    expect(first[0].text).to.contain(`POST /api/v1/org/events/${told}/retry, or every dead letter of its name at once: POST /api/v1/org/events/redrive {"name": "shop.order.created"}.`);
    expect(first[0].text).to.contain('at most one of these emails an hour');
    // Each person's email carries their own one-click unsubscribe link (List-Unsubscribe), in its text too; otherwise the two are the same.
    const links = first.map((email) => email.unsubscribe!);
    expect(links[0]).to.match(/^https:\/\/svc\.example\.test\/notifications\/unsubscribe\?token=[A-Za-z0-9_-]+\.[0-9a-f]{64}$/);
    expect(links[1]).not.to.equal(links[0]);
    expect(first[1].text.replace(links[1], links[0])).to.equal(first[0].text);
    for (const email of first) expect(email.text).to.contain(`Turn them off for yourself: ${email.unsubscribe} (or PATCH /api/v1/me/notifications {"orchestration_alerts": false})`);

    // Once that hour is over (and a minute's grace for late handling), its digest: the other
    // dead letter of the hour, by name, to each of them with their own link.
    const firstHour = hourOf(clock.now().toISOString());
    const digestsOf = async (hour: number, since: number): Promise<Array<{ to: string; subject: string; text: string }>> => {
      await server.platform.readYourWrites(await server.platform.eventStore.headPosition());
      await server.platform.sagas.runDue();
      const window = `${new Date(hour * 3_600_000).toISOString().slice(0, 10)} ${new Date(hour * 3_600_000).toISOString().slice(11, 16)} and`;
      const queued = await server.platform.eventStore.readAll({ fromPosition: since, filter: { kind: 'event_type', types: ['EmailQueued'] } });
      return queued.flatMap((event) =>
        event.type === 'EmailQueued' && event.data.kind === 'orchestration_alert_digest' && event.data.subject.includes(window)
          ? [{ to: event.data.to, subject: event.data.subject, text: server.platform.secrets.open(event.data.body_sealed) }]
          : [],
      );
    };
    toNextHour();
    since = await server.platform.eventStore.headPosition();
    expect(await digestsOf(firstHour, since)).to.deep.equal([]);
    clock.advance(DIGEST_GRACE_MS);
    const digests = await digestsOf(firstHour, since);
    expect(digests.map((email) => email.to).sort()).to.deep.equal([owner.email, admin.email].sort());
    expect(digests[0].subject).to.match(/^\[Org dispatch-org\] 1 more orchestration event dead-lettered or expired between \d{4}-\d\d-\d\d \d\d:00 and \d\d:00 UTC$/);
    expect(digests[0].text).to.contain("1 more orchestration event of Org dispatch-org was dead-lettered or expired besides the one the hour's first alert told of, and still stands so:\n\nshop.order.created: 1 dead-lettered\n\n");
    expect(digests[0].text).not.to.contain(told);
    for (const email of digests) expect(email.text).to.contain(first.find((alert) => alert.to === email.to)!.unsubscribe!);
    const [, closing] = await server.platform.eventStore.readStream(orchestrationAlertDigestStream(owner.tenant_id, firstHour));
    expect(closing.data).to.deep.include({ standing: 1, recipients: 2 });
    // A due pass again sends nothing more.
    expect((await digestsOf(firstHour, await server.platform.eventStore.headPosition())).length).to.equal(0);

    // The next hour, an event that expires before its turn: told again.
    toNextHour();
    since = await server.platform.eventStore.headPosition();
    const expiring = await expiredBeforeItsTurn('shop.order.created', 'alert-expiring', { order_id: 'AL-3' });
    expect((await get(expiring)).status).to.equal('expired');
    const expired = await alertsSince(since, [expiring]);
    expect(expired.map((email) => email.subject)).to.deep.equal(['[Org dispatch-org] An orchestration event expired before it was dispatched', '[Org dispatch-org] An orchestration event expired before it was dispatched']);
    expect(expired[0].text).to.contain(`The orchestration event shop.order.created (id ${expiring}) of Org dispatch-org expired at `);
    // The expired events of the tests before are told of (with -g, there are none).
    const otherExpired = (await send('GET', '/api/v1/org/events?status=expired&limit=100')).json.items.length - 1;
    expect(expired[0].text).to.contain(
      otherExpired === 0
        ? 'It is the only expired event of Org dispatch-org as this email is sent.'
        : `Org dispatch-org has ${otherExpired} other expired ${otherExpired === 1 ? 'event' : 'events'} as this email is sent: GET /api/v1/org/events?status=expired.`,
    );

    // An hour of one end has no digest: the alert told of it.
    const expiryHour = hourOf(clock.now().toISOString());
    // An admin turns them off for themselves with their email's link, as a mail client's one click
    // does (RFC 8058): the next hour's dead letter is emailed to the owner alone.
    const adminsLink = new URL(first.find((email) => email.to === admin.email)!.unsubscribe!);
    const mine = await server.request('POST', `${adminsLink.pathname}${adminsLink.search}`, { headers: { 'content-type': 'application/x-www-form-urlencoded' }, rawBody: 'List-Unsubscribe=One-Click' });
    expect([mine.status, mine.json.unsubscribed], mine.text).to.deep.equal([200, true]);
    toNextHour();
    since = await server.platform.eventStore.headPosition();
    const ownersOnly = await emit({ name: 'shop.order.created', payload: { order_id: 'AL-5', fail_first: 99 } });
    await runFor(MAX_ATTEMPTS);
    expect((await get(ownersOnly)).status).to.equal('dead_letter');
    const toOwner = await alertsSince(since, [ownersOnly]);
    expect(toOwner.map((email) => email.to)).to.deep.equal([owner.email]);
    expect(await digestsOf(expiryHour, since)).to.deep.equal([]);
    const expiryDigest = await server.platform.eventStore.readStream(orchestrationAlertDigestStream(owner.tenant_id, expiryHour));
    expect(expiryDigest.map((event) => [event.type, 'standing' in event.data ? event.data.standing : null])).to.deep.equal([
      ['OrchestrationAlertDigestOpened', null],
      ['OrchestrationAlertDigestClosed', 0],
    ]);
    // It tells how many stand dead-lettered, the earlier ones of this test and of the tests before among them.
    const standing = await send('GET', '/api/v1/org/events?status=dead_letter&limit=100');
    const others = standing.json.items.length - 1;
    expect(others).to.be.greaterThan(1);
    expect(toOwner[0].text).to.contain(`Org dispatch-org has ${others} other dead-lettered events as this email is sent: GET /api/v1/org/events?status=dead_letter.`);

    // Turned off by an admin: the next hour's dead letter emails nobody.
    const off = await server.request('POST', '/graphql', { headers: as(admin), body: { query: 'mutation { update_settings(input: { orchestration_alert_emails: false }) { orchestration_alert_emails } }' } });
    expect(off.json.data, off.text).to.deep.equal({ update_settings: { orchestration_alert_emails: false } });
    toNextHour();
    since = await server.platform.eventStore.headPosition();
    const unheard = await emit({ name: 'shop.order.created', payload: { order_id: 'AL-4', fail_first: 99 } });
    await runFor(MAX_ATTEMPTS);
    expect((await get(unheard)).status).to.equal('dead_letter');
    expect(await alertsSince(since, [unheard])).to.deep.equal([]);
    const on = await server.request('POST', '/graphql', { headers: as(owner), body: { query: 'mutation { update_settings(input: { orchestration_alert_emails: true }) { orchestration_alert_emails } }' } });
    expect(on.json.data, on.text).to.deep.equal({ update_settings: { orchestration_alert_emails: true } });
  });

  it('a replay is a new event with replay_of that runs the flow again', async () => {
    const original = await emit({ name: 'shop.order.created', payload: { order_id: 'D-400' } });
    await runFor();
    const replayed = await send('POST', `/api/v1/org/events/${original}/replay`, {});
    expect(replayed.status, replayed.text).to.be.oneOf([200, 201]);
    const replayId = replayed.json.id;
    expect(replayed.json.replay_of).to.equal(original);
    await runFor();
    expect((await get(replayId)).status).to.equal('processed');
    expect(warehouseCalls().filter((call) => call.parameters?.order_id === 'D-400').map((call) => call.request_id)).to.deep.equal([
      stepRequestId(original, 1, flowKey(), 0),
      stepRequestId(replayId, 1, flowKey(), 0),
    ]);
  });

  it('200 events of one sequence emitted shuffled reach the connector in sequence_n order', async function () {
    // 400 requests and passes one after the other: far from 20 s alone, near it on a shared, busy machine.
    this.timeout(90_000);
    const numbers = Array.from({ length: 200 }, (_, i) => i + 1);
    for (let i = numbers.length - 1; i > 0; i -= 1) {
      const j = Math.floor(Math.random() * (i + 1));
      [numbers[i], numbers[j]] = [numbers[j], numbers[i]];
    }
    for (const n of numbers) await emit({ name: 'shop.order.created', sequence_key: 'orders-of-store-7', sequence_n: n, payload: { order_id: `S-${n}` } });
    await runFor();
    const seen = warehouseCalls()
      .map((call) => String(call.parameters?.order_id))
      .filter((order) => order.startsWith('S-'));
    expect(seen).to.deep.equal(Array.from({ length: 200 }, (_, i) => `S-${i + 1}`));
  });

  it('an expired event is never dispatched: it ends expired and the connector never sees it', async () => {
    // Second of a sequence whose first never comes: it waits for the gap (60 s) and expires first (30 s).
    const id = await emit({ name: 'shop.order.created', sequence_key: 'expiring', sequence_n: 2, ttl_seconds: 30, payload: { order_id: 'E-500' } });
    await runFor();
    clock.advance(45_000);
    await server.platform.sagas.runDue();
    await runFor();
    clock.advance(60_000);
    await server.platform.sagas.runDue();
    await runFor();
    const event = await get(id);
    expect(event.status).to.equal('expired');
    expect(event.attempts).to.deep.equal([]);
    expect(warehouseCalls().filter((call) => call.parameters?.order_id === 'E-500')).to.deep.equal([]);
  });

  it('resumes an attempt whose process died mid-step: the step is called once more with the same request id, the recorded ones not at all', async () => {
    // A flow of two steps, so one can be recorded before the "crash" and one not.
    const twoStep = createConnector({ signingSecrets: [SECRET], now: () => clock.now().getTime() });
    const seen: string[] = [];
    twoStep.tool('first', { description: 'first', auth: 'none', chat: false, handler: ({ request_id }) => (seen.push(request_id), { output: { code: 'X1' } }) });
    twoStep.tool('second', { description: 'second', auth: 'none', chat: false, input_schema: { type: 'object', properties: { code: { type: 'string' } } }, handler: ({ request_id, parameters }) => (seen.push(request_id), { output: { got: parameters.code } }) });
    twoStep.advertise({ flows: [{ id: 'two_steps', trigger: 'crash.test.started', steps: [{ tool: 'first' }, { tool: 'second', parameters: { code: '$.steps.0.output.code' } }] }] });
    const twoId = await connected(twoStep, 'Two steps');
    const key = `two_steps@${twoId}`;

    // What a process does before it dies: the event is claimed, step 0 called and recorded, step 1 called but not recorded.
    server.platform.dispatcher.pause = true;
    const id = await emit({ name: 'crash.test.started' });
    const ref = { event_id: id, tenant_id: owner.tenant_id };
    const started = await startDispatch(server.platform.orchestration, { ...ref, gap: null }, [key]);
    expect(started?.attempt).to.equal(1);
    const { position: recorded } = await recordSteps(server.platform.orchestration, ref, 1, [{ flow: key, step: 0, request_id: stepRequestId(id, 1, key, 0), outcome: 'succeeded', error: null, output: { code: 'X1' }, tool_call_id: null }], false);
    seen.push(stepRequestId(id, 1, key, 1));
    // Appended here, not through a route: the read models are waited for by hand.
    await server.platform.orchestration.readYourWrites(recorded);
    server.platform.dispatcher.pause = false;

    await runFor();
    expect((await get(id)).status, 'not resumed before ORCHESTRATION_RESUME_AFTER_MS').to.equal('dispatched');
    clock.advance(31_000);
    await runFor();
    const event = await get(id);
    expect(event.status).to.equal('processed');
    expect(event.attempts).to.have.length(1);
    expect(event.attempts[0].flow_runs[0].steps.map((step: { outcome: string; output: unknown }) => [step.outcome, step.output])).to.deep.equal([
      ['succeeded', { code: 'X1' }],
      ['succeeded', { got: 'X1' }],
    ]);
    // Step 1 twice, both with the same request id; step 0 never again.
    expect(seen).to.deep.equal([stepRequestId(id, 1, key, 1), stepRequestId(id, 1, key, 1)]);
  });

  /**
   * What a process does before it dies: the event claimed, notify_warehouse called,
   * shop.order.prepared emitted under the key `keyOf` derives, nothing recorded. The event's id
   * and the follow-on's, once the runner is let go.
   */
  async function diedAfterItsFollowOn(orderId: string, keyOf: typeof followOnIdempotencyKey): Promise<{ id: string; followOnId: string }> {
    server.platform.dispatcher.pause = true;
    const id = await emit({ name: 'shop.order.created', payload: { order_id: orderId } });
    const ref = { event_id: id, tenant_id: owner.tenant_id };
    expect((await startDispatch(server.platform.orchestration, { ...ref, gap: null }, [flowKey()]))?.attempt).to.equal(1);
    const deps = server.platform.orchestration;
    const followOn = await appendCausedEvent(
      deps,
      { ...ref, depth: 0, correlation_id: id },
      { name: 'shop.order.prepared', source: 'flow:prepare_order', payload: { order_id: orderId, ticket: `WH-${orderId}` }, idempotency_key: keyOf(deps, id, flowKey(), 0) },
      dispatcherContext(owner.tenant_id, id),
      [],
    );
    await deps.readYourWrites(followOn.position);
    server.platform.dispatcher.pause = false;
    return { id, followOnId: followOn.event_id };
  }

  const followOnsOf = async (id: string): Promise<string[]> =>
    (await send('GET', '/api/v1/org/events?name=shop.order.prepared&limit=100')).json.items.filter((item: { causation_id: string }) => item.causation_id === id).map((item: { id: string }) => item.id);

  it("resumes an attempt that died after its last step's call and its follow-on, before recording them: the step once more with the same request id, the follow-on not twice", async () => {
    const { id, followOnId } = await diedAfterItsFollowOn('R-700', followOnIdempotencyKey);
    clock.advance(31_000);
    await runFor();
    const event = await get(id);
    expect(event.status).to.equal('processed');
    const [run] = event.attempts[0].flow_runs;
    expect(run.steps.map((step: { step: number; outcome: string }) => [step.step, step.outcome])).to.deep.equal([
      [0, 'succeeded'],
      [1, 'succeeded'],
    ]);
    expect(run.steps[1].output).to.deep.equal({ emitted: 'shop.order.prepared', event_id: followOnId });
    expect(warehouseCalls().filter((call) => call.parameters?.order_id === 'R-700').map((call) => call.request_id)).to.deep.equal([stepRequestId(id, 1, flowKey(), 0)]);
    expect(await followOnsOf(id)).to.deep.equal([followOnId]);
  });

  it('resumes an attempt an earlier release began, whose follow-on it emitted under the key it derived then: found by that key, not emitted again', async () => {
    const { id, followOnId } = await diedAfterItsFollowOn('R-701', earlierFollowOnIdempotencyKey);
    const deps = server.platform.orchestration;
    expect(earlierFollowOnIdempotencyKey(deps, id, flowKey(), 0)).to.not.equal(followOnIdempotencyKey(deps, id, flowKey(), 0));
    clock.advance(31_000);
    await runFor();
    const event = await get(id);
    expect(event.status).to.equal('processed');
    expect(event.attempts[0].flow_runs[0].steps[1].output).to.deep.equal({ emitted: 'shop.order.prepared', event_id: followOnId });
    expect(await followOnsOf(id)).to.deep.equal([followOnId]);
  });

  it('runs a business tool step: the tenant\'s API is called once through the tool, with the payload mapped; its answer is the step\'s output', async () => {
    const api = await startTenantApi({ clientId: 'dispatch-client', clientSecret: 'dispatch-client-secret' });
    closers.push(() => api.close());
    const workspaces = await send('GET', '/api/v1/org/workspaces');
    const workspaceId = workspaces.json.items.find((workspace: { is_default: boolean }) => workspace.is_default).id as string;
    const integrationId = await createIntegrationAs(server, owner, workspaceId, { name: 'Pet API', base_url: api.url, auth: { kind: 'none' } });
    const toolId = await createToolAs(server, owner, workspaceId, {
      integration_id: integrationId,
      name: 'pet_lookup',
      description: 'Finds a pet',
      method: 'GET',
      path: '/pets/{petId}',
      parameters: [{ argument: 'petId', in: 'path', name: 'petId' }],
      input_schema: { type: 'object', properties: { petId: { type: 'string', minLength: 1 } }, required: ['petId'], additionalProperties: false },
    });
    const petShop = createConnector({ signingSecrets: [SECRET], now: () => clock.now().getTime() });
    petShop.tool('noop', { description: 'noop', auth: 'none', chat: false, handler: () => ({ output: {} }) });
    petShop.advertise({ flows: [{ id: 'check_pet', trigger: 'pets.check.requested', steps: [{ business_tool: 'pet_lookup', parameters: { petId: '$.payload.pet' } }] }] });
    await connected(petShop, 'Pet shop');

    const id = await emit({ name: 'pets.check.requested', payload: { pet: 'P-7' } });
    await runFor();
    const event = await get(id);
    expect(event.status).to.equal('processed');
    const [step] = event.attempts[0].flow_runs[0].steps;
    expect(step).to.deep.include({ step: 0, outcome: 'succeeded', error: null });
    expect(step.tool_call_id).to.be.a('string');
    expect(step.output).to.deep.include({ method: 'GET', url: '/pets/P-7' });
    expect(api.received.filter((request) => request.url.startsWith('/pets/')).map((request) => request.url)).to.deep.equal(['/pets/P-7']);
    // The call is a tool call of origin flow, named by the event and step, as every call of a tool is.
    const call = await send('GET', `/api/v1/tool-calls/${step.tool_call_id}`);
    expect(call.status, call.text).to.equal(200);
    expect(call.json.tool_id).to.equal(toolId);
    expect(call.json.origin).to.deep.include({ kind: 'flow', event_id: id, step: 0 });
  });

  it('a flow that matches but cannot be read is recorded as skipped with the reason; the event is processed', async () => {
    const odd = createConnector({ signingSecrets: [SECRET], now: () => clock.now().getTime() });
    odd.tool('noop', { description: 'noop', auth: 'none', chat: false, handler: () => ({ output: {} }) });
    odd.advertise({ flows: [{ id: 'with_a_task', trigger: { event: 'odd.flow.started' }, steps: [{ task: 'review_refund' }] }] });
    await connected(odd, 'Odd');
    const id = await emit({ name: 'odd.flow.started' });
    await runFor();
    const event = await get(id);
    expect(event.status).to.equal('processed');
    expect(event.attempts[0].flow_runs[0].steps[0]).to.deep.include({ outcome: 'skipped' });
    expect(event.attempts[0].flow_runs[0].steps[0].error.code).to.equal('unsupported_flow');
    expect(event.attempts[0].flow_runs[0].steps[0].error.message).to.match(/steps\.0/);
  });

  // Last three: they move the clock two days on and erase the organization's payloads of the days before.
  it("stops an attempt whose day's payloads are erased while it runs: dead-lettered at its next record, no further step called", async () => {
    const erasing = createConnector({ signingSecrets: [SECRET], now: () => clock.now().getTime() });
    const calls: string[] = [];
    const day = clock.now().toISOString().slice(0, 10);
    erasing.tool('first', {
      description: 'first',
      auth: 'none',
      chat: false,
      handler: async ({ request_id }) => {
        calls.push(request_id);
        // While this call runs, two days pass and the organization erases the day the event came in.
        await eraseDayDuringCall(day);
        return { output: { code: 'E1' } };
      },
    });
    erasing.tool('second', { description: 'second', auth: 'none', chat: false, handler: ({ request_id }) => (calls.push(request_id), { output: {} }) });
    erasing.advertise({ flows: [{ id: 'erased_midway', trigger: 'erase.test.started', steps: [{ tool: 'first' }, { tool: 'second' }] }] });
    const connection = await connected(erasing, 'Erased midway');

    const id = await emit({ name: 'erase.test.started', payload: { customer: 'c-1' } });
    await runFor();
    const event = await get(id);
    expect(event).to.deep.include({ status: 'dead_letter', payload_erased: true });
    expect(event.attempts.map((attempt: { outcome: string; error: { code: string } | null }) => [attempt.outcome, attempt.error?.code])).to.deep.equal([['failed', 'payload_erased']]);
    // The first step ran (its record refused), the second was never called.
    expect(calls).to.deep.equal([stepRequestId(id, 1, `erased_midway@${connection}`, 0)]);
  });

  it("ends dead-lettered, without calling the connector, an attempt left running when its day's payloads were erased", async () => {
    server.platform.dispatcher.pause = true;
    const id = await emit({ name: 'shop.order.created', payload: { order_id: 'Z-900' } });
    const ref = { event_id: id, tenant_id: owner.tenant_id };
    expect((await startDispatch(server.platform.orchestration, { ...ref, gap: null }, [flowKey()]))?.attempt).to.equal(1);
    const day = clock.now().toISOString().slice(0, 10);
    clock.advance(2 * 24 * 3600_000);
    const nextDay = new Date(Date.parse(`${day}T00:00:00.000Z`) + 24 * 3600_000).toISOString().slice(0, 10);
    const erased = await send('POST', '/api/v1/org/events/payloads/erase', { before: nextDay });
    expect(erased.status, erased.text).to.equal(200);
    expect(erased.json.erased_days).to.include(day);
    const calls = warehouseCalls().length;
    server.platform.dispatcher.pause = false;

    await runFor();
    const event = await get(id);
    expect(event).to.deep.include({ status: 'dead_letter', payload_erased: true });
    expect(event.attempts.map((attempt: { outcome: string; error: { code: string } | null }) => [attempt.outcome, attempt.error?.code])).to.deep.equal([['failed', 'payload_erased']]);
    expect(warehouseCalls()).to.have.length(calls);
  });

  it("appends none of the follow-on events of a flow whose day's payloads are erased as its last step runs", async () => {
    const erasing = createConnector({ signingSecrets: [SECRET], now: () => clock.now().getTime() });
    const day = clock.now().toISOString().slice(0, 10);
    erasing.tool('only', {
      description: 'only',
      auth: 'none',
      chat: false,
      handler: async () => {
        // While the flow's last step runs, two days pass and the organization erases the day the event came in.
        await eraseDayDuringCall(day);
        return { output: { ticket: 'T-1' } };
      },
    });
    erasing.advertise({ flows: [{ id: 'erased_emitting', trigger: 'erase.test.emitting', steps: [{ tool: 'only' }], emits: [{ name: 'erase.test.followed', payload: { customer: '$.payload.customer', ticket: '$.steps.0.output.ticket' } }] }] });
    await connected(erasing, 'Erased emitting');

    const id = await emit({ name: 'erase.test.emitting', payload: { customer: 'c-2' } });
    await runFor();
    const event = await get(id);
    expect(event).to.deep.include({ status: 'dead_letter', payload_erased: true });
    expect(event.attempts.map((attempt: { outcome: string; error: { code: string } | null; flow_runs: Array<{ steps: unknown[] }> }) => [attempt.outcome, attempt.error?.code, attempt.flow_runs[0].steps.length])).to.deep.equal([['failed', 'payload_erased', 0]]);
    // Recorded with the step, the follow-on was refused with it: the dead-lettered attempt caused nothing.
    const followed = await send('GET', '/api/v1/org/events?name=erase.test.followed');
    expect(followed.status, followed.text).to.equal(200);
    expect(followed.json.items).to.deep.equal([]);
    const all = await server.platform.eventStore.readAll({ maxCount: 100_000 });
    expect(all.filter((recorded) => recorded.type === 'OrchestrationEventQueued' || recorded.type === 'OrchestrationEventProcessedOnReceipt').map((recorded) => (recorded.data as { name: string }).name)).to.not.include('erase.test.followed');
  });

  describe('flows, mapping and back-off (pure)', () => {
    it('reads the documented shapes and refuses others with a reason', () => {
      expect(readFlow({ id: 'f', trigger: 'a.b.c', steps: [{ tool: 't' }] })).to.deep.include({ ok: true });
      expect(readFlow({ id: 'f', trigger: ['a.b.c', 'a.b.*'], steps: [{ business_tool: 't', parameters: { x: 1 } }] })).to.deep.include({ ok: true });
      expect(readFlow({ id: 'f', trigger: { events: ['a.b.c'] }, steps: [{ tool: 't' }] })).to.deep.include({ ok: true });
      expect(readFlow({ id: 'f', trigger: 'order_delayed', steps: [{ tool: 't' }] })).to.deep.include({ ok: false });
      expect(readFlow({ id: 'f', trigger: 'a.b.c', steps: [] })).to.deep.include({ ok: false });
      expect(readFlow({ id: 'f', trigger: 'a.b.c', steps: [{ tool: 't', business_tool: 'u' }] })).to.deep.include({ ok: false });
      expect(readFlow('nope')).to.deep.include({ ok: false });
    });

    it('matches exact names and whole-segment prefixes', () => {
      expect(triggerMatches(['shop.order.*'], 'shop.order.created')).to.equal(true);
      expect(triggerMatches(['shop.order.*'], 'shop.orders.created')).to.equal(false);
      expect(triggerMatches(['shop.order.created'], 'shop.order.created.late')).to.equal(false);
    });

    it('maps from the payload, earlier steps and the event; literals stay; missing paths are left out', () => {
      const scope = { event: { id: 'e1', name: 'a.b.c', correlation_id: 'c1', source: null }, payload: { order: { id: 'o1' }, items: [{ sku: 's1' }] }, steps: [{ output: { ticket: 'T' } }] };
      expect(mapParameters({ id: '$.payload.order.id', sku: '$.payload.items.0.sku', ticket: '$.steps.0.output.ticket', event: '$.event.id', fixed: 5, nested: { t: '$.steps.0.output.ticket' }, gone: '$.payload.nope' }, scope)).to.deep.equal({
        id: 'o1',
        sku: 's1',
        ticket: 'T',
        event: 'e1',
        fixed: 5,
        nested: { t: 'T' },
      });
    });

    it('back-off doubles per attempt, jittered to half..all, capped; none once the attempts are used up', () => {
      const settings = { maxAttempts: 4, retryBaseMs: 1000, retryMaxMs: 3000 };
      const now = new Date(0);
      expect(nextAttemptAt(settings, 1, now, () => 0)?.getTime()).to.equal(500);
      expect(nextAttemptAt(settings, 1, now, () => 1)?.getTime()).to.equal(1000);
      expect(nextAttemptAt(settings, 2, now, () => 1)?.getTime()).to.equal(2000);
      expect(nextAttemptAt(settings, 3, now, () => 1)?.getTime()).to.equal(3000);
      expect(nextAttemptAt(settings, 4, now, () => 1)).to.equal(null);
    });
  });
});
