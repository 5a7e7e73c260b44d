// Read model `audit_log`: one entry per event, with who did it, what, to which resource, when,
// from where, and in which request. Complete by construction: every write is an event carrying
// this metadata (refusals too: failed logins, access denials). An event of a tenant is an entry
// of that tenant's log; an event of no tenant (plans, platform settings, admin sign-ins) is an
// entry of the platform's log, which the super admin reads.
//
// Each entry is chained to the previous entry of its log: `hash` is SHA-256 over the
// previous hash and the entry's canonical fields, a digest of the event's data among them,
// so an altered, removed or reordered entry breaks the chain from there on
// (`verifyAuditChain`). The chain is a pure function of the event log (`chainedFieldsOf`),
// which lets the audit anchoring recompute it from the events themselves and sign its head
// into the log (domain/audit-checkpoint): a rebuilt read model must agree with those
// signatures. Checkpoint events are not entries of the chain they anchor.
//
// `subject_kind` / `subject_id` name the member on whose behalf the actor acted (a super
// admin impersonating them). They are not chained fields, so chains and checkpoints recorded
// before they existed still verify; entries written before them lack the fields, which
// readers take as null (no event before impersonation existed had a subject).

import { hash as hashOf } from 'node:crypto';
import type { RecordedEvent } from '../application/ports/event-store';
import { deepFreeze } from '../application/shared/immutable';
import { AUDIT_CHECKPOINT_CATEGORY } from '../domain/audit-checkpoint/audit-checkpoint';
import type { Projection } from './projection';
import { parseStreamName } from '../domain/shared/stream-names';

export interface AuditLogEntry {
  id: string;
  tenant_id: string;
  actor_kind: string;
  actor_id: string;
  /** Whom the actor acted as (an impersonated member); null when the actor acted as themselves. Not chained. */
  subject_kind?: string | null;
  subject_id?: string | null;
  action: string;
  resource_type: string;
  resource_id: string;
  occurred_at: string;
  ip: string | null;
  request_id: string | null;
  correlation_id: string;
  position: number;
  /** SHA-256 of the event's data as recorded, in canonical JSON (`canonicalJson`). */
  data_hash: string;
  /** 1, 2, 3 ... per tenant. */
  seq: number;
  prev_hash: string;
  hash: string;
  /** What a reader needs beyond the action, for the few events that have it (not chained: `data_hash` covers the data). */
  details: Record<string, unknown> | null;
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
  'data_hash',
] as const;

export type ChainedFields = Pick<AuditLogEntry, (typeof CHAINED_FIELDS)[number]>;

/** The hash of an entry given the previous one's: fixed field order, so it is reproducible. */
export function auditEntryHash(prevHash: string, entry: ChainedFields): string {
  const canonical = JSON.stringify(CHAINED_FIELDS.map((field) => entry[field]));
  return hashOf('sha256', `${prevHash}\n${canonical}`, 'hex');
}

/** JSON with object keys sorted at every level: the same value always gives the same text, whichever store kept it. */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null';
  if (Array.isArray(value)) return `[${value.map((item) => (item === undefined ? 'null' : canonicalJson(item))).join(',')}]`;
  const record = value as Record<string, unknown>;
  const keys = Object.keys(record)
    .filter((key) => record[key] !== undefined)
    .sort();
  return `{${keys.map((key) => `${JSON.stringify(key)}:${canonicalJson(record[key])}`).join(',')}}`;
}

/**
 * The chain of events that belong to no tenant: what the super admin and the platform itself
 * do (plans, platform settings, admin sign-ins). Tenant ids are UUIDs, so it names no tenant.
 */
export const PLATFORM_AUDIT_CHAIN = 'platform';

/** The chain an event is an entry of: its tenant's, or the platform's; null for a checkpoint of a chain. */
export function auditChainOf(event: RecordedEvent): string | null {
  if (parseStreamName(event.stream).category === AUDIT_CHECKPOINT_CATEGORY) return null;
  return event.metadata.tenant_id ?? PLATFORM_AUDIT_CHAIN;
}

