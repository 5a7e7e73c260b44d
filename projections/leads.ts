// Read model `leads`: every lead of a tenant with how its delivery to the CRM stands, for the
// tenant's admins (GET /tenant/leads) and for the CRM delivery saga's due pass: `retrying` ones
// by `crm_next_attempt_at`, `sending` ones by `crm_last_attempt_at` and `requested` ones by
// `crm_requested_at` (a process that stopped mid-attempt, or before the first).

import type { Actor } from '../application/ports/event-store';
import { type CrmDeliveryStatus, type LeadEvent, type LeadSource, leadEvents, verifiedUserIdOfLead } from '../domain/lead/lead';
import type { CrmKind } from '../domain/crm-config/crm-config';
import { documentProjection } from './document-projection';

/** `none`: no CRM was configured when the lead came in. */
export type LeadCrmStatus = CrmDeliveryStatus | 'none';

export interface LeadDocument {
  id: string;
  tenant_id: string;
  name: string | null;
  email: string | null;
  phone: string | null;
  company: string | null;
  message: string | null;
  page_url: string | null;
  conversation_id: string | null;
  source: LeadSource;
  visitor: Actor;
  /** The host site's user id of a visitor it vouched for; null for an anonymous one (absent on documents written before). */
  verified_user_id?: string | null;
  captured_at: string;
  crm_status: LeadCrmStatus;
  crm_kind: CrmKind | null;
  /** Attempts started. */
  crm_attempts: number;
  crm_last_status_code: number | null;
  crm_last_error: string | null;
  crm_record_id: string | null;
  crm_requested_at: string | null;
  crm_last_attempt_at: string | null;
  crm_next_attempt_at: string | null;
  crm_sent_at: string | null;
  crm_abandoned_at: string | null;
  position: number;
  [field: string]: unknown;
}

export const LEADS = 'leads';

export const leadsProjection = documentProjection<LeadEvent['type'], LeadDocument>({
  name: 'leads',
  // 2: a verified visitor's user id.
  version: 2,
  collection: {
    name: LEADS,
    indexes: [{ field: 'tenant_id' }, { field: 'captured_at' }, { field: 'crm_status' }, { field: 'crm_next_attempt_at' }, { field: 'crm_last_attempt_at' }, { field: 'crm_requested_at' }],
  },
  handles: leadEvents.types,
  documentId: (event) => event.data.lead_id,
  evolve(current, event) {
    if (event.type === 'LeadCaptured') {
      if (current) return current;
      const { lead_id, tenant_id, name, email, phone, company, message, page_url, conversation_id, source, visitor, captured_at } = event.data;
      return {
        id: lead_id,
        tenant_id,
        name,
        email,
        phone,
        company,
        message,
        page_url,
        conversation_id,
        source,
        visitor,
        verified_user_id: verifiedUserIdOfLead(event.data),
        captured_at,
        crm_status: 'none',
        crm_kind: null,
        crm_attempts: 0,
        crm_last_status_code: null,
        crm_last_error: null,
        crm_record_id: null,
        crm_requested_at: null,
        crm_last_attempt_at: null,
        crm_next_attempt_at: null,
        crm_sent_at: null,
        crm_abandoned_at: null,
      };
    }
    if (!current) return null;
    switch (event.type) {
      case 'LeadCrmDeliveryRequested':
        return { ...current, crm_status: 'requested', crm_kind: event.data.kind, crm_requested_at: event.data.requested_at };
      case 'LeadCrmAttemptStarted':
        return { ...current, crm_status: 'sending', crm_kind: event.data.kind, crm_attempts: event.data.attempt, crm_last_attempt_at: event.data.started_at, crm_next_attempt_at: null };
      case 'LeadSentToCrm':
        return {
          ...current,
          crm_status: 'sent',
          crm_last_status_code: event.data.status_code,
          crm_last_error: null,
          crm_record_id: event.data.crm_record_id,
          crm_next_attempt_at: null,
          crm_sent_at: event.data.sent_at,
        };
      case 'LeadCrmDeliveryFailed':
        return {
          ...current,
          crm_status: 'retrying',
          crm_attempts: Math.max(current.crm_attempts, event.data.attempt),
          crm_last_status_code: event.data.status_code,
          crm_last_error: event.data.error,
          crm_next_attempt_at: event.data.next_attempt_at,
        };
      case 'LeadCrmDeliveryAbandoned':
        return {
          ...current,
          crm_status: 'abandoned',
          crm_attempts: event.data.attempts,
          crm_last_status_code: event.data.status_code,
          crm_last_error: event.data.error,
          crm_next_attempt_at: null,
          crm_abandoned_at: event.data.abandoned_at,
        };
      case 'LeadDeleted':
      case 'LeadErased':
        return null;
    }
  },
});
