// A tenant's assistant analytics (spec 4.8, `GET /api/v1/tenant/analytics`): over a range of
// calendar days (UTC, day-range.ts), what its conversations' events say happened, in totals,
// rates, the busiest hours of the day and day by day (every day of the range, zero when
// nothing happened). docs/tenant-configuration.md defines each figure.

import { CONVERSATION_ANALYTICS, CONVERSATION_COUNTERS, type ConversationCounter, type ConversationDayDocument } from '../../projections/conversation-analytics';
import type { ReadModelDependencies } from '../shared/read-models';
import { type DayRange, daysOf } from './day-range';

/** What is counted per day (the read model's counters). */
export { CONVERSATION_COUNTERS };

export type ConversationCounts = Record<ConversationCounter, number>;

export interface ConversationRates {
  /** Answers that rest on the knowledge base, of all answers; null without answers. */
  answered_from_knowledge_rate: number | null;
  /** Answers saying the knowledge base has nothing relevant, of all answers; null without answers. */
  no_answer_rate: number | null;
  /** Turns the assistant failed, of all turns it answered or failed; null without any. */
  failure_rate: number | null;
  /** Thumbs up, of all feedback; null without feedback. */
  feedback_ratio: number | null;
}

export interface ConversationAnalytics extends DayRange {
  totals: ConversationCounts;
  rates: ConversationRates;
  /** The users' messages per hour of the day (UTC) over the range: 24 buckets, hour 0 first. */
  busiest_hours: Array<{ hour: number; user_messages: number }>;
  days: Array<{ date: string } & ConversationCounts>;
}

const zero = (): ConversationCounts => Object.fromEntries(CONVERSATION_COUNTERS.map((counter) => [counter, 0])) as ConversationCounts;

/** `part / whole`, to four decimals; null when `whole` is 0. */
const rate = (part: number, whole: number): number | null => (whole === 0 ? null : Math.round((part / whole) * 10_000) / 10_000);

async function daysOfTenant(deps: ReadModelDependencies, tenantId: string, range: DayRange): Promise<ConversationDayDocument[]> {
  const collection = deps.readStore.collection<ConversationDayDocument>(CONVERSATION_ANALYTICS);
  const where = { tenant_id: tenantId, day: { gte: range.from, lte: range.to } };
  const documents: ConversationDayDocument[] = [];
  let cursor: string | undefined;
  do {
    const page = await collection.find({ where, limit: 1000, ...(cursor ? { cursor } : {}) });
    documents.push(...page.items);
    cursor = page.next_cursor ?? undefined;
  } while (cursor);
  return documents;
}

export async function conversationAnalytics(deps: ReadModelDependencies, tenantId: string, range: DayRange): Promise<ConversationAnalytics> {
  const byDay = new Map((await daysOfTenant(deps, tenantId, range)).map((doc) => [doc.day, doc]));
  const totals = zero();
  const hours = Array<number>(24).fill(0);
  const days = daysOf(range).map((date) => {
    const doc = byDay.get(date);
    const counts = zero();
    if (doc) {
      for (const counter of CONVERSATION_COUNTERS) counts[counter] = doc[counter];
      doc.user_messages_by_hour.forEach((count, hour) => (hours[hour] += count));
    }
    for (const counter of CONVERSATION_COUNTERS) totals[counter] += counts[counter];
    return { date, ...counts };
  });
  return {
    ...range,
    totals,
    rates: {
      answered_from_knowledge_rate: rate(totals.answered_from_knowledge, totals.assistant_answers),
      no_answer_rate: rate(totals.no_answer, totals.assistant_answers),
      failure_rate: rate(totals.failures, totals.assistant_answers + totals.failures),
      feedback_ratio: rate(totals.feedback_up, totals.feedback_up + totals.feedback_down),
    },
    busiest_hours: hours.map((user_messages, hour) => ({ hour, user_messages })),
    days,
  };
}
