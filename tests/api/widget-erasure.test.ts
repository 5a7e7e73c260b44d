// A widget visitor erases their own conversation over HTTP against the real server:
// `POST /api/v1/widget/conversations/{id}/erase`, the conversation's EraseConversation with the
// visitor as actor, reaching what an owner's erasure reaches (its texts in the log, its lead).
// Only the visitor's own widget conversations, live or deleted by the organization: anything
// else 404. The organization may turn it off (widget setting `visitor_erasure`).

import { expect } from 'chai';
import { type ConversationEvent, conversationStream } from '../../domain/conversation/conversation';
import { ERASED_PERSONAL_DATA } from '../../domain/shared/events';
import { type Account, registerOwner } from '../support/identity';
import { type TestServer, startTestServer } from '../support/server';
import { type TenantWidget, asVisitor, configureWidget, newVisitorId, rotateWidgetToken, visitorAsks, visitorPartyOf, widgetOf } from '../support/widget-visitors';

describe('a visitor erases their own conversation (POST /api/v1/widget/conversations/{id}/erase)', () => {
  let server: TestServer;
  let owner: Account;
  let widget: TenantWidget;
  const as = (account: Account) => ({ authorization: `Bearer ${account.token}` });
  const erase = (token: string, visitorId: string, conversationId: string, extra: Record<string, string> = {}) =>
    server.request('POST', `/api/v1/widget/conversations/${conversationId}/erase`, { headers: asVisitor(token, visitorId, extra) });
  const textsOf = async (conversationId: string): Promise<string[]> => {
    const events = (await server.platform.eventStore.readStream(conversationStream(conversationId))) as unknown as ConversationEvent[];
    return events.flatMap((event) => (event.type === 'ConversationStarted' ? [event.data.title] : event.type === 'UserMessagePosted' || event.type === 'AssistantAnswered' ? [event.data.text] : []));
  };

  before(async () => {
    server = await startTestServer({ SCRYPT_LOG_N: '12' });
    owner = await registerOwner(server, 'visitor-erasure-org');
    widget = await widgetOf(server, owner);
  });
  after(() => server.close());

  it('erases the visitor’s own conversation and the lead left in it (200), the visitor as actor; asked again, the same answer', async () => {
    const visitorId = newVisitorId();
    const turn = await visitorAsks(server, widget, visitorId, 'I am Dana Ruiz, my order 5512 never came');
    const conversationId = turn.conversation_id;
    const lead = await server.request('POST', '/api/v1/widget/leads', { headers: asVisitor(widget.token, visitorId), body: { name: 'Dana Ruiz', email: 'dana@example.com', conversation_id: conversationId } });
    expect(lead.status, lead.text).to.equal(201);
    expect(await textsOf(conversationId)).to.include('I am Dana Ruiz, my order 5512 never came');

    const erased = await erase(widget.token, visitorId, conversationId);
    expect(erased.status, erased.text).to.equal(200);
    expect(erased.json).to.have.keys('id', 'erased_at');
    expect(erased.json.id).to.equal(conversationId);
    expect(await erased.events()).to.include('ConversationErased@conversation');

    // Unreadable in the log, gone from the visitor's list and from the organization's.
    expect(new Set(await textsOf(conversationId))).to.deep.equal(new Set([ERASED_PERSONAL_DATA]));
    const mine = await server.request('GET', '/api/v1/widget/conversations', { headers: asVisitor(widget.token, visitorId) });
    expect(mine.json.items).to.deep.equal([]);
    const messages = await server.request('GET', `/api/v1/widget/conversations/${conversationId}/messages`, { headers: asVisitor(widget.token, visitorId) });
    expect([messages.status, messages.json.code]).to.deep.equal([404, 'conversation_not_found']);
    expect((await server.request('GET', `/api/v1/conversations/${conversationId}`, { headers: as(owner) })).status).to.equal(404);
    // The lead left in it is erased with it.
    const leads = await server.request('GET', '/api/v1/tenant/leads', { headers: as(owner) });
    expect(JSON.stringify(leads.json)).to.not.include('dana@example.com');
    // The visitor did it, as the audit log says.
    const [last] = await server.platform.eventStore.readStream(conversationStream(conversationId), { direction: 'backwards', maxCount: 1 });
    expect(last.type).to.equal('ConversationErased');
    expect(last.metadata).to.deep.include({ tenant_id: owner.tenant_id, actor: visitorPartyOf(server, visitorId) });

    const again = await erase(widget.token, visitorId, conversationId);
    expect(again.status, again.text).to.equal(200);
    expect(again.json).to.deep.equal(erased.json);
    expect(await again.events()).to.deep.equal([]);
  });

  it('erases a conversation of the visitor that the organization deleted', async () => {
    const visitorId = newVisitorId();
    const turn = await visitorAsks(server, widget, visitorId, 'Please forget my address, 4 Elm Row');
    const deleted = await server.request('DELETE', `/api/v1/conversations/${turn.conversation_id}`, { headers: as(owner) });
    expect(deleted.status, deleted.text).to.equal(204);
    const erased = await erase(widget.token, visitorId, turn.conversation_id);
    expect(erased.status, erased.text).to.equal(200);
    expect(new Set(await textsOf(turn.conversation_id))).to.deep.equal(new Set([ERASED_PERSONAL_DATA]));
  });

  it('answers 404 for another visitor’s conversation, a console conversation, another organization’s and an unknown id, erasing nothing', async () => {
    const visitorId = newVisitorId();
    const theirs = await visitorAsks(server, widget, newVisitorId(), 'Someone else’s question');
    const consoleTurn = await server.request('POST', '/api/v1/chat', { headers: as(owner), body: { message: 'A console question' } });
    const elsewhereOwner = await registerOwner(server, 'visitor-erasure-elsewhere');
    const elsewhere = await widgetOf(server, elsewhereOwner);
    const mineElsewhere = await visitorAsks(server, elsewhere, visitorId, 'Asked on another site');
    for (const [token, conversationId] of [
      [widget.token, theirs.conversation_id],
      [widget.token, consoleTurn.json.conversation_id],
      [widget.token, mineElsewhere.conversation_id],
      [widget.token, '00000000-0000-4000-8000-000000000000'],
    ]) {
      const refused = await erase(token, visitorId, conversationId);
      expect([refused.status, refused.json.code], conversationId).to.deep.equal([404, 'conversation_not_found']);
      expect(await refused.events()).to.deep.equal([]);
    }
    expect(await textsOf(theirs.conversation_id)).to.include('Someone else’s question');
    expect(await textsOf(mineElsewhere.conversation_id)).to.include('Asked on another site');
  });

  it('answers 401 without a valid widget token, 400 without a visitor, 403 for an origin not allowed or the setting off, erasing nothing', async () => {
    const org = await registerOwner(server, 'visitor-erasure-auth');
    const own = await widgetOf(server, org);
    const visitorId = newVisitorId();
    const turn = await visitorAsks(server, own, visitorId, 'Keep this one');
    const path = `/api/v1/widget/conversations/${turn.conversation_id}/erase`;
    expect((await server.request('POST', path, { headers: { 'x-widget-visitor': visitorId } })).status).to.equal(401);
    expect((await erase('wt_unknown', visitorId, turn.conversation_id)).json.code).to.equal('invalid_widget_token');
    expect((await server.request('POST', path, { headers: { ...as(org), 'x-widget-visitor': visitorId } })).status).to.equal(401);
    const noVisitor = await server.request('POST', path, { headers: { authorization: `Bearer ${own.token}` } });
    expect([noVisitor.status, noVisitor.json.code]).to.deep.equal([400, 'invalid_visitor']);
    await rotateWidgetToken(server, org);
    expect((await erase(own.token, visitorId, turn.conversation_id)).status).to.equal(401);
    const current = await widgetOf(server, org);

    await configureWidget(server, org.tenant_id, { allowed_origins: ['https://shop.example.com'] });
    const foreign = await erase(current.token, visitorId, turn.conversation_id, { origin: 'https://evil.example.net' });
    expect([foreign.status, foreign.json.code]).to.deep.equal([403, 'origin_not_allowed']);
    await configureWidget(server, org.tenant_id, { visitor_erasure: false });
    const off = await erase(current.token, visitorId, turn.conversation_id, { origin: 'https://shop.example.com' });
    expect([off.status, off.json.code, off.json.setting]).to.deep.equal([403, 'widget_feature_disabled', 'visitor_erasure']);
    const settings = await server.request('GET', '/api/v1/widget/settings', { headers: { authorization: `Bearer ${current.token}`, origin: 'https://shop.example.com' } });
    expect(settings.json.features.visitor_erasure).to.equal(false);
    expect(await textsOf(turn.conversation_id)).to.include('Keep this one');

    await configureWidget(server, org.tenant_id, { visitor_erasure: true });
    const on = await erase(current.token, visitorId, turn.conversation_id, { origin: 'https://shop.example.com' });
    expect(on.status, on.text).to.equal(200);
  });
});
