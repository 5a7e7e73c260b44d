// Read model `lead_origins`: the widget conversation each lead was left in, kept after the lead
// is deleted (the `leads` list drops it then): what a conversation's erasure looks its leads up
// by (`conversation_id`), so the visitor's contact details go with their conversation. It holds
// no personal data: ids only. A lead left outside a conversation has no document.

import type { LeadEvent } from '../domain/lead/lead';
import { documentProjection } from './document-projection';

export interface LeadOriginDocument {
  /** The lead's id. */
  id: string;
  tenant_id: string;
  conversation_id: string;
  position: number;
  [field: string]: unknown;
}

export const LEAD_ORIGINS = 'lead_origins';

export const leadOriginsProjection = documentProjection<LeadEvent['type'], LeadOriginDocument>({
  name: 'lead_origins',
  version: 1,
  collection: { name: LEAD_ORIGINS, indexes: [{ field: 'conversation_id' }] },
  handles: ['LeadCaptured'],
  documentId: (event) => event.data.lead_id,
  evolve(current, event) {
    if (current || event.type !== 'LeadCaptured' || event.data.conversation_id === null) return current;
    return { id: event.data.lead_id, tenant_id: event.data.tenant_id, conversation_id: event.data.conversation_id };
  },
});
