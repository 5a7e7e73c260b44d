// Orchestration payload retention over HTTP (docs/orchestration-events.md, "Payload retention"):
// payloads, step outputs and error messages are sealed in the log under the key of the
// organization and the day the event was received; once ORCHESTRATION_PAYLOAD_RETENTION_DAYS
// whole days have passed since, the saga orchestration_payload_retention erases that day: the
// payloads read `{"$erased": true}`, the outputs null and the error messages "[erased]" (their
// codes kept), in the log and in the API, and such an event is neither re-queued nor
// replayed (409 `payload_erased`), skipped by a range replay, dead-lettered if it comes due.
// The emit refuses a payload's top-level `$erased` and a delay longer than the retention.
// Time is a ManualClock; the flow runner is off (tests/support/orchestration.ts drives attempts).

import { expect } from 'chai';
import { orchestrationEventStream } from '../../domain/orchestration-event/orchestration-event';
import { orchestrationPayloadSubject } from '../../domain/orchestration-event/payloads';
import { orchestrationEventsProjection } from '../../projections/orchestration-events';
import { failAttempt, recordSteps, startDispatch } from '../../application/orchestration/dispatch-queue';
import { type Account, gql, joinAs, registerOwner } from '../support/identity';
import { dispatch } from '../support/orchestration';
import { type TestResponse, type TestServer, startTestServer } from '../support/server';
import { ManualClock } from '../support/stores';

const RETENTION_DAYS = 2;
const DAY_MS = 24 * 3600 * 1000;

