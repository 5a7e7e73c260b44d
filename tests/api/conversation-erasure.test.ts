// Erasure of a conversation (docs/personal-data.md, "Erasure"), over HTTP: its texts are stored
// sealed under the conversation's key, read in clear by the API until `POST .../erase` deletes
// that key; from then on they read as ERASED_PERSONAL_DATA everywhere (events, a rebuild), the
// conversation is gone from every route, and the audit log's chain still verifies. The saga
// personal_data_erasure deletes the key of an erasure recorded by a process that stopped before
// it did.

import { expect } from 'chai';
import { handleCommand } from '../../application/command-handling/handle-command';
import { conversationAggregate } from '../../application/conversation/conversations';
import { type ConversationEvent, conversationStream, conversationSubject } from '../../domain/conversation/conversation';
import { ERASED_PERSONAL_DATA } from '../../domain/shared/events';
import { userContext } from '../support/context';
import { type Account, joinAs, registerOwner } from '../support/identity';
import { type TestResponse, type TestServer, startTestServer } from '../support/server';
import { eventually } from '../support/stores';

describe('conversation erasure (POST /api/v1/conversations/{id}/erase)', () => {
  let server: TestServer;
  let owner: Account;
  let admin: Account;
  let member: Account;
  let outsider: Account;

  const as = (account: Account) => ({ authorization: `Bearer ${account.token}` });
  const send = (account: Account | null, method: string, path: string, body?: unknown): Promise<TestResponse> => server.request(method, path, { headers: account ? as(account) : {}, body });
  const erase = (account: Account | null, conversationId: string) => send(account, 'POST', `/api/v1/conversations/${conversationId}/erase`);
  const storedText = async (conversationId: string): Promise<string> => JSON.stringify(await server.platform.storedEvents.readStream(conversationStream(conversationId)));

  /** A member's conversation through the chat route: a question, the answer, feedback with a comment, a new title. */
  async function talk(account: Account, question: string): Promise<{ id: string; answerId: string }> {
    const asked = await send(account, 'POST', '/api/v1/chat', { message: question });
    expect(asked.status, asked.text).to.equal(200);
    const id: string = asked.json.conversation_id;
    const answerId: string = asked.json.answer.message_id;
    const feedback = await send(account, 'POST', `/api/v1/conversations/${id}/messages/${answerId}/feedback`, { rating: 'down', comment: 'I live at 12 Rue des Lilas, call me on 06 12 34 56 78' });
    expect(feedback.status, feedback.text).to.be.oneOf([200, 201]);
    const renamed = await send(account, 'PATCH', `/api/v1/conversations/${id}`, { title: 'Claire Martin, parcel' });
    expect(renamed.status, renamed.text).to.equal(200);
    return { id, answerId };
  }

  before(async () => {
    server = await startTestServer({ SCRYPT_LOG_N: '12' });
    owner = await registerOwner(server, 'erasure-org');
    admin = await joinAs(server, await registerOwner(server, 'erasure-adm-home', 'erasure-adm@example.com'), owner.tenant_id, 'admin');
    member = await joinAs(server, await registerOwner(server, 'erasure-mem-home', 'erasure-mem@example.com'), owner.tenant_id, 'member');
    outsider = await registerOwner(server, 'erasure-other-org');
  });
  after(() => server.close());

  it('stores a conversation\'s texts sealed in the event log, and shows them in clear through the API', async () => {
    const { id } = await talk(member, 'My name is Claire Martin and my parcel 7781 is late');
    const stored = await storedText(id);
    for (const secret of ['Claire Martin', 'parcel 7781', 'Rue des Lilas', '06 12 34 56 78']) expect(stored).to.not.include(secret);
    expect(stored).to.include('"personal_data":"pd1.');
    expect(stored).to.include(`"subject":"${conversationSubject(id)}"`);

    const messages = await send(member, 'GET', `/api/v1/conversations/${id}/messages`);
    expect(messages.json.items[0].text).to.equal('My name is Claire Martin and my parcel 7781 is late');
    expect((await send(member, 'GET', `/api/v1/conversations/${id}`)).json.title).to.equal('Claire Martin, parcel');
    const [started, posted] = (await server.platform.eventStore.readStream(conversationStream(id))) as unknown as ConversationEvent[];
    expect(started.type === 'ConversationStarted' && started.data.title).to.equal('My name is Claire Martin and my parcel 7781 is late');
    expect(posted.type === 'UserMessagePosted' && posted.data.text).to.equal('My name is Claire Martin and my parcel 7781 is late');
  });

  it('refuses without a token (401), to a member, even the one who started it (403), and for a conversation not of the organization or not there (404)', async () => {
    const { id } = await talk(member, 'Please forget me');
    expect((await erase(null, id)).status).to.equal(401);
    const forbidden = await erase(member, id);
    expect([forbidden.status, forbidden.json.code]).to.deep.equal([403, 'insufficient_role']);
    const foreign = await erase(outsider, id);
    expect([foreign.status, foreign.json.code]).to.deep.equal([404, 'conversation_not_found']);
    const missing = await erase(owner, '00000000-0000-4000-8000-000000000000');
    expect([missing.status, missing.json.code]).to.deep.equal([404, 'conversation_not_found']);
    expect((await send(member, 'GET', `/api/v1/conversations/${id}/messages`)).json.items[0].text).to.equal('Please forget me');
  });

  it('erases it for good: gone from every route, its texts unreadable in the events and after a rebuild, the audit chain intact', async () => {
    const { id, answerId } = await talk(member, 'I am Claire Martin, born 1984-03-02, erase me');
    const sealedBefore = await storedText(id);

    const erased = await erase(admin, id);
    expect(erased.status, erased.text).to.equal(200);
    expect(erased.json).to.have.keys('id', 'erased_at');
    expect(erased.json.id).to.equal(id);

    expect((await send(owner, 'GET', `/api/v1/conversations/${id}`)).status).to.equal(404);
    expect((await send(owner, 'GET', `/api/v1/conversations/${id}/messages`)).status).to.equal(404);
    expect((await send(owner, 'GET', '/api/v1/conversations')).json.items.map((item: { id: string }) => item.id)).to.not.include(id);
    const feedbacks = await send(owner, 'GET', '/api/v1/tenant/feedbacks');
    expect(JSON.stringify(feedbacks.json)).to.not.include(answerId);
    const posted = await send(member, 'POST', `/api/v1/conversations/${id}/messages`, { text: 'Hello again' });
    expect(posted.status).to.equal(404);

    // The events are unchanged, byte for byte, but nothing of them opens any more.
    const after = await storedText(id);
    expect(after.startsWith(sealedBefore.slice(0, -1))).to.equal(true);
    const events = (await server.platform.eventStore.readStream(conversationStream(id))) as unknown as ConversationEvent[];
    expect(events[events.length - 1].type).to.equal('ConversationErased');
    const texts = events.flatMap((event) => {
      if (event.type === 'ConversationStarted' || event.type === 'ConversationRenamed') return [event.data.title];
      if (event.type === 'UserMessagePosted' || event.type === 'AssistantAnswered') return [event.data.text];
      if (event.type === 'FeedbackGiven') return [event.data.comment];
      return [];
    });
    expect(texts.length).to.be.greaterThan(4);
    expect(new Set(texts)).to.deep.equal(new Set([ERASED_PERSONAL_DATA]));

    await server.platform.projections.rebuild('conversations');
    await server.platform.projections.rebuild('feedbacks');
    expect(await server.platform.readStore.collection('conversation_messages').find({ where: { conversation_id: id } })).to.have.property('items').that.deep.equals([]);
    expect(await server.platform.readStore.collection('conversations').get(id)).to.deep.include({ deleted: true, title: '', last_message_preview: null });

    const verified = await send(owner, 'GET', '/api/v1/org/audit-logs/verify');
    expect(verified.status, verified.text).to.equal(200);
    expect(verified.json.ok).to.equal(true);
    // The record of having done it: who erased what, and when.
    const audited = await send(owner, 'GET', '/api/v1/org/audit-logs?action=ConversationErased');
    expect(audited.status, audited.text).to.equal(200);
    const entry = audited.json.items.find((item: { stream?: string; subject?: unknown }) => JSON.stringify(item).includes(id));
    expect(entry, JSON.stringify(audited.json.items)).to.not.equal(undefined);
    expect(JSON.stringify(entry)).to.include(admin.user_id);
  });

  it('keeps the answers of chat requests and agent replies sent with an Idempotency-Key under the conversation\'s key: replayed until the erasure, then 410', async () => {
    const chatOnce = () => server.request('POST', '/api/v1/chat', { headers: { ...as(member), 'idempotency-key': 'erasure-chat-1' }, body: { message: 'Please ship it to Jane Doe, 4 Elm Street' } });
    const asked = await chatOnce();
    expect(asked.status, asked.text).to.equal(200);
    const id: string = asked.json.conversation_id;
    const replied = () => server.request('POST', `/api/v1/conversations/${id}/messages`, { headers: { ...as(owner), 'idempotency-key': 'erasure-reply-1' }, body: { text: 'Jane, it ships on Monday' } });
    const reply = await replied();
    expect(reply.status, reply.text).to.equal(201);
    const retried = await chatOnce();
    expect(retried.headers.get('idempotent-replayed')).to.equal('true');
    expect(retried.json).to.deep.equal(asked.json);

    const keptAnswers = async (): Promise<Array<{ data: Record<string, unknown> }>> =>
      (await server.platform.eventStore.readAll({ fromPosition: 0, maxCount: 1_000_000 })).filter((event) => event.type === 'IdempotentPersonalAnswerRecorded' && (event.data as { subject: string }).subject === conversationSubject(id));
    const kept = await keptAnswers();
    expect(kept).to.have.length(2);
    expect(kept.map((event) => String(event.data.answer)).join('\n')).to.include('Jane Doe').and.include('ships on Monday');
    const stored = JSON.stringify((await server.platform.storedEvents.readAll({ fromPosition: 0, maxCount: 1_000_000 })).filter((event) => event.type === 'IdempotentPersonalAnswerRecorded'));
    for (const text of ['Jane Doe', 'ships on Monday']) expect(stored).to.not.include(text);

    expect((await erase(owner, id)).status).to.equal(200);
    for (const retry of [await chatOnce(), await replied()]) {
      expect(retry.status, retry.text).to.equal(410);
      expect(retry.json.code).to.equal('personal_data_erased');
    }
    expect((await keptAnswers()).map((event) => event.data.answer)).to.deep.equal([ERASED_PERSONAL_DATA, ERASED_PERSONAL_DATA]);
  });

  it('answers the first erasure again when asked twice, and erases a conversation deleted before', async () => {
    const { id } = await talk(owner, 'Once is enough');
    const first = await erase(owner, id);
    const again = await erase(admin, id);
    expect([again.status, again.json]).to.deep.equal([200, first.json]);
    expect((await server.platform.eventStore.readStream(conversationStream(id))).filter((event) => event.type === 'ConversationErased')).to.have.length(1);

    const { id: deletedFirst } = await talk(member, 'Delete me, then erase me');
    expect((await send(member, 'DELETE', `/api/v1/conversations/${deletedFirst}`)).status).to.equal(204);
    const erased = await erase(owner, deletedFirst);
    expect(erased.status, erased.text).to.equal(200);
    expect(await storedText(deletedFirst)).to.not.include('erase me');
    const [started] = (await server.platform.eventStore.readStream(conversationStream(deletedFirst))) as unknown as ConversationEvent[];
    expect(started.type === 'ConversationStarted' && started.data.title).to.equal(ERASED_PERSONAL_DATA);
  });

  it('deletes the key of an erasure recorded by a process that stopped before deleting it (saga personal_data_erasure)', async () => {
    const { id } = await talk(member, 'A process stops mid-erasure');
    const [, stored] = await server.platform.storedEvents.readStream(conversationStream(id));
    const sealed = (stored.data as { text: { personal_data: string; subject: string } }).text;
    const vault = server.platform.identity.personalData;
    expect(await vault.open([{ subject: sealed.subject, sealed: sealed.personal_data }])).to.deep.equal(['A process stops mid-erasure']);

    // Only the event, as the use case records it before it deletes the key.
    await handleCommand(server.platform.commands, conversationAggregate, conversationStream(id), { type: 'EraseConversation', data: {} }, userContext({ tenant_id: owner.tenant_id }));
    await eventually(async () => (await vault.open([{ subject: sealed.subject, sealed: sealed.personal_data }]))[0] === null, 10_000, 'the key deleted by the saga');
  });
});
