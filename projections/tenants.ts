// Read model `tenants`: one document per tenant with its name, slug, status, branding and
// settings, as the admin lists, the branding lookup and the slug check read them.

import { type TenantEvent, tenantEvents } from '../domain/tenant/events';
import type { EventProjection } from './projection';

export interface TenantDocument {
  id: string;
  name: string;
  slug: string;
  status: 'active' | 'suspended';
  suspended_reason: string | null;
  branding: Record<string, unknown>;
  settings: Record<string, unknown>;
  created_at: string;
  updated_at: string;
  /** Keyed hash of the current widget token, for lookups; the token itself stays sealed. */
  widget_token_hash: string | null;
  widget_token_sealed: string | null;
  position: number;
  [field: string]: unknown;
}

export const TENANTS = 'tenants';

export const tenantsProjection: EventProjection<TenantEvent['type']> = {
  name: 'tenants',
  version: 1,
  collections: [
    {
      name: TENANTS,
      indexes: [{ field: 'slug', unique: true }, { field: 'status' }, { field: 'created_at' }, { field: 'name' }, { field: 'widget_token_hash', unique: true }],
    },
  ],
  handles: tenantEvents.types,
  async apply(event, view) {
    const at = event.metadata.occurred_at;
    if (event.type === 'TenantCreated') {
      const doc: TenantDocument = {
        id: event.data.tenant_id,
        name: event.data.name,
        slug: event.data.slug,
        status: 'active',
        suspended_reason: null,
        branding: event.data.branding,
        settings: event.data.settings,
        created_at: event.data.created_at,
        updated_at: at,
        widget_token_hash: null,
        widget_token_sealed: null,
        position: event.position,
      };
      view.put(TENANTS, doc);
      return;
    }
    const current = await view.get<TenantDocument>(TENANTS, event.data.tenant_id);
    if (!current || current.position >= event.position) return;
    const base = { updated_at: at, position: event.position };
    switch (event.type) {
      case 'TenantRenamed':
        view.patch(TENANTS, current.id, { ...base, name: event.data.name });
        return;
      case 'TenantBrandingChanged':
        view.patch(TENANTS, current.id, { ...base, branding: { ...current.branding, ...event.data.changes } });
        return;
      case 'TenantSettingsChanged':
        view.patch(TENANTS, current.id, { ...base, settings: { ...current.settings, ...event.data.changes } });
        return;
      case 'TenantSuspended':
        view.patch(TENANTS, current.id, { ...base, status: 'suspended', suspended_reason: event.data.reason });
        return;
      case 'TenantUnsuspended':
        view.patch(TENANTS, current.id, { ...base, status: 'active', suspended_reason: null });
        return;
      case 'WidgetTokenRotated':
        view.patch(TENANTS, current.id, { ...base, widget_token_hash: event.data.token_hash, widget_token_sealed: event.data.token_sealed });
        return;
    }
  },
};
