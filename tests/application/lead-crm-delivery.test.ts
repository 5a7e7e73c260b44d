// The lead CRM delivery process manager (given/when/then), and what each kind of CRM is sent
// on the wire. tests/api/widget-leads.test.ts runs the saga against local CRM servers.

import { expect } from 'chai';
import { type LeadCrmDeliveryInput, type LeadCrmDeliveryOutput, leadCrmDelivery } from '../../application/lead/lead-crm-delivery';
import { NO_COMPANY, crmRecordIdOf, crmRequestOf, nameParts } from '../../application/lead/crm-requests';
import { FIXED_NOW } from '../support/decider-spec';
import { processManagerSpec } from '../support/process-manager-spec';
import { at, captured, deletedLead, failedCrm, lead, requestedCrm, sentCrm, startedCrm } from '../support/lead-events';

describe('lead CRM delivery (process manager)', () => {
  const spec = processManagerSpec(leadCrmDelivery({ maxAttempts: 3, backoffMs: (attempt) => 1000 * 2 ** (attempt - 1), outcomeTimeoutMs: 60_000 }));
  const send = (attempt: number): LeadCrmDeliveryOutput => ({ type: 'SendLead', data: { lead_id: 'l1', attempt } });
  const trigger: LeadCrmDeliveryInput = { type: 'CrmDeliveryRequested', data: { lead_id: 'l1' } };
  const due: LeadCrmDeliveryInput = { type: 'CrmDeliveryDue', data: { lead_id: 'l1' } };
  const refused = (attempt: number): LeadCrmDeliveryInput => ({ type: 'CrmCallFailed', data: { lead_id: 'l1', attempt, status_code: 503, error: 'the CRM answered HTTP 503' } });
  const accepted = (attempt: number): LeadCrmDeliveryInput => ({ type: 'CrmAccepted', data: { lead_id: 'l1', attempt, status_code: 201, crm_record_id: '512' } });

  it('asks nothing for a lead with no delivery requested (no CRM was on)', () => {
    spec.given([captured]).when(trigger).thenNothingHappened();
    spec.given([captured]).when(due, at(3_600_000)).thenNothingHappened();
  });

  it('asks nothing once the lead is deleted, whatever comes', () => {
    for (const input of [trigger, due, accepted(1), refused(1)]) spec.given([captured, requestedCrm, startedCrm(1), deletedLead]).when(input, at(3_600_000)).thenNothingHappened();
  });

  it('asks to send a requested lead, and nothing when the trigger comes again', () => {
    spec.given([captured, requestedCrm]).when(trigger).then([send(1)]);
    spec.given([captured, requestedCrm, startedCrm(1)]).when(trigger).thenNothingHappened();
    spec.given([captured, requestedCrm, startedCrm(1), sentCrm]).when(trigger).thenNothingHappened();
  });

  it('records the CRM accepting it, once', () => {
    spec.given([captured, requestedCrm, startedCrm(1)]).when(accepted(1)).then([{ type: 'RecordSentToCrm', data: { attempt: 1, status_code: 201, crm_record_id: '512' } }]);
    spec.given([captured, requestedCrm, startedCrm(1), sentCrm]).when(accepted(1)).thenNothingHappened();
  });

  it('schedules the next attempt with exponential back-off, and gives up after the last', () => {
    spec.given([captured, requestedCrm, startedCrm(1)]).when(refused(1)).then([
      { type: 'RecordCrmFailure', data: { attempt: 1, status_code: 503, error: 'the CRM answered HTTP 503', next_attempt_at: at(1000).toISOString() } },
    ]);
    spec.given([captured, requestedCrm, startedCrm(1), failedCrm(1, FIXED_NOW), startedCrm(2)]).when(refused(2)).then([
      { type: 'RecordCrmFailure', data: { attempt: 2, status_code: 503, error: 'the CRM answered HTTP 503', next_attempt_at: at(2000).toISOString() } },
    ]);
    spec
      .given([captured, requestedCrm, startedCrm(1), failedCrm(1, FIXED_NOW), startedCrm(2), failedCrm(2, FIXED_NOW), startedCrm(3)])
      .when(refused(3))
      .then([{ type: 'AbandonCrmDelivery', data: { attempt: 3, status_code: 503, error: 'the CRM answered HTTP 503', reason: 'attempts_exhausted' } }]);
  });

  it('sends a retry when it is due, not before; takes an attempt without outcome as lost once overdue', () => {
    spec.given([captured, requestedCrm, startedCrm(1), failedCrm(1, at(1000))]).when(due).thenNothingHappened();
    spec.given([captured, requestedCrm, startedCrm(1), failedCrm(1, at(1000))]).when(due, at(1000)).then([send(2)]);
    spec.given([captured, requestedCrm, startedCrm(1)]).when(due, at(59_999)).thenNothingHappened();
    spec.given([captured, requestedCrm, startedCrm(1)]).when(due, at(60_000)).then([
      { type: 'RecordCrmFailure', data: { attempt: 1, status_code: null, error: "no outcome recorded within 60000 ms of the attempt's start", next_attempt_at: at(61_000).toISOString() } },
    ]);
    spec.given([captured, requestedCrm]).when(due, at(29_999)).thenNothingHappened();
    spec.given([captured, requestedCrm]).when(due, at(30_000)).then([send(1)]);
  });

  it('gives the delivery up when it is withdrawn before its next attempt', () => {
    const withdrawn = (attempts: number): LeadCrmDeliveryInput => ({ type: 'CrmDeliveryWithdrawn', data: { lead_id: 'l1', attempts, error: 'off' } });
    spec.given([captured, requestedCrm]).when(withdrawn(0)).then([{ type: 'AbandonCrmDelivery', data: { attempt: 0, status_code: null, error: 'off', reason: 'withdrawn' } }]);
    spec.given([captured, requestedCrm, startedCrm(1), failedCrm(1, FIXED_NOW)]).when(withdrawn(1)).then([{ type: 'AbandonCrmDelivery', data: { attempt: 1, status_code: null, error: 'off', reason: 'withdrawn' } }]);
    spec.given([captured, requestedCrm, startedCrm(1)]).when(withdrawn(0)).thenNothingHappened();
  });
});

