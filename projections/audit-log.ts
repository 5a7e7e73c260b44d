// Read model `audit_log`: one entry per event that belongs to a tenant, with who did it, what,
// to which resource, when, from where, and in which request. Complete by construction: every
// write is an event carrying this metadata (refusals too: failed logins, access denials).
//
// Each entry is chained to the previous entry of its tenant: `hash` is SHA-256 over the
// previous hash and the entry's canonical fields, so an altered, removed or reordered entry
// breaks the chain from there on (`verifyAuditChain`).

import { createHash } from 'node:crypto';
import type { Projection } from './projection';
import { parseStreamName } from '../domain/shared/stream-names';

export interface AuditLogEntry {
  id: string;
  tenant_id: string;
  actor_kind: string;
  actor_id: string;
  action: string;
  resource_type: string;
  resource_id: string;
  occurred_at: string;
  ip: string | null;
  request_id: string | null;
  correlation_id: string;
  position: number;
  /** 1, 2, 3 ... per tenant. */
  seq: number;
  prev_hash: string;
  hash: string;
  [field: string]: unknown;
}

export const AUDIT_LOG = 'audit_log';
/** The last entry's sequence and hash per tenant. */
export const AUDIT_CHAIN_HEADS = 'audit_chain_heads';
export const GENESIS_HASH = '0'.repeat(64);

const CHAINED_FIELDS = [
  'seq',
  'id',
  'tenant_id',
  'actor_kind',
  'actor_id',
  'action',
  'resource_type',
  'resource_id',
  'occurred_at',
  'ip',
  'request_id',
  'correlation_id',
  'position',
] as const;

/** The hash of an entry given the previous one's: fixed field order, so it is reproducible. */
export function auditEntryHash(prevHash: string, entry: Pick<AuditLogEntry, (typeof CHAINED_FIELDS)[number]>): string {
  const canonical = JSON.stringify(CHAINED_FIELDS.map((field) => entry[field]));
  return createHash('sha256').update(prevHash).update('\n').update(canonical).digest('hex');
}

export const auditLogProjection: Projection = {
  name: 'audit_log',
  version: 2,
  collections: [
    { name: AUDIT_CHAIN_HEADS },
    {
      name: AUDIT_LOG,
      indexes: [
        { field: 'tenant_id' },
        { field: 'position' },
        { field: 'occurred_at' },
        { field: 'actor_id' },
        { field: 'action' },
        { field: 'resource_type' },
        { field: 'resource_id' },
        { field: 'seq' },
      ],
    },
  ],
  handles: 'all',
  async apply(event, view) {
    const tenantId = event.metadata.tenant_id;
    if (!tenantId) return;
    const head = await view.get<{ id: string; seq: number; hash: string }>(AUDIT_CHAIN_HEADS, tenantId);
    const { category, id } = parseStreamName(event.stream);
    const fields = {
      id: event.id,
      tenant_id: tenantId,
      actor_kind: event.metadata.actor.kind,
      actor_id: event.metadata.actor.id,
      action: event.type,
      resource_type: category,
      resource_id: id,
      occurred_at: event.metadata.occurred_at,
      ip: event.metadata.ip,
      request_id: event.metadata.request_id,
      correlation_id: event.metadata.correlation_id,
      position: event.position,
      seq: (head?.seq ?? 0) + 1,
    };
    const prevHash = head?.hash ?? GENESIS_HASH;
    const entry: AuditLogEntry = { ...fields, prev_hash: prevHash, hash: auditEntryHash(prevHash, fields) };
    view.put(AUDIT_LOG, entry);
    view.put(AUDIT_CHAIN_HEADS, { id: tenantId, seq: entry.seq, hash: entry.hash });
  },
};
