// Read model `integrations`: each integration of a workspace as its readers see it (id: the
// integration id). Never the credentials, sealed or not: only whether there are some (the
// execution of a tool reads them from the integration's stream). Its revision is the
// integration's version (ETag). A deleted integration leaves the read model. `openapi_source`
// is the OpenAPI document its tools were last imported from (null when none was).

import { type DefaultHeaders, type IntegrationAuth, type IntegrationEvent, type OpenApiSource, integrationEvents } from '../domain/integration/integration';
import type { Actor } from '../application/ports/event-store';
import { documentProjection } from './document-projection';

export interface IntegrationDocument {
  id: string;
  tenant_id: string;
  workspace_id: string;
  name: string;
  base_url: string;
  auth: IntegrationAuth;
  has_credentials: boolean;
  default_headers: DefaultHeaders;
  openapi_source: OpenApiSource | null;
  created_at: string;
  updated_at: string;
  updated_by: Actor;
  revision: number;
  position: number;
  [field: string]: unknown;
}

export const INTEGRATIONS = 'integrations';

export const integrationsProjection = documentProjection<IntegrationEvent['type'], IntegrationDocument>({
  name: 'integrations',
  version: 1,
  collection: { name: INTEGRATIONS, indexes: [{ field: 'tenant_id' }, { field: 'workspace_id' }, { field: 'created_at' }] },
  handles: integrationEvents.types,
  documentId: (event) => event.data.integration_id,
  evolve(current, event) {
    switch (event.type) {
      case 'IntegrationCreated':
      case 'IntegrationUpdated': {
        const { integration_id, tenant_id, workspace_id, name, base_url, auth, credentials_sealed, default_headers } = event.data;
        const at = event.type === 'IntegrationCreated' ? event.data.created_at : event.data.updated_at;
        return {
          id: integration_id,
          tenant_id,
          workspace_id,
          name,
          base_url,
          auth,
          has_credentials: credentials_sealed !== null,
          default_headers,
          openapi_source: current?.openapi_source ?? null,
          created_at: current?.created_at ?? at,
          updated_at: at,
          updated_by: event.metadata.actor,
          revision: event.revision,
        };
      }
      case 'IntegrationDeleted':
        return null;
      case 'IntegrationOpenApiImported':
        return current && { ...current, openapi_source: event.data.source, updated_at: event.data.source.imported_at, updated_by: event.metadata.actor, revision: event.revision };
    }
  },
});
