// Read model `workspaces`: a tenant's workspaces.

import { type WorkspaceEvent, workspaceEvents } from '../domain/workspace/workspace';
import type { EventProjection } from './projection';

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

export const workspacesProjection: EventProjection<WorkspaceEvent['type']> = {
  name: 'workspaces',
  version: 2,
  collections: [{ name: WORKSPACES, indexes: [{ field: 'tenant_id' }, { field: 'created_at' }, { field: 'is_default' }] }],
  handles: workspaceEvents.types,
  async apply(event, view) {
    if (event.type === 'WorkspaceCreated') {
      const doc: WorkspaceDocument = {
        id: event.data.workspace_id,
        tenant_id: event.data.tenant_id,
        name: event.data.name,
        is_default: event.data.is_default,
        created_at: event.data.created_at,
        position: event.position,
        revision: event.revision,
      };
      view.put(WORKSPACES, doc);
      return;
    }
    if (await view.get(WORKSPACES, event.data.workspace_id)) view.patch(WORKSPACES, event.data.workspace_id, { name: event.data.name, position: event.position, revision: event.revision });
  },
};
