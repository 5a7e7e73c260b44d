// The tenant aggregate: an organization on the platform, its name, slug, branding and
// settings, and whether it is suspended or deleted. Stream `tenant-<id>`. A deletion is soft
// and final: the data stays for audit, the slug stays reserved, and a deleted tenant refuses
// every further change with 409 `tenant_deleted`.

import { type Either, left, right } from 'fp-ts/Either';
import type { Decider } from '../shared/decider';
import { DomainError, conflict, invalid, notFound } from '../shared/errors';
import { type TextRules, checkText, textProblem } from '../shared/text';
import type { TenantCommand } from './commands';
import { type Branding, type TenantEvent, type TenantSettings, tenantEvents } from './events';
import { slugProblem } from './slug';
import { toStreamName } from '../shared/stream-names';
import { MAX_PAYLOAD_RETENTION_DAYS } from '../orchestration-event/payloads';

export type TenantState =
  | { status: 'absent' }
  | { status: 'active' | 'suspended' | 'deleted'; id: string; name: string; slug: string; branding: Branding; settings: TenantSettings };

export const tenantStream = (tenantId: string): string => toStreamName(tenantEvents.category, tenantId);

export const DEFAULT_TENANT_SETTINGS: TenantSettings = {
  default_language: 'en',
  timezone: 'UTC',
  assistant_name: 'Assistant',
  widget_enabled: true,
  handoff_enabled: false,
};

const MAX_NAME_LENGTH = 100;
const HEX_COLOR = /^#[0-9a-fA-F]{6}$/;

// Every text a person gives the tenant passes the one text rule (domain/shared/text.ts); what is
// stored is its normal form.
const TENANT_NAME_RULES: TextRules = { max: MAX_NAME_LENGTH, code: 'invalid_name' };
const tenantName = (name: string): Either<DomainError, string> => checkText('name', name, TENANT_NAME_RULES);

/** Why a tenant is suspended: shown to the operator, so it is one line of text. */
const SUSPENSION_REASON_RULES: TextRules = { max: 500, code: 'invalid_reason' };

/** Why an organization name is refused, or null; `field` names it in the request (registration's `organization_name`). */
export const tenantNameProblem = (name: string, field = 'name'): DomainError | null => textProblem(field, name, TENANT_NAME_RULES);

const BRANDING_TEXTS: Partial<Record<keyof Branding, TextRules>> = {
  display_name: { min: 0, max: MAX_NAME_LENGTH, code: 'invalid_branding' },
  welcome_message: { min: 0, max: 500, multiline: true, code: 'invalid_branding' },
};

const SETTINGS_TEXTS: Partial<Record<keyof TenantSettings, TextRules>> = {
  assistant_name: { min: 0, max: MAX_NAME_LENGTH, code: 'invalid_settings' },
  assistant_instructions: { min: 0, max: 10_000, multiline: true, code: 'invalid_settings' },
};

/** The changes with each text field in its stored form, or the first problem naming its field. */
function normalizedTexts<T extends Record<string, unknown>>(changes: T, rules: Partial<Record<keyof T, TextRules>>): Either<DomainError, T> {
  const normalized: Record<string, unknown> = { ...changes };
  for (const [field, rule] of Object.entries(rules) as Array<[string, TextRules]>) {
    const value = changes[field];
    if (typeof value !== 'string') continue;
    const checked = checkText(field, value, rule);
    if (checked._tag === 'Left') return checked;
    normalized[field] = checked.right;
  }
  return right(normalized as T);
}

/** Branding as stored: each text under the text rule, a #rrggbb colour, an https logo; the first problem otherwise. */
export function normalizedBranding(branding: Branding): Either<DomainError, Branding> {
  if (branding.primary_color !== undefined && !HEX_COLOR.test(branding.primary_color)) {
    return left(invalid('invalid_branding', 'primary_color must be a #rrggbb colour', 'primary_color'));
  }
  if (branding.logo_url !== undefined && !/^https:\/\/\S+$/.test(branding.logo_url)) {
    return left(invalid('invalid_branding', 'logo_url must be an https URL', 'logo_url'));
  }
  return normalizedTexts(branding, BRANDING_TEXTS);
}

function normalizedSettings(settings: TenantSettings): Either<DomainError, TenantSettings> {
  if (settings.default_language !== undefined && !/^[a-z]{2}(-[A-Z]{2})?$/.test(settings.default_language)) {
    return left(invalid('invalid_settings', 'default_language must be a language tag such as "en" or "pt-BR"', 'default_language'));
  }
  const retention = settings.orchestration_payload_retention_days;
  if (retention !== undefined && !(Number.isSafeInteger(retention) && retention >= 1 && retention <= MAX_PAYLOAD_RETENTION_DAYS)) {
    return left(invalid('invalid_settings', `orchestration_payload_retention_days must be a whole number of days from 1 to ${MAX_PAYLOAD_RETENTION_DAYS}`, 'orchestration_payload_retention_days'));
  }
  return normalizedTexts(settings, SETTINGS_TEXTS);
}

/** Only the fields whose value differs from the current one. */
function changedFields<T extends Record<string, unknown>>(current: T, changes: T): T {
  return Object.fromEntries(Object.entries(changes).filter(([key, value]) => value !== undefined && current[key] !== value)) as T;
}

