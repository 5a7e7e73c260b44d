// Read model `widget_configs`: each tenant's widget configuration (id: the tenant id), read on
// every widget request and WebSocket connection. The identity secret is kept sealed here for
// the visitor check; no view ever answers it. Its revision is the configuration's version (ETag).

import { DEFAULT_WIDGET_SETTINGS, type WidgetConfigEvent, type WidgetSettings, widgetConfigEvents } from '../domain/widget-config/widget-config';
import type { Actor } from '../application/ports/event-store';
import { documentProjection } from './document-projection';

export interface WidgetConfigDocument {
  id: string;
  tenant_id: string;
  /** Null until the first WidgetConfigured: the defaults apply. */
  settings: WidgetSettings | null;
  identity_secret_sealed: string | null;
  identity_secret_rotated_at: string | null;
  updated_at: string;
  updated_by: Actor;
  revision: number;
  position: number;
  [field: string]: unknown;
}

export const WIDGET_CONFIGS = 'widget_configs';

/**
 * A document's settings as they are now: the defaults until the first change, and for a setting
 * added since the document was last written (its event, upcast, has it; the document does not).
 */
export const settingsOf = (doc: Pick<WidgetConfigDocument, 'settings'> | null): WidgetSettings => (doc?.settings ? { ...DEFAULT_WIDGET_SETTINGS, ...doc.settings } : DEFAULT_WIDGET_SETTINGS);

export const widgetConfigsProjection = documentProjection<WidgetConfigEvent['type'], WidgetConfigDocument>({
  name: 'widget_configs',
  version: 1,
  collection: { name: WIDGET_CONFIGS },
  handles: widgetConfigEvents.types,
  documentId: (event) => event.data.tenant_id,
  evolve(current, event) {
    const base = current ?? {
      id: event.data.tenant_id,
      tenant_id: event.data.tenant_id,
      settings: null,
      identity_secret_sealed: null,
      identity_secret_rotated_at: null,
    };
    const touched = { ...base, revision: event.revision, updated_by: event.metadata.actor };
    switch (event.type) {
      case 'WidgetConfigured':
        return { ...touched, settings: event.data.settings, updated_at: event.data.configured_at };
      case 'WidgetIdentitySecretRotated':
        return { ...touched, identity_secret_sealed: event.data.secret_sealed, identity_secret_rotated_at: event.data.rotated_at, updated_at: event.data.rotated_at };
    }
  },
});
