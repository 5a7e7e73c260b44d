import { expect } from 'chai';
import { type HandoffConfigEvent, handoffConfigDecider, secretHint, signingSecretProblem } from '../../domain/handoff-config/handoff-config';
import { FIXED_NOW, deciderSpec } from '../support/decider-spec';

describe('handoff configuration (decider)', () => {
  const spec = deciderSpec(handoffConfigDecider);
  const at = FIXED_NOW.toISOString();
  const made = { sealed: 'sealed-made', hint: 'MADE' };
  const configured = (over: Partial<Extract<HandoffConfigEvent, { type: 'HandoffConfigured' }>['data']> = {}): HandoffConfigEvent => ({
    type: 'HandoffConfigured',
    data: { tenant_id: 't1', url: 'https://desk.example.com/hook', enabled: true, secret_sealed: 'sealed-1', secret_hint: 'abcd', secret_source: 'given', configured_at: at, ...over },
  });
  const configure = (url: string, secret: Parameters<typeof handoffConfigDecider.decide>[0]['data']['secret'], enabled: boolean | null = null) =>
    ({ type: 'ConfigureHandoff', data: { tenant_id: 't1', url, enabled, secret } }) as const;

  it('makes the first configuration with the platform’s secret when none is given, on by default', () => {
    spec
      .given([])
      .when(configure('https://desk.example.com/hook', { kind: 'keep', otherwise: made }))
      .then([configured({ secret_sealed: 'sealed-made', secret_hint: 'MADE', secret_source: 'generated' })]);
  });

  it('keeps the secret when none is given, and records nothing when nothing changes', () => {
    spec.given([configured()]).when(configure('https://desk.example.com/hook', { kind: 'keep', otherwise: made })).thenNothingHappened();
    spec
      .given([configured()])
      .when(configure('https://desk.example.com/other', { kind: 'keep', otherwise: made }))
      .then([configured({ url: 'https://desk.example.com/other', secret_source: 'kept' })]);
    spec.given([configured()]).when(configure('https://desk.example.com/hook', { kind: 'keep', otherwise: made }, false)).then([configured({ enabled: false, secret_source: 'kept' })]);
  });

  it('keeps handoffs off when a change does not say, and rotates the secret on request', () => {
    spec
      .given([configured({ enabled: false })])
      .when(configure('https://desk.example.com/hook', { kind: 'generate', sealed: 'sealed-new', hint: 'NEWW' }))
      .then([configured({ enabled: false, secret_sealed: 'sealed-new', secret_hint: 'NEWW', secret_source: 'generated' })]);
    spec
      .given([configured()])
      .when(configure('https://desk.example.com/hook', { kind: 'given', sealed: 'sealed-2', hint: 'wxyz' }))
      .then([configured({ secret_sealed: 'sealed-2', secret_hint: 'wxyz' })]);
  });

  it('refuses a URL that is not an absolute http(s) URL, or carries a user name', () => {
    for (const url of ['', 'desk.example.com/hook', 'ftp://desk.example.com/hook', 'https://user:pass@desk.example.com/hook', `https://desk.example.com/${'a'.repeat(2048)}`]) {
      spec.given([]).when(configure(url, { kind: 'keep', otherwise: made })).thenThrows('invalid', 'invalid_url', 'url');
    }
  });

  it('checks a given secret: 16 to 256 printable characters without spaces; its hint is the last four', () => {
    expect(signingSecretProblem('short')?.code).to.equal('invalid_secret');
    expect(signingSecretProblem('sixteen chars ok')?.code).to.equal('invalid_secret');
    expect(signingSecretProblem('x'.repeat(257))?.field).to.equal('secret');
    expect(signingSecretProblem('a-secret-of-sixteen')).to.equal(null);
    expect(secretHint('a-secret-of-sixteen')).to.equal('teen');
  });
});
