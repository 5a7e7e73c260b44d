// What the knowledge base lacks, over HTTP (GET /api/v1/tenant/unanswered-questions): the
// questions the assistant answered without a relevant passage, asked through the real chat
// route of the embedded engine; newest first, by workspace and time, in pages; owners and
// admins only; a bad query is 400 naming the field; a deleted conversation takes its
// questions with it.

import { expect } from 'chai';
import { questionKey } from '../../application/conversation/unanswered-questions';
import { documentStream } from '../../domain/document/document';
import { type Account, joinAs, registerOwner } from '../support/identity';
import { type TestServer, startTestServer } from '../support/server';
import { eventually } from '../support/stores';

const PATH = '/api/v1/tenant/unanswered-questions';

describe('unanswered questions (GET /api/v1/tenant/unanswered-questions)', () => {
  let server: TestServer;
  let owner: Account;
  let member: Account;
  let workspaceId: string;
  const as = (account: Account) => ({ authorization: `Bearer ${account.token}` });
  const list = async (query = '', account: Account = owner) => server.request('GET', `${PATH}${query}`, { headers: as(account) });
  /** Asks in the console through the chat route; answers the conversation and whether it was answered from the knowledge base. */
  async function ask(message: string): Promise<{ conversationId: string; fromKnowledge: boolean }> {
    const answered = await server.request('POST', '/api/v1/chat', { headers: as(owner), body: { message, workspace_id: workspaceId } });
    expect(answered.status, answered.text).to.equal(200);
    await server.platform.readYourWrites(await server.platform.eventStore.headPosition());
    return { conversationId: answered.json.conversation_id, fromKnowledge: answered.json.answer.answered_from_knowledge };
  }

  before(async () => {
    server = await startTestServer({ SCRYPT_LOG_N: '12' });
    owner = await registerOwner(server, 'unanswered-org');
    member = await joinAs(server, await registerOwner(server, 'unanswered-mem'), owner.tenant_id, 'member');
    workspaceId = (await server.request('GET', '/api/v1/org/workspaces', { headers: as(owner) })).json.items.find((workspace: { is_default: boolean }) => workspace.is_default).id;
    const added = await server.request('POST', '/api/v1/documents/text', {
      headers: as(owner),
      body: { workspace_id: workspaceId, title: 'Opening hours', text: 'Our shop in Lisbon opens at 9:00 and closes at 18:00, Monday to Saturday. On Sundays we are closed.' },
    });
    expect(added.status, added.text).to.equal(201);
    await eventually(async () => (await server.platform.eventStore.readStream(documentStream(added.json.id))).some((event) => event.type === 'DocumentIndexed'), 20_000, 'the document indexed');
  });
  after(() => server.close());

  it('lists the questions answered without the knowledge base, newest first, and not those it answered', async () => {
    const giftCards = await ask('Do you sell gift cards?');
    const opening = await ask('When does the shop open on Saturday?');
    const bitcoin = await ask('Can I pay with bitcoin?');
    expect([giftCards.fromKnowledge, opening.fromKnowledge, bitcoin.fromKnowledge]).to.deep.equal([false, true, false]);

    const listed = await list();
    expect(listed.status, listed.text).to.equal(200);
    expect(listed.json.items.map((item: { question: string }) => item.question)).to.deep.equal(['Can I pay with bitcoin?', 'Do you sell gift cards?']);
    expect(listed.json.next_cursor).to.equal(null);
    const [newest] = listed.json.items;
    expect(newest).to.include({ conversation_id: bitcoin.conversationId, workspace_id: workspaceId });
    expect(newest).to.have.all.keys('question_id', 'question', 'answer_id', 'conversation_id', 'workspace_id', 'channel', 'asked_at', 'answered_at');
    // The ids are the conversation's messages: the question and the answer that said there was nothing.
    const messages = (await server.request('GET', `/api/v1/conversations/${bitcoin.conversationId}/messages`, { headers: as(owner) })).json.items;
    expect(messages.map((message: { id: string }) => message.id)).to.include.members([newest.question_id, newest.answer_id]);
    expect(Date.parse(newest.answered_at)).to.be.at.least(Date.parse(newest.asked_at));
  });

  it('filters by workspace and by when they were asked, in cursor pages', async () => {
    expect((await list(`?workspace_id=${workspaceId}`)).json.items).to.have.length(2);
    expect((await list('?workspace_id=no-such-workspace')).json.items).to.deep.equal([]);
    const all = (await list()).json.items as Array<{ question: string; asked_at: string }>;
    expect((await list(`?from=${encodeURIComponent(all[0].asked_at)}`)).json.items.map((item: { question: string }) => item.question)).to.deep.equal([all[0].question]);
    expect((await list(`?to=${encodeURIComponent(all[1].asked_at)}`)).json.items.map((item: { question: string }) => item.question)).to.deep.equal([all[1].question]);
    expect((await list('?to=2000-01-01')).json.items).to.deep.equal([]);
    const first = await list('?limit=1');
    expect(first.json.items.map((item: { question: string }) => item.question)).to.deep.equal([all[0].question]);
    const second = await list(`?limit=1&cursor=${encodeURIComponent(first.json.next_cursor)}`);
    expect(second.json.items.map((item: { question: string }) => item.question)).to.deep.equal([all[1].question]);
  });

  it('answers 400 naming each bad query field', async () => {
    const cases: Array<[string, string, string]> = [
      ['?from=yesterday', 'invalid_request', 'from'],
      ['?to=2026-02-30T99:00:00Z', 'invalid_request', 'to'],
      ['?from=2026-03-02&to=2026-03-01', 'invalid_request', 'from'],
      ['?workspace_id=a&workspace_id=b', 'invalid_request', 'workspace_id'],
      ['?workspace_id=', 'invalid_request', 'workspace_id'],
      ['?limit=0', 'invalid_limit', 'limit'],
    ];
    for (const [query, code, field] of cases) {
      const refused = await list(query);
      expect([refused.status, refused.json.code, refused.json.field], `${query}: ${refused.text}`).to.deep.equal([400, code, field]);
    }
    const cursor = await list('?cursor=not-a-cursor');
    expect([cursor.status, cursor.json.code]).to.deep.equal([400, 'invalid_cursor']);
  });

  it('is for owners and admins: 401 without a token, 403 for a member', async () => {
    expect((await server.request('GET', PATH)).status).to.equal(401);
    const refused = await list('', member);
    expect([refused.status, refused.json.code]).to.deep.equal([403, 'insufficient_role']);
  });

  it('counts the questions asked alike in a summary, the most asked first, with the latest wording', async () => {
    await ask('do you sell GIFT cards');
    await ask('Do you sell gift-cards?!');
    const summary = await server.request('GET', `${PATH}/summary`, { headers: as(owner) });
    expect(summary.status, summary.text).to.equal(200);
    expect(summary.json).to.include({ questions: 4, truncated: false });
    expect(summary.json.items.map((group: { question: string; count: number }) => [group.question, group.count])).to.deep.equal([
      ['Do you sell gift-cards?!', 3],
      ['Can I pay with bitcoin?', 1],
    ]);
    const [giftCards] = summary.json.items;
    expect(Date.parse(giftCards.last_asked_at)).to.be.greaterThan(Date.parse(giftCards.first_asked_at));
    expect((await server.request('GET', `${PATH}/summary?limit=1`, { headers: as(owner) })).json.items).to.have.length(1);
    expect((await server.request('GET', `${PATH}/summary?to=2000-01-01`, { headers: as(owner) })).json).to.deep.equal({ items: [], questions: 0, truncated: false });
    for (const [query, field] of [['?limit=0', 'limit'], ['?limit=101', 'limit'], ['?limit=many', 'limit'], ['?from=2026-03-02&to=2026-03-01', 'from'], ['?workspace_id=', 'workspace_id']]) {
      const refused = await server.request('GET', `${PATH}/summary${query}`, { headers: as(owner) });
      expect([refused.status, refused.json.field], `${query}: ${refused.text}`).to.deep.equal([400, field]);
    }
    expect((await server.request('GET', `${PATH}/summary`, { headers: as(member) })).status).to.equal(403);
    expect((await server.request('GET', `${PATH}/summary`)).status).to.equal(401);
  });

  it('groups by the words, not the case, punctuation or spacing', () => {
    expect(questionKey('  Do you sell GIFT-cards?! ')).to.equal(questionKey('do you sell gift cards'));
    expect(questionKey('Ｄｏ you ship to Köln?')).to.equal(questionKey('do you ship to köln'));
    expect(questionKey('Do you sell gift cards?')).not.to.equal(questionKey('Do you sell gift vouchers?'));
  });

  it('loses a question with its conversation, deleted or erased', async () => {
    const conversations = async (): Promise<string[]> => (await list('?limit=100')).json.items.map((item: { conversation_id: string }) => item.conversation_id);
    const [newest, older, ...rest] = await conversations();
    const deleted = await server.request('DELETE', `/api/v1/conversations/${newest}`, { headers: as(owner) });
    expect(deleted.status, deleted.text).to.equal(204);
    await server.platform.readYourWrites(await server.platform.eventStore.headPosition());
    expect(await conversations()).to.deep.equal([older, ...rest]);
    const erased = await server.request('POST', `/api/v1/conversations/${older}/erase`, { headers: as(owner) });
    expect(erased.status, erased.text).to.be.oneOf([200, 204]);
    await server.platform.readYourWrites(await server.platform.eventStore.headPosition());
    expect(await conversations()).to.deep.equal(rest);
  });
});
