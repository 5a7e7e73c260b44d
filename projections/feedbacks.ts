// Read model `feedbacks`: every rating a person gave an answer of the assistant, for the
// tenant's admins (GET /tenant/feedbacks), newest first. One document per FeedbackGiven,
// keyed by the event's id (an answer takes one feedback: the conversation refuses a second).
// A deleted conversation's feedback leaves it: its comment is the person's own words, deleted
// with the conversation's messages (docs/personal-data.md); the analytics keep counting the
// rating, which holds no text.

import type { EventProjection } from './projection';

export interface FeedbackDocument {
  id: string;
  tenant_id: string;
  conversation_id: string;
  message_id: string;
  rating: 'up' | 'down';
  comment: string;
  given_by: { kind: string; id: string };
  given_at: string;
  position: number;
  [field: string]: unknown;
}

export const FEEDBACKS = 'feedbacks';

export const feedbacksProjection: EventProjection<'FeedbackGiven' | 'ConversationDeleted' | 'ConversationErased'> = {
  name: 'feedbacks',
  // 2: a deleted conversation's feedback is deleted.
  version: 2,
  collections: [{ name: FEEDBACKS, indexes: [{ field: 'tenant_id' }, { field: 'given_at' }, { field: 'rating' }, { field: 'conversation_id' }] }],
  handles: ['FeedbackGiven', 'ConversationDeleted', 'ConversationErased'],
  async apply(event, view) {
    if (event.type === 'ConversationDeleted' || event.type === 'ConversationErased') {
      view.deleteWhere(FEEDBACKS, { conversation_id: event.data.conversation_id });
      return;
    }
    // Applied already: a redelivery or a replay changes nothing.
    if (await view.get(FEEDBACKS, event.id)) return;
    const { tenant_id, conversation_id, message_id, rating, comment, given_by, given_at } = event.data;
    const doc: FeedbackDocument = { id: event.id, tenant_id, conversation_id, message_id, rating, comment, given_by, given_at, position: event.position };
    view.put(FEEDBACKS, doc);
  },
};