describe('CRM requests (each kind on the wire)', () => {
  const target = { url: 'https://crm.example.com/', credential: 'token-0123456789', field_mapping: {} };

  it('splits a name at its last space', () => {
    expect(nameParts('Ada King Lovelace')).to.deep.equal({ first_name: 'Ada King', last_name: 'Lovelace' });
    expect(nameParts('Ada')).to.deep.equal({ first_name: 'Ada', last_name: null });
    expect(nameParts(null)).to.deep.equal({ first_name: null, last_name: null });
  });

  it('hubspot: a contact with its default properties, renamed and extended by the mapping', () => {
    const request = crmRequestOf({ ...target, kind: 'hubspot', field_mapping: { page_url: 'website_page', company: 'company_name' } }, lead);
    expect(request).to.deep.include({ kind: 'plain', method: 'POST', url: 'https://crm.example.com/crm/v3/objects/contacts' });
    if (request.kind !== 'plain') throw new Error('expected a plain request');
    expect(request.headers).to.include({ authorization: 'Bearer token-0123456789', 'content-type': 'application/json' });
    expect(JSON.parse(request.body)).to.deep.equal({
      properties: { email: 'ada@example.com', firstname: 'Ada', lastname: 'Lovelace', company_name: 'Analytical Engines', website_page: 'https://shop.example.com/pricing' },
    });
  });

  it('salesforce: a Lead with LastName and Company always there', () => {
    const request = crmRequestOf({ ...target, kind: 'salesforce' }, { ...lead, name: 'Ada', company: null, message: 'Call me' });
    if (request.kind !== 'plain') throw new Error('expected a plain request');
    expect(request.url).to.equal('https://crm.example.com/services/data/v60.0/sobjects/Lead');
    expect(JSON.parse(request.body)).to.deep.equal({ Email: 'ada@example.com', FirstName: 'Ada', LastName: 'Ada', Company: NO_COMPANY, Description: 'Call me' });
  });

  it('pipedrive: a person with email and phone lists, custom fields by the mapping, the token in a header', () => {
    const request = crmRequestOf({ ...target, kind: 'pipedrive', field_mapping: { company: 'a1b2c3d4e5f6a1b2c3d4e5f6a1b2c3d4e5f6a1b2' } }, { ...lead, phone: '+44 20 7946 0958' });
    if (request.kind !== 'plain') throw new Error('expected a plain request');
    expect(request.url).to.equal('https://crm.example.com/v1/persons');
    expect(request.headers['x-api-token']).to.equal('token-0123456789');
    expect(request.url).to.not.include('token');
    expect(JSON.parse(request.body)).to.deep.equal({
      a1b2c3d4e5f6a1b2c3d4e5f6a1b2c3d4e5f6a1b2: 'Analytical Engines',
      name: 'Ada Lovelace',
      email: [{ value: 'ada@example.com', primary: true, label: 'work' }],
      phone: [{ value: '+44 20 7946 0958', primary: true, label: 'work' }],
    });
  });

  it('webhook: the lead signed with the credential, or unsigned without one', () => {
    const signed = crmRequestOf({ ...target, kind: 'webhook', url: 'https://hooks.example.com/leads', field_mapping: { email: 'Email' } }, lead);
    expect(signed).to.include({ kind: 'signed', url: 'https://hooks.example.com/leads', secret: 'token-0123456789' });
    const payload = JSON.parse(signed.body);
    expect(payload).to.deep.include({ type: 'lead.captured', delivery_id: 'l1', tenant_id: 't1' });
    expect(payload.lead).to.deep.include({ id: 'l1', email: 'ada@example.com', first_name: 'Ada', last_name: 'Lovelace', source: 'widget' });
    expect(payload.fields).to.deep.include({ Email: 'ada@example.com', name: 'Ada Lovelace' });
    expect(crmRequestOf({ ...target, credential: null, kind: 'webhook', url: 'https://hooks.example.com/leads' }, lead)).to.include({ kind: 'plain' });
  });

  it('refuses a kind that needs a credential without one, and reads the record id each CRM answers', () => {
    expect(() => crmRequestOf({ ...target, credential: null, kind: 'hubspot' }, lead)).to.throw(/needs a credential/);
    expect(crmRecordIdOf('hubspot', Buffer.from('{"id":"512","properties":{}}'))).to.equal('512');
    expect(crmRecordIdOf('salesforce', Buffer.from('{"id":"00Q5g00000ABC","success":true,"errors":[]}'))).to.equal('00Q5g00000ABC');
    expect(crmRecordIdOf('pipedrive', Buffer.from('{"success":true,"data":{"id":77}}'))).to.equal('77');
    expect(crmRecordIdOf('webhook', Buffer.from('not json'))).to.equal(null);
  });
});
