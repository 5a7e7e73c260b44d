// Read model `feedbacks`: every rating a person gave an answer of the assistant, for the
// tenant's admins (GET /tenant/feedbacks), newest first. One document per FeedbackGiven,
// keyed by the event's id (an answer takes one feedback: the conversation refuses a second).
// A deleted conversation's feedback stays listed: the rating happened, and the analytics
// count it too.

import { documentProjection } from './document-projection';

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

export const feedbacksProjection = documentProjection<'FeedbackGiven', FeedbackDocument>({
  name: 'feedbacks',
  version: 1,
  collection: { name: FEEDBACKS, indexes: [{ field: 'tenant_id' }, { field: 'given_at' }, { field: 'rating' }, { field: 'conversation_id' }] },
  handles: ['FeedbackGiven'],
  documentId: (event) => event.id,
  evolve(_current, event) {
    const { tenant_id, conversation_id, message_id, rating, comment, given_by, given_at } = event.data;
    return { id: event.id, tenant_id, conversation_id, message_id, rating, comment, given_by, given_at };
  },
});
