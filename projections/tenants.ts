// Read model `tenants`: one document per tenant with its name, slug, status, branding and
// settings, as the super admin's list, the branding lookup and the slug check read them.
// Version 2 adds `name_key` (the lowercased name, for the super admin's prefix search), the
// stream revision (the tenant's ETag) and the deleted status.

import { type TenantEvent, tenantEvents } from '../domain/tenant/events';
import { documentProjection } from './document-projection';

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

export const tenantsProjection = documentProjection<TenantEvent['type'], TenantDocument>({
  name: 'tenants',
  version: 2,
  collection: {
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
  handles: tenantEvents.types,
  documentId: (event) => event.data.tenant_id,
  evolve(current, event) {
    const touched = { updated_at: event.metadata.occurred_at, revision: event.revision };
    if (event.type === 'TenantCreated') {
      return {
        id: event.data.tenant_id,
        name: event.data.name,
        name_key: tenantNameKey(event.data.name),
        slug: event.data.slug,
        status: 'active',
        suspended_reason: null,
        branding: event.data.branding,
        settings: event.data.settings,
        created_at: event.data.created_at,
        deleted_at: null,
        widget_token_hash: null,
        widget_token_sealed: null,
        ...touched,
      };
    }
    if (!current) return null;
    switch (event.type) {
      case 'TenantRenamed':
        return { ...current, ...touched, name: event.data.name, name_key: tenantNameKey(event.data.name) };
      case 'TenantBrandingChanged':
        return { ...current, ...touched, branding: { ...current.branding, ...event.data.changes } };
      case 'TenantSettingsChanged':
        return { ...current, ...touched, settings: { ...current.settings, ...event.data.changes } };
      case 'TenantSuspended':
        return { ...current, ...touched, status: 'suspended', suspended_reason: event.data.reason };
      case 'TenantUnsuspended':
        return { ...current, ...touched, status: 'active', suspended_reason: null };
      case 'TenantDeleted':
        return { ...current, ...touched, status: 'deleted', deleted_at: event.data.deleted_at };
      case 'WidgetTokenRotated':
        return { ...current, ...touched, widget_token_hash: event.data.token_hash, widget_token_sealed: event.data.token_sealed };
    }
  },
});
