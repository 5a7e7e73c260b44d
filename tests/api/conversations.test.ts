// Conversation routes (spec 4.6, docs/conversations.md) over HTTP: every route's success,
// 401, the visibility rules (404 for a conversation the caller may not see, 403 where they see
// it but may not do this), 400 per bad field, 404, 409 and 412, and the events each write
// records with its actor.

import { expect } from 'chai';
import { verifiedPartyId } from '../../application/widget/widget-access';
import { senderPartyId } from '../../application/whatsapp/whatsapp-webhook';
import { MAX_MESSAGE_LENGTH, MAX_TITLE_LENGTH } from '../../domain/conversation/conversation';
import { answerIn, answeredConversation, askIn, failIn, startConversation } from '../support/conversations';
import { type Account, gql, joinAs, liftSeatLimit, registerOwner, widgetTokenOf } from '../support/identity';
import { type TestServer, startTestServer } from '../support/server';

describe('conversations (/api/v1/conversations)', () => {
  let server: TestServer;
  let owner: Account;
  let admin: Account;
  /** A member whose team reads the Support workspace. */
  let agent: Account;
  /** A member of no team. */
  let member: Account;
  let outsider: Account;
  let supportWorkspace: string;
  let defaultWorkspace: string;
  /** Started by the member, in the default workspace (no team of theirs reads it). */
  let memberOwn: string;
  /** Started by the owner in the Support workspace: the agent sees it through their team. */
  let support: string;
  /** A widget visitor's, without a workspace: admins only. */
  let widget: string;
  let foreign: string;

  const as = (account: Account, extra: Record<string, string> = {}) => ({ authorization: `Bearer ${account.token}`, ...extra });
  const get = (account: Account | null, path: string) => server.request('GET', path, { headers: account ? as(account) : {} });
  const listIds = async (account: Account, query = ''): Promise<string[]> => {
    const response = await get(account, `/api/v1/conversations${query}`);
    expect(response.status, response.text).to.equal(200);
    return response.json.items.map((item: { id: string }) => item.id);
  };
  /** Type and actor of every event on the conversation's stream after `from`. */
  const eventsOf = async (conversationId: string, from = 0) =>
    (await server.platform.eventStore.readStream(`conversation-${conversationId}`)).slice(from).map((event) => ({ type: event.type, actor: event.metadata.actor }));
  const revisionOf = async (conversationId: string) => (await server.platform.eventStore.readStream(`conversation-${conversationId}`)).length - 1;

  before(async () => {
    server = await startTestServer({ SCRYPT_LOG_N: '12' });
    owner = await registerOwner(server, 'conv-org');
    await liftSeatLimit(server, owner.tenant_id);
    admin = await joinAs(server, await registerOwner(server, 'conv-adm-home', 'conv-adm@example.com'), owner.tenant_id, 'admin');
    agent = await joinAs(server, await registerOwner(server, 'conv-agent-home', 'conv-agent@example.com'), owner.tenant_id, 'member');
    member = await joinAs(server, await registerOwner(server, 'conv-mem-home', 'conv-mem@example.com'), owner.tenant_id, 'member');
    outsider = await registerOwner(server, 'conv-other-org');
    defaultWorkspace = (await get(owner, '/api/v1/org/workspaces')).json.items[0].id;
    supportWorkspace = (await gql(server, 'mutation { create_workspace(name: "Support") { id } }', {}, owner.token)).json.data.create_workspace.id;
    const team = await server.request('POST', '/api/v1/org/teams', { headers: as(owner), body: { name: 'Agents' } });
    await server.request('PUT', `/api/v1/org/teams/${team.json.id}/members`, { headers: as(owner), body: { members: [{ user_id: agent.user_id }] } });
    await server.request('PUT', `/api/v1/org/teams/${team.json.id}/workspaces`, { headers: as(owner), body: { workspace_ids: [supportWorkspace] } });

    memberOwn = await startConversation(server, member, { title: 'My own question', workspace_id: defaultWorkspace });
    support = await startConversation(server, owner, { title: 'Refund for order 42', workspace_id: supportWorkspace });
    widget = await startConversation(server, owner, { title: 'Widget visitor', channel: 'widget', started_by: { kind: 'end_user', id: 'visitor-1' } });
    foreign = await startConversation(server, outsider, { title: 'Refund elsewhere' });
  });
  after(() => server.close());

  describe('GET /conversations', () => {
    it('lists every conversation of the tenant to an owner or admin, newest first', async () => {
      for (const account of [owner, admin]) {
        const { items } = (await get(account, '/api/v1/conversations')).json as { items: Array<{ id: string; started_at: string }> };
        expect(items.map((item) => item.id)).to.have.members([widget, support, memberOwn]);
        const order = items.map((item) => `${item.started_at} ${item.id}`);
        expect(order).to.deep.equal([...order].sort().reverse());
      }
      const first = (await get(owner, '/api/v1/conversations')).json.items.find((item: { id: string }) => item.id === support);
      expect(first).to.deep.include({ title: 'Refund for order 42', status: 'open', assistant_paused: false, channel: 'console', workspace_id: supportWorkspace, message_count: 0, last_message_at: null, last_message_preview: null });
      expect(first.started_by).to.deep.equal({ kind: 'user', id: owner.user_id });
      expect(first).to.not.have.any.keys('tenant_id', 'position', 'revision', 'title_key', 'deleted');
    });

    it("shows a member the conversations they started and those of their teams' workspaces, nothing else", async () => {
      expect(await listIds(member)).to.deep.equal([memberOwn]);
      const mine = await startConversation(server, agent, { title: 'Agent asks' });
      expect(await listIds(agent)).to.include.members([mine, support]).and.not.include.members([memberOwn, widget]);
      expect(await listIds(outsider)).to.deep.equal([foreign]);
    });

    it("pages a member's merged list with the cursor, each conversation once", async () => {
      const extra = [];
      for (let n = 0; n < 3; n += 1) {
        extra.push(await startConversation(server, agent, { title: `Paged own ${n}` }));
        extra.push(await startConversation(server, admin, { title: `Paged support ${n}`, workspace_id: supportWorkspace }));
      }
      const all = await listIds(agent);
      const seen: string[] = [];
      let cursor: string | null = null;
      do {
        const query: string = `?limit=2${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`;
        const page = await get(agent, `/api/v1/conversations${query}`);
        expect(page.status).to.equal(200);
        expect(page.json.items.length).to.be.at.most(2);
        seen.push(...page.json.items.map((item: { id: string }) => item.id));
        cursor = page.json.next_cursor;
      } while (cursor);
      expect(seen).to.deep.equal(all);
      expect(seen).to.include.members(extra);
    });

    it('filters by status, channel, workspace, title prefix (ignoring case) and start time', async () => {
      const resolved = await startConversation(server, owner, { title: 'Shipping times', channel: 'api' });
      await server.request('PUT', `/api/v1/conversations/${resolved}/status`, { headers: as(owner), body: { status: 'resolved' } });
      expect(await listIds(owner, '?status=resolved')).to.deep.equal([resolved]);
      expect(await listIds(owner, '?channel=widget')).to.deep.equal([widget]);
      expect(await listIds(owner, '?channel=api&status=resolved')).to.deep.equal([resolved]);
      expect(await listIds(owner, `?workspace_id=${defaultWorkspace}`)).to.deep.equal([memberOwn]);
      expect(await listIds(owner, '?q=refund')).to.deep.equal([support]);
      expect(await listIds(owner, '?q=REFUND%20FOR')).to.deep.equal([support]);
      expect(await listIds(owner, '?q=order')).to.deep.equal([]);
      expect(await listIds(agent, `?workspace_id=${defaultWorkspace}`)).to.deep.equal([]);
      expect(await listIds(member, `?workspace_id=${defaultWorkspace}`)).to.deep.equal([memberOwn]);
      const { started_at } = (await get(owner, `/api/v1/conversations/${resolved}`)).json;
      expect(await listIds(owner, `?from=${encodeURIComponent(started_at)}`)).to.deep.equal([resolved]);
      expect(await listIds(owner, `?to=${encodeURIComponent(started_at)}&from=${encodeURIComponent(started_at)}`)).to.deep.equal([resolved]);
      const today = started_at.slice(0, 10);
      expect(await listIds(owner, `?from=${today}&to=${today}&status=resolved`)).to.deep.equal([resolved]);
      expect(await listIds(owner, '?to=2020-01-01')).to.deep.equal([]);
    });

    it('filters by the customer as the organization knows them: the host site’s user id of a verified visitor, a WhatsApp number', async () => {
      const customer = (id: string) => ({ kind: 'end_user' as const, id });
      const digestOf = (userId: string) => customer(verifiedPartyId(server.platform.secrets, owner.tenant_id, userId));
      const signedIn = await startConversation(server, owner, { channel: 'widget', title: 'Where is my parcel?', started_by: digestOf('customer-5') });
      const ofOld = await startConversation(server, owner, { channel: 'widget', title: 'Before the upgrade', started_by: customer('verified:customer-5') });
      await startConversation(server, owner, { channel: 'widget', title: 'Someone else', started_by: digestOf('customer-6') });
      const sender = await startConversation(server, owner, { channel: 'whatsapp', title: 'Hello', started_by: customer(senderPartyId(server.platform.secrets, owner.tenant_id, '447700900123')) });
      expect(await listIds(owner, '?verified_user_id=customer-5')).to.have.members([signedIn, ofOld]);
      expect(await listIds(owner, '?verified_user_id=customer-5&q=where')).to.deep.equal([signedIn]);
      expect(await listIds(owner, `?whatsapp_number=${encodeURIComponent('+44 7700 900123')}`)).to.deep.equal([sender]);
      expect(await listIds(owner, '?verified_user_id=nobody')).to.deep.equal([]);
      // A member sees only what they may see, filtered as well.
      expect(await listIds(member, '?verified_user_id=customer-5')).to.deep.equal([]);
    });

    it('sorts by last activity when asked', async () => {
      await askIn(server, owner, memberOwn, 'Bumping this');
      expect((await listIds(owner, '?sort=last_activity_at'))[0]).to.equal(memberOwn);
      expect((await listIds(owner, '?sort=started_at'))[0]).to.not.equal(memberOwn);
    });

    it('400 invalid_request naming each bad filter', async () => {
      const cases: Array<[string, string]> = [
        ['status=closed', 'status'],
        ['status=open&status=pending', 'status'],
        ['channel=fax', 'channel'],
        ['workspace_id=', 'workspace_id'],
        ['q=', 'q'],
        [`q=${'x'.repeat(201)}`, 'q'],
        ['sort=title', 'sort'],
        ['from=never', 'from'],
        ['from=2026-02-30', 'from'],
        ['from=2026-03-01T10:00', 'from'],
        ['to=1', 'to'],
        ['to=2026-13-01', 'to'],
        ['from=2026-03-02&to=2026-03-01', 'from'],
        ['limit=0', 'limit'],
        ['cursor=', 'cursor'],
        ['verified_user_id=has%20spaces', 'verified_user_id'],
        ['verified_user_id=', 'verified_user_id'],
        ['whatsapp_number=call%20me', 'whatsapp_number'],
        ['verified_user_id=a&whatsapp_number=%2B16505551234', 'whatsapp_number'],
      ];
      for (const [query, field] of cases) {
        const response = await get(owner, `/api/v1/conversations?${query}`);
        expect(response.status, query).to.equal(400);
        expect(response.json, query).to.deep.include({ field });
      }
      const foreignCursor = await get(owner, '/api/v1/conversations?cursor=bm90LWEtY3Vyc29y');
      expect([foreignCursor.status, foreignCursor.json.code]).to.deep.equal([400, 'invalid_cursor']);
    });

    it('401 without a user token, or with the widget token', async () => {
      expect((await get(null, '/api/v1/conversations')).status).to.equal(401);
      const widgetToken = await widgetTokenOf(server, owner);
      expect((await server.request('GET', '/api/v1/conversations', { headers: { authorization: `Bearer ${widgetToken}` } })).status).to.equal(401);
    });
  });

  describe('GET /conversations/{id}', () => {
    it('answers a visible conversation with its ETag', async () => {
      const response = await get(agent, `/api/v1/conversations/${support}`);
      expect(response.status).to.equal(200);
      expect(response.json.id).to.equal(support);
      expect(response.headers.get('etag')).to.equal(`"${await revisionOf(support)}"`);
    });

    it('404 conversation_not_found for what the caller may not see, another tenant, or nothing', async () => {
      for (const [account, id] of [
        [member, support],
        [agent, memberOwn],
        [agent, widget],
        [member, widget],
        [owner, foreign],
        [outsider, support],
        [owner, 'no-such-conversation'],
      ] as Array<[Account, string]>) {
        const response = await get(account, `/api/v1/conversations/${id}`);
        expect(response.status, `${account.email} ${id}`).to.equal(404);
        expect(response.json).to.deep.equal({ code: 'conversation_not_found', message: 'no such conversation' });
      }
    });

    it('401 without a token', async () => {
      expect((await get(null, `/api/v1/conversations/${support}`)).status).to.equal(401);
    });
  });

  describe('PATCH /conversations/{id}', () => {
    const rename = (account: Account, id: string, body: unknown, extra: Record<string, string> = {}) => server.request('PATCH', `/api/v1/conversations/${id}`, { headers: as(account, extra), body });

    it('renames for the member who started it and for admins, recording the actor', async () => {
      const id = await startConversation(server, member, { title: 'Before' });
      const response = await rename(member, id, { title: '  After  ' });
      expect(response.status).to.equal(200);
      expect(response.json.title).to.equal('After');
      expect(response.headers.get('etag')).to.equal('"1"');
      expect(await response.events()).to.deep.equal(['ConversationRenamed@conversation']);
      expect(await eventsOf(id, 1)).to.deep.equal([{ type: 'ConversationRenamed', actor: { kind: 'user', id: member.user_id } }]);
      expect((await rename(admin, id, { title: 'By admin' })).json.title).to.equal('By admin');
      expect(await listIds(owner, '?q=by%20ad')).to.deep.equal([id]);
      const same = await rename(admin, id, { title: 'By admin' });
      expect([same.status, await same.events()]).to.deep.equal([200, []]);
    });

    it('honours If-Match: the seen version renames, a stale one is 412', async () => {
      const id = await startConversation(server, owner, { title: 'Versioned' });
      const seen = (await get(owner, `/api/v1/conversations/${id}`)).headers.get('etag')!;
      expect((await rename(owner, id, { title: 'First' }, { 'if-match': seen })).status).to.equal(200);
      const stale = await rename(owner, id, { title: 'Second' }, { 'if-match': seen });
      expect([stale.status, stale.json.code]).to.deep.equal([412, 'revision_mismatch']);
      expect(await stale.events()).to.deep.equal([]);
    });

    it('400 naming title', async () => {
      for (const body of [{}, { title: 42 }, { title: '' }, { title: '   ' }, { title: 'x'.repeat(MAX_TITLE_LENGTH + 1) }, { title: 'a\nb' }]) {
        const response = await rename(owner, support, body);
        expect(response.status, JSON.stringify(body)).to.equal(400);
        expect(response.json.field, JSON.stringify(body)).to.equal('title');
      }
    });

    it('403 conversation_starter_only for a member who sees it through a workspace; 404 for one who does not', async () => {
      const refused = await rename(agent, support, { title: 'Mine now' });
      expect([refused.status, refused.json.code]).to.deep.equal([403, 'conversation_starter_only']);
      expect(await refused.events()).to.deep.equal(['AccessDenied@accessDenial']);
      expect((await rename(member, support, { title: 'Mine now' })).status).to.equal(404);
      expect((await rename(owner, foreign, { title: 'Mine now' })).status).to.equal(404);
      expect((await server.request('PATCH', `/api/v1/conversations/${support}`, { body: { title: 'x' } })).status).to.equal(401);
    });
  });

  describe('DELETE /conversations/{id}', () => {
    const remove = (account: Account, id: string, extra: Record<string, string> = {}) => server.request('DELETE', `/api/v1/conversations/${id}`, { headers: as(account, extra) });

    it('deletes softly: gone from lists and reads (404), its messages and feedback from the read models, its events kept', async () => {
      const { id, answer } = await answeredConversation(server, member, { title: 'Delete me' });
      const rated = await server.request('POST', `/api/v1/conversations/${id}/messages/${answer}/feedback`, { headers: as(member), body: { rating: 'down', comment: 'my own words' } });
      expect(rated.status).to.equal(201);
      const feedbackIds = async () => (await get(owner, '/api/v1/tenant/feedbacks?limit=100')).json.items.map((item: { conversation_id: string }) => item.conversation_id);
      expect(await feedbackIds()).to.include(id);
      const response = await remove(member, id);
      expect(response.status).to.equal(204);
      expect(await response.events()).to.deep.equal(['ConversationDeleted@conversation']);
      expect(await listIds(owner)).to.not.include(id);
      expect(await listIds(member)).to.not.include(id);
      for (const path of [`/api/v1/conversations/${id}`, `/api/v1/conversations/${id}/messages`]) expect((await get(owner, path)).status, path).to.equal(404);
      expect((await remove(member, id)).status).to.equal(404);
      expect(await feedbackIds()).to.not.include(id);
      expect(await server.platform.readStore.collection('conversation_messages').count({ conversation_id: id })).to.equal(0);
      expect(await server.platform.readStore.collection('conversations').get(id)).to.deep.include({ deleted: true, title: '', last_message_preview: null });
      expect((await eventsOf(id)).map((event) => event.type)).to.deep.equal(['ConversationStarted', 'UserMessagePosted', 'AssistantAnswered', 'FeedbackGiven', 'ConversationDeleted']);
    });

    it('lets an admin delete anyone’s; 403 for a member who only sees it, 404 for one who does not', async () => {
      const id = await startConversation(server, owner, { title: 'Admin deletes', workspace_id: supportWorkspace });
      const refused = await remove(agent, id);
      expect([refused.status, refused.json.code]).to.deep.equal([403, 'conversation_starter_only']);
      expect((await remove(member, id)).status).to.equal(404);
      expect((await remove(admin, id)).status).to.equal(204);
      expect((await eventsOf(id, 1))).to.deep.equal([{ type: 'ConversationDeleted', actor: { kind: 'user', id: admin.user_id } }]);
    });

    it('honours If-Match (412), and 401 without a token', async () => {
      const id = await startConversation(server, owner, { title: 'Conditional delete' });
      const stale = await remove(owner, id, { 'if-match': '"7"' });
      expect([stale.status, stale.json.code]).to.deep.equal([412, 'revision_mismatch']);
      expect((await server.request('DELETE', `/api/v1/conversations/${id}`)).status).to.equal(401);
      expect((await remove(owner, id, { 'if-match': '"0"' })).status).to.equal(204);
    });
  });

  describe('PUT /conversations/{id}/status', () => {
    const setStatus = (account: Account, id: string, body: unknown, extra: Record<string, string> = {}) =>
      server.request('PUT', `/api/v1/conversations/${id}/status`, { headers: as(account, extra), body });

    it('moves along the allowed transitions for anyone who sees it, recording the actor', async () => {
      const id = await startConversation(server, owner, { title: 'Status walk', workspace_id: supportWorkspace });
      const pending = await setStatus(agent, id, { status: 'pending' });
      expect(pending.status).to.equal(200);
      expect(pending.json).to.deep.include({ status: 'pending', assistant_paused: false });
      expect(await pending.events()).to.deep.equal(['ConversationStatusChanged@conversation']);
      const handedOff = await setStatus(agent, id, { status: 'handed_off' });
      expect(handedOff.json).to.deep.include({ status: 'handed_off', assistant_paused: true });
      expect((await setStatus(owner, id, { status: 'resolved' })).json.status).to.equal('resolved');
      const same = await setStatus(owner, id, { status: 'resolved' });
      expect([same.status, await same.events()]).to.deep.equal([200, []]);
      expect(await eventsOf(id, 1)).to.deep.equal([
        { type: 'ConversationStatusChanged', actor: { kind: 'user', id: agent.user_id } },
        { type: 'ConversationStatusChanged', actor: { kind: 'user', id: agent.user_id } },
        { type: 'ConversationStatusChanged', actor: { kind: 'user', id: owner.user_id } },
      ]);
    });

    it('409 invalid_status_transition for a change the states do not allow', async () => {
      const id = await startConversation(server, owner, { title: 'Refused change' });
      await setStatus(owner, id, { status: 'resolved' });
      for (const status of ['pending', 'handed_off']) {
        const response = await setStatus(owner, id, { status });
        expect([response.status, response.json.code], status).to.deep.equal([409, 'invalid_status_transition']);
        expect(await response.events()).to.deep.equal([]);
      }
    });

    it('a user message reopens a resolved conversation', async () => {
      const id = await startConversation(server, member, { title: 'Reopened' });
      await setStatus(member, id, { status: 'resolved' });
      await askIn(server, member, id, 'Still broken');
      expect((await get(member, `/api/v1/conversations/${id}`)).json.status).to.equal('open');
    });

    it('400 naming status, 404, 412 and 401', async () => {
      for (const body of [{}, { status: 'closed' }, { status: 'OPEN' }, { status: null }]) {
        const response = await setStatus(owner, support, body);
        expect([response.status, response.json.field], JSON.stringify(body)).to.deep.equal([400, 'status']);
      }
      expect((await setStatus(member, support, { status: 'pending' })).status).to.equal(404);
      expect((await setStatus(owner, foreign, { status: 'pending' })).status).to.equal(404);
      expect((await setStatus(owner, support, { status: 'pending' }, { 'if-match': '"99"' })).status).to.equal(412);
      expect((await server.request('PUT', `/api/v1/conversations/${support}/status`, { body: { status: 'pending' } })).status).to.equal(401);
    });
  });

  describe('GET /conversations/{id}/messages', () => {
    it('lists the messages oldest first, a failed answer with its error, and pages them', async () => {
      const { id, question, answer } = await answeredConversation(server, owner, { title: 'Thread', workspace_id: supportWorkspace });
      const second = await askIn(server, owner, id, 'And the **second** question?');
      await failIn(server, owner.tenant_id, id, second);
      const all = await get(agent, `/api/v1/conversations/${id}/messages`);
      expect(all.status).to.equal(200);
      expect(all.json.items.map((message: { id: string; role: string }) => [message.id, message.role])).to.deep.equal([
        [question, 'user'],
        [answer, 'assistant'],
        [second, 'user'],
        [`failed-${second}`, 'assistant'],
      ]);
      expect(all.json.items[1]).to.deep.include({ text: 'Within 30 days [1].', reply_to: question, answered_from_knowledge: true, model: 'extractive', error: null, feedback_rating: null, author: null });
      expect(all.json.items[1].citations).to.deep.equal([{ passage_id: '1', document_id: 'doc-1', chunk_id: 'chunk-1', title: 'Handbook' }]);
      expect(all.json.items[3]).to.deep.include({ text: '', error: { code: 'engine_unavailable', message: 'the model did not answer' } });
      expect(all.json.items[0]).to.not.have.any.keys('tenant_id', 'seq', 'position', 'end_user_token_sealed');
      const conversation = (await get(agent, `/api/v1/conversations/${id}`)).json;
      expect(conversation).to.deep.include({ message_count: 3, last_message_preview: 'And the second question?' });

      const first = await get(agent, `/api/v1/conversations/${id}/messages?limit=3`);
      expect(first.json.items).to.have.length(3);
      const rest = await get(agent, `/api/v1/conversations/${id}/messages?limit=3&cursor=${encodeURIComponent(first.json.next_cursor)}`);
      expect(rest.json).to.deep.equal({ items: [all.json.items[3]], next_cursor: null });
    });

    it('404 for a conversation the caller may not see, 400 for a bad page, 401 without a token', async () => {
      expect((await get(member, `/api/v1/conversations/${support}/messages`)).status).to.equal(404);
      expect((await get(outsider, `/api/v1/conversations/${support}/messages`)).status).to.equal(404);
      expect((await get(owner, '/api/v1/conversations/none/messages')).status).to.equal(404);
      const bad = await get(owner, `/api/v1/conversations/${support}/messages?limit=1001`);
      expect([bad.status, bad.json.field]).to.deep.equal([400, 'limit']);
      expect((await get(null, `/api/v1/conversations/${support}/messages`)).status).to.equal(401);
    });
  });

  describe('POST /conversations/{id}/messages (a human agent’s reply)', () => {
    const reply = (account: Account, id: string, body: unknown, extra: Record<string, string> = {}) =>
      server.request('POST', `/api/v1/conversations/${id}/messages`, { headers: as(account, extra), body });

    it('records the reply with the caller as agent and pauses the assistant until the status is open again', async () => {
      const { id } = await answeredConversation(server, owner, { title: 'Take over', workspace_id: supportWorkspace });
      const response = await reply(agent, id, { text: '  Hi, a person here.  ' });
      expect(response.status).to.equal(201);
      expect(response.json.message).to.deep.include({ role: 'agent', text: 'Hi, a person here.', author: { kind: 'user', id: agent.user_id }, conversation_id: id });
      expect(response.json.conversation).to.deep.include({ id, status: 'handed_off', assistant_paused: true, message_count: 3, last_message_preview: 'Hi, a person here.' });
      expect(await response.events()).to.deep.equal(['AgentReplied@conversation', 'ConversationStatusChanged@conversation']);
      expect(await eventsOf(id, 3)).to.deep.equal([
        { type: 'AgentReplied', actor: { kind: 'user', id: agent.user_id } },
        { type: 'ConversationStatusChanged', actor: { kind: 'user', id: agent.user_id } },
      ]);
      // Still handed off after another reply and a customer message: only someone setting it open resumes the assistant.
      expect((await reply(owner, id, { text: 'Second reply' })).json.conversation.status).to.equal('handed_off');
      await askIn(server, owner, id, 'Thanks!');
      expect((await get(owner, `/api/v1/conversations/${id}`)).json.assistant_paused).to.equal(true);
      const reopened = await server.request('PUT', `/api/v1/conversations/${id}/status`, { headers: as(agent), body: { status: 'open' } });
      expect(reopened.json).to.deep.include({ status: 'open', assistant_paused: false });
    });

    it('honours Idempotency-Key: a retry answers the same reply and sends nothing again', async () => {
      const id = await startConversation(server, owner, { title: 'Retried reply' });
      const first = await reply(owner, id, { text: 'Once' }, { 'idempotency-key': 'reply-once' });
      const again = await reply(owner, id, { text: 'Once' }, { 'idempotency-key': 'reply-once' });
      expect(again.status).to.equal(201);
      expect(again.headers.get('idempotent-replayed')).to.equal('true');
      expect(again.json).to.deep.equal(first.json);
      expect((await get(owner, `/api/v1/conversations/${id}/messages`)).json.items).to.have.length(1);
    });

    it('400 naming text', async () => {
      for (const body of [{}, { text: 7 }, { text: '' }, { text: '  \n ' }, { text: 'x'.repeat(MAX_MESSAGE_LENGTH + 1) }, { text: 'bad \u0007 bell' }]) {
        const response = await reply(owner, support, body);
        expect([response.status, response.json.field], JSON.stringify(body).slice(0, 40)).to.deep.equal([400, 'text']);
      }
    });

    it('404 for a conversation the caller may not see, a deleted one or another tenant’s; 401 without a token', async () => {
      expect((await reply(member, support, { text: 'hello' })).status).to.equal(404);
      expect((await reply(agent, widget, { text: 'hello' })).status).to.equal(404);
      expect((await reply(owner, foreign, { text: 'hello' })).status).to.equal(404);
      const gone = await startConversation(server, owner, { title: 'Deleted first' });
      await server.request('DELETE', `/api/v1/conversations/${gone}`, { headers: as(owner) });
      expect((await reply(owner, gone, { text: 'hello' })).status).to.equal(404);
      expect((await server.request('POST', `/api/v1/conversations/${support}/messages`, { body: { text: 'hello' } })).status).to.equal(401);
    });
  });

  describe('POST /conversations/{id}/messages/{message_id}/feedback', () => {
    const feedback = (account: Account, id: string, messageId: string, body: unknown) =>
      server.request('POST', `/api/v1/conversations/${id}/messages/${messageId}/feedback`, { headers: as(account), body });

    it('records one feedback per answer, by anyone who sees the conversation; a second is 409', async () => {
      const { id, answer } = await answeredConversation(server, owner, { title: 'Rated', workspace_id: supportWorkspace });
      const response = await feedback(agent, id, answer, { rating: 'down', comment: ' Too vague ' });
      expect(response.status).to.equal(201);
      expect(response.json).to.deep.include({ conversation_id: id, message_id: answer, rating: 'down', comment: 'Too vague', given_by: { kind: 'user', id: agent.user_id } });
      expect(await response.events()).to.deep.equal(['FeedbackGiven@conversation']);
      const messages = (await get(owner, `/api/v1/conversations/${id}/messages`)).json.items;
      expect(messages.find((message: { id: string }) => message.id === answer).feedback_rating).to.equal('down');
      const second = await feedback(owner, id, answer, { rating: 'up' });
      expect([second.status, second.json.code]).to.deep.equal([409, 'feedback_given']);
      const other = await answerIn(server, owner.tenant_id, id, await askIn(server, owner, id, 'Another?'), 'Yes.');
      expect((await feedback(owner, id, other, { rating: 'up' })).json.comment).to.equal('');
    });

    it('400 naming rating or comment', async () => {
      const { id, answer } = await answeredConversation(server, owner, { title: 'Bad feedback' });
      for (const [body, field] of [
        [{}, 'rating'],
        [{ rating: 'meh' }, 'rating'],
        [{ rating: 1 }, 'rating'],
        [{ rating: 'up', comment: 5 }, 'comment'],
        [{ rating: 'up', comment: 'x'.repeat(2001) }, 'comment'],
      ] as Array<[unknown, string]>) {
        const response = await feedback(owner, id, answer, body);
        expect([response.status, response.json.field], JSON.stringify(body).slice(0, 40)).to.deep.equal([400, field]);
      }
    });

    it("404 message_not_found for anything but an answer of the conversation; 404 for a conversation the caller may not see; 401", async () => {
      const { id, question, answer } = await answeredConversation(server, member, { title: 'Feedback targets' });
      for (const messageId of [question, 'no-such-message']) {
        const response = await feedback(member, id, messageId, { rating: 'up' });
        expect([response.status, response.json.code], messageId).to.deep.equal([404, 'message_not_found']);
      }
      const elsewhere = await feedback(member, memberOwn, answer, { rating: 'up' });
      expect([elsewhere.status, elsewhere.json.code]).to.deep.equal([404, 'message_not_found']);
      const hidden = await feedback(agent, id, answer, { rating: 'up' });
      expect([hidden.status, hidden.json.code]).to.deep.equal([404, 'conversation_not_found']);
      expect((await feedback(outsider, id, answer, { rating: 'up' })).status).to.equal(404);
      expect((await server.request('POST', `/api/v1/conversations/${id}/messages/${answer}/feedback`, { body: { rating: 'up' } })).status).to.equal(401);
    });
  });
});
