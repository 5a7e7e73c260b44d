import { type IntegrationCommand, type IntegrationEvent, integrationDecider } from '../../domain/integration/integration';
import { expect } from 'chai';
import { FIXED_NOW, deciderSpec } from '../support/decider-spec';

describe('integration (decider)', () => {
  const spec = deciderSpec(integrationDecider);
  const at = FIXED_NOW.toISOString();
  const ids = { tenant_id: 't1', workspace_id: 'w1', integration_id: 'i1' };
  const created = (over: Partial<Extract<IntegrationEvent, { type: 'IntegrationCreated' }>['data']> = {}): IntegrationEvent => ({
    type: 'IntegrationCreated',
    data: { ...ids, name: 'Orders', base_url: 'https://api.example.com', auth: { kind: 'bearer' }, credentials_sealed: 'sealed-1', default_headers: {}, created_at: at, ...over },
  });
  const create = (over: Partial<Extract<IntegrationCommand, { type: 'CreateIntegration' }>['data']> = {}): IntegrationCommand => ({
    type: 'CreateIntegration',
    data: { ...ids, name: ' Orders ', base_url: 'https://api.example.com', auth: { kind: 'bearer' }, default_headers: {}, credentials: { kind: 'given', sealed: 'sealed-1' }, ...over },
  });
  const update = (over: Partial<Extract<IntegrationCommand, { type: 'UpdateIntegration' }>['data']> = {}): IntegrationCommand => ({
    type: 'UpdateIntegration',
    data: { tenant_id: 't1', credentials: { kind: 'keep' }, ...over },
  });
  const updated = (over: Partial<Extract<IntegrationEvent, { type: 'IntegrationUpdated' }>['data']> = {}): IntegrationEvent => ({
    type: 'IntegrationUpdated',
    data: { ...ids, name: 'Orders', base_url: 'https://api.example.com', auth: { kind: 'bearer' }, credentials_sealed: 'sealed-1', credentials_change: 'kept', default_headers: {}, updated_at: at, ...over },
  });

  it('creates with the name trimmed and the secret sealed as given; not twice', () => {
    spec.given([]).when(create()).then([created()]);
    spec.given([]).when(create({ auth: { kind: 'none' }, credentials: { kind: 'keep' } })).then([created({ auth: { kind: 'none' }, credentials_sealed: null })]);
    spec.given([created()]).when(create()).thenThrows('conflict', 'integration_exists');
  });

  it('refuses bad fields, naming them', () => {
    spec.given([]).when(create({ base_url: 'ftp://x' })).thenThrows('invalid', 'invalid_url', 'base_url');
    spec.given([]).when(create({ auth: { kind: 'api_key', in: 'header', name: 'Authorization' } })).thenThrows('invalid', 'reserved_header', 'auth.name');
    spec.given([]).when(create({ auth: { kind: 'api_key', in: 'query', name: 'a b' } })).thenThrows('invalid', 'invalid_auth', 'auth.name');
    spec.given([]).when(create({ default_headers: { 'X-A': '1', 'x-a': '2' } })).thenThrows('invalid', 'invalid_header', 'default_headers.x-a');
    spec.given([]).when(create({ default_headers: { Host: 'evil' } })).thenThrows('invalid', 'reserved_header', 'default_headers.Host');
    spec.given([]).when(create({ auth: { kind: 'none' } })).thenThrows('invalid', 'invalid_credentials', 'credentials');
  });

  it('updates what is given, keeps the rest; the same again records nothing', () => {
    spec.given([created()]).when(update({ name: 'Order API' })).then([updated({ name: 'Order API' })]);
    spec.given([created()]).when(update({ name: 'Orders' })).thenNothingHappened();
    spec.given([created()]).when(update({ credentials: { kind: 'given', sealed: 'sealed-2' } })).then([updated({ credentials_sealed: 'sealed-2', credentials_change: 'given' })]);
    spec.given([created()]).when(update({ credentials: { kind: 'remove' } })).then([updated({ credentials_sealed: null, credentials_change: 'removed' })]);
  });

  it('asks for new credentials when the auth kind changes; none drops them', () => {
    spec.given([created()]).when(update({ auth: { kind: 'basic', username: 'u' } })).thenThrows('invalid', 'credentials_required', 'credentials');
    spec
      .given([created()])
      .when(update({ auth: { kind: 'basic', username: 'u' }, credentials: { kind: 'given', sealed: 'sealed-2' } }))
      .then([updated({ auth: { kind: 'basic', username: 'u' }, credentials_sealed: 'sealed-2', credentials_change: 'given' })]);
    spec.given([created()]).when(update({ auth: { kind: 'none' } })).then([updated({ auth: { kind: 'none' }, credentials_sealed: null, credentials_change: 'removed' })]);
  });

  it('deletes; a deleted, missing or other tenant’s integration is not found', () => {
    spec.given([created()]).when({ type: 'DeleteIntegration', data: { tenant_id: 't1' } }).then([{ type: 'IntegrationDeleted', data: { ...ids, name: 'Orders', deleted_at: at } }]);
    spec.given([created(), { type: 'IntegrationDeleted', data: { ...ids, name: 'Orders', deleted_at: at } }]).when(update({ name: 'x' })).thenThrows('not_found', 'integration_not_found');
    spec.given([]).when({ type: 'DeleteIntegration', data: { tenant_id: 't1' } }).thenThrows('not_found', 'integration_not_found');
    spec.given([created()]).when(update({ tenant_id: 't2', name: 'x' })).thenThrows('not_found', 'integration_not_found');
  });

  it('remembers the OpenAPI document its tools were imported from, through later updates; not for a deleted or other tenant’s integration', () => {
    const source = { url: 'https://api.example.com/openapi.yaml', sha256: 'a'.repeat(64), api_version: '1.2.0' };
    const record: IntegrationCommand = { type: 'RecordOpenApiImport', data: { tenant_id: 't1', source } };
    const imported: IntegrationEvent = { type: 'IntegrationOpenApiImported', data: { ...ids, source: { ...source, imported_at: at } } };
    spec.given([created()]).when(record).then([imported]);
    spec.given([created(), imported]).when({ ...record, data: { tenant_id: 't1', source: { ...source, url: null } } }).then([{ ...imported, data: { ...ids, source: { ...source, url: null, imported_at: at } } }]);
    spec.given([]).when(record).thenThrows('not_found', 'integration_not_found');
    spec.given([created()]).when({ ...record, data: { tenant_id: 't2', source } }).thenThrows('not_found', 'integration_not_found');
    spec.given([created(), { type: 'IntegrationDeleted', data: { ...ids, name: 'Orders', deleted_at: at } }]).when(record).thenThrows('not_found', 'integration_not_found');
    const state = [created(), imported, updated({ name: 'Order API' })].reduce(integrationDecider.evolve, integrationDecider.initialState());
    expect(state).to.deep.include({ status: 'active', name: 'Order API', openapi_source: { ...source, imported_at: at } });
  });
});
