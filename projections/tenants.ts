// Read model `tenants`: one document per tenant with its name, slug, status, branding and
// settings, as the super admin's list, the branding lookup and the slug check read them.
// Version 2 adds `name_key` (the lowercased name, for the super admin's prefix search), the
// stream revision (the tenant's ETag) and the deleted status.

import { type TenantEvent, tenantEvents } from '../domain/tenant/events';
import type { EventProjection } from './projection';

export interface TenantDocument {
  id: string;
  name: string;
  /** The name in lower case, so that a search by prefix ignores case. */
  name_key: string;
  slug: string;
  status: 'active' | 'suspended' | 'deleted';
  suspended_reason: string | null;
  branding: Record<string, unknown>;
  settings: Record<string, unknown>;
  created_at: string;
  updated_at: string;
  deleted_at: string | null;
  /** Keyed hash of the current widget token, for lookups; the token itself stays sealed. */
  widget_token_hash: string | null;
  widget_token_sealed: string | null;
  position: number;
  /** Revision of the tenant's stream at the last event applied: its version (ETag). */
  revision: number;
  [field: string]: unknown;
}

export const TENANTS = 'tenants';

/** The form of a name the search compares with: NFC, lower case. */
export const tenantNameKey = (name: string): string => name.normalize('NFC').toLowerCase();

export const tenantsProjection: EventProjection<TenantEvent['type']> = {
  name: 'tenants',
  version: 2,
  collections: [
    {
      name: TENANTS,
      indexes: [
        { field: 'slug', unique: true },
        { field: 'status' },
        { field: 'created_at' },
        { field: 'name' },
        { field: 'name_key' },
        { field: 'widget_token_hash', unique: true },
      ],
    },
  ],
  handles: tenantEvents.types,
  async apply(event, view) {
    const at = event.metadata.occurred_at;
    if (event.type === 'TenantCreated') {
      const doc: TenantDocument = {
        id: event.data.tenant_id,
        name: event.data.name,
        name_key: tenantNameKey(event.data.name),
        slug: event.data.slug,
        status: 'active',
        suspended_reason: null,
        branding: event.data.branding,
        settings: event.data.settings,
        created_at: event.data.created_at,
        updated_at: at,
        deleted_at: null,
        widget_token_hash: null,
        widget_token_sealed: null,
        position: event.position,
        revision: event.revision,
      };
      view.put(TENANTS, doc);
      return;
    }
    const current = await view.get<TenantDocument>(TENANTS, event.data.tenant_id);
    if (!current || current.position >= event.position) return;
    const base = { updated_at: at, position: event.position, revision: event.revision };
    switch (event.type) {
      case 'TenantRenamed':
        view.patch(TENANTS, current.id, { ...base, name: event.data.name, name_key: tenantNameKey(event.data.name) });
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
      case 'TenantDeleted':
        view.patch(TENANTS, current.id, { ...base, status: 'deleted', deleted_at: event.data.deleted_at });
        return;
      case 'WidgetTokenRotated':
        view.patch(TENANTS, current.id, { ...base, widget_token_hash: event.data.token_hash, widget_token_sealed: event.data.token_sealed });
        return;
    }
  },
};
