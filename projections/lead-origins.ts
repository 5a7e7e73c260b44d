// Read model `lead_origins`: the widget conversation each lead was left in and the visitor who
// left it, kept after the lead is deleted (the `leads` list drops it then): what a
// conversation's erasure looks its leads up by (`conversation_id`), so the visitor's contact
// details go with their conversation, and what an end user's erasure looks theirs up by
// (`visitor_id`). It holds no personal data: ids only (a visitor's is a keyed digest).

import type { LeadEvent } from '../domain/lead/lead';
import { documentProjection } from './document-projection';

export interface LeadOriginDocument {
  /** The lead's id. */
  id: string;
  tenant_id: string;
  /** Null for a lead left outside a conversation. */
  conversation_id: string | null;
  /** The visitor's party id (absent on documents written before). */
  visitor_id?: string;
  position: number;
  [field: string]: unknown;
}

export const LEAD_ORIGINS = 'lead_origins';

export const leadOriginsProjection = documentProjection<LeadEvent['type'], LeadOriginDocument>({
  name: 'lead_origins',
  // 2: every lead, with its visitor.
  version: 2,
  collection: { name: LEAD_ORIGINS, indexes: [{ field: 'conversation_id', sparse: true }, { field: 'visitor_id' }] },
  handles: ['LeadCaptured'],
  documentId: (event) => event.data.lead_id,
  evolve(current, event) {
    if (current || event.type !== 'LeadCaptured') return current;
    return { id: event.data.lead_id, tenant_id: event.data.tenant_id, conversation_id: event.data.conversation_id, visitor_id: event.data.visitor.id };
  },
});
