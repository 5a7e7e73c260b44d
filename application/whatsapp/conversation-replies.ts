// Saga `whatsapp_conversation_replies` (version 1): what else is said to a WhatsApp user in
// their conversation besides the assistant's answer to each message. A person's reply
// (`AgentReplied`: once a conversation is handed off, the assistant is quiet and people answer
// from the console) and the assistant's report after approved tool calls
// (`AssistantFollowedUp`, unless it failed) are queued as replies to the conversation's sender,
// from the tenant's business number (to the conversation's sealed `contact`: once erased, to
// nobody); reply-delivery.ts sends them like any reply (the outbox or
// the Cloud API, with retries). Conversations of other channels are not its business.
//
// Idempotent on redelivery: the reply's id derives from the triggering event. Its events carry
// the system actor `whatsapp_conversation_replies`, caused by the trigger.

import { type ConversationEvent, contactOf, conversationStream } from '../../domain/conversation/conversation';
import { ERASED_PERSONAL_DATA } from '../../domain/shared/events';
import type { CommandDependencies } from '../command-handling/handle-command';
import type { RecordedOf } from '../ports/domain-event-store';
import type { Logger } from '../ports/logger';
import type { Saga } from '../sagas/saga';
import { systemContext } from '../shared/request-context';
import { queueWhatsAppReply } from './reply-delivery';
import { configurationOfTenant } from './whatsapp-config';

export const WHATSAPP_CONVERSATION_REPLIES = 'whatsapp_conversation_replies';

type Trigger = 'AgentReplied' | 'AssistantFollowedUp';

export function whatsappConversationRepliesSaga(deps: CommandDependencies & { logger: Logger }): Saga<Trigger> {
  return {
    name: WHATSAPP_CONVERSATION_REPLIES,
    version: 1,
    filter: { kind: 'event_type', types: ['AgentReplied', 'AssistantFollowedUp'] },
    async handle(event: RecordedOf<Trigger>) {
      // A follow-up that could not be given has nothing to tell.
      if (event.type === 'AssistantFollowedUp' && (event.data.error !== null || event.data.text === '')) return;
      const { conversation_id, tenant_id, text } = event.data;
      const [first] = (await deps.eventStore.readStream(conversationStream(conversation_id), { maxCount: 1 })) as unknown as ConversationEvent[];
      if (first?.type !== 'ConversationStarted' || first.data.channel !== 'whatsapp') return;
      const to = contactOf(first.data)?.address ?? null;
      if (to === null || to === ERASED_PERSONAL_DATA) return;
      const configuration = await configurationOfTenant(deps, tenant_id);
      if (configuration === null) {
        deps.logger.warn({ tenant_id, conversation_id }, 'a reply in a WhatsApp conversation was not sent: the organization has no WhatsApp configuration');
        return;
      }
      await queueWhatsAppReply(
        deps,
        {
          reply_id: deps.ids.fromKey(`whatsappReply:${event.id}`),
          tenant_id,
          phone_number_id: configuration.phone_number_id,
          to,
          text,
          kind: event.type === 'AgentReplied' ? 'agent_reply' : 'follow_up',
          conversation_id,
          in_reply_to: null,
        },
        { ...systemContext(event.metadata.correlation_id, WHATSAPP_CONVERSATION_REPLIES, event.id), tenant_id },
      );
    },
  };
}
