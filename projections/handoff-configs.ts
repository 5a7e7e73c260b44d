// Read model `handoff_configs`: each tenant's handoff webhook as its admins read it (id: the
// tenant id). Never the secret, sealed or not: only that there is one and its last four
// characters. Its revision is the configuration's version (ETag).

import { type HandoffConfigEvent, type SecretSource, handoffConfigEvents } from '../domain/handoff-config/handoff-config';
import type { Actor } from '../application/ports/event-store';
import { documentProjection } from './document-projection';

export interface HandoffConfigDocument {
  id: string;
  tenant_id: string;
  url: string;
  enabled: boolean;
  secret_hint: string;
  secret_source: SecretSource;
  updated_at: string;
  updated_by: Actor;
  /** Revision of the configuration's stream: its version. */
  revision: number;
  position: number;
  [field: string]: unknown;
}

export const HANDOFF_CONFIGS = 'handoff_configs';

export const handoffConfigsProjection = documentProjection<HandoffConfigEvent['type'], HandoffConfigDocument>({
  name: 'handoff_configs',
  version: 1,
  collection: { name: HANDOFF_CONFIGS },
  handles: handoffConfigEvents.types,
  documentId: (event) => event.data.tenant_id,
  evolve(current, event) {
    const { tenant_id, url, enabled, secret_hint, secret_source, configured_at } = event.data;
    return {
      id: tenant_id,
      tenant_id,
      url,
      enabled,
      secret_hint,
      // A change that kept the secret keeps saying where it came from.
      secret_source: secret_source === 'kept' && current ? current.secret_source : secret_source,
      updated_at: configured_at,
      updated_by: event.metadata.actor,
      revision: event.revision,
    };
  },
});
