// Audit-log queries: filtered, newest-first pages; the hash-chain check; and the export.

import { AUDIT_LOG, type AuditLogEntry, GENESIS_HASH, auditEntryHash } from '../../projections/audit-log';
import type { FieldCondition, Page, ReadStore, Where } from '../ports/read-store';

export interface AuditLogFilter {
  actor_id?: string;
  action?: string;
  resource_type?: string;
  resource_id?: string;
  /** Inclusive ISO time bounds on occurred_at. */
  from?: string;
  to?: string;
}

function whereOf(tenantId: string, filter: AuditLogFilter): Where {
  const where: Where = { tenant_id: tenantId };
  for (const field of ['actor_id', 'action', 'resource_type', 'resource_id'] as const) {
    if (filter[field] !== undefined) where[field] = filter[field]!;
  }
  if (filter.from !== undefined || filter.to !== undefined) {
    const range: FieldCondition = {};
    if (filter.from !== undefined) range.gte = filter.from;
    if (filter.to !== undefined) range.lte = filter.to;
    where.occurred_at = range;
  }
  return where;
}

/** Entries without their chain fields: the API shows what happened, the chain is for verify. */
export type AuditLogView = Omit<AuditLogEntry, 'prev_hash' | 'hash' | 'position'>;

const toView = ({ prev_hash: _prev, hash: _hash, position: _position, ...entry }: AuditLogEntry): AuditLogView => entry;

export async function listAuditLog(readStore: ReadStore, tenantId: string, filter: AuditLogFilter, page: { limit?: number; cursor?: string }): Promise<Page<AuditLogView>> {
  const found = await readStore.collection<AuditLogEntry>(AUDIT_LOG).find({ where: whereOf(tenantId, filter), sort: { field: 'seq', direction: 'desc' }, ...page });
  return { items: found.items.map(toView), next_cursor: found.next_cursor };
}

/** Every entry of the tenant, oldest first, page by page (for export and verification). */
export async function* auditEntries(readStore: ReadStore, tenantId: string, filter: AuditLogFilter = {}): AsyncGenerator<AuditLogEntry> {
  const entries = readStore.collection<AuditLogEntry>(AUDIT_LOG);
  let cursor: string | undefined;
  do {
    const page = await entries.find({ where: whereOf(tenantId, filter), sort: { field: 'seq', direction: 'asc' }, limit: 500, cursor });
    yield* page.items;
    cursor = page.next_cursor ?? undefined;
  } while (cursor);
}

export async function* exportAuditLog(readStore: ReadStore, tenantId: string, filter: AuditLogFilter): AsyncGenerator<AuditLogView> {
  for await (const entry of auditEntries(readStore, tenantId, filter)) yield toView(entry);
}

export interface ChainVerification {
  ok: boolean;
  entries_checked: number;
  first_break: { id: string; seq: number; reason: 'hash_mismatch' | 'broken_link' | 'sequence_gap' } | null;
}

/** Recomputes the tenant's chain from the first entry and reports the first break. */
export async function verifyAuditChain(readStore: ReadStore, tenantId: string): Promise<ChainVerification> {
  let previous = GENESIS_HASH;
  let expectedSeq = 1;
  let checked = 0;
  for await (const entry of auditEntries(readStore, tenantId)) {
    checked += 1;
    const at = (reason: 'hash_mismatch' | 'broken_link' | 'sequence_gap'): ChainVerification => ({ ok: false, entries_checked: checked, first_break: { id: entry.id, seq: entry.seq, reason } });
    if (entry.seq !== expectedSeq) return at('sequence_gap');
    if (entry.prev_hash !== previous) return at('broken_link');
    if (auditEntryHash(previous, entry) !== entry.hash) return at('hash_mismatch');
    previous = entry.hash;
    expectedSeq += 1;
  }
  return { ok: true, entries_checked: checked, first_break: null };
}
