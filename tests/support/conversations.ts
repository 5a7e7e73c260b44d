// Conversations made as the chat use cases make them, through the conversation aggregate's
// commands (the chat routes live elsewhere): for suites that test what people do with a
// conversation afterwards. Each helper waits until the read models show what it wrote.

import { randomUUID } from 'node:crypto';
import { handleCommand } from '../../application/command-handling/handle-command';
import { conversationAggregate } from '../../application/conversation/conversations';
import { type Channel, type ConversationCommand, type Party, conversationStream } from '../../domain/conversation/conversation';
import { userContext } from './context';
import type { Account } from './identity';
import type { TestServer } from './server';

const partyOf = (account: Account): Party => ({ kind: 'user', id: account.user_id });

async function run(server: TestServer, tenantId: string, actor: Party, conversationId: string, command: ConversationCommand): Promise<void> {
  const result = await handleCommand(server.platform.commands, conversationAggregate, conversationStream(conversationId), command, userContext({ tenant_id: tenantId, actor }));
  await server.platform.readYourWrites(result.position);
}

export interface StartOptions {
  title?: string;
  workspace_id?: string | null;
  channel?: Channel;
  /** Who started it, when not `account` itself (a widget's end user). */
  started_by?: Party;
}

/** Starts a conversation in `account`'s organization, started by them unless said otherwise; returns its id. */
export async function startConversation(server: TestServer, account: Account, options: StartOptions = {}): Promise<string> {
  const id = randomUUID();
  const startedBy = options.started_by ?? partyOf(account);
  await run(server, account.tenant_id, startedBy, id, {
    type: 'StartConversation',
    data: { conversation_id: id, tenant_id: account.tenant_id, workspace_id: options.workspace_id ?? null, channel: options.channel ?? 'console', title: options.title ?? 'A question', started_by: startedBy },
  });
  return id;
}

/** A user message from `account`; returns its id. */
export async function askIn(server: TestServer, account: Account, conversationId: string, text: string): Promise<string> {
  const id = randomUUID();
  await run(server, account.tenant_id, partyOf(account), conversationId, {
    type: 'PostUserMessage',
    data: { message_id: id, text, author: partyOf(account), end_user_token_sealed: null, end_user_session_sealed: null },
  });
  return id;
}

/** The assistant's answer to a user message, citing one passage; returns its id. */
export async function answerIn(server: TestServer, tenantId: string, conversationId: string, replyTo: string, text: string): Promise<string> {
  const id = randomUUID();
  await run(server, tenantId, { kind: 'system', id: 'assistant' }, conversationId, {
    type: 'RecordAnswer',
    data: {
      message_id: id,
      reply_to: replyTo,
      text,
      citations: [{ passage_id: '1', document_id: 'doc-1', chunk_id: 'chunk-1', title: 'Handbook' }],
      answered_from_knowledge: true,
      model: 'extractive',
      latency_ms: 5,
      usage: { prompt_tokens: 10, completion_tokens: 4 },
    },
  });
  return id;
}

/** The assistant failing to answer a user message. */
export async function failIn(server: TestServer, tenantId: string, conversationId: string, replyTo: string): Promise<void> {
  await run(server, tenantId, { kind: 'system', id: 'assistant' }, conversationId, {
    type: 'RecordAnswerFailure',
    data: { reply_to: replyTo, code: 'engine_unavailable', message: 'the model did not answer' },
  });
}

/** A conversation with one question answered; returns its id and the answer's. */
export async function answeredConversation(server: TestServer, account: Account, options: StartOptions = {}): Promise<{ id: string; question: string; answer: string }> {
  const id = await startConversation(server, account, options);
  const question = await askIn(server, account, id, 'How do refunds work?');
  const answer = await answerIn(server, account.tenant_id, id, question, 'Within 30 days [1].');
  return { id, question, answer };
}
