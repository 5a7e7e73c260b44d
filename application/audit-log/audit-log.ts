// Audit-log queries: filtered, newest-first pages; the check of the hash chain against the
// signed checkpoints of the event log; and the export, which carries what an offline
// verifier needs (README.md, "Audit log export").

import { AuditCheckpointRecorded, type AuditCheckpointEvent, auditCheckpointStream } from '../../domain/audit-checkpoint/audit-checkpoint';
import { AUDIT_LOG, type AuditLogEntry, GENESIS_HASH, auditEntryHash, auditLogProjection } from '../../projections/audit-log';
import type { AuditSigner, AuditSigningKey } from '../ports/audit-signer';
import { isRight } from 'fp-ts/Either';
import type { DomainEventStore } from '../ports/domain-event-store';
import type { FieldCondition, Page, ReadStore, Where } from '../ports/read-store';
import { auditCheckpointSigningBytes } from './audit-anchoring';

export interface AuditLogDependencies {
  readStore: ReadStore;
  eventStore: DomainEventStore;
  signer: AuditSigner;
}

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
export type AuditLogView = Omit<AuditLogEntry, 'prev_hash' | 'hash' | 'position' | 'data_hash'>;

// Entries projected before subjects existed lack the fields: none of their events had a subject.
const toView = ({ prev_hash: _prev, hash: _hash, position: _position, data_hash: _data, ...entry }: AuditLogEntry): AuditLogView => ({
  ...entry,
  subject_kind: entry.subject_kind ?? null,
  subject_id: entry.subject_id ?? null,
});

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

/** A checkpoint as the event log holds it: its event id and its data, decoded or, when it does not decode, as found. */
type StoredCheckpoint = { id: string; valid: true; data: AuditCheckpointEvent['data'] } | { id: string; valid: false; data: unknown };

/** The tenant's checkpoints from the event log, in the order they were recorded. */
async function storedCheckpoints(eventStore: Pick<DomainEventStore, 'readStreamAsStored'>, tenantId: string): Promise<StoredCheckpoint[]> {
  const recorded = await eventStore.readStreamAsStored(auditCheckpointStream(tenantId));
  return recorded.map((event) => {
    const decoded = AuditCheckpointRecorded.data.decode(event.data);
    return event.type === AuditCheckpointRecorded.type && isRight(decoded) ? { id: event.id, valid: true, data: decoded.right } : { id: event.id, valid: false, data: event.data };
  });
}

const seqOf = (checkpoint: StoredCheckpoint): number => {
  const seq = (checkpoint.data as { seq?: unknown } | null)?.seq;
  return typeof seq === 'number' && Number.isFinite(seq) ? seq : 0;
};

/** One line of the NDJSON export: the entries, oldest first, then the checkpoints, then the keys that verify them (the signing key first). */
export type AuditExportRecord =
  | ({ record: 'entry' } & AuditLogEntry)
  | ({ record: 'checkpoint'; id: string } & AuditCheckpointEvent['data'])
  | ({ record: 'signing_key' } & AuditSigningKey);

export async function* exportAuditLog(deps: AuditLogDependencies, tenantId: string, filter: AuditLogFilter): AsyncGenerator<AuditExportRecord> {
  for await (const entry of auditEntries(deps.readStore, tenantId, filter)) yield { record: 'entry', ...entry };
  for (const checkpoint of await storedCheckpoints(deps.eventStore, tenantId)) {
    if (checkpoint.valid) yield { record: 'checkpoint', id: checkpoint.id, ...checkpoint.data };
  }
  for (const key of deps.signer.publicKeys()) yield { record: 'signing_key', ...key };
}

export type ChainBreakReason =
  /** An entry's hash is not the hash of its fields: the read model was altered. */
  | 'hash_mismatch'
  /** An entry does not point to the hash of the one before it. */
  | 'broken_link'
  | 'sequence_gap'
  /** A checkpoint in the event log that this platform did not sign (forged, altered or malformed). */
  | 'checkpoint_signature_invalid'
  /** The chain at a checkpoint's entry is not the one signed: an event changed after it was anchored. */
  | 'checkpoint_mismatch'
  /** A checkpoint anchors an entry the audit log does not have: entries were removed. */
  | 'checkpoint_beyond_log';

