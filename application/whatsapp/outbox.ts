// The super admin's view of the WhatsApp messages the platform sends (GET
// /api/v1/admin/whatsapp/outbox), newest first: the replies kept in the embedded outbox (what
// would have been sent, to whom, from which number) and those sent through the Cloud API with
// what Meta reported of them. Statuses as the API shows them: `pending` (queued, or an attempt
// under way), `retrying` (the next attempt is at `next_attempt_at`), `sent` (Meta took it;
// `delivery_status` follows its callbacks), `kept` (in the outbox, never sent) and `failed`
// (given up).

import { WHATSAPP_REPLIES, type WhatsAppReplyDeliveryStatus, type WhatsAppReplyDocument } from '../../projections/whatsapp-replies';
import type { FieldCondition, Page, Where } from '../ports/read-store';
import type { ReadModelDependencies } from '../shared/read-models';

export const OUTBOX_STATUSES = ['pending', 'retrying', 'sent', 'kept', 'failed'] as const;
export type OutboxStatus = (typeof OUTBOX_STATUSES)[number];

const SHOWN_AS: Record<WhatsAppReplyDeliveryStatus, OutboxStatus> = { queued: 'pending', sending: 'pending', retrying: 'retrying', sent: 'sent', kept: 'kept', abandoned: 'failed' };
const STORED_AS: Record<OutboxStatus, FieldCondition> = { pending: { in: ['queued', 'sending'] }, retrying: 'retrying', sent: 'sent', kept: 'kept', failed: 'abandoned' };

export type OutboxMessageView = Omit<WhatsAppReplyDocument, 'position' | 'status'> & { status: OutboxStatus };

const viewOf = ({ position: _position, status, ...reply }: WhatsAppReplyDocument): OutboxMessageView => ({ ...reply, status: SHOWN_AS[status] });

export interface OutboxFilter {
  tenant_id?: string;
  status?: OutboxStatus;
}

export async function listWhatsAppOutbox(deps: ReadModelDependencies, filter: OutboxFilter, page: { limit?: number; cursor?: string }): Promise<Page<OutboxMessageView>> {
  const where: Where = {};
  if (filter.tenant_id) where.tenant_id = filter.tenant_id;
  if (filter.status) where.status = STORED_AS[filter.status];
  const found = await deps.readStore.collection<WhatsAppReplyDocument>(WHATSAPP_REPLIES).find({ where, sort: { field: 'queued_at', direction: 'desc' }, ...page });
  return { items: found.items.map(viewOf), next_cursor: found.next_cursor };
}
