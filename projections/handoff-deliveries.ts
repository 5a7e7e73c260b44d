// Read model `handoff_deliveries`: every handoff of a tenant's conversations to its webhook,
// with how its delivery stands, for the tenant's admins (GET /tenant/handoff/deliveries) and
// for the handoff delivery saga's due pass: `retrying` ones by `next_attempt_at`, `sending`
// ones by `last_attempt_at` and `requested` ones by `requested_at` (a process that stopped
// mid-attempt, or before the first).

import { type HandoffEvent, type HandoffStatus, handoffEvents } from '../domain/handoff/handoff';
import { abandonedPatch, retryingPatch } from './delivery-attempts';
import { documentProjection } from './document-projection';

export type HandoffDeliveryStatus = Exclude<HandoffStatus, 'absent'>;

export interface HandoffDeliveryDocument {
  id: string;
  tenant_id: string;
  conversation_id: string;
  status: HandoffDeliveryStatus;
  handed_off_by: { kind: string; id: string };
  handed_off_at: string;
  /** The webhook of the latest attempt (the one configured at the request before any). */
  url: string;
  /** Attempts started. */
  attempts: number;
  /** The HTTP status of the latest answer; null before one, or when none came. */
  last_status_code: number | null;
  last_error: string | null;
  requested_at: string;
  last_attempt_at: string | null;
  next_attempt_at: string | null;
  delivered_at: string | null;
  abandoned_at: string | null;
  position: number;
  [field: string]: unknown;
}

export const HANDOFF_DELIVERIES = 'handoff_deliveries';

export const handoffDeliveriesProjection = documentProjection<HandoffEvent['type'], HandoffDeliveryDocument>({
  name: 'handoff_deliveries',
  version: 1,
  collection: {
    name: HANDOFF_DELIVERIES,
    indexes: [{ field: 'tenant_id' }, { field: 'status' }, { field: 'conversation_id' }, { field: 'requested_at' }, { field: 'next_attempt_at' }, { field: 'last_attempt_at' }],
  },
  handles: handoffEvents.types,
  documentId: (event) => event.data.handoff_id,
  evolve(current, event) {
    if (event.type === 'HandoffRequested') {
      const { handoff_id, tenant_id, conversation_id, handed_off_by, handed_off_at, url, requested_at } = event.data;
      return {
        id: handoff_id,
        tenant_id,
        conversation_id,
        status: 'requested',
        handed_off_by,
        handed_off_at,
        url,
        attempts: 0,
        last_status_code: null,
        last_error: null,
        requested_at,
        last_attempt_at: null,
        next_attempt_at: null,
        delivered_at: null,
        abandoned_at: null,
      };
    }
    if (!current) return null;
    switch (event.type) {
      case 'HandoffAttemptStarted':
        return { ...current, status: 'sending', attempts: event.data.attempt, url: event.data.url, last_attempt_at: event.data.started_at, next_attempt_at: null };
      case 'HandoffDelivered':
        return { ...current, status: 'delivered', last_status_code: event.data.status_code, last_error: null, next_attempt_at: null, delivered_at: event.data.delivered_at };
      case 'HandoffDeliveryFailed':
        return { ...current, ...retryingPatch(current.attempts, event.data) };
      case 'HandoffAbandoned':
        return { ...current, ...abandonedPatch(event.data), abandoned_at: event.data.abandoned_at };
    }
  },
});
