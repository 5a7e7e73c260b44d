// The handoff delivery saga against local webhook servers (the deployment allows plain http
// and private addresses here, as a development one would): a conversation handed off arrives
// signed as connector requests are (spec 5.2), verified with the connector SDK's own
// verifier; a failing webhook is retried on the recorded back-off schedule and ends visible
// as failed after the last attempt. Time is the platform's clock, moved by hand, and the due
// passes are run by hand: the background ones are held off (an hour apart), so that none
// races a pass the test runs.

import { expect } from 'chai';
import { verifySignature } from '../../adapters/connector-sdk/signing';
import { DELIVERY_ID_HEADER, HANDOFF_DELIVERY, handoffDeliverySaga } from '../../application/handoff/handoff-delivery';
import { HANDOFF_FAILURE_EMAILS } from '../../application/handoff/handoff-failure-emails';
import { silentLogger } from '../../application/ports/logger';
import type { RecordedOf } from '../../application/ports/domain-event-store';
import { SagaRunner } from '../../application/sagas/saga-runner';
import { conversationStream } from '../../domain/conversation/conversation';
import { GuardedOutboundHttp } from '../../infrastructure/outbound/signed-http';
import { expectEveryEventAudited } from '../support/audit';
import { type ConversationDriver, conversationsOf } from '../support/conversation-events';
import { type Account, joinAs, registerOwner } from '../support/identity';
import { type TestServer, startTestServer } from '../support/server';
import { ManualClock, eventually } from '../support/stores';
import { subscribeTo } from '../support/subscriptions';
import { type WebhookReceiver, startWebhookReceiver } from '../support/webhook-receiver';

const MAX_ATTEMPTS = 3;

