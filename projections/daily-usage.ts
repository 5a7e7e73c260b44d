// Read model `daily_usage`: the platform's activity per calendar day (UTC), for the super
// admin's analytics and usage series (application/analytics). One document per metric and
// day, and per currency for revenue: `tenants_created:2026-03-14`, `revenue:2026-03-14:usd`.
// A day without activity has no document; the series fill it with zero.
//
// A day's document is touched by many events, so it keeps the position of the last event it
// counted: events arrive in log order, so one at or below that position was counted already
// and a replayed event changes nothing.

import type { DomainEventData, DomainEventType } from '../domain/events';
import type { EventProjection } from './projection';

export const USAGE_METRICS = ['tenants_created', 'members_joined', 'payments_succeeded', 'payments_failed', 'revenue', 'messages', 'documents'] as const;
export type UsageMetric = (typeof USAGE_METRICS)[number];

export interface DailyUsageDocument {
  id: string;
  metric: UsageMetric;
  /** `YYYY-MM-DD`, UTC. */
  day: string;
  /** Lowercase ISO 4217 for `revenue`; null for the other metrics. */
  currency: string | null;
  /** Events counted (for `revenue`: payments in this currency). */
  count: number;
  /** For `revenue`: the sum in minor units; 0 for the other metrics. */
  amount: number;
  position: number;
  [field: string]: unknown;
}

export const DAILY_USAGE = 'daily_usage';

/** The calendar day (UTC) of an instant, `YYYY-MM-DD`. */
export const dayKey = (at: string | Date): string => new Date(at).toISOString().slice(0, 10);

export const dailyUsageId = (metric: UsageMetric, day: string, currency: string | null = null): string => (currency ? `${metric}:${day}:${currency}` : `${metric}:${day}`);

/** What one event adds to one metric. */
interface Tally {
  metric: UsageMetric;
  currency?: string;
  /** Minor units, for revenue. */
  amount?: number;
}

/** How one event type is counted. Methods, so that the table's entries of different types share one type when read. */
interface Counting<Type extends DomainEventType> {
  /** When it happened as the event states it (a payment's `paid_at`); default: when it was recorded. */
  at?(data: DomainEventData<Type>): string;
  tallies(data: DomainEventData<Type>): Tally[];
}

/** Counts one of `metric` per event, on the day `at` names. */
const counts = <Type extends DomainEventType>(metric: UsageMetric, at?: (data: DomainEventData<Type>) => string): Counting<Type> => ({
  ...(at ? { at } : {}),
  tallies: () => [{ metric }],
});

/**
 * Which events count as what. Counting another event type is one line here, and `handles`
 * follows: issue #11's chat and document events join as, for example,
 * `UserMessagePosted: counts('messages')` and `DocumentAdded: counts('documents')` (the usage
 * series of messages and documents read those metrics and answer zeros until then). The message
 * event is also counted by `tenant_quotas` (messages_by_month), which the quota reads.
 */
const COUNTED = {
  TenantCreated: counts('tenants_created', (data) => data.created_at),
  MemberJoined: counts('members_joined', (data) => data.joined_at),
  PaymentSucceeded: {
    at: (data) => data.paid_at,
    tallies: (data) => [{ metric: 'payments_succeeded' }, { metric: 'revenue', currency: data.currency.toLowerCase(), amount: data.amount }],
  },
  PaymentFailed: counts('payments_failed', (data) => data.failed_at),
  DocumentAdded: counts('documents', (data) => data.added_at),
  // A message is what a user or end user asks (as tenant_quotas counts them), on the day it was posted.
  UserMessagePosted: counts('messages', (data) => data.posted_at),
} satisfies { [Type in DomainEventType]?: Counting<Type> };

type CountedType = keyof typeof COUNTED;

/** The day an event counts on: its own time when it states a valid one, else when it was recorded. */
function dayOf(stated: string | undefined, recordedAt: string): string {
  const at = stated === undefined ? Number.NaN : Date.parse(stated);
  return dayKey(Number.isNaN(at) ? recordedAt : new Date(at));
}

export const dailyUsageProjection: EventProjection<CountedType> = {
  name: 'daily_usage',
  // 2: counts messages (UserMessagePosted).
  version: 2,
  collections: [{ name: DAILY_USAGE, indexes: [{ field: 'metric' }, { field: 'day' }] }],
  handles: Object.keys(COUNTED) as CountedType[],
  async apply(event, view) {
    const counting = COUNTED[event.type] as Counting<CountedType>;
    const day = dayOf(counting.at?.(event.data), event.metadata.occurred_at);
    for (const tally of counting.tallies(event.data)) {
      const currency = tally.currency ?? null;
      const id = dailyUsageId(tally.metric, day, currency);
      const current = await view.get<DailyUsageDocument>(DAILY_USAGE, id);
      if (current && current.position >= event.position) continue;
      const doc: DailyUsageDocument = {
        id,
        metric: tally.metric,
        day,
        currency,
        count: (current?.count ?? 0) + 1,
        amount: (current?.amount ?? 0) + (tally.amount ?? 0),
        position: event.position,
      };
      view.put(DAILY_USAGE, doc);
    }
  },
};