describe('orchestration payload retention (ORCHESTRATION_PAYLOAD_RETENTION_DAYS)', () => {
  let server: TestServer;
  // Just after midnight (UTC), so that hours later is still the same day.
  const clock = new ManualClock(new Date('2026-12-01T00:10:00.000Z'));
  let owner: Account;
  let other: Account;

  const as = (account: Account) => ({ authorization: `Bearer ${account.token}` });
  const send = (account: Account, method: string, path: string, body?: unknown): Promise<TestResponse> => server.request(method, path, { headers: as(account), body });
  const emitted = async (account: Account, body: Record<string, unknown>): Promise<{ id: string; [field: string]: unknown }> => {
    const response = await send(account, 'POST', '/api/v1/org/events', body);
    expect(response.status, response.text).to.equal(201);
    return response.json;
  };
  const get = async (account: Account, id: string) => (await send(account, 'GET', `/api/v1/org/events/${id}`)).json;
  const ref = (id: string, account: Account = owner) => ({ event_id: id, tenant_id: account.tenant_id });

  before(async () => {
    server = await startTestServer({ SCRYPT_LOG_N: '12', TOKEN_TTL_SECONDS: String(30 * 24 * 3600), ORCHESTRATION_PAYLOAD_RETENTION_DAYS: String(RETENTION_DAYS) }, { clock, orchestrationDispatcher: false });
    owner = await registerOwner(server, 'retention-org');
    other = await registerOwner(server, 'retention-other-org');
  });
  after(() => server.close());

  it('refuses a payload with a top-level $erased and a delay longer than the retention (400 naming the field), recording nothing', async () => {
    for (const [body, code, field] of [
      [{ name: 'shop.order.created', payload: { $erased: true } }, 'invalid_request', 'payload'],
      [{ name: 'shop.order.created', payload: { order: 'o-1', $erased: 'no' } }, 'invalid_request', 'payload'],
      [{ name: 'shop.order.created', delay_seconds: RETENTION_DAYS * 24 * 3600 + 1 }, 'delay_past_retention', 'delay_seconds'],
    ] as const) {
      const response = await send(owner, 'POST', '/api/v1/org/events', body);
      expect(response.status, response.text).to.equal(400);
      expect(response.json).to.include({ code, field });
      expect(await response.events()).to.deep.equal([]);
    }
    const longest = await send(owner, 'POST', '/api/v1/org/events', { name: 'shop.order.reminded', delay_seconds: RETENTION_DAYS * 24 * 3600, payload: { order: 'o-9' } });
    expect(longest.status, longest.text).to.equal(201);
  });

  it('seals payloads and outputs in the log, and erases a day once its retention passed: log, API, retry, replay, range replay, dispatch', async () => {
    // Day one: a processed event with a step output, a dead-lettered one, a waiting one; another organization's.
    const processedEvent = await emitted(owner, { name: 'shop.order.created', payload: { order: 'o-1', email: 'ann@example.com' } });
    const attempt = await dispatch(server, ref(processedEvent.id));
    const step = { flow: 'test_flow', step: 0, request_id: `${processedEvent.id}:${attempt}:test_flow:0`, outcome: 'succeeded' as const, error: null, output: { ticket: 'T-7', customer: 'Ann' }, tool_call_id: null };
    await server.platform.readYourWrites((await recordSteps(server.platform.orchestration, ref(processedEvent.id), attempt, [step], true)).position);
    // Dead-lettered with a connector's error whose words name the customer.
    const deadEvent = await emitted(owner, { name: 'shop.order.failed', payload: { order: 'o-2' } });
    const refused = { code: 'customer_unknown', message: 'no customer ann@example.com in the shop' };
    const deadAttempt = await dispatch(server, ref(deadEvent.id));
    const failedStep = { flow: 'test_flow', step: 0, request_id: `${deadEvent.id}:${deadAttempt}:test_flow:0`, outcome: 'failed' as const, error: refused, output: null, tool_call_id: null };
    await recordSteps(server.platform.orchestration, ref(deadEvent.id), deadAttempt, [failedStep], true);
    await server.platform.readYourWrites(await failAttempt(server.platform.orchestration, ref(deadEvent.id), deadAttempt, refused, null));
    const waiting = await emitted(owner, { name: 'shop.order.reminded', payload: { order: 'o-3' }, delay_seconds: RETENTION_DAYS * 24 * 3600 });
    const othersEvent = await emitted(other, { name: 'shop.order.created', payload: { order: 'x-1' } });
    const day = '2026-12-01';

    // Sealed in the log as stored: neither the payload nor the output is there in clear (a sealed value is base64url: no @, no quoted key).
    const stored = JSON.stringify(await server.platform.storedEvents.readStream(orchestrationEventStream(processedEvent.id)));
    for (const clear of ['ann@example.com', '"ticket"', '"customer"']) expect(stored).to.not.include(clear);
    expect(stored).to.include(orchestrationPayloadSubject(owner.tenant_id, day));
    const storedDead = JSON.stringify(await server.platform.storedEvents.readStream(orchestrationEventStream(deadEvent.id)));
    for (const clear of ['ann@example.com', 'no customer']) expect(storedDead).to.not.include(clear);
    expect(storedDead).to.include('"code":"customer_unknown"');
    // Read in clear everywhere else.
    const before = await get(owner, processedEvent.id);
    expect(before).to.deep.include({ payload: { order: 'o-1', email: 'ann@example.com' }, payload_erased: false });
    expect(before.attempts[0].flow_runs[0].steps[0].output).to.deep.equal({ ticket: 'T-7', customer: 'Ann' });
    const deadBefore = await get(owner, deadEvent.id);
    expect(deadBefore.attempts[0].error).to.deep.equal(refused);
    expect(deadBefore.attempts[0].flow_runs[0].steps[0].error).to.deep.equal(refused);

    // Day two, still kept: a new event of that day; nothing erased by the pass.
    clock.advance(DAY_MS);
    const dayTwo = await emitted(owner, { name: 'shop.order.created', payload: { order: 'o-4' } });
    await server.platform.sagas.runDue();
    expect((await get(owner, processedEvent.id)).payload_erased).to.equal(false);

    // Day one plus the retention's whole days: day one is erased, day two is kept (for one more day).
    clock.advance(RETENTION_DAYS * DAY_MS);
    await server.platform.sagas.runDue();
    const after = await get(owner, processedEvent.id);
    expect(after).to.deep.include({ payload: { $erased: true }, payload_erased: true, status: 'processed' });
    expect(after.attempts[0].flow_runs[0].steps[0]).to.deep.include({ outcome: 'succeeded', output: null, request_id: step.request_id });
    const deadAfter = await get(owner, deadEvent.id);
    expect(deadAfter.payload_erased).to.equal(true);
    // The error messages too, their codes kept.
    expect(deadAfter.attempts[0].error).to.deep.equal({ code: 'customer_unknown', message: '[erased]' });
    expect(deadAfter.attempts[0].flow_runs[0].steps[0].error).to.deep.equal({ code: 'customer_unknown', message: '[erased]' });
    expect((await get(owner, dayTwo.id)).payload).to.deep.equal({ order: 'o-4' });
    // Another organization's day is erased on its own, by the same pass.
    expect((await get(other, othersEvent.id)).payload_erased).to.equal(true);
    // In the log: unreadable, whoever reads it; the erasure is an event of its own, in the audit log.
    const [queued] = await server.platform.eventStore.readStream(orchestrationEventStream(processedEvent.id));
    expect(queued.data).to.deep.include({ payload: { $erased: true } });
    const deadInLog = await server.platform.eventStore.readStream(orchestrationEventStream(deadEvent.id));
    expect(deadInLog.flatMap((event) => (event.type === 'OrchestrationStepRecorded' || event.type === 'OrchestrationAttemptFailed' ? [event.data.error] : []))).to.deep.equal([
      { code: 'customer_unknown', message: '[erased]' },
      { code: 'customer_unknown', message: '[erased]' },
    ]);
    const erasures = await send(owner, 'GET', '/api/v1/org/audit-logs?action=OrchestrationPayloadsErased');
    expect(erasures.status, erasures.text).to.equal(200);
    expect(erasures.json.items.map((entry: { resource_id: string; actor_kind: string }) => [entry.resource_id, entry.actor_kind])).to.deep.equal([[`${owner.tenant_id}:${day}`, 'system']]);

    // Nothing to run again: retry and replay are refused, recording nothing; a range replay skips them.
    const retried = await send(owner, 'POST', `/api/v1/org/events/${deadEvent.id}/retry`);
    expect(retried.status, retried.text).to.equal(409);
    expect(retried.json.code).to.equal('payload_erased');
    const replayed = await send(owner, 'POST', `/api/v1/org/events/${processedEvent.id}/replay`, {});
    expect(replayed.status, replayed.text).to.equal(409);
    expect(replayed.json.code).to.equal('payload_erased');
    expect(await replayed.events()).to.deep.equal([]);
    const range = await send(owner, 'POST', '/api/v1/org/events/replay', { from: '2026-12-01T00:00:00Z', to: '2026-12-03T00:00:00Z' });
    expect(range.status, range.text).to.equal(200);
    expect(range.json.items.map((item: { replay_of: string }) => item.replay_of)).to.deep.equal([dayTwo.id]);

    // The waiting event came due on the day its payload was erased: dead-lettered as it starts, never run.
    const started = await send(owner, 'GET', `/api/v1/org/events/${waiting.id}`);
    expect(started.json.payload_erased).to.equal(true);
    expect(await startDispatch(server.platform.orchestration, { ...ref(waiting.id), gap: null }, ['test_flow'])).to.equal(null);
    await server.platform.readYourWrites(await server.platform.eventStore.headPosition());
    const deadLettered = await get(owner, waiting.id);
    expect(deadLettered.status).to.equal('dead_letter');
    // Its message is the platform's, recorded after the day's key was gone: in clear.
    expect(deadLettered.attempts.map((entry: { outcome: string; error: { code: string; message: string } | null }) => [entry.outcome, entry.error?.code, entry.error?.message])).to.deep.equal([
      ['failed', 'payload_erased', 'the payload was erased (its retention passed): the flows cannot run on it'],
    ]);

    // A pass again erases nothing more.
    await server.platform.sagas.runDue();
    const again = await send(owner, 'GET', '/api/v1/org/audit-logs?action=OrchestrationPayloadsErased');
    expect(again.json.items).to.have.length(1);
  });

  it("keeps an organization's payloads its own number of days (update_settings), shorter than the operator's: erased sooner, a longer delay refused", async () => {
    const org = await registerOwner(server, 'retention-own-days');
    const refused = await gql(server, 'mutation { update_settings(input: { orchestration_payload_retention_days: 0 }) { orchestration_payload_retention_days } }', {}, org.token);
    expect(refused.json.errors?.[0]?.extensions).to.deep.include({ code: 'invalid_settings', field: 'orchestration_payload_retention_days' });
    const set = await gql(server, 'mutation { update_settings(input: { orchestration_payload_retention_days: 1 }) { orchestration_payload_retention_days } }', {}, org.token);
    expect(set.json.data?.update_settings, set.text).to.deep.equal({ orchestration_payload_retention_days: 1 });
    expect((await gql(server, '{ settings { orchestration_payload_retention_days } }', {}, org.token)).json.data.settings.orchestration_payload_retention_days).to.equal(1);

    // A delay of more than the organization's one day is refused; one day is not.
    const tooLong = await send(org, 'POST', '/api/v1/org/events', { name: 'shop.order.reminded', delay_seconds: 24 * 3600 + 1 });
    expect(tooLong.status, tooLong.text).to.equal(400);
    expect(tooLong.json).to.include({ code: 'delay_past_retention', field: 'delay_seconds' });
    expect(await tooLong.events()).to.deep.equal([]);
    expect((await send(org, 'POST', '/api/v1/org/events', { name: 'shop.order.reminded', delay_seconds: 24 * 3600 })).status).to.equal(201);

    const ownDay = await emitted(org, { name: 'shop.order.created', payload: { order: 'own-1' } });
    const othersDay = await emitted(other, { name: 'shop.order.created', payload: { order: 'x-2' } });
    // Two days on: past the organization's day of retention, within the operator's two.
    clock.advance(2 * DAY_MS);
    await server.platform.sagas.runDue();
    expect((await get(org, ownDay.id)).payload_erased).to.equal(true);
    expect((await get(other, othersDay.id)).payload).to.deep.equal({ order: 'x-2' });
  });

  describe('erased on request (POST /api/v1/org/events/payloads/erase)', () => {
    // A server of its own, payloads kept until erased otherwise (0): only the requests erase them here.
    let kept: TestServer;
    const keptClock = new ManualClock(new Date('2026-12-01T08:00:00.000Z'));
    const dayOf = (date: Date): string => date.toISOString().slice(0, 10);
    const erase = (account: Account | null, body: unknown) => kept.request('POST', '/api/v1/org/events/payloads/erase', { headers: account ? as(account) : {}, body });
    const emittedHere = async (account: Account, payload: Record<string, unknown>): Promise<string> => {
      const response = await kept.request('POST', '/api/v1/org/events', { headers: as(account), body: { name: 'shop.order.created', payload } });
      expect(response.status, response.text).to.equal(201);
      return response.json.id;
    };
    const getHere = async (account: Account, id: string) => (await kept.request('GET', `/api/v1/org/events/${id}`, { headers: as(account) })).json;

    before(async () => {
      kept = await startTestServer({ SCRYPT_LOG_N: '12', TOKEN_TTL_SECONDS: String(30 * 24 * 3600), ORCHESTRATION_PAYLOAD_RETENTION_DAYS: '0' }, { clock: keptClock, orchestrationDispatcher: false });
    });
    after(() => kept.close());

    it('refuses without a token (401), a member (403), a bad or too recent `before` (400 naming it), erasing nothing', async () => {
      const org = await registerOwner(kept, 'request-refusals');
      const member = await joinAs(kept, await registerOwner(kept, 'request-member-home', 'request-member@example.com'), org.tenant_id, 'member');
      expect((await erase(null, { before: '2026-01-01' })).status).to.equal(401);
      const forbidden = await erase(member, { before: '2026-01-01' });
      expect(forbidden.status, forbidden.text).to.equal(403);
      const today = dayOf(keptClock.now());
      for (const body of [{}, { before: 20261201 }, { before: '2026-13-01' }, { before: '1 December' }, { before: today }]) {
        const refused = await erase(org, body);
        expect(refused.status, `${JSON.stringify(body)}: ${refused.text}`).to.equal(400);
        expect(refused.json.field, JSON.stringify(body)).to.equal('before');
        expect(await refused.events()).to.deep.equal([]);
      }
      const yesterday = await erase(org, { before: dayOf(new Date(keptClock.now().getTime() - DAY_MS)) });
      expect(yesterday.status, yesterday.text).to.equal(200);
      expect(yesterday.json).to.deep.equal({ erased_days: [] });
    });

    it("answers 503 read_model_rebuilding while an upgrade rebuilds the events' read model from before payload days, erasing nothing", async () => {
      const org = await registerOwner(kept, 'request-rebuilding');
      const first = await emittedHere(org, { order: 'rb-1' });
      keptClock.advance(2 * DAY_MS);
      // As a store built by a release before payload days is served while the new one rebuilds beside it.
      await kept.platform.projections.stop();
      const served = await kept.platform.readStore.getProjectionState(orchestrationEventsProjection.name);
      await kept.platform.readStore.putProjectionState({ ...served!, version: 2 });
      try {
        const refused = await erase(org, { before: dayOf(new Date(keptClock.now().getTime() - DAY_MS)) });
        expect([refused.status, refused.json.code], refused.text).to.deep.equal([503, 'read_model_rebuilding']);
        expect(await refused.events()).to.deep.equal([]);
      } finally {
        await kept.platform.readStore.putProjectionState(served!);
        await kept.platform.projections.start();
      }
      const erased = await erase(org, { before: dayOf(new Date(keptClock.now().getTime() - DAY_MS)) });
      expect(erased.status, erased.text).to.equal(200);
      expect(erased.json.erased_days).to.have.length(1);
      expect((await getHere(org, first)).payload_erased).to.equal(true);
    });

    it('erases the days before the date at once, as the admin: payloads unreadable, listed in the answer and the audit log; again erases nothing; not another organization\'s', async () => {
      const org = await registerOwner(kept, 'request-erasure');
      const admin = await joinAs(kept, await registerOwner(kept, 'request-admin-home', 'request-admin@example.com'), org.tenant_id, 'admin');
      const elsewhere = await registerOwner(kept, 'request-elsewhere');
      const dayOne = dayOf(keptClock.now());
      const first = await emittedHere(org, { order: 'r-1', email: 'bob@example.com' });
      const theirs = await emittedHere(elsewhere, { order: 'x-1' });
      keptClock.advance(DAY_MS);
      const dayTwo = dayOf(keptClock.now());
      const second = await emittedHere(org, { order: 'r-2' });
      keptClock.advance(DAY_MS);
      const dayThree = dayOf(keptClock.now());
      const third = await emittedHere(org, { order: 'r-3' });
      keptClock.advance(DAY_MS);
      // Today is day four: the days before day three (yesterday) may be erased.
      const erased = await erase(admin, { before: dayThree });
      expect(erased.status, erased.text).to.equal(200);
      expect(erased.json).to.deep.equal({ erased_days: [dayOne, dayTwo] });
      expect(await erased.events()).to.deep.equal(['OrchestrationPayloadsErased@orchestrationPayloads', 'OrchestrationPayloadsErased@orchestrationPayloads']);
      for (const id of [first, second]) expect(await getHere(org, id)).to.deep.include({ payload: { $erased: true }, payload_erased: true });
      expect((await getHere(org, third)).payload).to.deep.equal({ order: 'r-3' });
      expect((await getHere(elsewhere, theirs)).payload).to.deep.equal({ order: 'x-1' });
      const [queued] = await kept.platform.eventStore.readStream(orchestrationEventStream(first));
      expect(queued.data).to.deep.include({ payload: { $erased: true } });
      const audit = await kept.request('GET', '/api/v1/org/audit-logs?action=OrchestrationPayloadsErased', { headers: as(org) });
      expect(audit.json.items.map((entry: { actor_kind: string; actor_id: string }) => [entry.actor_kind, entry.actor_id])).to.deep.equal([
        ['user', admin.user_id],
        ['user', admin.user_id],
      ]);
      const again = await erase(admin, { before: dayThree });
      expect(again.json).to.deep.equal({ erased_days: [] });
      expect(await again.events()).to.deep.equal([]);
      // Retention 0: the saga's passes erase nothing by age.
      await kept.platform.sagas.runDue();
      expect((await getHere(org, third)).payload_erased).to.equal(false);
    });
  });
});
