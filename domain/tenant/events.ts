// Tenant events: declared once as io-ts codecs; the TypeScript types derive from them.

import * as t from 'io-ts';
import { declareEvent, eventGroup, type GroupEvent } from '../shared/events';

export const Branding = t.partial({
  display_name: t.string,
  primary_color: t.string,
  logo_url: t.string,
  welcome_message: t.string,
});
export type Branding = t.TypeOf<typeof Branding>;

export const TenantSettings = t.partial({
  default_language: t.string,
  timezone: t.string,
  assistant_name: t.string,
  assistant_instructions: t.string,
  widget_enabled: t.boolean,
  handoff_enabled: t.boolean,
  /** Whole days its orchestration payloads are kept, within the operator's ORCHESTRATION_PAYLOAD_RETENTION_DAYS (docs/orchestration-events.md). */
  orchestration_payload_retention_days: t.number,
  /** Whether its owner and admins are emailed when an orchestration event is dead-lettered or expires (absent: yes). */
  orchestration_alert_emails: t.boolean,
});
export type TenantSettings = t.TypeOf<typeof TenantSettings>;

export const TenantCreated = declareEvent(
  'TenantCreated',
  t.type({ tenant_id: t.string, name: t.string, slug: t.string, branding: Branding, settings: TenantSettings, created_at: t.string }),
);
export const TenantRenamed = declareEvent('TenantRenamed', t.type({ tenant_id: t.string, name: t.string, previous_name: t.string }));
export const TenantBrandingChanged = declareEvent('TenantBrandingChanged', t.type({ tenant_id: t.string, changes: Branding }));
export const TenantSettingsChanged = declareEvent('TenantSettingsChanged', t.type({ tenant_id: t.string, changes: TenantSettings }));
export const TenantSuspended = declareEvent('TenantSuspended', t.type({ tenant_id: t.string, reason: t.string, suspended_at: t.string }));
export const TenantUnsuspended = declareEvent('TenantUnsuspended', t.type({ tenant_id: t.string, unsuspended_at: t.string }));
/** Soft delete: nothing is removed, the slug stays reserved, and members lose access for good. */
export const TenantDeleted = declareEvent('TenantDeleted', t.type({ tenant_id: t.string, deleted_at: t.string }));

/** The widget token is publishable, yet kept sealed; its keyed hash serves lookups. */
export const WidgetTokenRotated = declareEvent('WidgetTokenRotated', t.type({ tenant_id: t.string, token_hash: t.string, token_sealed: t.string, rotated_at: t.string }));

export const tenantEvents = eventGroup('tenant', [
  TenantCreated,
  TenantRenamed,
  TenantBrandingChanged,
  TenantSettingsChanged,
  TenantSuspended,
  TenantUnsuspended,
  WidgetTokenRotated,
  TenantDeleted,
]);
export type TenantEvent = GroupEvent<typeof tenantEvents>;
