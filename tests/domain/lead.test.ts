// The lead aggregate (given/when/then): a lead is captured once with its fields checked one by
// one, and its delivery to the CRM is requested once, every attempt claimed before the call and
// settled by one outcome.

import { expect } from 'chai';
import { type LeadCommand, checkedLeadFields, leadDecider } from '../../domain/lead/lead';
import { FIXED_NOW, deciderSpec } from '../support/decider-spec';
import { captured, deletedLead, failedCrm, lead, requestedCrm, sentCrm, startedCrm, visitor } from '../support/lead-events';

describe('lead (decider)', () => {
  const spec = deciderSpec(leadDecider);
  const capture = (fields: Extract<LeadCommand, { type: 'CaptureLead' }>['data']['fields']): LeadCommand => ({
    type: 'CaptureLead',
    data: { lead_id: 'l1', tenant_id: 't1', fields, conversation_id: null, source: 'widget', visitor },
  });

  it('captures a lead once, its fields in their stored form and empty ones absent', () => {
    spec
      .given([])
      .when(capture({ name: '  Ada Lovelace ', email: 'Ada@Example.COM', phone: '', company: 'Analytical Engines', message: null, page_url: ' https://shop.example.com/pricing ' }))
      .then([{ type: 'LeadCaptured', data: { ...lead, captured_at: FIXED_NOW.toISOString() } }]);
    spec.given([captured]).when(capture({ email: 'ada@example.com' })).thenThrows('conflict', 'lead_exists');
  });

  it('needs an email or a phone, and names each bad field', () => {
    spec.given([]).when(capture({ name: 'Ada' })).thenThrows('invalid', 'invalid_lead', 'email');
    spec.given([]).when(capture({ email: '   ', phone: '' })).thenThrows('invalid', 'invalid_lead', 'email');
    spec.given([]).when(capture({ email: 'not an address' })).thenThrows('invalid', 'invalid_lead', 'email');
    spec.given([]).when(capture({ phone: '12' })).thenThrows('invalid', 'invalid_lead', 'phone');
    spec.given([]).when(capture({ phone: 'call me maybe' })).thenThrows('invalid', 'invalid_lead', 'phone');
    spec.given([]).when(capture({ phone: '+1 (555) 010-9999', name: 'x'.repeat(201) })).thenThrows('invalid', 'invalid_lead', 'name');
    spec.given([]).when(capture({ phone: '+1 555 0100', company: 'Evil\u202Etxt' })).thenThrows('invalid', 'invalid_lead', 'company');
    spec.given([]).when(capture({ phone: '+1 555 0100', message: 'y'.repeat(2001) })).thenThrows('invalid', 'invalid_lead', 'message');
    spec.given([]).when(capture({ phone: '+1 555 0100', page_url: 'javascript:alert(1)' })).thenThrows('invalid', 'invalid_lead', 'page_url');
    spec.given([]).when(capture({ phone: '+1 555 0100', page_url: 'shop.example.com' })).thenThrows('invalid', 'invalid_lead', 'page_url');
  });

  it('keeps a phone as written and a multi-line message', () => {
    const checked = checkedLeadFields({ phone: ' +44 20 7946 0958 ', message: 'Call me\nafter five' });
    expect(checked).to.deep.equal({ _tag: 'Right', right: { name: null, email: null, phone: '+44 20 7946 0958', company: null, message: 'Call me\nafter five', page_url: null } });
  });

  it('requests the CRM delivery once', () => {
    spec.given([captured]).when({ type: 'RequestCrmDelivery', data: { kind: 'hubspot', url: 'https://api.hubapi.com' } }).then([{ ...requestedCrm, data: { ...requestedCrm.data, requested_at: FIXED_NOW.toISOString() } } as typeof requestedCrm]);
    spec.given([captured, requestedCrm]).when({ type: 'RequestCrmDelivery', data: { kind: 'webhook', url: 'https://hooks.example.com' } }).thenNothingHappened();
    spec.given([]).when({ type: 'RequestCrmDelivery', data: { kind: 'hubspot', url: 'https://api.hubapi.com' } }).thenThrows('not_found', 'lead_not_found');
    spec.given([captured]).when({ type: 'StartCrmAttempt', data: { attempt: 1, kind: 'hubspot', url: 'https://api.hubapi.com' } }).thenThrows('not_found', 'crm_delivery_not_found');
  });

  it('claims the next attempt only: of two racing deliveries one calls', () => {
    const url = 'https://api.hubapi.com/crm/v3/objects/contacts';
    spec.given([captured, requestedCrm]).when({ type: 'StartCrmAttempt', data: { attempt: 1, kind: 'hubspot', url } }).then([startedCrm(1)]);
    spec.given([captured, requestedCrm, startedCrm(1)]).when({ type: 'StartCrmAttempt', data: { attempt: 1, kind: 'hubspot', url } }).thenNothingHappened();
    spec.given([captured, requestedCrm, startedCrm(1), failedCrm(1, FIXED_NOW)]).when({ type: 'StartCrmAttempt', data: { attempt: 2, kind: 'hubspot', url } }).then([startedCrm(2)]);
    spec.given([captured, requestedCrm, startedCrm(1), sentCrm]).when({ type: 'StartCrmAttempt', data: { attempt: 2, kind: 'hubspot', url } }).thenNothingHappened();
  });

  it('records the outcome of the attempt under way only; a late success still counts', () => {
    spec.given([captured, requestedCrm, startedCrm(1)]).when({ type: 'RecordCrmFailure', data: { attempt: 2, status_code: 500, error: 'x', next_attempt_at: FIXED_NOW.toISOString() } }).thenNothingHappened();
    spec.given([captured, requestedCrm, startedCrm(1), failedCrm(1, FIXED_NOW)]).when({ type: 'RecordSentToCrm', data: { attempt: 1, status_code: 201, crm_record_id: '512' } }).then([sentCrm]);
    spec.given([captured, requestedCrm, startedCrm(1), sentCrm]).when({ type: 'RecordSentToCrm', data: { attempt: 1, status_code: 201, crm_record_id: '512' } }).thenNothingHappened();
  });

  it('gives up after the attempt that failed, or before the next one when the CRM was turned off', () => {
    spec.given([captured, requestedCrm, startedCrm(1)]).when({ type: 'AbandonCrmDelivery', data: { attempt: 1, status_code: 500, error: 'x', reason: 'attempts_exhausted' } }).then([
      { type: 'LeadCrmDeliveryAbandoned', data: { lead_id: 'l1', attempts: 1, status_code: 500, error: 'x', reason: 'attempts_exhausted', abandoned_at: FIXED_NOW.toISOString() } },
    ]);
    spec.given([captured, requestedCrm]).when({ type: 'AbandonCrmDelivery', data: { attempt: 0, status_code: null, error: 'off', reason: 'withdrawn' } }).then([
      { type: 'LeadCrmDeliveryAbandoned', data: { lead_id: 'l1', attempts: 0, status_code: null, error: 'off', reason: 'withdrawn', abandoned_at: FIXED_NOW.toISOString() } },
    ]);
    spec.given([captured, requestedCrm, startedCrm(1), sentCrm]).when({ type: 'AbandonCrmDelivery', data: { attempt: 1, status_code: null, error: 'x', reason: 'withdrawn' } }).thenNothingHappened();
  });

  it('deletes a lead of its organization once, ending a delivery still under way; then records nothing more', () => {
    const remove: LeadCommand = { type: 'DeleteLead', data: { tenant_id: 't1', deleted_by: { kind: 'user', id: 'u1' } } };
    const abandoned = (attempts: number): typeof deletedLead => ({ type: 'LeadCrmDeliveryAbandoned', data: { lead_id: 'l1', attempts, status_code: null, error: 'the lead was deleted', reason: 'withdrawn', abandoned_at: FIXED_NOW.toISOString() } });
    spec.given([captured]).when(remove).then([deletedLead]);
    spec.given([captured, requestedCrm, startedCrm(1), sentCrm]).when(remove).then([deletedLead]);
    spec.given([captured, requestedCrm]).when(remove).then([abandoned(0), deletedLead]);
    spec.given([captured, requestedCrm, startedCrm(1)]).when(remove).then([abandoned(1), deletedLead]);
    spec.given([captured, requestedCrm, startedCrm(1), failedCrm(1, FIXED_NOW)]).when(remove).then([abandoned(1), deletedLead]);

    spec.given([captured]).when({ type: 'DeleteLead', data: { tenant_id: 't2', deleted_by: { kind: 'user', id: 'u9' } } }).thenThrows('not_found', 'lead_not_found');
    spec.given([]).when(remove).thenThrows('not_found', 'lead_not_found');
    spec.given([captured, deletedLead]).when(remove).thenThrows('not_found', 'lead_not_found');
    spec.given([captured, deletedLead]).when(capture({ email: 'ada@example.com' })).thenThrows('conflict', 'lead_exists');
    // An attempt in flight when the lead was deleted: its outcome, or another claim, records nothing.
    spec.given([captured, requestedCrm, startedCrm(1), abandoned(1), deletedLead]).when({ type: 'RecordSentToCrm', data: { attempt: 1, status_code: 201, crm_record_id: '512' } }).thenNothingHappened();
    spec.given([captured, requestedCrm, deletedLead]).when({ type: 'StartCrmAttempt', data: { attempt: 1, kind: 'hubspot', url: 'https://api.hubapi.com' } }).thenNothingHappened();
  });

  it('erases a lead of its organization, live or deleted, ending a delivery still under way; again records nothing; then nothing more happens to it', () => {
    const erase = (tenant_id = 't1'): LeadCommand => ({ type: 'EraseLead', data: { tenant_id, erased_by: { kind: 'user', id: 'u1' } } });
    const erasedLead: typeof deletedLead = { type: 'LeadErased', data: { lead_id: 'l1', tenant_id: 't1', erased_by: { kind: 'user', id: 'u1' }, erased_at: FIXED_NOW.toISOString() } };
    const abandoned: typeof deletedLead = { type: 'LeadCrmDeliveryAbandoned', data: { lead_id: 'l1', attempts: 1, status_code: null, error: 'the lead was deleted', reason: 'withdrawn', abandoned_at: FIXED_NOW.toISOString() } };
    spec.given([captured]).when(erase()).then([erasedLead]);
    spec.given([captured, deletedLead]).when(erase()).then([erasedLead]);
    spec.given([captured, requestedCrm, startedCrm(1)]).when(erase()).then([abandoned, erasedLead]);
    spec.given([captured, erasedLead]).when(erase()).thenNothingHappened();
    spec.given([captured, deletedLead, erasedLead]).when(erase()).thenNothingHappened();

    spec.given([]).when(erase()).thenThrows('not_found', 'lead_not_found');
    spec.given([captured]).when(erase('t2')).thenThrows('not_found', 'lead_not_found');
    spec.given([captured, deletedLead]).when(erase('t2')).thenThrows('not_found', 'lead_not_found');
    spec.given([captured, erasedLead]).when({ type: 'DeleteLead', data: { tenant_id: 't1', deleted_by: { kind: 'user', id: 'u1' } } }).thenThrows('not_found', 'lead_not_found');
    spec.given([captured, requestedCrm, erasedLead]).when({ type: 'StartCrmAttempt', data: { attempt: 1, kind: 'hubspot', url: 'https://api.hubapi.com' } }).thenNothingHappened();
  });
});
