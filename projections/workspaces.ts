// Read model `workspaces`: a tenant's workspaces.

import { type WorkspaceEvent, workspaceEvents } from '../domain/workspace/workspace';
import { documentProjection } from './document-projection';

export interface WorkspaceDocument {
  id: string;
  tenant_id: string;
  name: string;
  is_default: boolean;
  created_at: string;
  position: number;
  /** Revision of the workspace's stream at the last event applied (part of its ETag). */
  revision: number;
  [field: string]: unknown;
}

export const WORKSPACES = 'workspaces';

export const workspacesProjection = documentProjection<WorkspaceEvent['type'], WorkspaceDocument>({
  name: 'workspaces',
  version: 2,
  collection: { name: WORKSPACES, indexes: [{ field: 'tenant_id' }, { field: 'created_at' }, { field: 'is_default' }] },
  handles: workspaceEvents.types,
  documentId: (event) => event.data.workspace_id,
  evolve(current, event) {
    if (event.type === 'WorkspaceCreated') {
      const { workspace_id, tenant_id, name, is_default, created_at } = event.data;
      return { id: workspace_id, tenant_id, name, is_default, created_at, revision: event.revision };
    }
    return current && { ...current, name: event.data.name, revision: event.revision };
  },
});
