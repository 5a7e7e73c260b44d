// GET /ws/chat (issue #15 point 2; docs/widget.md "WebSocket protocol (/ws/chat)") with a real
// `ws` client against the real server: refusals on upgrade as close codes (missing, unknown,
// rotated and other tenant's token, origin, suspended tenant), the protocol's own errors, a
// whole streamed turn answered from an uploaded document by the embedded extractive engine,
// resume after a reconnect, conversations only their visitor may continue, feedback, the
// message quota, verified identity, one turn at a time, backpressure on a client that does not
// read, heartbeats, the per-visitor limits and the shutdown. Turns that must hold or stream
// long answers are answered by the OpenAI-compatible engine from a local server streaming
// scripted completions in the real wire format (tests/support/openai-compatible-server.ts).

import { expect } from 'chai';
import WebSocket from 'ws';
import { handleCommand } from '../../application/command-handling/handle-command';
import { setQuotaOverrides } from '../../application/quota-override/quota-overrides';
import { systemContext } from '../../application/shared/request-context';
import { suspendTenant, unsuspendTenant } from '../../application/tenant/tenant-commands';
import { identitySignature, verifiedPartyId } from '../../application/widget/widget-access';
import { conversationStream } from '../../domain/conversation/conversation';
import { type WidgetSettings, widgetConfigDecider, widgetConfigEvents, widgetConfigStream } from '../../domain/widget-config/widget-config';
import { userContext } from '../support/context';
import { type Account, gql, registerOwner, widgetTokenOf } from '../support/identity';
import { OpenAiCompatibleServer } from '../support/openai-compatible-server';
import { type TestServer, startTestServer } from '../support/server';
import { eventually } from '../support/stores';
import { type Frame, WidgetSocket, newVisitorId } from '../support/widget-socket';

const widgetConfigAggregate = { decider: widgetConfigDecider, events: widgetConfigEvents };

async function configureWidget(server: TestServer, tenantId: string, changes: Partial<WidgetSettings>): Promise<void> {
  const result = await handleCommand(server.platform.commands, widgetConfigAggregate, widgetConfigStream(tenantId), { type: 'ConfigureWidget', data: { tenant_id: tenantId, changes } }, userContext({ tenant_id: tenantId }));
  await server.platform.readYourWrites(result.position);
}

/** The identity secret, rotated as the admin route does: sealed into its event. */
async function rotateIdentitySecret(server: TestServer, tenantId: string, secret: string): Promise<void> {
  const result = await handleCommand(
    server.platform.commands,
    widgetConfigAggregate,
    widgetConfigStream(tenantId),
    { type: 'RotateWidgetIdentitySecret', data: { tenant_id: tenantId, secret_sealed: server.platform.secrets.seal(secret) } },
    userContext({ tenant_id: tenantId }),
  );
  await server.platform.readYourWrites(result.position);
}

async function eventTypes(server: TestServer, conversationId: string): Promise<string[]> {
  return (await server.platform.eventStore.readStream(conversationStream(conversationId))).map((event) => event.type);
}

/** A metric's value in the Prometheus exposition (0 when absent). */
async function metric(server: TestServer, name: string, labels = ''): Promise<number> {
  const { body } = await server.platform.metrics.render();
  const line = body.split('\n').find((candidate) => candidate.startsWith(`${name}${labels} `));
  return line ? Number(line.split(' ')[1]) : 0;
}

/** Expects the socket to be refused: an `error` frame with the code, then the close code with that reason. */
async function expectRefused(socket: WidgetSocket, closeCode: number, code: string): Promise<void> {
  const closed = await socket.closed;
  expect(closed, JSON.stringify(socket.frames)).to.deep.equal({ code: closeCode, reason: code });
  expect(socket.frames.map((frame: Frame) => [frame.type, frame.code])).to.deep.equal([['error', code]]);
}

