// What the knowledge base lacks (`GET /api/v1/tenant/unanswered-questions`): the questions the
// assistant answered without it, because it found no relevant passage, newest first, so that
// an owner or admin sees what to write a document about. Read from the conversations read
// model (projections/conversations.ts, `unanswered_questions`); a conversation deleted or
// erased takes its questions with it.

import { UNANSWERED_QUESTIONS, type UnansweredQuestionDocument } from '../../projections/conversations';
import type { FieldCondition, Page, Where } from '../ports/read-store';
import type { ReadModelDependencies } from '../shared/read-models';

export interface UnansweredQuestionView {
  /** The user message asked. */
  question_id: string;
  question: string;
  /** The answer that said the knowledge base had nothing on it. */
  answer_id: string;
  conversation_id: string;
  workspace_id: string | null;
  channel: string;
  asked_at: string;
  answered_at: string;
}

export interface UnansweredQuestionFilter {
  workspace_id?: string;
  /** Inclusive ISO time bounds on asked_at. */
  from?: string;
  to?: string;
}

const viewOf = (doc: UnansweredQuestionDocument): UnansweredQuestionView => ({
  question_id: doc.question_id,
  question: doc.question,
  answer_id: doc.id,
  conversation_id: doc.conversation_id,
  workspace_id: doc.workspace_id,
  channel: doc.channel,
  asked_at: doc.asked_at,
  answered_at: doc.answered_at,
});

export async function listUnansweredQuestions(
  deps: ReadModelDependencies,
  tenantId: string,
  filter: UnansweredQuestionFilter,
  page: { limit?: number; cursor?: string },
): Promise<Page<UnansweredQuestionView>> {
  const where: Where = { tenant_id: tenantId };
  if (filter.workspace_id !== undefined) where.workspace_id = filter.workspace_id;
  if (filter.from !== undefined || filter.to !== undefined) {
    const range: FieldCondition = {};
    if (filter.from !== undefined) range.gte = filter.from;
    if (filter.to !== undefined) range.lte = filter.to;
    where.asked_at = range;
  }
  const found = await deps.readStore.collection<UnansweredQuestionDocument>(UNANSWERED_QUESTIONS).find({ where, sort: { field: 'asked_at', direction: 'desc' }, ...page });
  return { items: found.items.map(viewOf), next_cursor: found.next_cursor };
}
