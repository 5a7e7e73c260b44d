import { expect } from 'chai';
import {
  DEFAULT_WIDGET_SETTINGS,
  MAX_ALLOWED_ORIGINS,
  MAX_CUSTOM_CSS_LENGTH,
  MAX_THEME_TOKENS,
  type WidgetConfigCommand,
  type WidgetConfigEvent,
  type WidgetSettings,
  normalOrigin,
  originMatches,
  widgetConfigDecider,
} from '../../domain/widget-config/widget-config';
import { domainEvents } from '../../domain/events';
import { settingsOf } from '../../projections/widget-configs';
import { FIXED_NOW, deciderSpec } from '../support/decider-spec';

describe('widget configuration (decider)', () => {
  const spec = deciderSpec(widgetConfigDecider);
  const at = FIXED_NOW.toISOString();
  const configure = (changes: Partial<WidgetSettings>): WidgetConfigCommand => ({ type: 'ConfigureWidget', data: { tenant_id: 't1', changes } });
  const configured = (settings: Partial<WidgetSettings>, changed: string[]): WidgetConfigEvent => ({
    type: 'WidgetConfigured',
    data: { tenant_id: 't1', settings: { ...DEFAULT_WIDGET_SETTINGS, ...settings }, changed, configured_at: at },
  });
  const rotated = (sealed = 'sealed-secret'): WidgetConfigEvent => ({ type: 'WidgetIdentitySecretRotated', data: { tenant_id: 't1', secret_sealed: sealed, rotated_at: at } });

  describe('ConfigureWidget', () => {
    it('records the whole settings record and which settings changed; the others keep the defaults', () => {
      spec.given([]).when(configure({ title: 'Help', primary_color: '#FF0000' })).then([configured({ title: 'Help', primary_color: '#FF0000' }, ['title', 'primary_color'])]);
    });

    it('keeps earlier changes, and the same settings again record nothing', () => {
      const first = configured({ title: 'Help' }, ['title']);
      spec.given([first]).when(configure({ position: 'bottom-left' })).then([configured({ title: 'Help', position: 'bottom-left' }, ['position'])]);
      spec.given([first]).when(configure({ title: 'Help' })).thenNothingHappened();
      spec.given([first]).when(configure({})).thenNothingHappened();
      spec.given([]).when(configure({ ...DEFAULT_WIDGET_SETTINGS })).thenNothingHappened();
    });

    it('stores texts trimmed in NFC and refuses ones too long or with control characters', () => {
      spec.given([]).when(configure({ title: '  Cafe\u0301  ', welcome_message: 'Hi!\nAsk me.' })).then([configured({ title: 'Café', welcome_message: 'Hi!\nAsk me.' }, ['title', 'welcome_message'])]);
      spec.given([]).when(configure({ title: 'x'.repeat(101) })).thenThrows('invalid', 'invalid_widget_settings', 'title');
      spec.given([]).when(configure({ title: 'two\nlines' })).thenThrows('invalid', 'invalid_widget_settings', 'title');
      spec.given([]).when(configure({ welcome_message: 'y'.repeat(501) })).thenThrows('invalid', 'invalid_widget_settings', 'welcome_message');
      spec.given([]).when(configure({ welcome_message: 'evil \u202e' })).thenThrows('invalid', 'invalid_widget_settings', 'welcome_message');
    });

    it('takes colours only as #rrggbb, naming the colour at fault', () => {
      for (const field of ['primary_color', 'background_color', 'text_color'] as const) {
        for (const bad of ['red', '#fff', '#12345g', 'rgb(0,0,0)', '#1234567', '']) spec.given([]).when(configure({ [field]: bad })).thenThrows('invalid', 'invalid_widget_settings', field);
      }
      spec.given([]).when(configure({ text_color: '#0a0B0c' })).then([configured({ text_color: '#0a0B0c' }, ['text_color'])]);
    });

    it('takes theme tokens as lower-case names with one CSS value each, at most MAX_THEME_TOKENS', () => {
      spec.given([]).when(configure({ theme: { radius: '12px', 'font-family': '"Inter", sans-serif' } })).then([configured({ theme: { radius: '12px', 'font-family': '"Inter", sans-serif' } }, ['theme'])]);
      spec.given([]).when(configure({ theme: { Radius: '12px' } })).thenThrows('invalid', 'invalid_widget_settings', 'theme.Radius');
      spec.given([]).when(configure({ theme: { '1st': '12px' } })).thenThrows('invalid', 'invalid_widget_settings', 'theme.1st');
      spec.given([]).when(configure({ theme: { [`a${'b'.repeat(40)}`]: '1px' } })).thenThrows('invalid', 'invalid_widget_settings', `theme.a${'b'.repeat(40)}`);
      for (const value of ['red; background: url(x)', '}body{color:red', '<script>', 'a\\b', '', 'x'.repeat(201)]) {
        spec.given([]).when(configure({ theme: { accent: value } })).thenThrows('invalid', 'invalid_widget_settings', 'theme.accent');
      }
      const many = Object.fromEntries(Array.from({ length: MAX_THEME_TOKENS + 1 }, (_, i) => [`t${i}`, '1px']));
      spec.given([]).when(configure({ theme: many })).thenThrows('invalid', 'invalid_widget_settings', 'theme');
    });

    it('takes custom CSS without @import or a <style> tag, at most MAX_CUSTOM_CSS_LENGTH characters', () => {
      spec.given([]).when(configure({ custom_css: '.svc-launcher { border-radius: 4px; }' })).then([configured({ custom_css: '.svc-launcher { border-radius: 4px; }' }, ['custom_css'])]);
      for (const css of ['@import url(https://evil.example/x.css);', '@IMPORT "x.css";', '.a{} @import "b";']) spec.given([]).when(configure({ custom_css: css })).thenThrows('invalid', 'invalid_widget_settings', 'custom_css');
      spec.given([]).when(configure({ custom_css: '<style>.a{}</style>' })).thenThrows('invalid', 'invalid_widget_settings', 'custom_css');
      spec.given([]).when(configure({ custom_css: 'a'.repeat(MAX_CUSTOM_CSS_LENGTH + 1) })).thenThrows('invalid', 'invalid_widget_settings', 'custom_css');
    });

    it('stores allowed origins lower-cased, without a trailing slash, once each; wildcards only as a leading *. label', () => {
      spec
        .given([])
        .when(configure({ allowed_origins: ['https://Shop.Example/', 'https://*.example.com', 'https://shop.example', 'http://localhost:5173', 'https://shop.example:8443'] }))
        .then([configured({ allowed_origins: ['https://shop.example', 'https://*.example.com', 'http://localhost:5173', 'https://shop.example:8443'] }, ['allowed_origins'])]);
      const refused = ['http://shop.example', 'https://shop.example/path', 'shop.example', 'https://*', 'https://shop.*.example', 'https://*example.com', 'ftp://shop.example', 'https://user@shop.example', '*'];
      for (const origin of refused) spec.given([]).when(configure({ allowed_origins: ['https://ok.example', origin] })).thenThrows('invalid', 'invalid_origin', 'allowed_origins.1');
      spec.given([]).when(configure({ allowed_origins: Array.from({ length: MAX_ALLOWED_ORIGINS + 1 }, (_, i) => `https://s${i}.example`) })).thenThrows('invalid', 'invalid_origin', 'allowed_origins');
      spec.given([configured({ allowed_origins: ['https://shop.example'] }, ['allowed_origins'])]).when(configure({ allowed_origins: [] })).then([configured({}, ['allowed_origins'])]);
    });

    it('needs a lead form to ask for email or phone, and keeps each field once', () => {
      spec.given([]).when(configure({ lead_form_fields: ['name', 'company'] })).thenThrows('invalid', 'invalid_widget_settings', 'lead_form_fields');
      spec.given([]).when(configure({ lead_form_fields: [] })).thenThrows('invalid', 'invalid_widget_settings', 'lead_form_fields');
      spec.given([]).when(configure({ lead_form_fields: ['phone', 'name', 'phone'] })).then([configured({ lead_form_fields: ['phone', 'name'] }, ['lead_form_fields'])]);
      spec.given([]).when(configure({ lead_form_fields: ['email', 'message'] })).then([configured({ lead_form_fields: ['email', 'message'] }, ['lead_form_fields'])]);
    });

    it('turns identity verification on only once an identity secret was made (409 identity_secret_missing)', () => {
      spec.given([]).when(configure({ identity_verification: 'required' })).thenThrows('conflict', 'identity_secret_missing');
      spec.given([]).when(configure({ identity_verification: 'optional' })).thenThrows('conflict', 'identity_secret_missing');
      spec.given([rotated()]).when(configure({ identity_verification: 'required' })).then([configured({ identity_verification: 'required' }, ['identity_verification'])]);
      spec.given([]).when(configure({ identity_verification: 'off' })).thenNothingHappened();
    });

    it('records a workspace and the feature switches as given (whose workspace it is, is for the use case)', () => {
      spec
        .given([])
        .when(configure({ workspace_id: 'w2', lead_form: false, handoff_button: false, feedback: false, voice: true, visitor_erasure: false, launcher_icon: 'sparkle' }))
        .then([configured({ workspace_id: 'w2', lead_form: false, handoff_button: false, feedback: false, voice: true, visitor_erasure: false, launcher_icon: 'sparkle' }, ['launcher_icon', 'workspace_id', 'lead_form', 'handoff_button', 'feedback', 'voice', 'visitor_erasure'])]);
      spec.given([configured({ workspace_id: 'w2' }, ['workspace_id'])]).when(configure({ workspace_id: null })).then([configured({}, ['workspace_id'])]);
    });

    it('reads a configuration recorded before visitors could erase their conversations as letting them, the default', () => {
      const { visitor_erasure: _absent, ...before } = DEFAULT_WIDGET_SETTINGS;
      const decoded = domainEvents.decode('WidgetConfigured', { tenant_id: 't1', settings: { ...before, feedback: false }, changed: ['feedback'], configured_at: at }, 1);
      expect(decoded.ok && decoded.event.data).to.deep.include({ settings: { ...DEFAULT_WIDGET_SETTINGS, feedback: false } });
      expect(DEFAULT_WIDGET_SETTINGS.visitor_erasure).to.equal(true);
      // So does a read model document written before (its settings lack the field).
      expect(settingsOf({ settings: { ...before, feedback: false } as WidgetSettings })).to.deep.equal({ ...DEFAULT_WIDGET_SETTINGS, feedback: false });
      expect(settingsOf(null)).to.equal(DEFAULT_WIDGET_SETTINGS);
    });
  });

  describe('RotateWidgetIdentitySecret', () => {
    it('records the sealed secret, each rotation anew', () => {
      spec.given([]).when({ type: 'RotateWidgetIdentitySecret', data: { tenant_id: 't1', secret_sealed: 'sealed-1' } }).then([rotated('sealed-1')]);
      spec.given([rotated('sealed-1')]).when({ type: 'RotateWidgetIdentitySecret', data: { tenant_id: 't1', secret_sealed: 'sealed-2' } }).then([rotated('sealed-2')]);
    });

    it('keeps the settings when the secret is rotated, and the secret when the settings change', () => {
      const state = [configured({ title: 'Help' }, ['title']), rotated('sealed-1')].reduce(widgetConfigDecider.evolve, widgetConfigDecider.initialState());
      expect(state).to.deep.equal({ tenant_id: 't1', settings: { ...DEFAULT_WIDGET_SETTINGS, title: 'Help' }, identity_secret_sealed: 'sealed-1' });
      const after = widgetConfigDecider.evolve(state, configured({ title: 'Hello' }, ['title']));
      expect(after.identity_secret_sealed).to.equal('sealed-1');
    });
  });

  describe('originMatches', () => {
    const allowed = ['https://shop.example', 'https://*.example.com', 'http://localhost:5173', 'https://*.staging.example:8443'];

    it('matches an exact origin, whatever its case or trailing slash', () => {
      expect(originMatches(allowed, 'https://shop.example')).to.equal(true);
      expect(originMatches(allowed, 'HTTPS://SHOP.EXAMPLE/')).to.equal(true);
      expect(originMatches(allowed, 'http://localhost:5173')).to.equal(true);
      expect(normalOrigin(' https://A.Example// ')).to.equal('https://a.example');
    });

    it('refuses another scheme, port or host', () => {
      expect(originMatches(allowed, 'http://shop.example')).to.equal(false);
      expect(originMatches(allowed, 'https://shop.example:444')).to.equal(false);
      expect(originMatches(allowed, 'https://shop.example.evil.com')).to.equal(false);
      expect(originMatches(allowed, 'http://localhost:3000')).to.equal(false);
      expect(originMatches(allowed, 'null')).to.equal(false);
      expect(originMatches([], 'https://shop.example')).to.equal(false);
    });

    it('matches a wildcard on subdomains at any depth, never the bare host, another port or a look-alike', () => {
      expect(originMatches(allowed, 'https://www.example.com')).to.equal(true);
      expect(originMatches(allowed, 'https://a.b.example.com')).to.equal(true);
      expect(originMatches(allowed, 'https://example.com')).to.equal(false);
      expect(originMatches(allowed, 'https://evilexample.com')).to.equal(false);
      expect(originMatches(allowed, 'https://www.example.com.evil.net')).to.equal(false);
      expect(originMatches(allowed, 'http://www.example.com')).to.equal(false);
      expect(originMatches(allowed, 'https://www.example.com:8443')).to.equal(false);
      expect(originMatches(allowed, 'https://eu.staging.example:8443')).to.equal(true);
      expect(originMatches(allowed, 'https://eu.staging.example')).to.equal(false);
    });
  });
});