export const tenantDecider: Decider<TenantCommand, TenantEvent, TenantState> = {
  initialState: () => ({ status: 'absent' }),

  evolve(state, event) {
    switch (event.type) {
      case 'TenantCreated':
        return {
          status: 'active',
          id: event.data.tenant_id,
          name: event.data.name,
          slug: event.data.slug,
          branding: event.data.branding,
          settings: event.data.settings,
        };
      case 'TenantRenamed':
        return state.status === 'absent' ? state : { ...state, name: event.data.name };
      case 'TenantBrandingChanged':
        return state.status === 'absent' ? state : { ...state, branding: { ...state.branding, ...event.data.changes } };
      case 'TenantSettingsChanged':
        return state.status === 'absent' ? state : { ...state, settings: { ...state.settings, ...event.data.changes } };
      case 'TenantSuspended':
        return state.status === 'absent' ? state : { ...state, status: 'suspended' };
      case 'TenantUnsuspended':
        return state.status === 'absent' ? state : { ...state, status: 'active' };
      case 'TenantDeleted':
        return state.status === 'absent' ? state : { ...state, status: 'deleted' };
      case 'WidgetTokenRotated':
        return state;
    }
  },

  decide(command, state, { now }): Either<DomainError, TenantEvent[]> {
    if (command.type === 'CreateTenant') {
      if (state.status !== 'absent') return left(conflict('tenant_exists', 'the tenant already exists'));
      const { tenant_id, slug } = command.data;
      const name = tenantName(command.data.name);
      if (name._tag === 'Left') return name;
      const branding = normalizedBranding(command.data.branding ?? {});
      if (branding._tag === 'Left') return branding;
      const settings = normalizedSettings(command.data.settings ?? {});
      if (settings._tag === 'Left') return settings;
      const slugIssue = slugProblem(slug);
      if (slugIssue) return left(invalid('invalid_slug', slugIssue, 'slug'));
      return right([
        {
          type: 'TenantCreated',
          data: {
            tenant_id,
            name: name.right,
            slug,
            branding: branding.right,
            settings: { ...DEFAULT_TENANT_SETTINGS, ...settings.right },
            created_at: now.toISOString(),
          },
        },
      ]);
    }
    if (state.status === 'absent') return left(notFound('tenant_not_found', 'no such tenant'));
    if (state.status === 'deleted') return left(conflict('tenant_deleted', 'the tenant is deleted'));
    switch (command.type) {
      case 'RenameTenant':
        return renamed(state, command.data.name);
      case 'ChangeTenantBranding':
        return brandingChanged(state, command.data.changes);
      case 'ChangeTenantSettings':
        return settingsChanged(state, command.data.changes);
      case 'UpdateTenant': {
        // All or nothing: the first bad field refuses the whole update, named by its path (`branding.primary_color`).
        const steps = [
          command.data.name === undefined ? right([]) : renamed(state, command.data.name),
          command.data.branding === undefined ? right([]) : within('branding', brandingChanged(state, command.data.branding)),
          command.data.settings === undefined ? right([]) : within('settings', settingsChanged(state, command.data.settings)),
        ];
        const events: TenantEvent[] = [];
        for (const step of steps) {
          if (step._tag === 'Left') return step;
          events.push(...step.right);
        }
        return right(events);
      }
      case 'SuspendTenant': {
        if (state.status === 'suspended') return left(conflict('tenant_suspended', 'the tenant is already suspended'));
        const reason = checkText('reason', command.data.reason, SUSPENSION_REASON_RULES);
        if (reason._tag === 'Left') return reason;
        return right([{ type: 'TenantSuspended', data: { tenant_id: state.id, reason: reason.right, suspended_at: now.toISOString() } }]);
      }
      case 'UnsuspendTenant':
        if (state.status !== 'suspended') return left(conflict('tenant_not_suspended', 'the tenant is not suspended'));
        return right([{ type: 'TenantUnsuspended', data: { tenant_id: state.id, unsuspended_at: now.toISOString() } }]);
      case 'RotateWidgetToken':
        return right([{ type: 'WidgetTokenRotated', data: { tenant_id: state.id, ...command.data, rotated_at: now.toISOString() } }]);
      case 'DeleteTenant':
        return right([{ type: 'TenantDeleted', data: { tenant_id: state.id, deleted_at: now.toISOString() } }]);
    }
  },
};

type ExistingTenant = Extract<TenantState, { id: string }>;

/** A refusal of a nested field, named by its path in the update. */
function within(parent: string, result: Either<DomainError, TenantEvent[]>): Either<DomainError, TenantEvent[]> {
  if (result._tag === 'Right' || result.left.field === undefined) return result;
  return left(new DomainError(result.left.kind, result.left.code, `${parent}.${result.left.message}`, `${parent}.${result.left.field}`));
}

function renamed(state: ExistingTenant, requested: string): Either<DomainError, TenantEvent[]> {
  const checked = tenantName(requested);
  if (checked._tag === 'Left') return checked;
  const name = checked.right;
  if (name === state.name) return right([]);
  return right([{ type: 'TenantRenamed', data: { tenant_id: state.id, name, previous_name: state.name } }]);
}

function brandingChanged(state: ExistingTenant, requested: Branding): Either<DomainError, TenantEvent[]> {
  const normalized = normalizedBranding(requested);
  if (normalized._tag === 'Left') return normalized;
  const changes = changedFields(state.branding, normalized.right);
  return right(Object.keys(changes).length === 0 ? [] : [{ type: 'TenantBrandingChanged', data: { tenant_id: state.id, changes } }]);
}

function settingsChanged(state: ExistingTenant, requested: TenantSettings): Either<DomainError, TenantEvent[]> {
  const normalized = normalizedSettings(requested);
  if (normalized._tag === 'Left') return normalized;
  const changes = changedFields(state.settings, normalized.right);
  return right(Object.keys(changes).length === 0 ? [] : [{ type: 'TenantSettingsChanged', data: { tenant_id: state.id, changes } }]);
}
