// Read model `whatsapp_configs`: each tenant's WhatsApp channel configuration as the super
// admin reads it (id: the tenant id), and the verify token's keyed digest, by which Meta's
// subscription handshake (GET /whatsapp/webhook) finds the configuration its token belongs to.
// No secret, sealed or not: only whether there is one. (The webhook reads the app secret from
// the configuration's stream, found through the phone number's reservation: always current.)
// Its revision is the configuration's version (ETag).

import { type WhatsAppConfigEvent, whatsappConfigEvents } from '../domain/whatsapp-config/whatsapp-config';
import type { Actor } from '../application/ports/event-store';
import { documentProjection } from './document-projection';

export interface WhatsAppConfigDocument {
  id: string;
  tenant_id: string;
  phone_number_id: string;
  display_phone_number: string;
  /** For the subscription handshake's lookup; never answered. */
  verify_token_digest: string;
  has_access_token: boolean;
  enabled: boolean;
  graph_api_version: string;
  workspace_id: string | null;
  updated_at: string;
  updated_by: Actor;
  revision: number;
  position: number;
  [field: string]: unknown;
}

export const WHATSAPP_CONFIGS = 'whatsapp_configs';

export const whatsappConfigsProjection = documentProjection<WhatsAppConfigEvent['type'], WhatsAppConfigDocument>({
  name: 'whatsapp_configs',
  version: 1,
  collection: { name: WHATSAPP_CONFIGS, indexes: [{ field: 'verify_token_digest' }, { field: 'phone_number_id' }, { field: 'updated_at' }, { field: 'enabled' }] },
  handles: whatsappConfigEvents.types,
  documentId: (event) => event.data.tenant_id,
  evolve(_current, event) {
    const { tenant_id, phone_number_id, display_phone_number, verify_token_digest, access_token_sealed, enabled, graph_api_version, workspace_id, configured_at } = event.data;
    return {
      id: tenant_id,
      tenant_id,
      phone_number_id,
      display_phone_number,
      verify_token_digest,
      has_access_token: access_token_sealed !== null,
      enabled,
      graph_api_version,
      workspace_id,
      updated_at: configured_at,
      updated_by: event.metadata.actor,
      revision: event.revision,
    };
  },
});