describe('handoff delivery (saga handoff_delivery)', () => {
  let server: TestServer;
  let clock: ManualClock;
  let receiver: WebhookReceiver;
  let owner: Account;
  let secret: string;
  let talk: ConversationDriver;
  const as = (account: Account) => ({ authorization: `Bearer ${account.token}` });
  const nowSeconds = (): number => Math.floor(clock.now().getTime() / 1000);

  /** The handoffs of the organization as its admins list them. */
  async function deliveries(query = ''): Promise<Array<Record<string, unknown>>> {
    const response = await server.request('GET', `/api/v1/tenant/handoff/deliveries${query}`, { headers: as(owner) });
    expect(response.status).to.equal(200);
    return response.json.items;
  }

  /** Waits until the read models have passed everything recorded so far. */
  async function settled(): Promise<void> {
    await server.platform.readYourWrites(await server.platform.storedEvents.headPosition());
  }

  /** A conversation with a question and an answer, handed off; answers its id and the trigger's id. */
  async function handOff(question: string): Promise<{ conversationId: string; triggerId: string }> {
    const conversationId = await talk.start({ title: `About ${question}`, channel: 'widget' });
    const asked = await talk.ask(conversationId, question);
    await talk.answer(conversationId, asked, { fromKnowledge: false });
    const triggerId = await talk.setStatus(conversationId, 'handed_off');
    return { conversationId, triggerId: triggerId! };
  }

  before(async () => {
    clock = new ManualClock(new Date('2026-11-22T10:00:00.000Z'));
    server = await startTestServer(
      { SCRYPT_LOG_N: '12', OUTBOUND_ALLOW_INSECURE: 'true', OUTBOUND_ALLOW_PRIVATE_NETWORKS: 'true', HANDOFF_MAX_ATTEMPTS: String(MAX_ATTEMPTS), HANDOFF_RETRY_BASE_SECONDS: '1' },
      { clock, sagaRetryPollMs: 3_600_000 },
    );
    receiver = await startWebhookReceiver();
    owner = await registerOwner(server, 'handoff-org');
    await subscribeTo(server, owner.tenant_id, 'starter');
    const configured = await server.request('POST', '/api/v1/tenant/handoff', { headers: as(owner), body: { url: `${receiver.url}/hooks/handoff` } });
    expect(configured.status, configured.text).to.equal(200);
    secret = configured.json.secret;
    talk = conversationsOf(server.platform, owner.tenant_id, owner.user_id);
  });
  after(async () => {
    await receiver.close();
    await server.close();
  });

  it('posts a handed-off conversation to the webhook, signed with the secret, and records it delivered', async () => {
    const { conversationId, triggerId } = await handOff('Where is my parcel?');
    await eventually(() => receiver.deliveries.length === 1, 10_000, 'the handoff at the webhook');
    const [delivery] = receiver.deliveries;
    expect(delivery.path).to.equal('/hooks/handoff');
    expect(delivery.headers).to.include({ 'content-type': 'application/json', [DELIVERY_ID_HEADER]: triggerId, 'x-svc-event': 'conversation.handed_off', 'x-svc-timestamp': String(nowSeconds()) });
    const check = verifySignature({
      secrets: [secret],
      signature: delivery.headers['x-svc-signature'],
      timestamp: delivery.headers['x-svc-timestamp'],
      rawBody: delivery.body,
      nowSeconds: nowSeconds(),
      maxSkewSeconds: 300,
    });
    expect(check).to.deep.equal({ valid: true, secretIndex: 0 });

    const payload = JSON.parse(delivery.body.toString('utf8'));
    expect(payload).to.deep.include({ type: 'conversation.handed_off', delivery_id: triggerId, tenant_id: owner.tenant_id, handed_off_by: { kind: 'user', id: owner.user_id }, messages_omitted: 0 });
    expect(payload.conversation).to.deep.include({ id: conversationId, title: 'About Where is my parcel?', channel: 'widget', status: 'handed_off', workspace_id: null });
    expect(payload.messages.map((message: { role: string; text: string }) => [message.role, message.text])).to.deep.equal([
      ['user', 'Where is my parcel?'],
      ['assistant', 'I found nothing about that in the knowledge base.'],
    ]);
    expect(JSON.stringify(payload)).to.not.include('sealed');

    await eventually(async () => (await deliveries())[0]?.status === 'delivered', 10_000, 'the delivery listed as delivered');
    const [listed] = await deliveries('?status=delivered');
    expect(listed).to.deep.include({ id: triggerId, conversation_id: conversationId, status: 'delivered', attempts: 1, last_status_code: 200, last_error: null, url: `${receiver.url}/hooks/handoff` });
    const recorded = await server.platform.eventStore.readStream(`handoff-${triggerId}`);
    expect(recorded.map((event) => event.type)).to.deep.equal(['HandoffRequested', 'HandoffAttemptStarted', 'HandoffDelivered']);
    for (const event of recorded) {
      expect(event.metadata.tenant_id).to.equal(owner.tenant_id);
      expect(event.metadata.actor).to.deep.equal({ kind: 'system', id: HANDOFF_DELIVERY });
      expect(event.metadata.causation_id).to.equal(triggerId);
    }
  });

  it('posts nothing again when the trigger is delivered again', async () => {
    const { triggerId, conversationId } = await handOff('Can I change my address?');
    await eventually(async () => (await deliveries('?status=delivered')).some((delivery) => delivery.id === triggerId), 10_000, 'the second handoff delivered');
    const before = receiver.deliveries.length;
    const trigger = (await server.platform.eventStore.readStream(conversationStream(conversationId))).find((event) => event.id === triggerId) as RecordedOf<'ConversationStatusChanged'>;
    const saga = handoffDeliverySaga(
      { ...server.platform.commands, readStore: server.platform.readStore, secrets: server.platform.secrets, outbound: new GuardedOutboundHttp({ allowInsecureUrls: true, allowPrivateNetworks: true }) },
      { maxAttempts: MAX_ATTEMPTS, backoffMs: () => 1000, timeoutMs: 5000, outcomeTimeoutMs: 120_000, concurrency: 1 },
    );
    await saga.handle(trigger, { idempotencyKey: `${HANDOFF_DELIVERY}:${triggerId}`, attempt: 2, logger: silentLogger });
    expect(receiver.deliveries.length).to.equal(before);
    expect(await server.platform.eventStore.readStream(`handoff-${triggerId}`)).to.have.length(3);
  });

  it('retries a failing webhook with exponential back-off, the same delivery each time, and ends failed after the last attempt', async () => {
    receiver.answerWith(500, 503, 500);
    const first = receiver.deliveries.length;
    const { triggerId } = await handOff('Is anyone there?');
    await eventually(async () => (await deliveries('?status=retrying')).some((delivery) => delivery.id === triggerId), 10_000, 'the first failure recorded');
    const startedAt = clock.now().getTime();
    let [listed] = await deliveries('?status=retrying');
    expect(listed).to.deep.include({ id: triggerId, attempts: 1, last_status_code: 500, last_error: 'the webhook answered HTTP 500', next_attempt_at: new Date(startedAt + 1000).toISOString() });

    // Not due yet: the pass posts nothing.
    await server.platform.sagas.runDue();
    expect(receiver.deliveries.length).to.equal(first + 1);

    clock.advance(1000);
    await server.platform.sagas.runDue();
    await settled();
    expect(receiver.deliveries.length).to.equal(first + 2);
    [listed] = await deliveries('?status=retrying');
    expect(listed).to.deep.include({ id: triggerId, attempts: 2, last_status_code: 503, next_attempt_at: new Date(startedAt + 1000 + 2000).toISOString() });

    clock.advance(1999);
    await server.platform.sagas.runDue();
    expect(receiver.deliveries.length).to.equal(first + 2);
    clock.advance(1);
    await server.platform.sagas.runDue();
    await settled();
    expect(receiver.deliveries.length).to.equal(first + 3);

    const [failed] = await deliveries('?status=failed');
    expect(failed).to.deep.include({ id: triggerId, status: 'failed', attempts: MAX_ATTEMPTS, last_status_code: 500, last_error: 'the webhook answered HTTP 500', next_attempt_at: null, failed_at: clock.now().toISOString() });
    const attempts = receiver.deliveries.slice(first);
    expect(new Set(attempts.map((delivery) => delivery.headers[DELIVERY_ID_HEADER]))).to.deep.equal(new Set([triggerId]));
    expect(new Set(attempts.map((delivery) => delivery.body.toString('utf8'))).size).to.equal(1);
    const recorded = await server.platform.eventStore.readStream(`handoff-${triggerId}`);
    expect(recorded.map((event) => event.type)).to.deep.equal([
      'HandoffRequested',
      'HandoffAttemptStarted',
      'HandoffDeliveryFailed',
      'HandoffAttemptStarted',
      'HandoffDeliveryFailed',
      'HandoffAttemptStarted',
      'HandoffAbandoned',
    ]);

    // Given up: later passes post nothing more.
    clock.advance(3600_000);
    await server.platform.sagas.runDue();
    expect(receiver.deliveries.length).to.equal(first + 3);
  });

  it('gives a handoff up when its conversation is deleted before its next attempt: the transcript is not sent', async () => {
    receiver.answerWith(500);
    const first = receiver.deliveries.length;
    const { conversationId, triggerId } = await handOff('Please call me back');
    await eventually(async () => (await deliveries('?status=retrying')).some((delivery) => delivery.id === triggerId), 10_000, 'the failure recorded');
    const deleted = await server.request('DELETE', `/api/v1/conversations/${conversationId}`, { headers: as(owner) });
    expect(deleted.status, deleted.text).to.equal(204);
    clock.advance(1000);
    await server.platform.sagas.runDue();
    await settled();
    const failed = (await deliveries('?status=failed')).find((delivery) => delivery.id === triggerId);
    expect(failed).to.deep.include({ attempts: 1, last_error: 'the conversation is not there' });
    expect(receiver.deliveries.length).to.equal(first + 1);
  });

  it('gives a handoff up when handoffs are turned off before its next attempt, and requests none while they are off', async () => {
    receiver.answerWith(500);
    const first = receiver.deliveries.length;
    const { triggerId } = await handOff('Hello?');
    await eventually(async () => (await deliveries('?status=retrying')).some((delivery) => delivery.id === triggerId), 10_000, 'the failure recorded');
    const off = await server.request('POST', '/api/v1/tenant/handoff', { headers: as(owner), body: { url: `${receiver.url}/hooks/handoff`, enabled: false } });
    expect(off.json.enabled).to.equal(false);
    clock.advance(1000);
    await server.platform.sagas.runDue();
    await settled();
    const [failed] = await deliveries('?status=failed');
    expect(failed).to.deep.include({ id: triggerId, attempts: 1, last_error: 'handoffs are turned off for this organization' });
    expect(receiver.deliveries.length).to.equal(first + 1);

    const { triggerId: unsent } = await handOff('Still there?');
    const position = await server.platform.storedEvents.headPosition();
    await eventually(
      async () => ((await server.platform.readStore.getProjectionState(`saga:${SagaRunner.groupOf({ name: HANDOFF_DELIVERY, version: 1 })}`))?.checkpoint ?? 0) >= position,
      10_000,
      'the saga past the handoff',
    );
    expect(await server.platform.eventStore.readStream(`handoff-${unsent}`)).to.deep.equal([]);
    expect(receiver.deliveries.length).to.equal(first + 1);
  });

  it('emails the owner and admins when the webhook failed every attempt, at most once an hour; not for a withdrawn handoff; a person turns it off', async () => {
    /** The handoff-failure emails queued since `since`, once the saga has handled everything recorded. */
    const failureEmailsSince = async (since: number): Promise<Array<{ to: string; subject: string; text: string }>> => {
      const [last] = await server.platform.eventStore.readAll({ direction: 'backwards', maxCount: 1, filter: { kind: 'event_type', types: ['HandoffAbandoned'] } });
      await eventually(async () => ((await server.platform.readStore.getProjectionState(`saga:${HANDOFF_FAILURE_EMAILS}-v1`))?.checkpoint ?? 0) >= last.position, 10_000, 'the saga past the last handoff given up');
      const queued = await server.platform.eventStore.readAll({ fromPosition: since, filter: { kind: 'event_type', types: ['EmailQueued'] } });
      return queued.flatMap((event) => (event.type === 'EmailQueued' && event.data.kind === 'handoff_failure' ? [{ to: event.data.to, subject: event.data.subject, text: server.platform.secrets.open(event.data.body_sealed) }] : []));
    };
    // The tests above: one handoff failed every attempt (emailed), two were withdrawn (not).
    const exhausted = (await deliveries('?status=failed')).filter((delivery) => delivery.attempts === MAX_ATTEMPTS);
    expect(exhausted).to.have.length(1);
    const [told] = await failureEmailsSince(0);
    expect((await failureEmailsSince(0)).length).to.equal(1);
    expect(told.to).to.equal(owner.email);
    expect(told.subject).to.equal('[Org handoff-org] A conversation waits for a person: its handoff was not delivered');
    expect(told.text).to.contain(
      `A conversation of Org handoff-org was handed to a person, but the handoff webhook (${receiver.url}/hooks/handoff) did not take it: the platform gave up at 2026-11-22 10:00 UTC after ${MAX_ATTEMPTS} attempts; the last: the webhook answered HTTP 500.`,
    );
    expect(told.text).to.contain(`Nobody was told of it, and the conversation waits: GET /api/v1/conversations/${exhausted[0].conversation_id}.`);
    expect(told.text).to.contain('Turn them off for yourself: PATCH /api/v1/me/notifications {"handoff_failures": false}.');

    // An hour on, a handoff withdrawn (handoffs turned off before its next attempt): told nobody.
    const turnHandoffs = async (enabled: boolean): Promise<void> => {
      const turned = await server.request('POST', '/api/v1/tenant/handoff', { headers: as(owner), body: { url: `${receiver.url}/hooks/handoff`, enabled } });
      expect(turned.json.enabled, turned.text).to.equal(enabled);
    };
    clock.advance(3600_000);
    let since = await server.platform.storedEvents.headPosition();
    await turnHandoffs(true);
    receiver.answerWith(500);
    const { triggerId: withdrawn } = await handOff('Is there a person?');
    await eventually(async () => (await deliveries('?status=retrying')).some((delivery) => delivery.id === withdrawn), 10_000, 'the failure recorded');
    await turnHandoffs(false);
    clock.advance(1000);
    await server.platform.sagas.runDue();
    const [withdrawal] = (await server.platform.eventStore.readStream(`handoff-${withdrawn}`)).slice(-1);
    expect(withdrawal.data).to.deep.include({ reason: 'withdrawn' });
    expect(await failureEmailsSince(since)).to.deep.equal([]);

    // Another hour on, handoffs on again; an admin who turned these emails off is not told, the owner is.
    const admin = await joinAs(server, await registerOwner(server, 'handoff-adm'), owner.tenant_id, 'admin');
    const mine = await server.request('PATCH', '/api/v1/me/notifications', { headers: as(admin), body: { handoff_failures: false } });
    expect([mine.status, mine.json.handoff_failures, mine.json.orchestration_alerts], mine.text).to.deep.equal([200, false, true]);
    await turnHandoffs(true);
    clock.advance(3600_000);
    since = await server.platform.storedEvents.headPosition();
    receiver.answerWith(502, 502, 502, 502, 502, 502);
    const [{ triggerId: second }, { triggerId: third }] = [await handOff('Anyone?'), await handOff('Hello, anyone?')];
    for (let attempt = 1; attempt < MAX_ATTEMPTS; attempt += 1) {
      await eventually(async () => (await deliveries('?status=retrying')).filter((delivery) => [second, third].includes(delivery.id as string) && delivery.attempts === attempt).length === 2, 10_000, `attempt ${attempt} of both`);
      clock.advance(1000 * 2 ** (attempt - 1));
      await server.platform.sagas.runDue();
    }
    await settled();
    expect((await deliveries('?status=failed')).filter((delivery) => [second, third].includes(delivery.id as string)).map((delivery) => delivery.attempts)).to.deep.equal([MAX_ATTEMPTS, MAX_ATTEMPTS]);
    // Two given up in one hour: one email, to the owner alone, counting the others.
    const later = await failureEmailsSince(since);
    expect(later.map((email) => email.to)).to.deep.equal([owner.email]);
    expect(later[0].text).to.contain('the last: the webhook answered HTTP 502.');
    expect(later[0].text, later[0].text).to.match(/Org handoff-org has [45] other failed handoffs: GET \/api\/v1\/tenant\/handoff\/deliveries\?status=failed\./);
  });

  it('puts every handoff event in the organization’s audit log, the platform as actor', async () => {
    const seen = await expectEveryEventAudited(server);
    expect([...seen]).to.include.members(['HandoffRequested', 'HandoffAttemptStarted', 'HandoffDelivered', 'HandoffDeliveryFailed', 'HandoffAbandoned']);
  });
});
