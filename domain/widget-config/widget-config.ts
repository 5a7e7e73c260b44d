// The website widget's configuration of a tenant (spec 4.4): how the widget looks (title,
// colours, welcome message, position, launcher icon, theme tokens, custom CSS), what it offers
// (lead form, handoff button, feedback, voice, visitors' erasure of their own conversations),
// which sites may embed it (allowed origins),
// which workspace's knowledge it answers from, and whether visitors must prove who they are
// (verified identity: the host's backend signs the visitor id with the identity secret).
// One stream per tenant, `widgetConfig-<tenant id>`.
//
// Every change records the whole settings record, so a reader never merges history. The
// identity secret only ever enters an event sealed (its own event), and is never shown again
// after the rotation that made it.

import * as t from 'io-ts';
import { type Either, left, right } from 'fp-ts/Either';
import type { Decider } from '../shared/decider';
import { type DomainError, conflict, invalid } from '../shared/errors';
import { declareEvent, eventGroup, type GroupEvent } from '../shared/events';
import { toStreamName } from '../shared/stream-names';
import { checkText } from '../shared/text';

export const WIDGET_POSITIONS = ['bottom-right', 'bottom-left'] as const;
export const WidgetPosition = t.keyof({ 'bottom-right': null, 'bottom-left': null }, 'WidgetPosition');
/** The launcher's built-in icons (SVG in the widget bundle: no image is fetched from elsewhere). */
export const LAUNCHER_ICONS = ['chat', 'help', 'sparkle'] as const;
export const LauncherIcon = t.keyof({ chat: null, help: null, sparkle: null }, 'LauncherIcon');
/** off: anyone with the page is a visitor of their own; optional: a signed id is honoured when given; required: only signed ids chat. */
export const IDENTITY_VERIFICATION_MODES = ['off', 'optional', 'required'] as const;
export const IdentityVerification = t.keyof({ off: null, optional: null, required: null }, 'IdentityVerification');
/** The fields the widget's lead form may ask for (a subset of the CRM's lead fields). */
export const LEAD_FORM_FIELDS = ['name', 'email', 'phone', 'company', 'message'] as const;
export const LeadFormField = t.keyof({ name: null, email: null, phone: null, company: null, message: null }, 'LeadFormField');

export const WidgetSettings = t.type({
  /** The panel's header; empty: the tenant's display name, or its assistant's name. */
  title: t.string,
  /** The first bubble a visitor sees; empty: the tenant's branding welcome message. */
  welcome_message: t.string,
  primary_color: t.string,
  background_color: t.string,
  text_color: t.string,
  position: WidgetPosition,
  launcher_icon: LauncherIcon,
  /** Theme tokens: `name -> value`, set as the CSS custom properties `--svc-<name>` inside the shadow root. */
  theme: t.record(t.string, t.string),
  /** CSS applied inside the widget's shadow root (it cannot reach the host page). */
  custom_css: t.string,
  /** Origins allowed to embed the widget (`https://shop.example`, `https://*.example.com`); the platform's own chat page always is. */
  allowed_origins: t.array(t.string),
  /** The workspace whose knowledge and tools the widget's assistant uses; null: the tenant's default workspace. */
  workspace_id: t.union([t.string, t.null]),
  lead_form: t.boolean,
  lead_form_fields: t.array(LeadFormField),
  handoff_button: t.boolean,
  feedback: t.boolean,
  voice: t.boolean,
  /** Visitors may erase their own conversations from the widget (an organization bound to keep its records turns it off). */
  visitor_erasure: t.boolean,
  identity_verification: IdentityVerification,
});
export type WidgetSettings = t.TypeOf<typeof WidgetSettings>;

export const DEFAULT_WIDGET_SETTINGS: WidgetSettings = {
  title: '',
  welcome_message: '',
  primary_color: '#2563eb',
  background_color: '#ffffff',
  text_color: '#111827',
  position: 'bottom-right',
  launcher_icon: 'chat',
  theme: {},
  custom_css: '',
  allowed_origins: [],
  workspace_id: null,
  lead_form: true,
  lead_form_fields: ['name', 'email'],
  handoff_button: true,
  feedback: true,
  voice: false,
  visitor_erasure: true,
  identity_verification: 'off',
};

