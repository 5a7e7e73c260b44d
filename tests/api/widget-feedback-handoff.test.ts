// A widget visitor's feedback and handoff over HTTP against the real server:
// `POST /api/v1/widget/messages/{id}/feedback` (the conversation's GiveFeedback, the visitor
// as giver) and `POST /api/v1/widget/conversations/{id}/handoff` (the conversation handed off,
// which the handoff delivery saga posts to the tenant's webhook, a local receiver here, signed
// as for a member's handoff). Only the visitor's own widget conversations: anything else 404.

import { expect } from 'chai';
import { verifySignature } from '../../adapters/connector-sdk/signing';
import { expectEveryEventAudited } from '../support/audit';
import { type Account, registerOwner } from '../support/identity';
import { type TestServer, startTestServer } from '../support/server';
import { eventually } from '../support/stores';
import { subscribeTo } from '../support/subscriptions';
import { type WebhookReceiver, startWebhookReceiver } from '../support/webhook-receiver';
import { type TenantWidget, asVisitor, configureWidget, newVisitorId, rotateWidgetToken, visitorAsks, visitorPartyOf, widgetOf } from '../support/widget-visitors';

describe('widget feedback and handoff (POST /api/v1/widget/messages/{id}/feedback, /conversations/{id}/handoff)', () => {
  let server: TestServer;
  let receiver: WebhookReceiver;
  let owner: Account;
  let widget: TenantWidget;
  const as = (account: Account) => ({ authorization: `Bearer ${account.token}` });
  const rate = (token: string, visitorId: string, messageId: string, body: unknown, extra: Record<string, string> = {}) =>
    server.request('POST', `/api/v1/widget/messages/${messageId}/feedback`, { headers: asVisitor(token, visitorId, extra), body });
  const handOff = (token: string, visitorId: string, conversationId: string, body: unknown = {}, extra: Record<string, string> = {}) =>
    server.request('POST', `/api/v1/widget/conversations/${conversationId}/handoff`, { headers: asVisitor(token, visitorId, extra), body });

  /** A visitor with a conversation answered by the assistant: the visitor id, the conversation, its question and its answer. */
  async function answeredVisitor(question = 'Where is my parcel?'): Promise<{ visitorId: string; conversationId: string; questionId: string; answerId: string }> {
    const visitorId = newVisitorId();
    const turn = await visitorAsks(server, widget, visitorId, question);
    return { visitorId, conversationId: turn.conversation_id, questionId: turn.user_message_id, answerId: turn.answer!.message_id };
  }

  before(async () => {
    server = await startTestServer({ SCRYPT_LOG_N: '12', OUTBOUND_ALLOW_INSECURE: 'true', OUTBOUND_ALLOW_PRIVATE_NETWORKS: 'true' });
    receiver = await startWebhookReceiver();
    owner = await registerOwner(server, 'visitor-feedback-org');
    widget = await widgetOf(server, owner);
  });
  after(async () => {
    await receiver.close();
    await server.close();
  });

  describe('feedback', () => {
    it('rates an answer of the visitor’s own conversation (201), the visitor as giver and actor, listed with the organization’s feedback', async () => {
      const { visitorId, conversationId, answerId } = await answeredVisitor();
      const response = await rate(widget.token, visitorId, answerId, { rating: 'down', comment: ' Not what I asked ' });
      expect(response.status, response.text).to.equal(201);
      const party = visitorPartyOf(server, visitorId);
      expect(response.json).to.deep.include({ conversation_id: conversationId, message_id: answerId, rating: 'down', comment: 'Not what I asked', given_by: party });
      expect(await response.events()).to.deep.equal(['FeedbackGiven@conversation']);
      const [given] = await server.platform.eventStore.readStream(`conversation-${conversationId}`, { direction: 'backwards', maxCount: 1 });
      expect(given!.metadata).to.deep.include({ tenant_id: owner.tenant_id, actor: party });
      const listed = await server.request('GET', '/api/v1/tenant/feedbacks', { headers: as(owner) });
      expect(listed.json.items[0]).to.deep.include({ message_id: answerId, rating: 'down', given_by: party });
      const again = await rate(widget.token, visitorId, answerId, { rating: 'up' });
      expect([again.status, again.json.code]).to.deep.equal([409, 'feedback_given']);
    });

    it('answers 404 for another visitor’s answer, a question, a console answer, another organization’s message and an unknown id', async () => {
      const { answerId, questionId } = await answeredVisitor('What are your hours?');
      const stranger = newVisitorId();
      await visitorAsks(server, widget, stranger, 'Hello');
      const refusals = [
        await rate(widget.token, stranger, answerId, { rating: 'up' }),
        await rate(widget.token, stranger, 'no-such-message', { rating: 'up' }),
      ];
      const mine = await answeredVisitor('Do you ship abroad?');
      refusals.push(await rate(widget.token, mine.visitorId, questionId, { rating: 'up' }));
      refusals.push(await rate(widget.token, mine.visitorId, mine.questionId, { rating: 'up' }));
      const consoleTurn = await server.request('POST', '/api/v1/chat', { headers: as(owner), body: { message: 'A console question' } });
      refusals.push(await rate(widget.token, mine.visitorId, consoleTurn.json.answer.message_id, { rating: 'up' }));
      const elsewhere = await widgetOf(server, await registerOwner(server, 'visitor-feedback-elsewhere'));
      refusals.push(await rate(elsewhere.token, mine.visitorId, mine.answerId, { rating: 'up' }));
      for (const refused of refusals) {
        expect([refused.status, refused.json.code]).to.deep.equal([404, 'message_not_found']);
        expect(await refused.events()).to.deep.equal([]);
      }
    });

    it('answers 400 naming a bad rating or comment, and without a well-formed visitor header', async () => {
      const { visitorId, answerId } = await answeredVisitor('Can I pay by invoice?');
      for (const [body, field, code] of [
        [{ rating: 'meh' }, 'rating', 'invalid_request'],
        [{}, 'rating', 'invalid_request'],
        [{ rating: 'up', comment: 5 }, 'comment', 'invalid_request'],
        [{ rating: 'up', comment: 'c'.repeat(2001) }, 'comment', 'invalid_feedback'],
      ] as const) {
        const response = await rate(widget.token, visitorId, answerId, body);
        expect([response.status, response.json.code, response.json.field], JSON.stringify(body)).to.deep.equal([400, code, field]);
      }
      const missing = await server.request('POST', `/api/v1/widget/messages/${answerId}/feedback`, { headers: { authorization: `Bearer ${widget.token}` }, body: { rating: 'up' } });
      expect([missing.status, missing.json.code]).to.deep.equal([400, 'invalid_visitor']);
    });

    it('answers 401 for a missing, unknown or rotated widget token or a user token, and 403 for an origin not allowed or feedback turned off', async () => {
      const org = await registerOwner(server, 'visitor-feedback-auth');
      const own = await widgetOf(server, org);
      const visitorId = newVisitorId();
      const turn = await visitorAsks(server, own, visitorId, 'Is it in stock?');
      const answerId = turn.answer!.message_id;
      const body = { rating: 'up' };
      expect((await server.request('POST', `/api/v1/widget/messages/${answerId}/feedback`, { headers: { 'x-widget-visitor': visitorId }, body })).status).to.equal(401);
      expect((await rate('wt_unknown', visitorId, answerId, body)).json.code).to.equal('invalid_widget_token');
      expect((await server.request('POST', `/api/v1/widget/messages/${answerId}/feedback`, { headers: { ...as(org), 'x-widget-visitor': visitorId }, body })).status).to.equal(401);
      await rotateWidgetToken(server, org);
      const rotated = await rate(own.token, visitorId, answerId, body);
      expect([rotated.status, rotated.json.code]).to.deep.equal([401, 'invalid_widget_token']);
      const current = await widgetOf(server, org);

      await configureWidget(server, org.tenant_id, { allowed_origins: ['https://shop.example.com'] });
      const foreign = await rate(current.token, visitorId, answerId, body, { origin: 'https://evil.example.net' });
      expect([foreign.status, foreign.json.code]).to.deep.equal([403, 'origin_not_allowed']);
      await configureWidget(server, org.tenant_id, { feedback: false });
      const off = await rate(current.token, visitorId, answerId, body, { origin: 'https://shop.example.com' });
      expect([off.status, off.json.code, off.json.setting]).to.deep.equal([403, 'widget_feature_disabled', 'feedback']);
      expect(off.headers.get('access-control-allow-origin')).to.equal('https://shop.example.com');
      await configureWidget(server, org.tenant_id, { feedback: true });
      expect((await rate(current.token, visitorId, answerId, body, { origin: 'https://shop.example.com' })).status).to.equal(201);
    });
  });

  describe('handoff', () => {
    it('answers 403 feature_not_in_plan without handoff in the plan, and 409 handoff_not_configured without a webhook on', async () => {
      const { visitorId, conversationId } = await answeredVisitor('I need a person');
      const notInPlan = await handOff(widget.token, visitorId, conversationId);
      expect([notInPlan.status, notInPlan.json.code, notInPlan.json.feature]).to.deep.equal([403, 'feature_not_in_plan', 'handoff']);
      await subscribeTo(server, owner.tenant_id, 'starter');
      const notConfigured = await handOff(widget.token, visitorId, conversationId);
      expect([notConfigured.status, notConfigured.json.code]).to.deep.equal([409, 'handoff_not_configured']);
      expect(await notConfigured.events()).to.deep.equal([]);
    });

    it('hands the visitor’s conversation off with their reason: the webhook gets it signed, as a member’s handoff', async () => {
      const configured = await server.request('POST', '/api/v1/tenant/handoff', { headers: as(owner), body: { url: `${receiver.url}/hooks/handoff` } });
      expect(configured.status, configured.text).to.equal(200);
      const secret = configured.json.secret;
      const { visitorId, conversationId } = await answeredVisitor('My order never came');
      const response = await handOff(widget.token, visitorId, conversationId, { reason: ' I want to talk to someone about order 1234 ' });
      expect(response.status, response.text).to.equal(200);
      expect(response.json).to.deep.include({ conversation_id: conversationId, status: 'handed_off', assistant_paused: true });
      expect(await response.events()).to.deep.equal(['ConversationStatusChanged@conversation']);
      const party = visitorPartyOf(server, visitorId);
      const conversation = await server.request('GET', `/api/v1/conversations/${conversationId}`, { headers: as(owner) });
      expect(conversation.json).to.deep.include({ status: 'handed_off', assistant_paused: true, channel: 'widget', started_by: party, contact: null });

      await eventually(() => receiver.deliveries.some((delivery) => JSON.parse(delivery.body.toString()).conversation.id === conversationId), 10_000, 'the handoff at the webhook');
      const delivery = receiver.deliveries.find((one) => JSON.parse(one.body.toString()).conversation.id === conversationId)!;
      const check = verifySignature({
        secrets: [secret],
        signature: delivery.headers['x-svc-signature'],
        timestamp: delivery.headers['x-svc-timestamp'],
        rawBody: delivery.body,
        nowSeconds: Math.floor(Date.now() / 1000),
        maxSkewSeconds: 300,
      });
      expect(check.valid).to.equal(true);
      const payload = JSON.parse(delivery.body.toString());
      expect(payload).to.deep.include({ type: 'conversation.handed_off', tenant_id: owner.tenant_id, handed_off_by: party, reason: 'I want to talk to someone about order 1234' });
      expect(payload.conversation).to.deep.include({ channel: 'widget', status: 'handed_off', started_by: party, contact: null });
      expect(payload.messages.map((message: { role: string; text: string }) => [message.role, message.text])[0]).to.deep.equal(['user', 'My order never came']);

      const again = await handOff(widget.token, visitorId, conversationId);
      expect([again.status, again.json.code]).to.deep.equal([409, 'already_handed_off']);
      // The assistant is paused for the visitor's next message.
      const paused = await visitorAsks(server, widget, visitorId, 'Hello?', conversationId);
      expect(paused).to.deep.include({ paused: true, answer: null });
    });

    it('answers 404 for another visitor’s, a console, another organization’s and an unknown conversation', async () => {
      const { conversationId } = await answeredVisitor('Someone else’s question');
      const stranger = newVisitorId();
      const consoleTurn = await server.request('POST', '/api/v1/chat', { headers: as(owner), body: { message: 'A console question' } });
      const elsewhere = await widgetOf(server, await registerOwner(server, 'visitor-handoff-elsewhere'));
      for (const [token, conversation] of [
        [widget.token, conversationId],
        [widget.token, consoleTurn.json.conversation_id],
        [widget.token, 'no-such-conversation'],
        [elsewhere.token, conversationId],
      ]) {
        const refused = await handOff(token!, stranger, conversation!);
        expect([refused.status, refused.json.code]).to.deep.equal([404, 'conversation_not_found']);
        expect(await refused.events()).to.deep.equal([]);
      }
    });

    it('answers 409 for a resolved conversation, 400 naming a bad reason, and 401/403 as every widget route', async () => {
      const { visitorId, conversationId } = await answeredVisitor('Thanks, that is all');
      expect((await server.request('PUT', `/api/v1/conversations/${conversationId}/status`, { headers: as(owner), body: { status: 'resolved' } })).status).to.equal(200);
      const resolved = await handOff(widget.token, visitorId, conversationId);
      expect([resolved.status, resolved.json.code]).to.deep.equal([409, 'invalid_status_transition']);

      const other = await answeredVisitor('One more thing');
      for (const [body, field] of [[{ reason: 'r'.repeat(501) }, 'reason'], [{ reason: 42 }, 'reason']] as const) {
        const response = await handOff(widget.token, other.visitorId, other.conversationId, body);
        expect([response.status, response.json.field], JSON.stringify(body)).to.deep.equal([400, field]);
      }
      expect((await server.request('POST', `/api/v1/widget/conversations/${other.conversationId}/handoff`, { headers: { authorization: `Bearer ${widget.token}` }, body: {} })).json.code).to.equal('invalid_visitor');
      expect((await handOff('wt_unknown', other.visitorId, other.conversationId)).status).to.equal(401);
      expect((await server.request('POST', `/api/v1/widget/conversations/${other.conversationId}/handoff`, { headers: { ...as(owner), 'x-widget-visitor': other.visitorId }, body: {} })).status).to.equal(401);
      await configureWidget(server, owner.tenant_id, { allowed_origins: ['https://shop.example.com'] });
      const foreign = await handOff(widget.token, other.visitorId, other.conversationId, {}, { origin: 'https://evil.example.net' });
      expect([foreign.status, foreign.json.code]).to.deep.equal([403, 'origin_not_allowed']);
      await configureWidget(server, owner.tenant_id, { handoff_button: false });
      const off = await handOff(widget.token, other.visitorId, other.conversationId);
      expect([off.status, off.json.code, off.json.setting]).to.deep.equal([403, 'widget_feature_disabled', 'handoff_button']);
      await configureWidget(server, owner.tenant_id, { handoff_button: true, allowed_origins: [] });
      expect((await handOff(widget.token, other.visitorId, other.conversationId)).status).to.equal(200);
    });

    it('puts every event in the organization’s audit log, the visitor as actor of theirs', async () => {
      const seen = await expectEveryEventAudited(server);
      expect([...seen]).to.include.members(['FeedbackGiven', 'ConversationStatusChanged', 'HandoffRequested', 'HandoffDelivered']);
    });
  });
});
