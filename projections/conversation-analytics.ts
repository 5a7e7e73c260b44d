// Read model `conversation_analytics`: a tenant's assistant activity per calendar day (UTC),
// for the tenant's analytics (GET /tenant/analytics). One document per tenant and day,
// `<tenant id>:<YYYY-MM-DD>`, counting what the conversations' own events say happened that
// day; a day without activity has no document (the analytics answer zeros for it).
//
// A day's document is touched by many events, so it keeps the position of the last event it
// counted: events arrive in log order, so one at or below that position was counted already
// and a replayed event changes nothing.

import type { DomainEventData } from '../domain/events';
import type { EventProjection } from './projection';

export const CONVERSATION_COUNTERS = [
  'conversations',
  'user_messages',
  'assistant_answers',
  'answered_from_knowledge',
  'no_answer',
  'failures',
  'agent_replies',
  'handoffs',
  'feedback_up',
  'feedback_down',
] as const;
export type ConversationCounter = (typeof CONVERSATION_COUNTERS)[number];

export type ConversationDayDocument = {
  id: string;
  tenant_id: string;
  /** `YYYY-MM-DD`, UTC. */
  day: string;
  /** The users' messages of the day per hour of the day (UTC), 0 to 23. */
  user_messages_by_hour: number[];
  position: number;
  [field: string]: unknown;
} & Record<ConversationCounter, number>;

export const CONVERSATION_ANALYTICS = 'conversation_analytics';

export const conversationDayId = (tenantId: string, day: string): string => `${tenantId}:${day}`;

type CountedType = 'ConversationStarted' | 'UserMessagePosted' | 'AssistantAnswered' | 'AssistantFailed' | 'AgentReplied' | 'ConversationStatusChanged' | 'FeedbackGiven';

/** When each counted event happened, as it states it, and what it counts as. */
const COUNTED: { [Type in CountedType]: { at(data: DomainEventData<Type>): string; counters(data: DomainEventData<Type>): ConversationCounter[] } } = {
  ConversationStarted: { at: (data) => data.started_at, counters: () => ['conversations'] },
  UserMessagePosted: { at: (data) => data.posted_at, counters: () => ['user_messages'] },
  AssistantAnswered: { at: (data) => data.answered_at, counters: (data) => ['assistant_answers', data.answered_from_knowledge ? 'answered_from_knowledge' : 'no_answer'] },
  AssistantFailed: { at: (data) => data.failed_at, counters: () => ['failures'] },
  AgentReplied: { at: (data) => data.replied_at, counters: () => ['agent_replies'] },
  ConversationStatusChanged: { at: (data) => data.changed_at, counters: (data) => (data.status === 'handed_off' ? ['handoffs'] : []) },
  FeedbackGiven: { at: (data) => data.given_at, counters: (data) => [data.rating === 'up' ? 'feedback_up' : 'feedback_down'] },
};

/** An empty day: every counter zero. */
export function emptyConversationDay(tenantId: string, day: string): ConversationDayDocument {
  const counters = Object.fromEntries(CONVERSATION_COUNTERS.map((counter) => [counter, 0])) as Record<ConversationCounter, number>;
  return { id: conversationDayId(tenantId, day), tenant_id: tenantId, day, user_messages_by_hour: Array<number>(24).fill(0), position: 0, ...counters };
}

export const conversationAnalyticsProjection: EventProjection<CountedType> = {
  name: 'conversation_analytics',
  version: 1,
  collections: [{ name: CONVERSATION_ANALYTICS, indexes: [{ field: 'tenant_id' }, { field: 'day' }] }],
  handles: Object.keys(COUNTED) as CountedType[],
  async apply(event, view) {
    const counting = COUNTED[event.type] as { at(data: unknown): string; counters(data: unknown): ConversationCounter[] };
    const counters = counting.counters(event.data);
    if (counters.length === 0) return;
    const stated = Date.parse(counting.at(event.data));
    const at = new Date(Number.isNaN(stated) ? event.metadata.occurred_at : stated);
    const day = at.toISOString().slice(0, 10);
    const tenantId = event.data.tenant_id;
    const current = (await view.get<ConversationDayDocument>(CONVERSATION_ANALYTICS, conversationDayId(tenantId, day))) ?? emptyConversationDay(tenantId, day);
    if (current.position >= event.position) return;
    const next: ConversationDayDocument = { ...current, user_messages_by_hour: [...current.user_messages_by_hour], position: event.position };
    for (const counter of counters) next[counter] += 1;
    if (event.type === 'UserMessagePosted') next.user_messages_by_hour[at.getUTCHours()] += 1;
    view.put(CONVERSATION_ANALYTICS, next);
  },
};
