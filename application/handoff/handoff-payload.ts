// What a handoff posts to the tenant's webhook: the conversation as it stood when a person
// took it over, read from the conversation's own stream up to the hand-off (never a read
// model), so every attempt posts the same body. docs/tenant-configuration.md shows it.
// Sealed end-user tokens never leave the platform; assistant failures are not messages.

import { type Contact, type ConversationEvent, type ConversationState, contactOf, conversationDecider, conversationEvents, conversationStream, verifiedUserIdOf } from '../../domain/conversation/conversation';
import type { HandoffRequestedData } from '../../domain/handoff/handoff';
import type { CommandDependencies } from '../command-handling/handle-command';

/** The newest messages a handoff carries; `messages_omitted` counts the older ones. */
export const HANDOFF_MESSAGES = 50;

export interface HandoffMessage {
  id: string;
  role: 'user' | 'assistant' | 'agent';
  text: string;
  at: string;
  /** Who wrote it: the user or end user, the agent; null for the assistant. */
  author: { kind: string; id: string } | null;
  /** The knowledge the assistant's answer cites (titles and ids); [] for other messages. */
  citations: Array<{ document_id: string; title: string }>;
}

export interface HandoffPayload {
  type: 'conversation.handed_off';
  /** The same on every attempt of one handoff: receivers drop repeats by it (also the `x-svc-delivery-id` header). */
  delivery_id: string;
  tenant_id: string;
  handed_off_at: string;
  handed_off_by: { kind: string; id: string };
  /** Why, when whoever handed it off said (a widget visitor asking for a person); null otherwise. */
  reason: string | null;
  conversation: {
    id: string;
    title: string;
    channel: string;
    status: string;
    workspace_id: string | null;
    started_at: string;
    started_by: { kind: string; id: string };
    /** The end user on a messaging channel (a WhatsApp sender's number and profile name), to reach them; null for other channels. */
    contact: Contact | null;
    /** The host site's user id of the verified widget visitor who started it, to look them up; null for any other starter. */
    verified_user_id: string | null;
  };
  /** Oldest first. */
  messages: HandoffMessage[];
  messages_omitted: number;
}

function messageOf(event: ConversationEvent): HandoffMessage | null {
  switch (event.type) {
    case 'UserMessagePosted':
      return { id: event.data.message_id, role: 'user', text: event.data.text, at: event.data.posted_at, author: event.data.author, citations: [] };
    case 'AssistantAnswered':
      return {
        id: event.data.message_id,
        role: 'assistant',
        text: event.data.text,
        at: event.data.answered_at,
        author: null,
        citations: event.data.citations.map(({ document_id, title }) => ({ document_id, title })),
      };
    case 'AssistantFollowedUp':
      // The report after approved tool calls is an answer of the assistant too; one that failed says nothing.
      if (event.data.error !== null) return null;
      return { id: event.data.message_id, role: 'assistant', text: event.data.text, at: event.data.answered_at, author: null, citations: event.data.citations.map(({ document_id, title }) => ({ document_id, title })) };
    case 'AgentReplied':
      return { id: event.data.message_id, role: 'agent', text: event.data.text, at: event.data.replied_at, author: event.data.agent, citations: [] };
    default:
      return null;
  }
}

/**
 * The payload of a handoff, from the conversation's events up to the hand-off; null when the
 * conversation is gone, also when it was deleted or erased after the hand-off (its transcript
 * is then not sent).
 */
export async function handoffPayload(deps: Pick<CommandDependencies, 'eventStore'>, request: HandoffRequestedData): Promise<HandoffPayload | null> {
  const recorded = await deps.eventStore.readStream(conversationStream(request.conversation_id));
  const all = recorded.filter((event): event is typeof event & ConversationEvent => conversationEvents.includes(event));
  if (all.reduce(conversationDecider.evolve, conversationDecider.initialState()).status === 'deleted') return null;
  const events = all.filter((event) => event.revision <= request.conversation_revision);
  const started = events.find((event) => event.type === 'ConversationStarted');
  if (!started || started.type !== 'ConversationStarted') return null;
  const state: ConversationState = events.reduce(conversationDecider.evolve, conversationDecider.initialState());
  if (state.status === 'absent' || state.status === 'deleted') return null;
  const messages = events.map(messageOf).filter((message): message is HandoffMessage => message !== null);
  // The hand-off itself is the last event read: the status change at `conversation_revision`.
  const handOff = events[events.length - 1];
  const reason = handOff?.type === 'ConversationStatusChanged' ? (handOff.data.reason ?? null) : null;
  const shown = messages.slice(-HANDOFF_MESSAGES);
  return {
    type: 'conversation.handed_off',
    delivery_id: request.handoff_id,
    tenant_id: request.tenant_id,
    handed_off_at: request.handed_off_at,
    handed_off_by: request.handed_off_by,
    reason,
    conversation: {
      id: state.conversation_id,
      title: state.title,
      channel: state.channel,
      status: state.status,
      workspace_id: state.workspace_id,
      started_at: started.data.started_at,
      started_by: started.data.started_by,
      contact: contactOf(started.data),
      verified_user_id: verifiedUserIdOf(started.data),
    },
    messages: shown,
    messages_omitted: messages.length - shown.length,
  };
}
