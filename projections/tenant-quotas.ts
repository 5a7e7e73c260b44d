// Read model `tenant_quotas`: one document per tenant with what the entitlement check reads
// besides the plan: the super admin's overrides and the usage counters, each counted from the
// events that add or remove what it counts (members now; documents, business tools and
// messages per calendar month as their features record events). A document carries the
// position of the last event applied, so a replayed event changes nothing.
//
// Messages: every message a user or end user posts to a conversation (`UserMessagePosted`)
// counts once, in the calendar month (UTC) of its `posted_at`. The assistant's answers, its
// failures and a person's replies do not count: the quota is of questions asked.

import type { QuotaOverrides } from '../domain/quota-override/quota-override';
import type { RecordedOf } from '../application/ports/domain-event-store';
import { documentProjection } from './document-projection';

/** What a tenant has now, per quota that counts things that exist. */
export interface UsageCounters {
  users: number;
  documents: number;
  business_tools: number;
}

export interface TenantQuotaDocument {
  id: string;
  tenant_id: string;
  overrides: QuotaOverrides;
  overrides_reason: string;
  counters: UsageCounters;
  /** Messages per calendar month (UTC), keyed `YYYY-MM`. */
  messages_by_month: Record<string, number>;
  updated_at: string;
  position: number;
  [field: string]: unknown;
}

export const TENANT_QUOTAS = 'tenant_quotas';

/** The calendar month (UTC) of an instant, as the key of `messages_by_month`. */
export const monthKey = (at: string | Date): string => new Date(at).toISOString().slice(0, 7);

const COUNTED_TYPES = ['MemberJoined', 'MemberRemoved', 'QuotaOverridesSet', 'DocumentAdded', 'DocumentDeleted', 'ToolCreated', 'ToolDeleted', 'UserMessagePosted'] as const;
type CountedType = (typeof COUNTED_TYPES)[number];

/** How each counted event changes the counters. */
function countersChange(event: RecordedOf<Exclude<CountedType, 'QuotaOverridesSet' | 'UserMessagePosted'>>): Partial<UsageCounters> {
  switch (event.type) {
    case 'MemberJoined':
      return { users: 1 };
    case 'MemberRemoved':
      return { users: -1 };
    case 'DocumentAdded':
      return { documents: 1 };
    case 'DocumentDeleted':
      return { documents: -1 };
    case 'ToolCreated':
      return { business_tools: 1 };
    case 'ToolDeleted':
      return { business_tools: -1 };
  }
}

const emptyDocument = (tenantId: string, at: string): TenantQuotaDocument => ({
  id: tenantId,
  tenant_id: tenantId,
  overrides: {},
  overrides_reason: '',
  counters: { users: 0, documents: 0, business_tools: 0 },
  messages_by_month: {},
  updated_at: at,
  position: -1,
});

export const tenantQuotasProjection = documentProjection<CountedType, TenantQuotaDocument>({
  name: 'tenant_quotas',
  // 2: counts messages (UserMessagePosted); 3: business tools (ToolCreated, ToolDeleted).
  version: 3,
  collection: { name: TENANT_QUOTAS },
  handles: COUNTED_TYPES,
  documentId: (event) => event.data.tenant_id,
  evolve(current, event) {
    const before = current ?? emptyDocument(event.data.tenant_id, event.metadata.occurred_at);
    const base = { ...before, updated_at: event.metadata.occurred_at };
    if (event.type === 'QuotaOverridesSet') return { ...base, overrides: event.data.overrides, overrides_reason: event.data.reason };
    if (event.type === 'UserMessagePosted') {
      const month = monthKey(event.data.posted_at);
      return { ...base, messages_by_month: { ...before.messages_by_month, [month]: (before.messages_by_month[month] ?? 0) + 1 } };
    }
    const change = countersChange(event as RecordedOf<Exclude<CountedType, 'QuotaOverridesSet' | 'UserMessagePosted'>>);
    const counters = { ...before.counters };
    for (const [counter, delta] of Object.entries(change) as Array<[keyof UsageCounters, number]>) counters[counter] = Math.max(0, counters[counter] + delta);
    return { ...base, counters };
  },
});
