// Read model `audit_log`: one entry per event that belongs to a tenant, with who did it, what,
// to which resource, when, from where, and in which request. Complete by construction: every
// write is an event carrying this metadata.

import type { Projection } from './projection';
import { streamParts } from './projection';

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
  [field: string]: unknown;
}

export const AUDIT_LOG = 'audit_log';

/** Categories whose names contain a dash, so the stream id is split at the right place. */
const MULTI_WORD_CATEGORIES = ['sdk-connection', 'orchestration-event', 'access-denial'];

export const auditLogProjection: Projection = {
  name: 'audit_log',
  version: 1,
  collections: [
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
      ],
    },
  ],
  handles: 'all',
  apply(event, view) {
    const tenantId = event.metadata.tenant_id;
    if (!tenantId) return;
    const { category, id } = streamParts(event.stream, MULTI_WORD_CATEGORIES);
    const entry: AuditLogEntry = {
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
    };
    view.put(AUDIT_LOG, entry);
  },
};
