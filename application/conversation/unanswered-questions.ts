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

function whereOf(tenantId: string, filter: UnansweredQuestionFilter): Where {
  const where: Where = { tenant_id: tenantId };
  if (filter.workspace_id !== undefined) where.workspace_id = filter.workspace_id;
  if (filter.from !== undefined || filter.to !== undefined) {
    const range: FieldCondition = {};
    if (filter.from !== undefined) range.gte = filter.from;
    if (filter.to !== undefined) range.lte = filter.to;
    where.asked_at = range;
  }
  return where;
}

export async function listUnansweredQuestions(
  deps: ReadModelDependencies,
  tenantId: string,
  filter: UnansweredQuestionFilter,
  page: { limit?: number; cursor?: string },
): Promise<Page<UnansweredQuestionView>> {
  const found = await deps.readStore
    .collection<UnansweredQuestionDocument>(UNANSWERED_QUESTIONS)
    .find({ where: whereOf(tenantId, filter), sort: { field: 'asked_at', direction: 'desc' }, ...page });
  return { items: found.items.map(viewOf), next_cursor: found.next_cursor };
}

/** Questions asked alike, counted together: the most recent wording, how often, first and last asked. */
export interface UnansweredQuestionGroup {
  question: string;
  count: number;
  first_asked_at: string;
  last_asked_at: string;
}

export interface UnansweredQuestionSummary {
  items: UnansweredQuestionGroup[];
  /** How many questions were read (the most recent of the range, SUMMARY_SCAN at most). */
  questions: number;
  /** Whether the range held more than were read: the counts are of the most recent ones. */
  truncated: boolean;
}

/** Most questions of a range a summary reads, newest first. */
export const SUMMARY_SCAN = 5000;
export const SUMMARY_MAX_GROUPS = 100;

/**
 * What a question is counted as: Unicode-normalized (NFKC), lower case, punctuation and
 * symbols dropped, white space collapsed: "Do you sell GIFT cards?" and "do you sell gift
 * cards" are one question; other words are another (no guessing at meaning).
 */
export const questionKey = (question: string): string =>
  question
    .normalize('NFKC')
    .toLowerCase()
    .replace(/[\p{P}\p{S}]+/gu, ' ')
    .replace(/\s+/g, ' ')
    .trim();

/** The range's questions grouped as asked alike, the most asked first (then the most recent), `limit` groups. */
export async function summarizeUnansweredQuestions(deps: ReadModelDependencies, tenantId: string, filter: UnansweredQuestionFilter, limit: number): Promise<UnansweredQuestionSummary> {
  const collection = deps.readStore.collection<UnansweredQuestionDocument>(UNANSWERED_QUESTIONS);
  const groups = new Map<string, UnansweredQuestionGroup>();
  let questions = 0;
  let cursor: string | undefined;
  let truncated = false;
  while (questions < SUMMARY_SCAN) {
    const page = await collection.find({ where: whereOf(tenantId, filter), sort: { field: 'asked_at', direction: 'desc' }, limit: Math.min(1000, SUMMARY_SCAN - questions), cursor });
    for (const doc of page.items) {
      const key = questionKey(doc.question);
      const group = groups.get(key);
      // Newest first: the first seen is the latest wording.
      if (group) groups.set(key, { ...group, count: group.count + 1, first_asked_at: doc.asked_at });
      else groups.set(key, { question: doc.question, count: 1, first_asked_at: doc.asked_at, last_asked_at: doc.asked_at });
    }
    questions += page.items.length;
    if (page.next_cursor === null) break;
    cursor = page.next_cursor;
    truncated = questions >= SUMMARY_SCAN;
  }
  const items = [...groups.values()].sort((a, b) => b.count - a.count || (a.last_asked_at < b.last_asked_at ? 1 : a.last_asked_at > b.last_asked_at ? -1 : 0)).slice(0, limit);
  return { items, questions, truncated };
}
