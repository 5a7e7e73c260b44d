// Read model `crm_configs`: each tenant's CRM connector configuration as its admins read it
// (id: the tenant id). Never the credential, sealed or not: only whether there is one. Its
// revision is the configuration's version (ETag).

import { type CrmConfigEvent, type CrmKind, type FieldMapping, crmConfigEvents } from '../domain/crm-config/crm-config';
import type { Actor } from '../application/ports/event-store';
import { documentProjection } from './document-projection';

export interface CrmConfigDocument {
  id: string;
  tenant_id: string;
  kind: CrmKind;
  url: string;
  enabled: boolean;
  has_credential: boolean;
  field_mapping: FieldMapping;
  updated_at: string;
  updated_by: Actor;
  revision: number;
  position: number;
  [field: string]: unknown;
}

export const CRM_CONFIGS = 'crm_configs';

export const crmConfigsProjection = documentProjection<CrmConfigEvent['type'], CrmConfigDocument>({
  name: 'crm_configs',
  version: 1,
  collection: { name: CRM_CONFIGS },
  handles: crmConfigEvents.types,
  documentId: (event) => event.data.tenant_id,
  evolve(_current, event) {
    const { tenant_id, kind, url, enabled, credential_sealed, field_mapping, configured_at } = event.data;
    return {
      id: tenant_id,
      tenant_id,
      kind,
      url,
      enabled,
      has_credential: credential_sealed !== null,
      field_mapping,
      updated_at: configured_at,
      updated_by: event.metadata.actor,
      revision: event.revision,
    };
  },
});
