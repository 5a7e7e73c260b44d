// The super admin's usage series: per day (UTC) of a range, how many messages were sent, how
// many documents were added, and what payments brought in. Every day of the range is in the
// answer, zero when nothing happened, so a chart needs no gap filling.

import { DAILY_USAGE, type DailyUsageDocument, type UsageMetric } from '../../projections/daily-usage';
import type { ReadModelDependencies } from '../shared/read-models';
import { type DayRange, daysOf } from './day-range';

export interface CountBucket {
  date: string;
  count: number;
}

export interface CountSeries extends DayRange {
  total: number;
  buckets: CountBucket[];
}

export interface RevenueBucket {
  date: string;
  payments_succeeded: number;
  payments_failed: number;
  /** Minor units per currency of `currencies`, every one present (0 on a day without). */
  revenue: Record<string, number>;
}

export interface RevenueSeries extends DayRange {
  /** Every currency paid in during the range, sorted. */
  currencies: string[];
  totals: Omit<RevenueBucket, 'date'>;
  buckets: RevenueBucket[];
}

/** Every document of the metrics over the range (a range's documents fit in a few pages). */
export async function dailyDocuments(deps: ReadModelDependencies, metrics: readonly UsageMetric[], range: DayRange): Promise<DailyUsageDocument[]> {
  const collection = deps.readStore.collection<DailyUsageDocument>(DAILY_USAGE);
  const where = { metric: { in: metrics }, day: { gte: range.from, lte: range.to } };
  const documents: DailyUsageDocument[] = [];
  let cursor: string | undefined;
  do {
    const page = await collection.find({ where, limit: 1000, ...(cursor ? { cursor } : {}) });
    documents.push(...page.items);
    cursor = page.next_cursor ?? undefined;
  } while (cursor);
  return documents;
}

async function countSeries(deps: ReadModelDependencies, metric: UsageMetric, range: DayRange): Promise<CountSeries> {
  const byDay = new Map((await dailyDocuments(deps, [metric], range)).map((doc) => [doc.day, doc.count]));
  const buckets = daysOf(range).map((date) => ({ date, count: byDay.get(date) ?? 0 }));
  return { ...range, total: buckets.reduce((sum, bucket) => sum + bucket.count, 0), buckets };
}

/** Chat messages per day. */
export const messagesSeries = (deps: ReadModelDependencies, range: DayRange): Promise<CountSeries> => countSeries(deps, 'messages', range);

/** Documents added per day. */
export const documentsSeries = (deps: ReadModelDependencies, range: DayRange): Promise<CountSeries> => countSeries(deps, 'documents', range);

/** Payments per day, succeeded and failed, and the revenue of the succeeded ones per currency. */
export async function revenueSeries(deps: ReadModelDependencies, range: DayRange): Promise<RevenueSeries> {
  const documents = await dailyDocuments(deps, ['payments_succeeded', 'payments_failed', 'revenue'], range);
  const currencies = [...new Set(documents.flatMap((doc) => (doc.metric === 'revenue' && doc.currency ? [doc.currency] : [])))].sort();
  const zero = (): RevenueBucket['revenue'] => Object.fromEntries(currencies.map((currency) => [currency, 0]));
  const buckets = new Map(daysOf(range).map((date) => [date, { date, payments_succeeded: 0, payments_failed: 0, revenue: zero() }]));
  for (const doc of documents) {
    const bucket = buckets.get(doc.day);
    if (!bucket) continue;
    if (doc.metric === 'payments_succeeded') bucket.payments_succeeded += doc.count;
    else if (doc.metric === 'payments_failed') bucket.payments_failed += doc.count;
    else if (doc.currency) bucket.revenue[doc.currency] += doc.amount;
  }
  const totals = { payments_succeeded: 0, payments_failed: 0, revenue: zero() };
  for (const bucket of buckets.values()) {
    totals.payments_succeeded += bucket.payments_succeeded;
    totals.payments_failed += bucket.payments_failed;
    for (const currency of currencies) totals.revenue[currency] += bucket.revenue[currency];
  }
  return { ...range, currencies, totals, buckets: [...buckets.values()] };
}