describe('/ws/chat (the widget over WebSocket)', function () {
  this.timeout(60_000);
  let server: TestServer;
  let owner: Account;
  let token: string;
  let other: Account;
  let otherToken: string;
  let documentId: string;
  const as = (account: Account) => ({ authorization: `Bearer ${account.token}` });
  const open = (widgetToken: string | null = token, options = {}) => WidgetSocket.open(server.url, widgetToken, options);

  before(async () => {
    server = await startTestServer({ SCRYPT_LOG_N: '12' }, { sagaRetryPollMs: 20 });
    owner = await registerOwner(server, 'ws-chat-org');
    token = await widgetTokenOf(server, owner);
    other = await registerOwner(server, 'ws-chat-other');
    otherToken = await widgetTokenOf(server, other);
    const workspaceId = (await server.request('GET', '/api/v1/org/workspaces', { headers: as(owner) })).json.items.find((workspace: Frame) => workspace.is_default).id;
    const added = await server.request('POST', '/api/v1/documents/text', {
      headers: as(owner),
      body: { workspace_id: workspaceId, title: 'Returns', text: 'Returns\n\nCustomers may return any product within 30 days for a full refund. Refunds reach the card within five working days.\n' },
    });
    expect(added.status, added.text).to.equal(201);
    documentId = added.json.id;
    await eventually(async () => (await server.request('GET', `/api/v1/documents/${documentId}`, { headers: as(owner) })).json.status === 'ready', 20_000, 'the document indexed');
  });
  after(() => server.close());

  describe('refusals on upgrade (accepted, then closed with a code the browser can read)', () => {
    it('closes 4401 invalid_widget_token for a missing or unknown token; any other path is 404', async () => {
      await expectRefused(await open(null), 4401, 'invalid_widget_token');
      await expectRefused(await open('wt_not-a-token'), 4401, 'invalid_widget_token');
      const elsewhere = await new Promise<string>((resolve) => {
        const ws = new WebSocket(`${server.url.replace(/^http/, 'ws')}/ws/other?token=${token}`);
        ws.on('unexpected-response', (_request, response) => resolve(String(response.statusCode)));
        ws.on('error', (error) => resolve(error.message));
      });
      expect(elsewhere).to.equal('404');
    });

    it('closes 4401 for a rotated token: at once on upgrade, and an open socket on its next message, recording nothing', async () => {
      const rotating = await registerOwner(server, 'ws-chat-rotating');
      const oldToken = await widgetTokenOf(server, rotating);
      const opened = await open(oldToken);
      expect((await opened.resume(newVisitorId())).conversation_id).to.equal(null);
      const rotated = await gql(server, 'mutation { rotate_widget_token { widget_token } }', {}, rotating.token);
      const newToken = rotated.json.data.rotate_widget_token.widget_token;
      await expectRefused(await open(oldToken), 4401, 'invalid_widget_token');

      const headBefore = await server.platform.storedEvents.headPosition();
      opened.send({ type: 'message', text: 'Can I still ask?' });
      expect(await opened.closed).to.deep.equal({ code: 4401, reason: 'invalid_widget_token' });
      expect(opened.frames.at(-1)).to.include({ type: 'error', code: 'invalid_widget_token' });
      const written = await server.platform.storedEvents.readAll({ fromPosition: headBefore + 1 });
      expect(written.filter((event) => event.type === 'UserMessagePosted' || event.type === 'ConversationStarted')).to.deep.equal([]);

      const fresh = await open(newToken);
      expect((await fresh.resume(newVisitorId())).type).to.equal('ready');
      await fresh.close();
    });

    it("closes 4403 for an origin the tenant does not allow; allows its origins, the platform's own and no Origin at all", async () => {
      const shop = await registerOwner(server, 'ws-chat-origins');
      const shopToken = await widgetTokenOf(server, shop);
      await configureWidget(server, shop.tenant_id, { allowed_origins: ['https://shop.example'] });
      await expectRefused(await open(shopToken, { origin: 'https://evil.example' }), 4403, 'origin_not_allowed');
      for (const origin of ['https://shop.example', server.url, undefined]) {
        const socket = await open(shopToken, origin === undefined ? {} : { origin });
        expect((await socket.resume(newVisitorId())).type, String(origin)).to.equal('ready');
        await socket.close();
      }
      // Removed later: the open socket's next message is refused too.
      const socket = await open(shopToken, { origin: 'https://shop.example' });
      await socket.resume(newVisitorId());
      await configureWidget(server, shop.tenant_id, { allowed_origins: [] });
      socket.send({ type: 'message', text: 'Hello?' });
      expect(await socket.closed).to.deep.equal({ code: 4403, reason: 'origin_not_allowed' });
    });

    it('closes 4403 tenant_suspended for a suspended tenant, on upgrade and on the next message of an open socket', async () => {
      const suspended = await registerOwner(server, 'ws-chat-suspended');
      const suspendedToken = await widgetTokenOf(server, suspended);
      const opened = await open(suspendedToken);
      await opened.resume(newVisitorId());
      const context = userContext({ actor: { kind: 'system', id: 'cli' }, tenant_id: suspended.tenant_id });
      await server.platform.readYourWrites((await suspendTenant(server.platform.commands, suspended.tenant_id, 'unpaid invoices', context)).position);
      await expectRefused(await open(suspendedToken), 4403, 'tenant_suspended');
      opened.send({ type: 'message', text: 'Anyone there?' });
      expect(await opened.closed).to.deep.equal({ code: 4403, reason: 'tenant_suspended' });
      await server.platform.readYourWrites((await unsuspendTenant(server.platform.commands, suspended.tenant_id, context)).position);
      const back = await open(suspendedToken);
      expect((await back.resume(newVisitorId())).type).to.equal('ready');
      await back.close();
    });
  });

  describe('the protocol', () => {
    it('closes 4400 when the first frame is not resume, and for frames that are not JSON, of an unknown type or with a bad field (the reason names it)', async () => {
      const cases: Array<[unknown, string, string, string]> = [
        [{ type: 'message', text: 'Hi' }, 'type: the first frame must be resume', 'invalid_frame', 'type'],
        ['{not json', 'frame: expected JSON', 'invalid_frame', 'frame'],
        [{ type: 'shout' }, 'type: expected one of resume, message, typing, feedback, ping', 'invalid_frame', 'type'],
        [{ type: 'resume' }, 'visitor_id: expected string', 'invalid_frame', 'visitor_id'],
        [{ type: 'resume', visitor_id: 'short' }, 'visitor_id: expected 22 to 64 characters of A-Z a-z 0-9 _ - (the widget makes one at random)', 'invalid_visitor', 'visitor_id'],
      ];
      for (const [frame, message, code, field] of cases) {
        const socket = await open();
        socket.send(frame);
        const closed = await socket.closed;
        expect(closed.code, message).to.equal(4400);
        // A close reason holds 123 bytes: the message, cut.
        expect(message.startsWith(closed.reason) && closed.reason.startsWith(`${field}: `), `${closed.reason} / ${message}`).to.equal(true);
        expect(socket.frames[0], message).to.deep.equal({ type: 'error', code, message, field });
      }
      const afterResume: Array<[unknown, string]> = [
        [{ type: 'message', text: 42 }, 'text: expected string'],
        [{ type: 'message', text: 'Hi', client_message_id: '' }, 'client_message_id: expected ClientMessageId'],
        [{ type: 'typing', typing: 'yes' }, 'typing: expected boolean'],
        [{ type: 'feedback', message_id: 'm', rating: 'meh' }, 'rating: expected "up" | "down"'],
      ];
      for (const [frame, reason] of afterResume) {
        const socket = await open();
        await socket.resume(newVisitorId());
        socket.send(frame);
        expect(await socket.closed, reason).to.deep.equal({ code: 4400, reason });
      }
      const binary = await open();
      await binary.resume(newVisitorId());
      binary.ws.send(Buffer.from([1, 2, 3]));
      expect(await binary.closed).to.deep.equal({ code: 4400, reason: 'frame: expected a JSON text frame, not binary' });
    });

    it('closes 1009 for a frame over 64 KiB', async () => {
      const socket = await open();
      await socket.resume(newVisitorId());
      socket.send({ type: 'message', text: 'x'.repeat(70 * 1024) });
      expect((await socket.closed).code).to.equal(1009);
    });

    it('answers ping with pong, and takes typing without an answer', async () => {
      const socket = await open();
      await socket.resume(newVisitorId());
      socket.send({ type: 'typing', typing: true });
      socket.send({ type: 'ping' });
      await socket.next('pong');
      expect(socket.frames.map((frame: Frame) => frame.type)).to.deep.equal(['ready', 'pong']);
      await socket.close();
    });
  });

  describe('turns', () => {
    const visitor = newVisitorId();
    let conversationId: string;
    let answerId: string;

    it('streams a turn: the stored message, the answer in deltas with its citation of the uploaded document, the stored answer, done', async () => {
      const socket = await open();
      expect(await socket.resume(visitor)).to.deep.equal({ type: 'ready', conversation_id: null, messages: [] });
      const frames = await socket.ask('Within how many days can I return a product for a refund?', { client_message_id: 'c-1' });
      const types = frames.map((frame: Frame) => frame.type);
      expect(types[0]).to.equal('message');
      expect(types.slice(-2)).to.deep.equal(['message', 'done']);
      expect(types.slice(1, -2).every((type: string) => type === 'delta' || type === 'citation')).to.equal(true);
      const [user, ...rest] = frames;
      expect(user.client_message_id).to.equal('c-1');
      expect(user.message).to.deep.include({ role: 'user', text: 'Within how many days can I return a product for a refund?', citations: [], failed: false });
      const done = rest.at(-1);
      const stored = rest.at(-2).message;
      conversationId = done.conversation_id;
      answerId = done.message_id;
      expect(done).to.deep.equal({ type: 'done', conversation_id: conversationId, user_message_id: user.message.id, message_id: answerId, paused: false });
      const deltas = rest.filter((frame: Frame) => frame.type === 'delta');
      expect(deltas.every((frame: Frame) => frame.message_id === answerId)).to.equal(true);
      expect(deltas.map((frame: Frame) => frame.text).join('')).to.equal(stored.text).and.to.contain('within 30 days for a full refund');
      const citations = rest.filter((frame: Frame) => frame.type === 'citation');
      expect(citations.map((frame: Frame) => [frame.message_id, frame.citation.document_id, frame.citation.title])).to.deep.equal([[answerId, documentId, 'Returns']]);
      expect(stored).to.deep.include({ id: answerId, role: 'assistant', failed: false, feedback_rating: null });
      expect(stored.citations).to.deep.equal(citations.map((frame: Frame) => frame.citation));

      const events = await server.platform.eventStore.readStream(conversationStream(conversationId));
      expect(events.map((event) => event.type)).to.deep.equal(['ConversationStarted', 'UserMessagePosted', 'AssistantAnswered']);
      const started = events[0];
      expect(started.type === 'ConversationStarted' && started.data).to.deep.include({ channel: 'widget', tenant_id: owner.tenant_id });
      expect(started.metadata.actor.kind).to.equal('end_user');
      expect(started.metadata.actor.id).to.match(/^visitor:[0-9a-f]{32}$/);
      const posted = events[1];
      expect(posted.type === 'UserMessagePosted' && posted.data.posted_at).to.equal(user.message.created_at);
      await socket.close();
    });

    it('resumes after a reconnect: ready with the last messages, and the next message continues the same conversation', async () => {
      const socket = await open();
      const ready = await socket.resume(visitor, { conversation_id: conversationId });
      expect(ready.conversation_id).to.equal(conversationId);
      expect(ready.messages.map((message: Frame) => [message.role, message.id === answerId])).to.deep.equal([
        ['user', false],
        ['assistant', true],
      ]);
      const listed = await server.request('GET', `/api/v1/conversations/${conversationId}/messages`, { headers: as(owner) });
      expect(ready.messages.map((message: Frame) => [message.id, message.text, message.created_at])).to.deep.equal(listed.json.items.map((item: Frame) => [item.id, item.text, item.created_at]));
      const frames = await socket.ask('How long until the refund reaches my card?');
      expect(frames.at(-1)).to.include({ type: 'done', conversation_id: conversationId });
      expect(await eventTypes(server, conversationId)).to.deep.equal(['ConversationStarted', 'UserMessagePosted', 'AssistantAnswered', 'UserMessagePosted', 'AssistantAnswered']);
      await socket.close();
    });

    it("lets no other visitor, nor the same visitor id through another tenant's token, resume the conversation", async () => {
      for (const [widgetToken, visitorId] of [
        [token, newVisitorId()],
        [otherToken, visitor],
      ]) {
        const socket = await open(widgetToken);
        const ready = await socket.resume(visitorId, { conversation_id: conversationId });
        expect(ready).to.deep.equal({ type: 'ready', conversation_id: null, messages: [] });
        expect(socket.frames[0]).to.deep.include({ type: 'error', code: 'conversation_not_found', conversation_id: conversationId });
        // Their message starts a conversation of their own.
        const frames = await socket.ask('Hello?');
        expect(frames.at(-1).conversation_id).to.be.a('string').and.not.equal(conversationId);
        await socket.close();
      }
      expect(await eventTypes(server, conversationId)).to.have.length(5);
    });

    it('takes feedback on an answer of the visitor\'s own conversation (ack), once; refuses it on anything else', async () => {
      const socket = await open();
      await socket.resume(visitor, { conversation_id: conversationId });
      socket.send({ type: 'feedback', message_id: answerId, rating: 'up', comment: 'clear' });
      expect(await socket.next('ack')).to.deep.equal({ type: 'ack', of: 'feedback', message_id: answerId });
      const events = await server.platform.eventStore.readStream(conversationStream(conversationId));
      const given = events.at(-1)!;
      expect(given.type).to.equal('FeedbackGiven');
      expect(given.type === 'FeedbackGiven' && given.data).to.deep.include({ message_id: answerId, rating: 'up', comment: 'clear', given_by: given.metadata.actor });
      socket.send({ type: 'feedback', message_id: answerId, rating: 'down' });
      expect(await socket.next('error')).to.deep.include({ code: 'feedback_given', message_id: answerId });
      socket.send({ type: 'feedback', message_id: 'no-such-message', rating: 'down' });
      expect(await socket.next('error')).to.deep.include({ code: 'message_not_found', message_id: 'no-such-message' });
      await socket.close();

      const stranger = await open();
      await stranger.resume(newVisitorId());
      stranger.send({ type: 'feedback', message_id: answerId, rating: 'down' });
      expect(await stranger.next('error')).to.deep.include({ code: 'message_not_found' });
      await stranger.close();
      expect((await eventTypes(server, conversationId)).filter((type) => type === 'FeedbackGiven')).to.have.length(1);

      // An admin turned feedback off in the widget's settings.
      await configureWidget(server, owner.tenant_id, { feedback: false });
      const later = await open();
      await later.resume(visitor, { conversation_id: conversationId });
      later.send({ type: 'feedback', message_id: answerId, rating: 'down' });
      expect(await later.next('error')).to.deep.include({ code: 'widget_feature_disabled', message_id: answerId });
      await later.close();
      await configureWidget(server, owner.tenant_id, { feedback: true });
    });

    it('answers a message over the quota with quota_exceeded and its numbers, recording nothing; the socket stays open', async () => {
      const limited = await registerOwner(server, 'ws-chat-quota');
      await setQuotaOverrides(server.platform.identity, 'test-admin', limited.tenant_id, { overrides: { messages_per_month: 1 }, reason: 'test' }, systemContext('test'));
      const socket = await open(await widgetTokenOf(server, limited));
      await socket.resume(newVisitorId());
      const first = await socket.ask('One?');
      const conversation = first.at(-1).conversation_id;
      socket.send({ type: 'message', text: 'Two?', client_message_id: 'second' });
      const refused = await socket.next('error');
      const now = new Date();
      expect(refused).to.deep.equal({
        type: 'error',
        code: 'quota_exceeded',
        message: refused.message,
        quota: 'messages_per_month',
        limit: 1,
        used: 1,
        resets_at: new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1)).toISOString(),
        client_message_id: 'second',
      });
      socket.send({ type: 'ping' });
      await socket.next('pong');
      expect(socket.closedWith).to.equal(null);
      expect(await eventTypes(server, conversation)).to.deep.equal(['ConversationStarted', 'UserMessagePosted', 'AssistantAnswered']);
      await socket.close();
    });

    it('answers a message the chat refuses (empty text) with an error naming the field; the socket stays open', async () => {
      const socket = await open();
      await socket.resume(newVisitorId());
      socket.send({ type: 'message', text: '   ' });
      expect(await socket.next('error')).to.deep.include({ code: 'invalid_message', field: 'text' });
      expect((await socket.ask('And now?')).at(-1).type).to.equal('done');
      await socket.close();
    });
  });

  describe('verified identity', () => {
    let verifiedToken: string;
    let verified: Account;
    const secret = 'whsec-identity-0123456789abcdef';

    before(async () => {
      verified = await registerOwner(server, 'ws-chat-verified');
      verifiedToken = await widgetTokenOf(server, verified);
      await rotateIdentitySecret(server, verified.tenant_id, secret);
      await configureWidget(server, verified.tenant_id, { identity_verification: 'required' });
    });

    it('closes 4401 without a signed identity or with a wrong signature', async () => {
      const missing = await open(verifiedToken);
      missing.send({ type: 'resume', visitor_id: newVisitorId() });
      expect(await missing.closed).to.deep.equal({ code: 4401, reason: 'identity_required' });
      const wrong = await open(verifiedToken);
      wrong.send({ type: 'resume', visitor_id: newVisitorId(), identity: { user_id: 'customer-42', user_hash: identitySignature('another secret', 'customer-42') } });
      expect(await wrong.closed).to.deep.equal({ code: 4401, reason: 'invalid_identity' });
      expect(wrong.frames[0]).to.deep.include({ type: 'error', code: 'invalid_identity' });
    });

    it('chats as the signed user, who continues the conversation from another device', async () => {
      const identity = { user_id: 'customer-42', user_hash: identitySignature(secret, 'customer-42'), token: 'end-user-jwt', session: 'session-7' };
      const phone = await open(verifiedToken);
      await phone.resume(newVisitorId(), { identity });
      const done = (await phone.ask('Hello from my phone')).at(-1);
      await phone.close();
      const events = await server.platform.eventStore.readStream(conversationStream(done.conversation_id));
      const started = events[0];
      expect(started.type === 'ConversationStarted' && started.data.started_by).to.deep.equal({ kind: 'end_user', id: verifiedPartyId(server.platform.secrets, verified.tenant_id, 'customer-42') });
      expect(started.type === 'ConversationStarted' && started.data.verified_user_id).to.equal('customer-42');
      const posted = events[1];
      // identify()'s token and session reach the turn, sealed.
      expect(posted.type === 'UserMessagePosted' && server.platform.secrets.open(posted.data.end_user_token_sealed!)).to.equal('end-user-jwt');
      expect(posted.type === 'UserMessagePosted' && server.platform.secrets.open(posted.data.end_user_session_sealed!)).to.equal('session-7');

      const laptop = await open(verifiedToken);
      const ready = await laptop.resume(newVisitorId(), { conversation_id: done.conversation_id, identity });
      expect(ready.conversation_id).to.equal(done.conversation_id);
      expect(ready.messages).to.have.length(2);
      await laptop.close();
    });
  });
});