/** Version 1 had no `visitor_erasure`: visitors could not erase their conversations then, and may since, as by default. */
export const WidgetConfigured = declareEvent('WidgetConfigured', t.type({ tenant_id: t.string, settings: WidgetSettings, changed: t.array(t.string), configured_at: t.string }), {
  version: 2,
  upcasters: { 1: (v1) => ({ ...v1, settings: { visitor_erasure: DEFAULT_WIDGET_SETTINGS.visitor_erasure, ...(v1.settings as Record<string, unknown>) } }) },
});
export const WidgetIdentitySecretRotated = declareEvent('WidgetIdentitySecretRotated', t.type({ tenant_id: t.string, secret_sealed: t.string, rotated_at: t.string }));

export const widgetConfigEvents = eventGroup('widgetConfig', [WidgetConfigured, WidgetIdentitySecretRotated]);
export type WidgetConfigEvent = GroupEvent<typeof widgetConfigEvents>;

export type WidgetConfigCommand =
  | { type: 'ConfigureWidget'; data: { tenant_id: string; changes: Partial<WidgetSettings> } }
  | { type: 'RotateWidgetIdentitySecret'; data: { tenant_id: string; secret_sealed: string } };

export interface WidgetConfigState {
  tenant_id: string | null;
  settings: WidgetSettings;
  identity_secret_sealed: string | null;
}

export const widgetConfigStream = (tenantId: string): string => toStreamName(widgetConfigEvents.category, tenantId);

export const MAX_ALLOWED_ORIGINS = 50;
export const MAX_THEME_TOKENS = 40;
export const MAX_CUSTOM_CSS_LENGTH = 20_000;
const HEX_COLOR = /^#[0-9a-fA-F]{6}$/;
const THEME_TOKEN_NAME = /^[a-z][a-z0-9-]{0,39}$/;
/** A theme value is one CSS value: no declaration, block or markup may be smuggled in. */
const THEME_TOKEN_VALUE = /^[^;{}<>\\]{1,200}$/;
/** `https://host[:port]`, `https://*.host[:port]`, or plain http for localhost while developing. */
const ORIGIN = /^(https:\/\/(\*\.)?[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)*|http:\/\/(localhost|127\.0\.0\.1))(:[0-9]{1,5})?$/;

/** Why an allowed origin is refused, naming its index, or null. Origins are compared lower-cased, without a trailing slash. */
export function allowedOriginProblem(origin: string, index: number): DomainError | null {
  const field = `allowed_origins.${index}`;
  if (!ORIGIN.test(origin)) return invalid('invalid_origin', `${field}: expected an origin such as https://shop.example or https://*.example.com (http only for localhost), without a path`, field);
  return null;
}

/** The origin as it is stored and compared: lower case, no trailing slash. */
export const normalOrigin = (origin: string): string => origin.trim().toLowerCase().replace(/\/+$/, '');

/** Whether `origin` (as a browser sends it) is one of `allowed` (stored, normal form); `*.host` matches subdomains of host, not host itself. */
export function originMatches(allowed: readonly string[], origin: string): boolean {
  const asked = normalOrigin(origin);
  return allowed.some((entry) => {
    if (!entry.includes('*.')) return entry === asked;
    const [scheme, rest] = entry.split('://*.');
    const port = rest!.includes(':') ? rest!.slice(rest!.indexOf(':')) : '';
    const host = port ? rest!.slice(0, rest!.indexOf(':')) : rest!;
    if (!asked.startsWith(`${scheme}://`)) return false;
    const askedHostPort = asked.slice(scheme!.length + 3);
    const askedPort = askedHostPort.includes(':') ? askedHostPort.slice(askedHostPort.indexOf(':')) : '';
    const askedHost = askedPort ? askedHostPort.slice(0, askedHostPort.indexOf(':')) : askedHostPort;
    return askedPort === port && askedHost.endsWith(`.${host}`);
  });
}

