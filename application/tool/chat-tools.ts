// The business tools the assistant may offer the model in a chat turn (#12 point 5): those of
// the conversation's workspace that are chat-enabled and enabled (`offered_in_chat` in the
// `business_tools` read model), by name. A conversation without a workspace gets none: tools
// belong to a workspace, and its grants decide who may use them. A connector tool (#13) is
// offered only while its SDK connection is there and enabled: a disabled connection's tools
// could not run.

import { BUSINESS_TOOLS, type BusinessToolDocument } from '../../projections/business-tools';
import { SDK_CONNECTIONS, type SdkConnectionDocument } from '../../projections/sdk-connections';
import type { ToolSpec } from '../ports/assistant-engine';
import type { ReadModelDependencies } from '../shared/read-models';

/**
 * At most this many tools are offered in one turn: each one's schema goes to the model with
 * every round (OpenAI takes 128 at most; far fewer keep its choices good and the prompt cheap).
 */
export const MAX_CHAT_TOOLS = 64;

/** A tool as the turn knows it: its id (for the call) and what the model is told. */
export interface ChatTool {
  tool_id: string;
  spec: ToolSpec;
}

/** The workspace's chat-enabled, enabled tools (the MAX_CHAT_TOOLS oldest), by name; none without a workspace. */
export async function chatToolsOf(deps: ReadModelDependencies, tenantId: string, workspaceId: string | null): Promise<ChatTool[]> {
  if (workspaceId === null) return [];
  const page = await deps.readStore
    .collection<BusinessToolDocument>(BUSINESS_TOOLS)
    .find({ where: { tenant_id: tenantId, workspace_id: workspaceId, offered_in_chat: true }, sort: { field: 'created_at', direction: 'asc' }, limit: MAX_CHAT_TOOLS });
  const connectionIds = [...new Set(page.items.flatMap((doc) => (doc.connection_id === null ? [] : [doc.connection_id])))];
  const connections = deps.readStore.collection<SdkConnectionDocument>(SDK_CONNECTIONS);
  const enabled = new Set<string>();
  for (const id of connectionIds) {
    const connection = await connections.get(id);
    if (connection?.tenant_id === tenantId && connection.enabled) enabled.add(id);
  }
  return page.items
    .filter((doc) => doc.connection_id === null || enabled.has(doc.connection_id))
    .map((doc) => ({ tool_id: doc.id, spec: { name: doc.definition.name, description: doc.definition.description, parameters: doc.definition.input_schema } }))
    .sort((a, b) => (a.spec.name < b.spec.name ? -1 : a.spec.name > b.spec.name ? 1 : 0));
}