describe('/ws/chat: one turn at a time, backpressure, heartbeats, limits and shutdown', function () {
  this.timeout(60_000);
  let llm: OpenAiCompatibleServer;
  let server: TestServer;
  let limits: TestServer;
  let slow: TestServer;
  let token: string;
  let limitsToken: string;
  let slowToken: string;
  const unhandled: unknown[] = [];
  const onUnhandled = (reason: unknown): void => void unhandled.push(reason);

  before(async () => {
    process.on('unhandledRejection', onUnhandled);
    llm = await OpenAiCompatibleServer.start();
    const model = { SCRYPT_LOG_N: '12', LLM_BASE_URL: llm.baseUrl, LLM_MODEL: 'scripted-model' };
    server = await startTestServer(model);
    token = await widgetTokenOf(server, await registerOwner(server, 'ws-chat-llm'));
    // Small limits, to reach them: the resume deadline, the heartbeat, the per-visitor counts.
    // (A heartbeat of 400 ms leaves a busy machine's event loop room for a pong between two pings.)
    limits = await startTestServer({ ...model, WIDGET_WS_RESUME_TIMEOUT_MS: '1000', WIDGET_WS_HEARTBEAT_MS: '400', WIDGET_WS_MAX_CONNECTIONS_PER_VISITOR: '2', WIDGET_WS_MESSAGES_PER_MINUTE: '2' });
    limitsToken = await widgetTokenOf(limits, await registerOwner(limits, 'ws-chat-limits'));
    // A short slow-client close on a server of its own: with a short heartbeat too, a client that
    // does not read would miss its pongs and be terminated first.
    slow = await startTestServer({ ...model, WIDGET_WS_SLOW_CLIENT_MS: '300' });
    slowToken = await widgetTokenOf(slow, await registerOwner(slow, 'ws-chat-slow'));
  });
  after(async () => {
    await server?.close();
    await limits?.close();
    await slow?.close();
    await llm?.close();
    process.off('unhandledRejection', onUnhandled);
    expect(unhandled).to.deep.equal([]);
  });

  it('answers turn_in_progress to a second message while the first is answered, then takes the next', async () => {
    let release!: () => void;
    llm.script({ deltas: ['Let me ', 'check.'], hold: { index: 1, until: new Promise<void>((resolve) => (release = resolve)) } }, { deltas: ['Second answer.'] });
    const socket = await WidgetSocket.open(server.url, token);
    await socket.resume(newVisitorId());
    socket.send({ type: 'message', text: 'First?' });
    await socket.next('delta');
    socket.send({ type: 'message', text: 'Second?', client_message_id: 'two' });
    expect(await socket.next('error')).to.deep.include({ code: 'turn_in_progress', client_message_id: 'two' });
    release();
    const done = await socket.next('done');
    expect(socket.frames.filter((frame: Frame) => frame.type === 'delta').map((frame: Frame) => frame.text).join('')).to.equal('Let me check.');
    expect((await socket.ask('Second?')).at(-1)).to.include({ conversation_id: done.conversation_id });
    // The refused message was never recorded.
    expect(await eventTypes(server, done.conversation_id)).to.deep.equal(['ConversationStarted', 'UserMessagePosted', 'AssistantAnswered', 'UserMessagePosted', 'AssistantAnswered']);
    await socket.close();
  });

  it('stops pulling the answer for a client that does not read: the buffer stays under the high-water mark; all of it arrives once the client reads; leaving aborts the turn (client_gone)', async () => {
    const piece = 'x'.repeat(16 * 1024);
    const pieces = 1500; // 24 MiB: far more than the kernel's socket buffers hold
    llm.script({ deltas: Array.from({ length: pieces }, () => piece) });
    const socket = await WidgetSocket.open(server.url, token);
    await socket.resume(newVisitorId());
    const deltasBefore = await metric(server, 'widget_ws_messages_total', '{direction="out",type="delta"}');
    socket.send({ type: 'message', text: 'Tell me everything' });
    const user = await socket.next('message');
    // The client stops reading its socket.
    socket.ws.pause();
    await eventually(async () => (await metric(server, 'widget_ws_backpressure_waiting')) === 1, 20_000, 'the turn waiting for the client');
    const sent = (await metric(server, 'widget_ws_messages_total', '{direction="out",type="delta"}')) - deltasBefore;
    expect(sent, 'deltas sent while the client does not read').to.be.greaterThan(0).and.lessThan(pieces);
    expect(await metric(server, 'widget_ws_max_buffered_bytes'), "the server's buffer").to.be.at.most(256 * 1024 + piece.length + 200);
    expect(await metric(server, 'widget_ws_backpressure_total')).to.be.at.least(1);

    // Reading again, it gets every piece in order; then it leaves in the middle of the answer.
    socket.ws.resume();
    await socket.until(() => socket.frames.filter((frame: Frame) => frame.type === 'delta').length >= sent);
    expect(socket.frames.slice(2, 2 + sent).every((frame: Frame) => frame.type === 'delta' && frame.text === piece)).to.equal(true);
    socket.ws.terminate();
    await eventually(async () => (await eventTypes(server, user.conversation_id)).includes('AssistantFailed'), 20_000, 'the failure recorded');
    const events = await server.platform.eventStore.readStream(conversationStream(user.conversation_id));
    const failed = events.at(-1)!;
    expect(failed.type === 'AssistantFailed' && failed.data.code).to.equal('client_gone');
  });

  it('closes 1013 a client that stays over the high-water mark past WIDGET_WS_SLOW_CLIENT_MS; it reads the code once it reads again', async () => {
    const piece = 'y'.repeat(16 * 1024);
    llm.script({ deltas: Array.from({ length: 1500 }, () => piece) });
    const socket = await WidgetSocket.open(slow.url, slowToken);
    await socket.resume(newVisitorId());
    const closesBefore = await metric(slow, 'widget_ws_closes_total', '{code="1013"}');
    socket.send({ type: 'message', text: 'Tell me everything' });
    const user = await socket.next('message');
    socket.ws.pause();
    await eventually(async () => (await metric(slow, 'widget_ws_closes_total', '{code="1013"}')) > closesBefore, 20_000, 'the slow client closed');
    socket.ws.resume();
    expect((await socket.closed).code).to.equal(1013);
    expect(socket.frames.at(-1)).to.include({ type: 'error', code: 'too_slow' });
    await eventually(async () => (await eventTypes(slow, user.conversation_id)).includes('AssistantFailed'), 20_000, 'the failure recorded');
  });

  it('closes 4408 a socket that sends no resume in time', async () => {
    const socket = await WidgetSocket.open(limits.url, limitsToken);
    expect(await socket.closed).to.deep.equal({ code: 4408, reason: 'resume_timeout' });
    expect(socket.frames[0]).to.include({ type: 'error', code: 'resume_timeout' });
  });

  it('pings every WIDGET_WS_HEARTBEAT_MS: a client that answers stays, one that does not is terminated', async () => {
    const terminatedBefore = await metric(limits, 'widget_ws_closes_total', '{code="1006"}');
    const answering = await WidgetSocket.open(limits.url, limitsToken);
    await answering.resume(newVisitorId());
    const silent = await WidgetSocket.open(limits.url, limitsToken, { autoPong: false });
    await silent.resume(newVisitorId());
    await answering.until(() => answering.pings >= 3);
    const closed = await silent.closed;
    expect(closed.code).to.equal(1006);
    expect(silent.pings).to.be.at.least(1);
    expect(answering.closedWith).to.equal(null);
    expect(await metric(limits, 'widget_ws_closes_total', '{code="1006"}')).to.be.greaterThan(terminatedBefore);
    await answering.close();
  });

  it('closes 4429 a visitor past WIDGET_WS_MAX_CONNECTIONS_PER_VISITOR sockets, and past WIDGET_WS_MESSAGES_PER_MINUTE messages', async () => {
    const visitor = newVisitorId();
    const [first, second, third] = [await WidgetSocket.open(limits.url, limitsToken), await WidgetSocket.open(limits.url, limitsToken), await WidgetSocket.open(limits.url, limitsToken)];
    await first.resume(visitor);
    await second.resume(visitor);
    third.send({ type: 'resume', visitor_id: visitor });
    expect(await third.closed).to.deep.equal({ code: 4429, reason: 'too_many_connections' });
    await second.close();
    const again = await WidgetSocket.open(limits.url, limitsToken);
    expect((await again.resume(visitor)).type).to.equal('ready');

    llm.script({ deltas: ['One.'] }, { deltas: ['Two.'] });
    await first.ask('One?');
    // The limit is the visitor's, whichever socket sends.
    await again.ask('Two?');
    first.send({ type: 'message', text: 'Three?' });
    expect(await first.closed).to.deep.equal({ code: 4429, reason: 'too_many_messages' });
    expect(first.frames.at(-1)).to.include({ type: 'error', code: 'rate_limited' });
    await again.close();
  });

  it('shuts down gracefully: the running turn finishes, then every socket is closed 1001; new sockets are closed 1001', async () => {
    let release!: () => void;
    llm.script({ deltas: ['Almost ', 'done.'], hold: { index: 1, until: new Promise<void>((resolve) => (release = resolve)) } });
    const idle = await WidgetSocket.open(limits.url, limitsToken);
    await idle.resume(newVisitorId());
    const busy = await WidgetSocket.open(limits.url, limitsToken);
    await busy.resume(newVisitorId());
    busy.send({ type: 'message', text: 'Still there?' });
    await busy.next('delta');
    const stopped = limits.platform.closeWidgetSockets(20_000);
    await expectRefused(await WidgetSocket.open(limits.url, limitsToken), 1001, 'server_shutting_down');
    release();
    await stopped;
    expect(await busy.closed).to.deep.equal({ code: 1001, reason: 'server_shutting_down' });
    // The answer was finished and stored before the socket was closed.
    expect(busy.frames.map((frame: Frame) => frame.type).slice(-3)).to.deep.equal(['message', 'done', 'error']);
    expect(busy.frames.at(-1)).to.include({ type: 'error', code: 'server_shutting_down' });
    expect(await eventTypes(limits, busy.frames.at(-2).conversation_id)).to.deep.equal(['ConversationStarted', 'UserMessagePosted', 'AssistantAnswered']);
    expect(await idle.closed).to.deep.equal({ code: 1001, reason: 'server_shutting_down' });
  });
});
