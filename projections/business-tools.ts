// Read model `business_tools`: each business tool of a workspace as its readers see it (id:
// the tool id), with its definition, where it came from and what a person edited since the
// last import. Its revision is the tool's version (ETag). A deleted tool leaves the read model
// (its calls stay in `tool_calls` and in the audit log).

import type { Actor } from '../application/ports/event-store';
import { type ToolDefinition, type ToolEvent, type ToolOrigin, type ToolSource, type ToolTarget, toolEvents } from '../domain/tool/tool';
import { documentProjection } from './document-projection';

export interface BusinessToolDocument {
  id: string;
  tenant_id: string;
  workspace_id: string;
  /** The integration the tool calls, or null for a connector's tool. */
  integration_id: string | null;
  /** The SDK connection the tool calls (#13), or null. */
  connection_id: string | null;
  source: ToolSource;
  definition: ToolDefinition;
  /** Denormalized for queries: the name, and whether the assistant may offer it in chat now. */
  name: string;
  offered_in_chat: boolean;
  origin: ToolOrigin | null;
  edited_fields: string[];
  created_at: string;
  updated_at: string;
  updated_by: Actor;
  revision: number;
  position: number;
  [field: string]: unknown;
}

export const BUSINESS_TOOLS = 'business_tools';

const targetIds = (target: ToolTarget): Pick<BusinessToolDocument, 'integration_id' | 'connection_id'> =>
  target.kind === 'integration' ? { integration_id: target.integration_id, connection_id: null } : { integration_id: null, connection_id: target.connection_id };

const chatOffered = (definition: ToolDefinition): boolean => definition.chat && definition.enabled;

export const businessToolsProjection = documentProjection<ToolEvent['type'], BusinessToolDocument>({
  name: 'business_tools',
  version: 1,
  collection: {
    name: BUSINESS_TOOLS,
    indexes: [{ field: 'tenant_id' }, { field: 'workspace_id' }, { field: 'integration_id' }, { field: 'source' }, { field: 'connection_id' }, { field: 'offered_in_chat' }, { field: 'created_at' }],
  },
  handles: toolEvents.types,
  documentId: (event) => event.data.tool_id,
  evolve(current, event) {
    switch (event.type) {
      case 'ToolCreated': {
        const { tool_id, tenant_id, workspace_id, target, source, definition, origin, created_at } = event.data;
        return {
          id: tool_id,
          tenant_id,
          workspace_id,
          ...targetIds(target),
          source,
          definition,
          name: definition.name,
          offered_in_chat: chatOffered(definition),
          origin,
          edited_fields: [],
          created_at,
          updated_at: created_at,
          updated_by: event.metadata.actor,
          revision: event.revision,
        };
      }
      case 'ToolUpdated': {
        if (!current) return null;
        const { definition, origin, edited_fields, updated_at } = event.data;
        return {
          ...current,
          definition,
          name: definition.name,
          offered_in_chat: chatOffered(definition),
          origin,
          edited_fields,
          updated_at,
          updated_by: event.metadata.actor,
          revision: event.revision,
        };
      }
      case 'ToolDeleted':
        return null;
    }
  },
});
