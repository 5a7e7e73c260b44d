// Conversations driven through the conversation aggregate itself (handleCommand), as the chat
// and conversation routes of issue #11 record them: for suites that read what conversations
// lead to (handoffs, feedback, analytics) without depending on those routes. Each step waits
// until the read models show it (read-your-writes). Times come from the platform's clock.

import { randomUUID } from 'node:crypto';
import { type CommandResult, handleCommand } from '../../application/command-handling/handle-command';
import {
  type Channel,
  type ConversationCommand,
  type ConversationEvent,
  type ConversationState,
  type ConversationStatus,
  conversationStream,
} from '../../domain/conversation/conversation';
import { conversationAggregate } from '../../application/conversation/conversations';
import type { Platform } from '../../infrastructure/composition-root';
import { userContext } from './context';


export interface ConversationDriver {
  /** Starts a conversation; answers its id. */
  start(options?: { title?: string; channel?: Channel }): Promise<string>;
  /** The user's message; answers its id. */
  ask(conversationId: string, text: string): Promise<string>;
  /** The assistant's answer to `replyTo`; answers its id. */
  answer(conversationId: string, replyTo: string, options?: { text?: string; fromKnowledge?: boolean }): Promise<string>;
  fail(conversationId: string, replyTo: string): Promise<void>;
  agentReply(conversationId: string, text: string): Promise<string>;
  /** Answers the id of the ConversationStatusChanged event, when one was recorded. */
  setStatus(conversationId: string, status: ConversationStatus): Promise<string | null>;
  feedback(conversationId: string, messageId: string, rating: 'up' | 'down', comment?: string): Promise<void>;
}

/** Drives conversations of `tenantId` as the user `userId`. */
export function conversationsOf(platform: Platform, tenantId: string, userId: string): ConversationDriver {
  const user = { kind: 'user' as const, id: userId };
  async function run(conversationId: string, command: ConversationCommand): Promise<CommandResult<ConversationEvent>> {
    const result = await handleCommand<ConversationCommand, ConversationEvent, ConversationState>(
      platform.commands,
      conversationAggregate,
      conversationStream(conversationId),
      command,
      userContext({ tenant_id: tenantId, actor: user }),
    );
    await platform.readYourWrites(result.position);
    return result;
  }
  return {
    async start(options = {}) {
      const id = randomUUID();
      await run(id, {
        type: 'StartConversation',
        data: { conversation_id: id, tenant_id: tenantId, workspace_id: null, channel: options.channel ?? 'console', title: options.title ?? 'A question', started_by: user },
      });
      return id;
    },
    async ask(conversationId, text) {
      const id = randomUUID();
      await run(conversationId, { type: 'PostUserMessage', data: { message_id: id, text, author: user, end_user_token_sealed: null, end_user_session_sealed: null } });
      return id;
    },
    async answer(conversationId, replyTo, options = {}) {
      const id = randomUUID();
      const fromKnowledge = options.fromKnowledge ?? true;
      await run(conversationId, {
        type: 'RecordAnswer',
        data: {
          message_id: id,
          reply_to: replyTo,
          text: options.text ?? (fromKnowledge ? 'Returns are free within 30 days.' : 'I found nothing about that in the knowledge base.'),
          citations: fromKnowledge ? [{ passage_id: 'p1', document_id: 'd1', chunk_id: 'c1', title: 'Returns policy' }] : [],
          answered_from_knowledge: fromKnowledge,
          model: 'embedded',
          latency_ms: 12,
          usage: null,
        },
      });
      return id;
    },
    async fail(conversationId, replyTo) {
      await run(conversationId, { type: 'RecordAnswerFailure', data: { reply_to: replyTo, code: 'engine_unavailable', message: 'the model server did not answer' } });
    },
    async agentReply(conversationId, text) {
      const id = randomUUID();
      await run(conversationId, { type: 'PostAgentReply', data: { message_id: id, text, agent: user } });
      return id;
    },
    async setStatus(conversationId, status) {
      const result = await run(conversationId, { type: 'ChangeConversationStatus', data: { status } });
      if (result.events.length === 0) return null;
      const [recorded] = await platform.eventStore.readStream(conversationStream(conversationId), { direction: 'backwards', maxCount: 1 });
      return recorded.id;
    },
    async feedback(conversationId, messageId, rating, comment = '') {
      await run(conversationId, { type: 'GiveFeedback', data: { message_id: messageId, rating, comment, given_by: user } });
    },
  };
}
