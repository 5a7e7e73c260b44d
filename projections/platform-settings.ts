// Read model `platform_settings`: one document (id `platform`) with every platform setting,
// defaults filled in, as the super admin reads them; its revision is the ETag.

import { DEFAULT_PLATFORM_SETTINGS, PLATFORM_SETTINGS_ID, type PlatformSettings, type PlatformSettingsEvent, platformSettingsEvents } from '../domain/platform-settings/platform-settings';
import { documentProjection } from './document-projection';

export interface PlatformSettingsDocument extends PlatformSettings {
  id: string;
  updated_at: string | null;
  /** Who made the last change (the super admin's id). */
  updated_by: string | null;
  position: number;
  /** Revision of the settings stream at the last event applied: its version (ETag); -1 before any change. */
  revision: number;
  [field: string]: unknown;
}

export const PLATFORM_SETTINGS = 'platform_settings';

/** The document before any change: every setting at its default. */
export const defaultPlatformSettingsDocument = (): PlatformSettingsDocument => ({
  id: PLATFORM_SETTINGS_ID,
  ...DEFAULT_PLATFORM_SETTINGS,
  updated_at: null,
  updated_by: null,
  position: 0,
  revision: -1,
});

export const platformSettingsProjection = documentProjection<PlatformSettingsEvent['type'], PlatformSettingsDocument>({
  name: 'platform_settings',
  version: 1,
  collection: { name: PLATFORM_SETTINGS },
  handles: platformSettingsEvents.types,
  documentId: () => PLATFORM_SETTINGS_ID,
  evolve: (current, event) => ({
    ...(current ?? defaultPlatformSettingsDocument()),
    ...event.data.changes,
    updated_at: event.metadata.occurred_at,
    updated_by: event.metadata.actor.id,
    revision: event.revision,
  }),
});