export interface ChainBreak {
  /** The entry at the break (a checkpoint's own event id when the log has no such entry). */
  id: string;
  seq: number;
  reason: ChainBreakReason;
  /** For a checkpoint's break: the checkpoint event. */
  checkpoint_id?: string;
  /** For `checkpoint_mismatch`: the last entry a checkpoint vouches for; the changed entry is after it and at most `seq`. */
  after_seq?: number;
}

export interface ChainVerification {
  ok: boolean;
  entries_checked: number;
  /** Checkpoints whose signature and anchored hash were checked. */
  checkpoints_checked: number;
  /** The last entry a valid checkpoint vouches for (0 when none): entries after it are checked against each other only. */
  anchored_through_seq: number;
  first_break: ChainBreak | null;
}

/**
 * Recomputes the tenant's chain from the first entry, checks every checkpoint's signature and
 * that the chain at its entry is the one it anchors, and reports the first break in entry order.
 * Checkpoints past what the audit log has projected yet are left for a later check.
 */
export async function verifyAuditChain(deps: AuditLogDependencies, tenantId: string): Promise<ChainVerification> {
  const checkpoints = (await storedCheckpoints(deps.eventStore, tenantId)).sort((a, b) => seqOf(a) - seqOf(b));
  const projectedThrough = (await deps.readStore.getProjectionState(auditLogProjection.name))?.checkpoint ?? 0;
  let previous = GENESIS_HASH;
  let expectedSeq = 1;
  let checked = 0;
  let checkpointsChecked = 0;
  let anchoredThrough = 0;
  let next = 0;
  const broken = (first_break: ChainBreak): ChainVerification => ({ ok: false, entries_checked: checked, checkpoints_checked: checkpointsChecked, anchored_through_seq: anchoredThrough, first_break });
  const signedByUs = (checkpoint: StoredCheckpoint): checkpoint is Extract<StoredCheckpoint, { valid: true }> =>
    checkpoint.valid && checkpoint.data.tenant_id === tenantId && deps.signer.verify(auditCheckpointSigningBytes(checkpoint.data), checkpoint.data.signature, checkpoint.data.key_id);

  for await (const entry of auditEntries(deps.readStore, tenantId)) {
    checked += 1;
    const at = (reason: ChainBreakReason): ChainVerification => broken({ id: entry.id, seq: entry.seq, reason });
    if (entry.seq !== expectedSeq) return at('sequence_gap');
    if (entry.prev_hash !== previous) return at('broken_link');
    if (auditEntryHash(previous, entry) !== entry.hash) return at('hash_mismatch');
    for (; next < checkpoints.length && seqOf(checkpoints[next]) <= entry.seq; next += 1) {
      const checkpoint = checkpoints[next];
      if (!signedByUs(checkpoint)) return broken({ id: entry.id, seq: entry.seq, reason: 'checkpoint_signature_invalid', checkpoint_id: checkpoint.id });
      checkpointsChecked += 1;
      if (checkpoint.data.chain_head_hash !== entry.hash || checkpoint.data.position !== entry.position) {
        return broken({ id: entry.id, seq: entry.seq, reason: 'checkpoint_mismatch', checkpoint_id: checkpoint.id, after_seq: anchoredThrough });
      }
      anchoredThrough = entry.seq;
    }
    previous = entry.hash;
    expectedSeq += 1;
  }
  for (const checkpoint of checkpoints.slice(next)) {
    if (!signedByUs(checkpoint)) return broken({ id: checkpoint.id, seq: seqOf(checkpoint), reason: 'checkpoint_signature_invalid', checkpoint_id: checkpoint.id });
    // Anchored, but not projected yet: the next verify checks it.
    if (checkpoint.data.position > projectedThrough) continue;
    checkpointsChecked += 1;
    return broken({ id: checkpoint.id, seq: checkpoint.data.seq, reason: 'checkpoint_beyond_log', checkpoint_id: checkpoint.id });
  }
  return { ok: true, entries_checked: checked, checkpoints_checked: checkpointsChecked, anchored_through_seq: anchoredThrough, first_break: null };
}

/** The log of events that belong to no tenant, which the super admin reads. */
export { PLATFORM_AUDIT_CHAIN } from '../../projections/audit-log';
