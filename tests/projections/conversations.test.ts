// The conversations and conversation_messages read models: what a conversation's events make
// of them, and that a replay of any part of the log changes nothing.

import { expect } from 'chai';
import { conversationAggregate } from '../../application/conversation/conversations';
import { handleCommand } from '../../application/command-handling/handle-command';
import { type ConversationCommand, conversationStream } from '../../domain/conversation/conversation';
import {
  CONVERSATIONS,
  CONVERSATION_MESSAGES,
  type ConversationDocument,
  type ConversationMessageDocument,
  PREVIEW_LENGTH,
  conversationsProjection,
  failedAnswerId,
  messagePreview,
} from '../../projections/conversations';
import type { ProjectionRunner } from '../../projections/runner';
import { userContext } from '../support/context';
import { type EmbeddedStores, ManualClock, embeddedStores, projectionRunnerOver } from '../support/stores';

const T = 't1';
const USER = { kind: 'user' as const, id: 'u1' };
const AGENT = { kind: 'user' as const, id: 'agent-1' };
const CITATION = { passage_id: '1', document_id: 'd1', chunk_id: 'k1', title: 'Refund policy' };

describe('conversations projection', () => {
  let clock: ManualClock;
  let stores: EmbeddedStores;
  let runner: ProjectionRunner;

  const startRunner = async (): Promise<void> => {
    runner = projectionRunnerOver(stores, [conversationsProjection]);
    await runner.start();
  };
  const settle = async () => {
    expect(await runner.waitFor(await stores.eventStore.headPosition(), { timeoutMs: 5000 })).to.equal(true);
  };
  /** Stops the runner, moves its checkpoint back to `position` and starts again: what a crash between a write and its checkpoint replays. */
  const replayFrom = async (position: number) => {
    await runner.stop();
    const state = await stores.readStore.getProjectionState(conversationsProjection.name);
    await stores.readStore.putProjectionState({ ...state!, checkpoint: position });
    await startRunner();
    await settle();
  };

  /** Runs a command on the conversation a second later than the one before. */
  const on = async (conversationId: string, command: ConversationCommand) => {
    clock.advance(1000);
    return handleCommand(stores.commands, conversationAggregate, conversationStream(conversationId), command, userContext({ tenant_id: T, actor: USER }));
  };
  const start = (id: string, title = 'Refunds, please') =>
    on(id, { type: 'StartConversation', data: { conversation_id: id, tenant_id: T, workspace_id: 'w1', channel: 'console', title, started_by: USER } });
  const ask = (id: string, messageId: string, text: string) =>
    on(id, { type: 'PostUserMessage', data: { message_id: messageId, text, author: USER, end_user_token_sealed: 'sealed-token', end_user_session_sealed: null } });
  const answer = (id: string, messageId: string, replyTo: string, text: string) =>
    on(id, { type: 'RecordAnswer', data: { message_id: messageId, reply_to: replyTo, text, citations: [CITATION], answered_from_knowledge: true, model: 'extractive', latency_ms: 7, usage: null } });

  const conversation = (id: string) => stores.readStore.collection<ConversationDocument>(CONVERSATIONS).get(id);
  const messagesOf = async (id: string) =>
    (await stores.readStore.collection<ConversationMessageDocument>(CONVERSATION_MESSAGES).find({ where: { conversation_id: id }, sort: { field: 'seq', direction: 'asc' }, limit: 100 })).items;
  const everything = async () => ({
    conversations: (await stores.readStore.collection(CONVERSATIONS).find({ limit: 1000 })).items,
    messages: (await stores.readStore.collection(CONVERSATION_MESSAGES).find({ limit: 1000 })).items,
  });

  /** A conversation with every kind of event, and a second one deleted. */
  const history = async (): Promise<{ middle: number }> => {
    await start('c1');
    await ask('c1', 'm1', 'How do **refunds** work?');
    await answer('c1', 'a1', 'm1', 'Within 30 days [1].\n\nSee the [policy](https://example.com/p).');
    await ask('c1', 'm2', 'And for sale items?');
    const middle = (await on('c1', { type: 'RecordAnswerFailure', data: { reply_to: 'm2', code: 'engine_unavailable', message: 'the model did not answer' } })).position!;
    await on('c1', { type: 'GiveFeedback', data: { message_id: 'a1', rating: 'up', comment: 'clear', given_by: USER } });
    await on('c1', { type: 'PostAgentReply', data: { message_id: 'r1', text: 'Sale items are final, sorry.', agent: AGENT } });
    await on('c1', { type: 'RenameConversation', data: { title: 'Sale Refunds' } });
    await start('c2', 'Gone soon');
    await on('c2', { type: 'DeleteConversation', data: {} });
    return { middle };
  };

  beforeEach(async () => {
    clock = new ManualClock(new Date('2026-03-02T09:00:00.000Z'));
    stores = embeddedStores(clock);
    await startRunner();
  });
  afterEach(async () => {
    await runner.stop();
    await stores.dispose();
  });

  it('keeps one document per conversation with what a list shows', async () => {
    await history();
    await settle();
    const c1 = await conversation('c1');
    expect(c1).to.deep.include({
      tenant_id: T,
      workspace_id: 'w1',
      channel: 'console',
      title: 'Sale Refunds',
      title_key: 'sale refunds',
      status: 'handed_off',
      started_by: USER,
      started_by_user_id: 'u1',
      started_at: '2026-03-02T09:00:01.000Z',
      // user, answer, user, agent: the failure is no message and moves no activity.
      message_count: 4,
      last_message_at: '2026-03-02T09:00:07.000Z',
      last_activity_at: '2026-03-02T09:00:07.000Z',
      last_message_preview: 'Sale items are final, sorry.',
      status_changed_at: '2026-03-02T09:00:07.000Z',
      deleted: false,
      deleted_at: null,
      updated_at: '2026-03-02T09:00:08.000Z',
    });
    expect(c1!.revision).to.equal((await stores.events.readStream('conversation-c1')).length - 1);
    expect(await conversation('c2')).to.deep.include({ deleted: true, deleted_at: '2026-03-02T09:00:10.000Z', message_count: 0, last_message_at: null, last_activity_at: '2026-03-02T09:00:09.000Z' });
  });

  it('keeps one document per message in stream order, a failure as an assistant message with its error', async () => {
    await history();
    await settle();
    const messages = await messagesOf('c1');
    expect(messages.map((message) => [message.id, message.role])).to.deep.equal([
      ['m1', 'user'],
      ['a1', 'assistant'],
      ['m2', 'user'],
      [failedAnswerId('m2'), 'assistant'],
      ['r1', 'agent'],
    ]);
    expect(messages.map((message) => message.seq)).to.deep.equal([1, 2, 3, 4, 6]);
    expect(messages[0]).to.deep.include({ text: 'How do **refunds** work?', author: USER, reply_to: null, citations: [], error: null, model: null, created_at: '2026-03-02T09:00:02.000Z' });
    expect(messages[0]).to.not.have.any.keys('end_user_token_sealed', 'end_user_session_sealed');
    expect(messages[1]).to.deep.include({ reply_to: 'm1', citations: [CITATION], answered_from_knowledge: true, model: 'extractive', latency_ms: 7, author: null, feedback_rating: 'up' });
    expect(messages[3]).to.deep.include({ text: '', reply_to: 'm2', error: { code: 'engine_unavailable', message: 'the model did not answer' }, answered_from_knowledge: null });
    expect(messages[4]).to.deep.include({ text: 'Sale items are final, sorry.', author: AGENT, feedback_rating: null });
  });

  it("deletes a deleted conversation's messages, title and preview; a replay from before writes none of them again", async () => {
    await start('c5', 'My private matter');
    const asked = (await ask('c5', 'm1', 'My account number is 1234')).position!;
    await answer('c5', 'a1', 'm1', 'Thanks, noted.');
    await start('c6', 'Kept');
    await ask('c6', 'k1', 'Still here');
    await on('c5', { type: 'DeleteConversation', data: {} });
    await settle();
    expect(await messagesOf('c5')).to.deep.equal([]);
    expect(await conversation('c5')).to.deep.include({ deleted: true, title: '', title_key: '', last_message_preview: null, message_count: 2 });
    expect((await messagesOf('c6')).map((message) => message.id)).to.deep.equal(['k1']);
    const after = await everything();
    await replayFrom(asked - 1);
    expect(await everything()).to.deep.equal(after);
    await replayFrom(0);
    expect(await everything()).to.deep.equal(after);
  });

  it('shows a reopening by a user message as the status it records', async () => {
    await start('c3');
    await on('c3', { type: 'ChangeConversationStatus', data: { status: 'resolved' } });
    await settle();
    expect((await conversation('c3'))!.status).to.equal('resolved');
    await ask('c3', 'm1', 'One more thing');
    await settle();
    expect(await conversation('c3')).to.deep.include({ status: 'open', message_count: 1, last_message_preview: 'One more thing' });
  });

  it('changes nothing when the whole log is replayed onto its documents', async () => {
    await history();
    await settle();
    const before = await everything();
    await replayFrom(0);
    expect(await everything()).to.deep.equal(before);
  });

  it('changes nothing when a replay starts in the middle of a conversation, and still applies what comes after', async () => {
    const { middle } = await history();
    await settle();
    const before = await everything();
    await replayFrom(middle - 1);
    expect(await everything()).to.deep.equal(before);
    await ask('c1', 'm3', 'Thanks');
    await settle();
    expect(await conversation('c1')).to.deep.include({ message_count: 5, last_message_preview: 'Thanks' });
    expect((await messagesOf('c1')).map((message) => message.id)).to.deep.equal(['m1', 'a1', 'm2', failedAnswerId('m2'), 'r1', 'm3']);
  });

  it('previews a message as one short line of plain text', () => {
    expect(messagePreview('## Refunds\n\n- **Within** 30 days [1]\n- see `the` [policy](https://example.com/p)')).to.equal('Refunds Within 30 days see the policy');
    const long = messagePreview(`${'word '.repeat(100)}end`);
    expect([...long]).to.have.length(PREVIEW_LENGTH);
    expect(long.endsWith('…')).to.equal(true);
    expect(messagePreview('  short  ')).to.equal('short');
  });
});
