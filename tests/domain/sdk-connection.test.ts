import { expect } from 'chai';
import {
  type SdkConnectionCommand,
  type SdkConnectionEvent,
  type SdkConnectionState,
  sdkConnectionDecider,
  usableSecrets,
} from '../../domain/sdk-connection/sdk-connection';
import { FIXED_NOW, deciderSpec } from '../support/decider-spec';

type Data<Type extends SdkConnectionEvent['type']> = Extract<SdkConnectionEvent, { type: Type }>['data'];

describe('SDK connection (decider)', () => {
  const spec = deciderSpec(sdkConnectionDecider);
  const at = FIXED_NOW.toISOString();
  const ids = { tenant_id: 't1', connection_id: 'c1' };
  const later = (seconds: number): Date => new Date(FIXED_NOW.getTime() + seconds * 1000);

  const created = (over: Partial<Data<'SdkConnectionCreated'>> = {}): SdkConnectionEvent => ({
    type: 'SdkConnectionCreated',
    data: { ...ids, name: 'Coffee shop', webhook_url: 'https://connector.example.com', secret_sealed: 'sealed-1', enabled: false, created_at: at, ...over },
  });
  const create = (over: Partial<Extract<SdkConnectionCommand, { type: 'CreateSdkConnection' }>['data']> = {}): SdkConnectionCommand => ({
    type: 'CreateSdkConnection',
    data: { ...ids, name: '  Coffee shop ', webhook_url: 'https://connector.example.com', secret_sealed: 'sealed-1', enabled: false, ...over },
  });
  const update = (over: Partial<Extract<SdkConnectionCommand, { type: 'UpdateSdkConnection' }>['data']> = {}): SdkConnectionCommand => ({ type: 'UpdateSdkConnection', data: { tenant_id: 't1', ...over } });
  const rotate = (secret: string, graceUntil: string | null): SdkConnectionCommand => ({ type: 'RotateSdkConnectionSecret', data: { tenant_id: 't1', secret_sealed: secret, grace_until: graceUntil } });
  const rotated = (over: Partial<Data<'SdkConnectionSecretRotated'>>): SdkConnectionEvent => ({
    type: 'SdkConnectionSecretRotated',
    data: { ...ids, secret_sealed: 'sealed-2', previous_secret_sealed: null, previous_valid_until: null, rotated_at: at, ...over },
  });
  const deleted: SdkConnectionEvent = { type: 'SdkConnectionDeleted', data: { ...ids, name: 'Coffee shop', deleted_at: at } };
  const stateOf = (events: SdkConnectionEvent[]): SdkConnectionState => events.reduce(sdkConnectionDecider.evolve, sdkConnectionDecider.initialState());
  const live = (events: SdkConnectionEvent[]) => {
    const state = stateOf(events);
    if (state.status !== 'active') throw new Error('not live');
    return state;
  };

  it('creates with the name trimmed, disabled unless asked, the secret as sealed; not twice', () => {
    spec.given([]).when(create()).then([created()]);
    spec.given([]).when(create({ enabled: true })).then([created({ enabled: true })]);
    spec.given([created()]).when(create()).thenThrows('conflict', 'sdk_connection_exists');
    expect(live([created()])).to.include({ health: 'untested', secret_sealed: 'sealed-1', previous_secret_sealed: null });
  });

  it('refuses a bad name or webhook URL, naming the field', () => {
    spec.given([]).when(create({ name: '   ' })).thenThrows('invalid', 'invalid_request', 'name');
    spec.given([]).when(create({ name: 'x'.repeat(101) })).thenThrows('invalid', 'invalid_request', 'name');
    spec.given([]).when(create({ webhook_url: 'ftp://connector.example.com' })).thenThrows('invalid', 'invalid_url', 'webhook_url');
    spec.given([]).when(create({ webhook_url: 'https://user:pass@connector.example.com' })).thenThrows('invalid', 'invalid_url', 'webhook_url');
    spec.given([created()]).when(update({ webhook_url: 'not a url' })).thenThrows('invalid', 'invalid_url', 'webhook_url');
  });

  it('updates what is given; enables and disables; the same again records nothing', () => {
    spec
      .given([created()])
      .when(update({ name: 'Roastery', webhook_url: 'https://roastery.example.com' }))
      .then([{ type: 'SdkConnectionUpdated', data: { ...ids, name: 'Roastery', webhook_url: 'https://roastery.example.com', previous_name: 'Coffee shop', updated_at: at } }]);
    spec.given([created()]).when(update({ enabled: true })).then([{ type: 'SdkConnectionEnabled', data: { ...ids, enabled_at: at } }]);
    spec.given([created({ enabled: true })]).when(update({ enabled: false })).then([{ type: 'SdkConnectionDisabled', data: { ...ids, disabled_at: at } }]);
    spec.given([created()]).when(update({ name: 'Coffee shop', webhook_url: 'https://connector.example.com', enabled: false })).thenNothingHappened();
    spec.given([created(), { type: 'SdkConnectionEnabled', data: { ...ids, enabled_at: at } }]).when(update({ enabled: true })).thenNothingHappened();
  });

  it('rotates keeping the previous secret for the grace period; usable secrets before and after it', () => {
    const graceUntil = later(3600).toISOString();
    spec.given([created()]).when(rotate('sealed-2', graceUntil)).then([rotated({ previous_secret_sealed: 'sealed-1', previous_valid_until: graceUntil })]);
    const connection = live([created(), rotated({ previous_secret_sealed: 'sealed-1', previous_valid_until: graceUntil })]);
    expect(usableSecrets(connection, FIXED_NOW)).to.deep.equal(['sealed-2', 'sealed-1']);
    expect(usableSecrets(connection, later(3599))).to.deep.equal(['sealed-2', 'sealed-1']);
    expect(usableSecrets(connection, later(3600))).to.deep.equal(['sealed-2']);
    expect(usableSecrets(connection, later(86400))).to.deep.equal(['sealed-2']);
  });

  it('rotates without grace (none, or one already over): only the new secret signs', () => {
    spec.given([created()]).when(rotate('sealed-2', null)).then([rotated({})]);
    spec.given([created()]).when(rotate('sealed-2', FIXED_NOW.toISOString())).then([rotated({})]);
    expect(usableSecrets(live([created(), rotated({})]), FIXED_NOW)).to.deep.equal(['sealed-2']);
  });

  it('a second rotation keeps only the secret it replaces, never the one before', () => {
    const first = rotated({ previous_secret_sealed: 'sealed-1', previous_valid_until: later(3600).toISOString() });
    spec
      .given([created(), first])
      .when(rotate('sealed-3', later(7200).toISOString()))
      .then([rotated({ secret_sealed: 'sealed-3', previous_secret_sealed: 'sealed-2', previous_valid_until: later(7200).toISOString() })]);
    const connection = live([created(), first, rotated({ secret_sealed: 'sealed-3', previous_secret_sealed: 'sealed-2', previous_valid_until: later(7200).toISOString() })]);
    expect(usableSecrets(connection, later(10))).to.deep.equal(['sealed-3', 'sealed-2']);
  });

  it('records tests (health follows the last one), syncs and failed syncs', () => {
    const test = { tenant_id: 't1', status: 'degraded' as const, reason: 'timeout' as const, detail: 'no answer within 500 ms', latency_ms: 500, protocol_version: null, sdk_version: null, deep: null };
    const { tenant_id: _tenant, ...testData } = test;
    spec.given([created()]).when({ type: 'RecordSdkConnectionTest', data: test }).then([{ type: 'SdkConnectionTested', data: { ...ids, ...testData, tested_at: at } }]);
    const tested: SdkConnectionEvent = { type: 'SdkConnectionTested', data: { ...ids, ...testData, tested_at: at } };
    expect(live([created(), tested]).health).to.equal('degraded');
    const healthy: SdkConnectionEvent = { type: 'SdkConnectionTested', data: { ...ids, ...testData, status: 'healthy', reason: null, detail: null, deep: { passed: 13, total: 13 }, tested_at: at } };
    expect(live([created(), tested, healthy]).health).to.equal('healthy');

    const sync = { via: 'capabilities.list' as const, tools: [{ name: 'search_products', chat: true }], flows: [{ id: 'follow_up' }], events: [{ id: 'order_delayed' }], schedules: [{ id: 'nightly', cron: '0 2 * * *', event: 'shop.stock.sync_due' }], organization: { version: 1 }, sdk_name: 'svc', sdk_version: '1.7.0' };
    spec.given([created()]).when({ type: 'RecordSdkConnectionSync', data: { tenant_id: 't1', ...sync } }).then([{ type: 'SdkConnectionToolsSynced', data: { ...ids, ...sync, synced_at: at } }]);
    const synced: SdkConnectionEvent = { type: 'SdkConnectionToolsSynced', data: { ...ids, ...sync, synced_at: at } };
    expect(live([created(), synced])).to.deep.include({ tools: sync.tools, flows: sync.flows });

    const failure = { reason: 'unreachable' as const, detail: 'connection refused', latency_ms: 3 };
    spec.given([created(), synced]).when({ type: 'RecordSdkConnectionSyncFailure', data: { tenant_id: 't1', ...failure } }).then([{ type: 'SdkConnectionSyncFailed', data: { ...ids, ...failure, failed_at: at } }]);
    // A failed sync keeps what the last good one stored.
    expect(live([created(), synced, { type: 'SdkConnectionSyncFailed', data: { ...ids, ...failure, failed_at: at } }])).to.deep.include({ tools: sync.tools });
  });

  it('deletes; a deleted, missing or other tenant’s connection is not found', () => {
    spec.given([created()]).when({ type: 'DeleteSdkConnection', data: { tenant_id: 't1' } }).then([deleted]);
    spec.given([created(), deleted]).when(update({ name: 'x' })).thenThrows('not_found', 'sdk_connection_not_found');
    spec.given([created(), deleted]).when(create()).thenThrows('conflict', 'sdk_connection_exists');
    spec.given([]).when(rotate('sealed-2', null)).thenThrows('not_found', 'sdk_connection_not_found');
    spec.given([created()]).when(update({ tenant_id: 't2', name: 'x' })).thenThrows('not_found', 'sdk_connection_not_found');
    spec.given([created()]).when({ type: 'DeleteSdkConnection', data: { tenant_id: 't2' } }).thenThrows('not_found', 'sdk_connection_not_found');
  });
});
