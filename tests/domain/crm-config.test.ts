import { expect } from 'chai';
import { type CrmConfigCommand, type CrmConfigEvent, credentialProblem, crmConfigDecider, fieldMappingProblem } from '../../domain/crm-config/crm-config';
import { FIXED_NOW, deciderSpec } from '../support/decider-spec';

describe('CRM configuration (decider)', () => {
  const spec = deciderSpec(crmConfigDecider);
  const at = FIXED_NOW.toISOString();
  const configured = (over: Partial<Extract<CrmConfigEvent, { type: 'CrmConfigured' }>['data']> = {}): CrmConfigEvent => ({
    type: 'CrmConfigured',
    data: {
      tenant_id: 't1',
      kind: 'hubspot',
      url: 'https://api.hubapi.com',
      enabled: true,
      credential_sealed: 'sealed-1',
      credential_change: 'given',
      field_mapping: { email: 'email', name: 'firstname' },
      configured_at: at,
      ...over,
    },
  });
  const configure = (over: Partial<CrmConfigCommand['data']> = {}): CrmConfigCommand => ({
    type: 'ConfigureCrm',
    data: { tenant_id: 't1', kind: 'hubspot', url: 'https://api.hubapi.com', enabled: null, credential: { kind: 'keep' }, field_mapping: null, ...over },
  });

  it('makes the first configuration: on, with no mapping unless given', () => {
    spec.given([]).when(configure()).then([configured({ credential_sealed: null, credential_change: 'none', field_mapping: {} })]);
    spec.given([]).when(configure({ credential: { kind: 'given', sealed: 'sealed-1' }, field_mapping: { email: 'email', name: 'firstname' } })).then([configured()]);
  });

  it('keeps the credential and the mapping when a change leaves them out; the same configuration records nothing', () => {
    spec.given([configured()]).when(configure()).thenNothingHappened();
    spec.given([configured()]).when(configure({ kind: 'webhook', url: 'https://crm.example.com/leads' })).then([configured({ kind: 'webhook', url: 'https://crm.example.com/leads', credential_change: 'kept' })]);
    spec.given([configured()]).when(configure({ credential: { kind: 'remove' } })).then([configured({ credential_sealed: null, credential_change: 'removed' })]);
    spec.given([configured()]).when(configure({ enabled: false, field_mapping: {} })).then([configured({ enabled: false, credential_change: 'kept', field_mapping: {} })]);
  });

  it('refuses a bad URL, an unknown lead field, a bad CRM field name, and one CRM field twice, naming the entry', () => {
    spec.given([]).when(configure({ url: 'mailto:sales@example.com' })).thenThrows('invalid', 'invalid_url', 'url');
    spec.given([]).when(configure({ field_mapping: { shoe_size: 'shoe' } })).thenThrows('invalid', 'invalid_field_mapping', 'field_mapping.shoe_size');
    spec.given([]).when(configure({ field_mapping: { email: 'e mail' } })).thenThrows('invalid', 'invalid_field_mapping', 'field_mapping.email');
    spec.given([]).when(configure({ field_mapping: { email: 'Email', phone: 'Email' } })).thenThrows('invalid', 'invalid_field_mapping', 'field_mapping.phone');
    expect(fieldMappingProblem({ company: 'Company__c', phone: 'd4de1c1518b4531717c676029a45911c340390a6' })).to.equal(null);
  });

  it('checks a given credential: 1 to 4096 printable characters without spaces', () => {
    expect(credentialProblem('')?.code).to.equal('invalid_credential');
    expect(credentialProblem('pat na1 token')?.field).to.equal('credential');
    expect(credentialProblem('pat-na1-0123456789')).to.equal(null);
  });
});
