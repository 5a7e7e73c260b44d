// An audit checkpoint: the platform's signed statement "the audit chain of this tenant, through
// entry `seq` (the event at `position`), ends in `chain_head_hash`". Checkpoints live in the
// event log, one stream per tenant (`auditCheckpoint-<tenant_id>`), so the audit log's hash
// chain, a rebuildable read model, is anchored outside itself: rewriting events and
// rebuilding the read model gives a chain that disagrees with the signed checkpoints.
//
// Checkpoints are not entries of the chain they anchor (the audit log leaves them out), so
// recording one never calls for another.

import * as t from 'io-ts';
import { type Either, left, right } from 'fp-ts/Either';
import { declareEvent, eventGroup, type GroupEvent } from '../shared/events';
import { toStreamName } from '../shared/stream-names';
import type { Decider } from '../shared/decider';
import { type DomainError, conflict, invalid } from '../shared/errors';


/** What a checkpoint states; every field is covered by its signature. */
export const AuditCheckpointStatement = t.type({
  tenant_id: t.string,
  /** The last entry of the tenant's chain this checkpoint covers (entries are numbered from 1). */
  seq: t.number,
  /** That entry's hash: the head of the chain through `seq`. */
  chain_head_hash: t.string,
  /** That entry's event position in `$all`. */
  position: t.number,
  /** Entries covered since the previous checkpoint (`seq` minus its `seq`). */
  entries: t.number,
  anchored_at: t.string,
  /** Which platform key signed it. */
  key_id: t.string,
});
export type AuditCheckpointStatement = t.TypeOf<typeof AuditCheckpointStatement>;

export const AuditCheckpointRecorded = declareEvent(
  'AuditCheckpointRecorded',
  t.intersection([AuditCheckpointStatement, t.type({ /** Ed25519 over `auditCheckpointSigningBytes`, base64url. */ signature: t.string })]),
);
export const auditCheckpointEvents = eventGroup('auditCheckpoint', [AuditCheckpointRecorded]);
export type AuditCheckpointEvent = GroupEvent<typeof auditCheckpointEvents>;
export const AUDIT_CHECKPOINT_CATEGORY = auditCheckpointEvents.category;

export type AuditCheckpointCommand = { type: 'RecordAuditCheckpoint'; data: AuditCheckpointEvent['data'] };

export type AuditCheckpointState = { status: 'none' } | { status: 'anchored'; seq: number; chain_head_hash: string; position: number };

export const auditCheckpointStream = (tenantId: string): string => toStreamName(auditCheckpointEvents.category, tenantId);

/** Domain separation: these bytes can never be mistaken for a PASETO token's. */
const SIGNING_CONTEXT = 'svc.audit-checkpoint.v1\n';

/**
 * The exact text a checkpoint's signature covers (UTF-8): the context line, then a JSON array
 * of the statement's fields in a fixed order. README.md documents it for offline verifiers.
 */
export function auditCheckpointSigningText(statement: AuditCheckpointStatement): string {
  const { tenant_id, seq, chain_head_hash, position, entries, anchored_at, key_id } = statement;
  return SIGNING_CONTEXT + JSON.stringify([tenant_id, seq, chain_head_hash, position, entries, anchored_at, key_id]);
}

export const auditCheckpointDecider: Decider<AuditCheckpointCommand, AuditCheckpointEvent, AuditCheckpointState> = {
  initialState: () => ({ status: 'none' }),
  evolve(_state, event) {
    const { seq, chain_head_hash, position } = event.data;
    return { status: 'anchored', seq, chain_head_hash, position };
  },
  decide(command, state): Either<DomainError, AuditCheckpointEvent[]> {
    const checkpoint = command.data;
    if (!Number.isInteger(checkpoint.seq) || checkpoint.seq < 1 || !Number.isInteger(checkpoint.entries) || checkpoint.entries < 1) {
      return left(invalid('invalid_checkpoint', 'a checkpoint covers at least one entry'));
    }
    const last = state.status === 'anchored' ? state : { seq: 0, chain_head_hash: '', position: 0 };
    if (checkpoint.seq === last.seq && checkpoint.chain_head_hash !== last.chain_head_hash) {
      // Two computations of the same chain disagree: the log changed between them.
      return left(conflict('audit_checkpoint_disagrees', `the chain at entry ${checkpoint.seq} was anchored with another hash`));
    }
    // Already covered by this checkpoint or a later one: the chain is cumulative.
    if (checkpoint.seq <= last.seq) return right([]);
    if (checkpoint.seq - checkpoint.entries !== last.seq || checkpoint.position <= last.position) {
      return left(conflict('audit_checkpoint_out_of_date', `the last checkpoint is at entry ${last.seq}; this one does not follow it`));
    }
    return right([{ type: 'AuditCheckpointRecorded', data: checkpoint }]);
  },
};
