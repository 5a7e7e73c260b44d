// The tenant aggregate: an organization on the platform, its name, slug, branding and
// settings, and whether it is suspended. Stream `tenant-<id>`.

import { type Either, left, right } from 'fp-ts/Either';
import type { Decider } from '../shared/decider';
import { DomainError, conflict, invalid, notFound } from '../shared/errors';
import type { TenantCommand } from './commands';
import { type Branding, type TenantEvent, type TenantSettings, tenantEvents } from './events';
import { slugProblem } from './slug';
import { toStreamName } from '../shared/stream-names';

export type TenantState =
  | { status: 'absent' }
  | { status: 'active' | 'suspended'; id: string; name: string; slug: string; branding: Branding; settings: TenantSettings };

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

function nameProblem(name: string): DomainError | null {
  const trimmed = name.trim();
  if (trimmed.length === 0) return invalid('invalid_name', 'name must not be empty', 'name');
  if (trimmed.length > MAX_NAME_LENGTH) return invalid('invalid_name', `name must be at most ${MAX_NAME_LENGTH} characters`, 'name');
  return null;
}

function brandingProblem(branding: Branding): DomainError | null {
  if (branding.primary_color !== undefined && !HEX_COLOR.test(branding.primary_color)) {
    return invalid('invalid_branding', 'primary_color must be a #rrggbb colour', 'primary_color');
  }
  if (branding.logo_url !== undefined && !/^https:\/\/\S+$/.test(branding.logo_url)) {
    return invalid('invalid_branding', 'logo_url must be an https URL', 'logo_url');
  }
  if (branding.welcome_message !== undefined && branding.welcome_message.length > 500) {
    return invalid('invalid_branding', 'welcome_message must be at most 500 characters', 'welcome_message');
  }
  return null;
}

function settingsProblem(settings: TenantSettings): DomainError | null {
  if (settings.default_language !== undefined && !/^[a-z]{2}(-[A-Z]{2})?$/.test(settings.default_language)) {
    return invalid('invalid_settings', 'default_language must be a language tag such as "en" or "pt-BR"', 'default_language');
  }
  if (settings.assistant_instructions !== undefined && settings.assistant_instructions.length > 10_000) {
    return invalid('invalid_settings', 'assistant_instructions must be at most 10000 characters', 'assistant_instructions');
  }
  return null;
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
      case 'WidgetTokenRotated':
        return state;
    }
  },

  decide(command, state, { now }): Either<DomainError, TenantEvent[]> {
    if (command.type === 'CreateTenant') {
      if (state.status !== 'absent') return left(conflict('tenant_exists', 'the tenant already exists'));
      const { tenant_id, name, slug } = command.data;
      const problem = nameProblem(name) ?? brandingProblem(command.data.branding ?? {}) ?? settingsProblem(command.data.settings ?? {});
      if (problem) return left(problem);
      const slugIssue = slugProblem(slug);
      if (slugIssue) return left(invalid('invalid_slug', slugIssue, 'slug'));
      return right([
        {
          type: 'TenantCreated',
          data: {
            tenant_id,
            name: name.trim(),
            slug,
            branding: command.data.branding ?? {},
            settings: { ...DEFAULT_TENANT_SETTINGS, ...command.data.settings },
            created_at: now.toISOString(),
          },
        },
      ]);
    }
    if (state.status === 'absent') return left(notFound('tenant_not_found', 'no such tenant'));
    switch (command.type) {
      case 'RenameTenant': {
        const problem = nameProblem(command.data.name);
        if (problem) return left(problem);
        const name = command.data.name.trim();
        if (name === state.name) return right([]);
        return right([{ type: 'TenantRenamed', data: { tenant_id: state.id, name, previous_name: state.name } }]);
      }
      case 'ChangeTenantBranding': {
        const problem = brandingProblem(command.data.changes);
        if (problem) return left(problem);
        const changes = changedFields(state.branding, command.data.changes);
        return right(Object.keys(changes).length === 0 ? [] : [{ type: 'TenantBrandingChanged', data: { tenant_id: state.id, changes } }]);
      }
      case 'ChangeTenantSettings': {
        const problem = settingsProblem(command.data.changes);
        if (problem) return left(problem);
        const changes = changedFields(state.settings, command.data.changes);
        return right(Object.keys(changes).length === 0 ? [] : [{ type: 'TenantSettingsChanged', data: { tenant_id: state.id, changes } }]);
      }
      case 'SuspendTenant':
        if (state.status === 'suspended') return left(conflict('tenant_suspended', 'the tenant is already suspended'));
        return right([{ type: 'TenantSuspended', data: { tenant_id: state.id, reason: command.data.reason.trim(), suspended_at: now.toISOString() } }]);
      case 'UnsuspendTenant':
        if (state.status !== 'suspended') return left(conflict('tenant_not_suspended', 'the tenant is not suspended'));
        return right([{ type: 'TenantUnsuspended', data: { tenant_id: state.id, unsuspended_at: now.toISOString() } }]);
      case 'RotateWidgetToken':
        return right([{ type: 'WidgetTokenRotated', data: { tenant_id: state.id, ...command.data, rotated_at: now.toISOString() } }]);
    }
  },
};