/** Whether an event is an entry of a chain: every event except the checkpoints that anchor them. */
export function isChainedEvent(event: RecordedEvent): boolean {
  return auditChainOf(event) !== null;
}

/**
 * The chained fields of the entry an event becomes at `seq` in its tenant's chain. The data
 * is hashed as recorded (never upcast), so the chain does not move when code learns to read
 * old events differently.
 */
export function chainedFieldsOf(event: RecordedEvent, seq: number): ChainedFields {
  const { category, id } = parseStreamName(event.stream);
  return {
    id: event.id,
    tenant_id: event.metadata.tenant_id ?? PLATFORM_AUDIT_CHAIN,
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
    data_hash: hashOf('sha256', canonicalJson(event.data), 'hex'),
    seq,
  };
}

/** Entries of events the store shares frozen, by event: the audit log and the anchoring each chain every event. */
const chainedOnce = new WeakMap<RecordedEvent, { seq: number; prevHash: string; fields: ChainedFields; hash: string }>();

/**
 * The entry an event becomes at `seq` after `prevHash`: its chained fields and its hash. An
 * event the store shares frozen (the same object for every reader) is hashed once for the same
 * place in the same chain: the audit log and the anchoring both chain it, from the log.
 */
export function chainEntry(event: RecordedEvent, seq: number, prevHash: string): { fields: ChainedFields; hash: string } {
  const known = chainedOnce.get(event);
  if (known && known.seq === seq && known.prevHash === prevHash) return known;
  const fields = chainedFieldsOf(event, seq);
  const entry = { seq, prevHash, fields, hash: auditEntryHash(prevHash, fields) };
  if (Object.isFrozen(event)) chainedOnce.set(event, deepFreeze(entry));
  return entry;
}

/** Data fields an entry shows, per event type: only what is neither secret nor personal. */
const SHOWN_DATA: Readonly<Record<string, readonly string[]>> = {
  AccessDenied: ['method', 'path', 'code'],
  AccessDenialsSuppressed: ['count', 'window_start', 'window_end'],
  ImpersonationStarted: ['user_id', 'admin_id', 'expires_at'],
};

function detailsOf(event: RecordedEvent): Record<string, unknown> | null {
  const shown = SHOWN_DATA[event.type];
  if (!shown || typeof event.data !== 'object' || event.data === null) return null;
  const data = event.data as Record<string, unknown>;
  return Object.fromEntries(shown.filter((field) => field in data).map((field) => [field, data[field]]));
}

export const auditLogProjection: Projection = {
  name: 'audit_log',
  // 4: events of no tenant form the platform's chain.
  version: 4,
  collections: [
    { name: AUDIT_CHAIN_HEADS },
    {
      name: AUDIT_LOG,
      // A log is read newest first, whole or filtered by one field, or in a time range: each
      // index reads its page in order where single-field indexes sorted the log's whole history.
      indexes: [
        { field: 'tenant_id', then: ['seq'] },
        { field: 'tenant_id', then: ['actor_id', 'seq'] },
        { field: 'tenant_id', then: ['action', 'seq'] },
        { field: 'tenant_id', then: ['resource_type', 'seq'] },
        { field: 'tenant_id', then: ['resource_id', 'seq'] },
        { field: 'tenant_id', then: ['occurred_at'] },
      ],
    },
  ],
  handles: 'all',
  async apply(event, view) {
    const tenantId = auditChainOf(event);
    if (tenantId === null) return;
    const head = await view.get<{ id: string; seq: number; hash: string }>(AUDIT_CHAIN_HEADS, tenantId);
    const prevHash = head?.hash ?? GENESIS_HASH;
    const { fields, hash } = chainEntry(event, (head?.seq ?? 0) + 1, prevHash);
    const subject = event.metadata.subject ?? null;
    const entry: AuditLogEntry = {
      ...fields,
      subject_kind: subject?.kind ?? null,
      subject_id: subject?.id ?? null,
      prev_hash: prevHash,
      hash,
      details: detailsOf(event),
    };
    view.put(AUDIT_LOG, entry);
    view.put(AUDIT_CHAIN_HEADS, { id: tenantId, seq: entry.seq, hash: entry.hash });
  },
};
