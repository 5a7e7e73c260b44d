// Read model `leads`: every lead of a tenant with how its delivery to the CRM stands, for the
// tenant's admins (GET /tenant/leads) and for the CRM delivery saga's due pass: `retrying` ones
// by `crm_next_attempt_at`, `sending` ones by `crm_last_attempt_at` and `requested` ones by
// `crm_requested_at` (a process that stopped mid-attempt, or before the first).

import type { Actor } from '../application/ports/event-store';
import { type CrmDeliveryStatus, type LeadEvent, type LeadSource, leadEvents } from '../domain/lead/lead';
import type { CrmKind } from '../domain/crm-config/crm-config';
import type { EventProjection } from './projection';

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

export const leadsProjection: EventProjection<LeadEvent['type']> = {
  name: 'leads',
  version: 1,
  collections: [
    {
      name: LEADS,
      indexes: [{ field: 'tenant_id' }, { field: 'captured_at' }, { field: 'crm_status' }, { field: 'crm_next_attempt_at' }, { field: 'crm_last_attempt_at' }, { field: 'crm_requested_at' }],
    },
  ],
  handles: leadEvents.types,
  async apply(event, view) {
    if (event.type === 'LeadCaptured') {
      const { lead_id, tenant_id, name, email, phone, company, message, page_url, conversation_id, source, visitor, captured_at } = event.data;
      if (await view.get<LeadDocument>(LEADS, lead_id)) return;
      const doc: LeadDocument = {
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
        position: event.position,
      };
      view.put(LEADS, doc);
      return;
    }
    const current = await view.get<LeadDocument>(LEADS, event.data.lead_id);
    if (!current || current.position >= event.position) return;
    const position = event.position;
    switch (event.type) {
      case 'LeadCrmDeliveryRequested':
        view.patch(LEADS, current.id, { crm_status: 'requested', crm_kind: event.data.kind, crm_requested_at: event.data.requested_at, position });
        return;
      case 'LeadCrmAttemptStarted':
        view.patch(LEADS, current.id, { crm_status: 'sending', crm_kind: event.data.kind, crm_attempts: event.data.attempt, crm_last_attempt_at: event.data.started_at, crm_next_attempt_at: null, position });
        return;
      case 'LeadSentToCrm':
        view.patch(LEADS, current.id, {
          crm_status: 'sent',
          crm_last_status_code: event.data.status_code,
          crm_last_error: null,
          crm_record_id: event.data.crm_record_id,
          crm_next_attempt_at: null,
          crm_sent_at: event.data.sent_at,
          position,
        });
        return;
      case 'LeadCrmDeliveryFailed':
        view.patch(LEADS, current.id, {
          crm_status: 'retrying',
          crm_attempts: Math.max(current.crm_attempts, event.data.attempt),
          crm_last_status_code: event.data.status_code,
          crm_last_error: event.data.error,
          crm_next_attempt_at: event.data.next_attempt_at,
          position,
        });
        return;
      case 'LeadCrmDeliveryAbandoned':
        view.patch(LEADS, current.id, {
          crm_status: 'abandoned',
          crm_attempts: event.data.attempts,
          crm_last_status_code: event.data.status_code,
          crm_last_error: event.data.error,
          crm_next_attempt_at: null,
          crm_abandoned_at: event.data.abandoned_at,
          position,
        });
        return;
    }
  },
};