/** The changes in their stored form, or the first problem naming its field. */
export function checkedWidgetChanges(changes: Partial<WidgetSettings>): Either<DomainError, Partial<WidgetSettings>> {
  const normal: Partial<WidgetSettings> = { ...changes };
  for (const [field, rules] of [
    ['title', { min: 0, max: 100, code: 'invalid_widget_settings' }],
    ['welcome_message', { min: 0, max: 500, multiline: true, code: 'invalid_widget_settings' }],
  ] as const) {
    const value = changes[field];
    if (value === undefined) continue;
    const checked = checkText(field, value, rules);
    if (checked._tag === 'Left') return checked;
    normal[field] = checked.right;
  }
  for (const field of ['primary_color', 'background_color', 'text_color'] as const) {
    const value = changes[field];
    if (value !== undefined && !HEX_COLOR.test(value)) return left(invalid('invalid_widget_settings', `${field}: expected a colour as #rrggbb`, field));
  }
  if (changes.theme !== undefined) {
    const entries = Object.entries(changes.theme);
    if (entries.length > MAX_THEME_TOKENS) return left(invalid('invalid_widget_settings', `theme: at most ${MAX_THEME_TOKENS} tokens`, 'theme'));
    for (const [name, value] of entries) {
      if (!THEME_TOKEN_NAME.test(name)) return left(invalid('invalid_widget_settings', `theme.${name}: a token name is lower-case letters, digits and -, at most 40`, `theme.${name}`));
      if (!THEME_TOKEN_VALUE.test(value)) return left(invalid('invalid_widget_settings', `theme.${name}: expected one CSS value of 1 to 200 characters without ; { } < > or \\`, `theme.${name}`));
    }
  }
  if (changes.custom_css !== undefined) {
    const css = changes.custom_css;
    if (css.length > MAX_CUSTOM_CSS_LENGTH) return left(invalid('invalid_widget_settings', `custom_css: at most ${MAX_CUSTOM_CSS_LENGTH} characters`, 'custom_css'));
    // An @import would fetch a style sheet from elsewhere on every page view of every visitor.
    if (/@import/i.test(css)) return left(invalid('invalid_widget_settings', 'custom_css: @import is not allowed; put the rules themselves here', 'custom_css'));
    if (/<\/?style/i.test(css)) return left(invalid('invalid_widget_settings', 'custom_css: give the rules without a <style> tag', 'custom_css'));
  }
  if (changes.allowed_origins !== undefined) {
    if (changes.allowed_origins.length > MAX_ALLOWED_ORIGINS) return left(invalid('invalid_origin', `allowed_origins: at most ${MAX_ALLOWED_ORIGINS}`, 'allowed_origins'));
    const origins = changes.allowed_origins.map(normalOrigin);
    for (const [index, origin] of origins.entries()) {
      const problem = allowedOriginProblem(origin, index);
      if (problem) return left(problem);
    }
    normal.allowed_origins = [...new Set(origins)];
  }
  if (changes.lead_form_fields !== undefined) {
    if (!changes.lead_form_fields.includes('email') && !changes.lead_form_fields.includes('phone')) {
      return left(invalid('invalid_widget_settings', 'lead_form_fields: a lead needs a way to reach them: include email or phone', 'lead_form_fields'));
    }
    normal.lead_form_fields = [...new Set(changes.lead_form_fields)];
  }
  return right(normal);
}

const sameValue = (a: unknown, b: unknown): boolean => JSON.stringify(a) === JSON.stringify(b);

export const widgetConfigDecider: Decider<WidgetConfigCommand, WidgetConfigEvent, WidgetConfigState> = {
  initialState: () => ({ tenant_id: null, settings: DEFAULT_WIDGET_SETTINGS, identity_secret_sealed: null }),
  evolve(state, event) {
    switch (event.type) {
      case 'WidgetConfigured':
        return { ...state, tenant_id: event.data.tenant_id, settings: event.data.settings };
      case 'WidgetIdentitySecretRotated':
        return { ...state, tenant_id: event.data.tenant_id, identity_secret_sealed: event.data.secret_sealed };
    }
  },
  decide(command, state, { now }): Either<DomainError, WidgetConfigEvent[]> {
    switch (command.type) {
      case 'ConfigureWidget': {
        const checked = checkedWidgetChanges(command.data.changes);
        if (checked._tag === 'Left') return checked;
        const settings: WidgetSettings = { ...state.settings, ...checked.right };
        if (settings.identity_verification !== 'off' && state.identity_secret_sealed === null) {
          return left(conflict('identity_secret_missing', 'identity_verification: rotate the identity secret first (POST /api/v1/tenant/widget/identity-secret), then turn verification on'));
        }
        const changed = (Object.keys(settings) as Array<keyof WidgetSettings>).filter((field) => !sameValue(settings[field], state.settings[field]));
        if (changed.length === 0) return right([]);
        return right([{ type: 'WidgetConfigured', data: { tenant_id: command.data.tenant_id, settings, changed, configured_at: now.toISOString() } }]);
      }
      case 'RotateWidgetIdentitySecret':
        return right([{ type: 'WidgetIdentitySecretRotated', data: { tenant_id: command.data.tenant_id, secret_sealed: command.data.secret_sealed, rotated_at: now.toISOString() } }]);
    }
  },
};
