// The handoffs of a tenant's conversations and how each delivery stands
// (`GET /api/v1/tenant/handoff/deliveries`), newest first. Statuses as the API shows them:
// `pending` (requested, or an attempt under way), `retrying` (an attempt failed; the next is
// at `next_attempt_at`), `delivered` (the webhook answered 2xx) and `failed` (given up after
// the last attempt, or handoffs were turned off meanwhile).

import { HANDOFF_DELIVERIES, type HandoffDeliveryDocument, type HandoffDeliveryStatus } from '../../projections/handoff-deliveries';
import type { FieldCondition, Page, Where } from '../ports/read-store';
import type { ReadModelDependencies } from '../shared/read-models';

export const DELIVERY_STATUSES = ['pending', 'retrying', 'delivered', 'failed'] as const;
export type DeliveryStatus = (typeof DELIVERY_STATUSES)[number];

const SHOWN_AS: Record<HandoffDeliveryStatus, DeliveryStatus> = { requested: 'pending', sending: 'pending', retrying: 'retrying', delivered: 'delivered', abandoned: 'failed' };
const STORED_AS: Record<DeliveryStatus, FieldCondition> = { pending: { in: ['requested', 'sending'] }, retrying: 'retrying', delivered: 'delivered', failed: 'abandoned' };

export interface HandoffDeliveryView {
  id: string;
  conversation_id: string;
  status: DeliveryStatus;
  handed_off_by: { kind: string; id: string };
  handed_off_at: string;
  url: string;
  attempts: number;
  last_status_code: number | null;
  last_error: string | null;
  requested_at: string;
  last_attempt_at: string | null;
  next_attempt_at: string | null;
  delivered_at: string | null;
  failed_at: string | null;
}

const viewOf = (doc: HandoffDeliveryDocument): HandoffDeliveryView => ({
  id: doc.id,
  conversation_id: doc.conversation_id,
  status: SHOWN_AS[doc.status],
  handed_off_by: doc.handed_off_by,
  handed_off_at: doc.handed_off_at,
  url: doc.url,
  attempts: doc.attempts,
  last_status_code: doc.last_status_code,
  last_error: doc.last_error,
  requested_at: doc.requested_at,
  last_attempt_at: doc.last_attempt_at,
  next_attempt_at: doc.next_attempt_at,
  delivered_at: doc.delivered_at,
  failed_at: doc.abandoned_at,
});

export interface HandoffDeliveryFilter {
  status?: DeliveryStatus;
  conversation_id?: string;
}

export async function listHandoffDeliveries(deps: ReadModelDependencies, tenantId: string, filter: HandoffDeliveryFilter, page: { limit?: number; cursor?: string }): Promise<Page<HandoffDeliveryView>> {
  const where: Where = { tenant_id: tenantId };
  if (filter.status) where.status = STORED_AS[filter.status];
  if (filter.conversation_id) where.conversation_id = filter.conversation_id;
  const found = await deps.readStore.collection<HandoffDeliveryDocument>(HANDOFF_DELIVERIES).find({ where, sort: { field: 'requested_at', direction: 'desc' }, ...page });
  return { items: found.items.map(viewOf), next_cursor: found.next_cursor };
}
