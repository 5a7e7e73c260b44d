// Lead events of one lead (`l1` of tenant `t1`), for the decider and process manager specs.

import type { LeadCapturedData, LeadEvent } from '../../domain/lead/lead';
import { FIXED_NOW } from './decider-spec';

export const at = (ms: number): Date => new Date(FIXED_NOW.getTime() + ms);
export const visitor = { kind: 'end_user' as const, id: 'visitor:0123456789abcdef0123456789abcdef' };
export const lead: LeadCapturedData = {
  lead_id: 'l1',
  tenant_id: 't1',
  name: 'Ada Lovelace',
  email: 'ada@example.com',
  phone: null,
  company: 'Analytical Engines',
  message: null,
  page_url: 'https://shop.example.com/pricing',
  conversation_id: null,
  source: 'widget',
  visitor,
  captured_at: at(-60_000).toISOString(),
};
export const captured: LeadEvent = { type: 'LeadCaptured', data: lead };
export const requestedCrm: LeadEvent = { type: 'LeadCrmDeliveryRequested', data: { lead_id: 'l1', tenant_id: 't1', kind: 'hubspot', url: 'https://api.hubapi.com', requested_at: at(-30_000).toISOString() } };
export const startedCrm = (attempt: number, when = FIXED_NOW): LeadEvent => ({
  type: 'LeadCrmAttemptStarted',
  data: { lead_id: 'l1', attempt, kind: 'hubspot', url: 'https://api.hubapi.com/crm/v3/objects/contacts', started_at: when.toISOString() },
});
export const failedCrm = (attempt: number, next: Date): LeadEvent => ({
  type: 'LeadCrmDeliveryFailed',
  data: { lead_id: 'l1', attempt, status_code: 503, error: 'the CRM answered HTTP 503', failed_at: FIXED_NOW.toISOString(), next_attempt_at: next.toISOString() },
});
export const deletedLead: LeadEvent = { type: 'LeadDeleted', data: { lead_id: 'l1', tenant_id: 't1', deleted_by: { kind: 'user', id: 'u1' }, deleted_at: FIXED_NOW.toISOString() } };
export const sentCrm: LeadEvent = { type: 'LeadSentToCrm', data: { lead_id: 'l1', attempt: 1, status_code: 201, crm_record_id: '512', sent_at: FIXED_NOW.toISOString() } };
