// The feedback list of a tenant (spec 4.8, `GET /api/v1/tenant/feedbacks`): every rating a
// person gave an assistant's answer, newest first, filtered by rating and by when it was given.

import { FEEDBACKS, type FeedbackDocument } from '../../projections/feedbacks';
import type { FieldCondition, Page, Where } from '../ports/read-store';
import type { ReadModelDependencies } from '../shared/read-models';

export interface FeedbackView {
  id: string;
  conversation_id: string;
  message_id: string;
  rating: 'up' | 'down';
  comment: string;
  given_by: { kind: string; id: string };
  given_at: string;
}

export interface FeedbackFilter {
  rating?: 'up' | 'down';
  /** Inclusive ISO time bounds on given_at. */
  from?: string;
  to?: string;
}

const viewOf = ({ id, conversation_id, message_id, rating, comment, given_by, given_at }: FeedbackDocument): FeedbackView => ({ id, conversation_id, message_id, rating, comment, given_by, given_at });

export async function listFeedbacks(deps: ReadModelDependencies, tenantId: string, filter: FeedbackFilter, page: { limit?: number; cursor?: string }): Promise<Page<FeedbackView>> {
  const where: Where = { tenant_id: tenantId };
  if (filter.rating) where.rating = filter.rating;
  if (filter.from !== undefined || filter.to !== undefined) {
    const range: FieldCondition = {};
    if (filter.from !== undefined) range.gte = filter.from;
    if (filter.to !== undefined) range.lte = filter.to;
    where.given_at = range;
  }
  const found = await deps.readStore.collection<FeedbackDocument>(FEEDBACKS).find({ where, sort: { field: 'given_at', direction: 'desc' }, ...page });
  return { items: found.items.map(viewOf), next_cursor: found.next_cursor };
}
