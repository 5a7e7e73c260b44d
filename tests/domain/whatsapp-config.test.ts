// The WhatsApp configuration aggregate (given/when/then): a first configuration needs the
// number and what checks Meta's webhook; a change keeps what it leaves out, names what it
// changed (secrets by name only), and the same configuration again records nothing.

import { type AccessTokenChoice, type WhatsAppConfigChanges, type WhatsAppConfigEvent, whatsappConfigDecider } from '../../domain/whatsapp-config/whatsapp-config';
import { FIXED_NOW, deciderSpec } from '../support/decider-spec';

describe('WhatsApp configuration (decider)', () => {
  const spec = deciderSpec(whatsappConfigDecider);
  const keep: AccessTokenChoice = { kind: 'keep' };
  const configure = (changes: Partial<WhatsAppConfigChanges>) => ({ type: 'ConfigureWhatsApp' as const, data: { tenant_id: 't1', changes: { access_token: keep, ...changes } } });
  const first = { phone_number_id: '106540352242922', verify_token_digest: 'digest-1', app_secret_sealed: 'sealed-secret-1' };
  const configured: WhatsAppConfigEvent = {
    type: 'WhatsAppConfigured',
    data: {
      tenant_id: 't1',
      phone_number_id: '106540352242922',
      display_phone_number: '',
      verify_token_digest: 'digest-1',
      app_secret_sealed: 'sealed-secret-1',
      access_token_sealed: null,
      enabled: true,
      graph_api_version: 'v23.0',
      workspace_id: null,
      changed: ['phone_number_id', 'display_phone_number', 'enabled', 'graph_api_version', 'workspace_id', 'verify_token', 'app_secret'],
      configured_at: FIXED_NOW.toISOString(),
    },
  };

  it('is configured first with the number, the verify token and the app secret, the rest defaulted', () => {
    spec.given([]).when(configure(first)).then([configured]);
  });

  it('refuses a first configuration that lacks one of them, naming it', () => {
    spec.given([]).when(configure({ verify_token_digest: 'd', app_secret_sealed: 's' })).thenThrows('invalid', 'invalid_whatsapp_config', 'phone_number_id');
    spec.given([]).when(configure({ phone_number_id: '1', app_secret_sealed: 's' })).thenThrows('invalid', 'invalid_whatsapp_config', 'verify_token');
    spec.given([]).when(configure({ phone_number_id: '1', verify_token_digest: 'd' })).thenThrows('invalid', 'invalid_whatsapp_config', 'app_secret');
  });

  it('refuses malformed fields, naming each', () => {
    spec.given([configured]).when(configure({ phone_number_id: '+1 555' })).thenThrows('invalid', 'invalid_whatsapp_config', 'phone_number_id');
    spec.given([configured]).when(configure({ display_phone_number: 'call me' })).thenThrows('invalid', 'invalid_whatsapp_config', 'display_phone_number');
    spec.given([configured]).when(configure({ graph_api_version: '23' })).thenThrows('invalid', 'invalid_whatsapp_config', 'graph_api_version');
    spec.given([configured]).when(configure({ workspace_id: '' })).thenThrows('invalid', 'invalid_whatsapp_config', 'workspace_id');
  });

  it('keeps what a change leaves out, and names only what it changed', () => {
    spec.given([configured]).when(configure({ enabled: false, access_token: { kind: 'given', sealed: 'sealed-token' } })).then([
      { type: 'WhatsAppConfigured', data: { ...configured.data, enabled: false, access_token_sealed: 'sealed-token', changed: ['enabled', 'access_token'] } },
    ]);
    const withToken: WhatsAppConfigEvent = { type: 'WhatsAppConfigured', data: { ...configured.data, access_token_sealed: 'sealed-token', changed: ['access_token'] } };
    spec.given([configured, withToken]).when(configure({ access_token: { kind: 'remove' } })).then([
      { type: 'WhatsAppConfigured', data: { ...configured.data, access_token_sealed: null, changed: ['access_token'] } },
    ]);
    // A given app secret cannot be compared with the sealed one held: it counts as a change.
    spec.given([configured]).when(configure({ app_secret_sealed: 'sealed-secret-2' })).then([
      { type: 'WhatsAppConfigured', data: { ...configured.data, app_secret_sealed: 'sealed-secret-2', changed: ['app_secret'] } },
    ]);
  });

  it('records nothing for the same configuration again', () => {
    spec.given([configured]).when(configure({ phone_number_id: first.phone_number_id, verify_token_digest: 'digest-1', enabled: true, workspace_id: null })).thenNothingHappened();
    spec.given([configured]).when(configure({ access_token: { kind: 'remove' } })).thenNothingHappened();
  });
});
