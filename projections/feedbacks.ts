// Read model `feedbacks`: every rating a person gave an answer of the assistant, for the
// tenant's admins (GET /tenant/feedbacks), newest first. One document per FeedbackGiven,
// keyed by the event's id (an answer takes one feedback: the conversation refuses a second).
// A deleted conversation's feedback stays listed: the rating happened, and the analytics
// count it too.

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

export const feedbacksProjection: EventProjection<'FeedbackGiven'> = {
  name: 'feedbacks',
  version: 1,
  collections: [{ name: FEEDBACKS, indexes: [{ field: 'tenant_id' }, { field: 'given_at' }, { field: 'rating' }, { field: 'conversation_id' }] }],
  handles: ['FeedbackGiven'],
  async apply(event, view) {
    if (await view.get(FEEDBACKS, event.id)) return;
    const { tenant_id, conversation_id, message_id, rating, comment, given_by, given_at } = event.data;
    const doc: FeedbackDocument = { id: event.id, tenant_id, conversation_id, message_id, rating, comment, given_by, given_at, position: event.position };
    view.put(FEEDBACKS, doc);
  },
};
