// Business tools of an SDK connection (issue #13 point 2): a sync with `workspace_id` and
// `auto_register` makes each chat-enabled tool a connector advertises a business tool of that
// workspace (source `sdk`), changes the ones whose description or schema changed, and disables
// the ones the connector no longer offers in chat.
//
// - One tool per connection, workspace and connector tool: its id comes from the three
//   (IdGenerator.fromKey), so a repeated or concurrent sync finds the tool it made instead of
//   making another, without asking a read model.
// - The definition: the connector's name as the tool's name, its description and input schema;
//   method `POST` and path `/svc` (the protocol's endpoint; nothing is mapped, as the arguments
//   travel whole as the protocol request's `parameters`), chat on, risk `write` (the platform
//   cannot know what a connector's tool changes: a person lowers it to `read` or raises it to
//   `approval_required`), enabled.
// - The name is how the model calls the tool, so it must match the tool name pattern and be
//   free in the workspace: other characters become `_`, a name not starting with a letter gets
//   `t_` in front, and a taken one gets `_2`, `_3`, ... (up to `_9`, then the tool is skipped).
//   The connector's own name stays on the target (`target.tool`): it is what `tool.invoke` sends.
// - The connector owns `description` and `input_schema`: a sync overwrites them. The name, the
//   risk, `chat` and `enabled` are the tenant's: a sync never changes them, except that it
//   disables a tool the connector stopped offering; one that comes back stays disabled until a
//   person enables it again (a sync never switches on what a person may have switched off).
// - A tool a person deleted is not registered again by a later sync of that workspace.
// - A tool whose schema is unusable (not an object schema, not compilable, too large) is
//   skipped and reported, and the others go on.
// - The plan's business tools limit counts the new tools of a sync together, before anything
//   is written (429 `quota_exceeded` with the numbers).
// - Deleting a connection deletes its tools in every workspace (`deleteConnectorTools`): they
//   could never be called again. Their calls stay in the log and the audit.

import { type AdvertisedTool } from '../../domain/sdk-connection/sdk-connection';
import { type DomainError } from '../../domain/shared/errors';
import { normalizeText } from '../../domain/shared/text';
import {
  TOOL_DESCRIPTION_MAX_LENGTH,
  type ToolCommand,
  type ToolDefinition,
  toolDefinitionProblem,
  toolStream,
} from '../../domain/tool/tool';
import { BUSINESS_TOOLS, type BusinessToolDocument } from '../../projections/business-tools';
import { CONNECTOR_PATH } from '../ports/connector-client';
import { handleCommand, loadAggregate } from '../command-handling/handle-command';
import { requireQuota } from '../entitlement/entitlements';
import { claimReservation, releaseReservation } from '../reservation/reservations';
import type { RequestContext } from '../shared/request-context';
import { inputSchemaProblem } from './input-schema';
import { type ToolDependencies, toolAggregate, toolNameScope } from './tools';

/** How many suffixes (`_2` ... `_9`) a taken name is tried with before the tool is skipped. */
const MAX_NAME_SUFFIX = 9;
const MAX_NAME_LENGTH = 64;
const PAGE = 1000;

/** A tool of the connection in the workspace: its id, its name there, and the connector's name for it. */
export interface RegisteredTool {
  id: string;
  name: string;
  tool: string;
}

export interface SkippedTool {
  tool: string;
  code: string;
  reason: string;
}

/** What a registration did. */
export interface ToolRegistration {
  workspace_id: string;
  created: RegisteredTool[];
  updated: RegisteredTool[];
  disabled: RegisteredTool[];
  unchanged: RegisteredTool[];
  skipped: SkippedTool[];
}

/** What a registration will do, worked out before anything is written. */
export interface ToolRegistrationPlan {
  tenant_id: string;
  workspace_id: string;
  connection_id: string;
  create: Array<{ id: string; tool: string; definition: ToolDefinition }>;
  update: Array<{ id: string; tool: string; name: string; changes: Pick<ToolDefinition, 'description' | 'input_schema'> }>;
  disable: RegisteredTool[];
  skipped: SkippedTool[];
}

/** The tool id of a connector tool in a workspace: the same in every sync and every process. */
export const connectorToolId = (deps: Pick<ToolDependencies, 'ids'>, connectionId: string, workspaceId: string, tool: string): string =>
  deps.ids.fromKey(`sdk-connection-tool\u0000${connectionId}\u0000${workspaceId}\u0000${tool}`);

/** A name the model can call a connector tool by (the tool name pattern), from the connector's name. */
export function toolNameOf(connectorName: string): string {
  let name = connectorName.replace(/[^A-Za-z0-9_-]/g, '_');
  if (!/^[A-Za-z]/.test(name)) name = `t_${name}`;
  return name.slice(0, MAX_NAME_LENGTH);
}

function nameCandidates(connectorName: string): string[] {
  const base = toolNameOf(connectorName);
  const suffixed = Array.from({ length: MAX_NAME_SUFFIX - 1 }, (_unused, index) => {
    const suffix = `_${index + 2}`;
    return `${base.slice(0, MAX_NAME_LENGTH - suffix.length)}${suffix}`;
  });
  return [base, ...suffixed];
}

/** The description as a tool keeps it: at most the tool description length, in characters. */
function descriptionOf(tool: AdvertisedTool): string {
  const characters = [...normalizeText(tool.description ?? '')];
  return characters.length <= TOOL_DESCRIPTION_MAX_LENGTH ? characters.join('') : `${characters.slice(0, TOOL_DESCRIPTION_MAX_LENGTH - 1).join('')}…`;
}

/** The definition a connector tool is registered with (see the header). */
export function connectorToolDefinition(tool: AdvertisedTool, name = toolNameOf(tool.name)): ToolDefinition {
  return {
    name,
    description: descriptionOf(tool),
    method: 'POST',
    path: CONNECTOR_PATH,
    parameters: [],
    input_schema: tool.input_schema ?? { type: 'object', properties: {} },
    chat: true,
    risk: 'write',
    enabled: true,
  };
}

/** Why a connector tool cannot be registered, or null. */
function definitionProblem(definition: ToolDefinition): DomainError | null {
  // The form first: it bounds the schema's size before ajv compiles it.
  return toolDefinitionProblem(definition) ?? inputSchemaProblem(definition.input_schema);
}

/** The live tools of the connection in the workspace (from the read model). */
async function toolsOfConnection(deps: ToolDependencies, where: Record<string, string>): Promise<BusinessToolDocument[]> {
  const tools: BusinessToolDocument[] = [];
  let cursor: string | undefined;
  do {
    const page = await deps.readStore.collection<BusinessToolDocument>(BUSINESS_TOOLS).find({ where, limit: PAGE, cursor });
    tools.push(...page.items);
    cursor = page.next_cursor ?? undefined;
  } while (cursor);
  return tools;
}

/**
 * What registering the connector's tools in the workspace will do: which tools are new, which
 * changed, which to disable, which cannot be registered. Reads only; the quota is asked for the
 * new ones (429 `quota_exceeded`).
 */
export async function planToolRegistration(
  deps: ToolDependencies,
  target: { tenant_id: string; workspace_id: string; connection_id: string },
  advertised: readonly AdvertisedTool[],
): Promise<ToolRegistrationPlan> {
  const { tenant_id, workspace_id, connection_id } = target;
  const plan: ToolRegistrationPlan = { ...target, create: [], update: [], disable: [], skipped: [] };
  const offered = new Set<string>();
  for (const tool of advertised) {
    // `chat: false` keeps a tool off customer chat (spec 2.4): it is not registered.
    if (tool.chat === false || offered.has(tool.name)) continue;
    const id = connectorToolId(deps, connection_id, workspace_id, tool.name);
    offered.add(tool.name);
    const { state } = await loadAggregate(deps, toolAggregate, toolStream(id));
    if (state.status === 'deleted') {
      plan.skipped.push({ tool: tool.name, code: 'tool_deleted', reason: 'a person deleted this tool; a sync does not register it again' });
      continue;
    }
    const definition = connectorToolDefinition(tool, state.status === 'active' ? state.definition.name : undefined);
    const problem = definitionProblem(definition);
    if (problem) {
      plan.skipped.push({ tool: tool.name, code: problem.code, reason: problem.message });
      continue;
    }
    if (state.status === 'absent') {
      plan.create.push({ id, tool: tool.name, definition });
      continue;
    }
    plan.update.push({ id, tool: tool.name, name: state.definition.name, changes: { description: definition.description, input_schema: definition.input_schema } });
  }
  const offeredIds = new Set([...offered].map((tool) => connectorToolId(deps, connection_id, workspace_id, tool)));
  for (const doc of await toolsOfConnection(deps, { tenant_id, connection_id, workspace_id })) {
    if (offeredIds.has(doc.id) || !doc.definition.enabled) continue;
    const { state } = await loadAggregate(deps, toolAggregate, toolStream(doc.id));
    if (state.status !== 'active' || state.target.kind !== 'sdk_connection') continue;
    plan.disable.push({ id: doc.id, name: state.definition.name, tool: state.target.tool ?? state.definition.name });
  }
  if (plan.create.length > 0) await requireQuota(deps, tenant_id, 'business_tools', plan.create.length);
  return plan;
}

/** Claims the first free name of the candidates for the tool; null when all are taken. */
async function claimFreeName(deps: ToolDependencies, workspaceId: string, toolId: string, connectorName: string, context: RequestContext): Promise<string | null> {
  for (const name of nameCandidates(connectorName)) {
    try {
      await claimReservation(deps, toolNameScope(workspaceId), name, toolId, context);
      return name;
    } catch (error) {
      if ((error as DomainError).kind !== 'conflict') throw error;
    }
  }
  return null;
}

/** Carries out a plan: creates, changes and disables tools; the last position written, for read-your-writes. */
export async function registerPlannedTools(deps: ToolDependencies, plan: ToolRegistrationPlan, context: RequestContext): Promise<{ registration: ToolRegistration; position: number | null }> {
  const { tenant_id, workspace_id, connection_id } = plan;
  const registration: ToolRegistration = { workspace_id, created: [], updated: [], disabled: [], unchanged: [], skipped: [...plan.skipped] };
  let position: number | null = null;
  const wrote = (at: number | null): void => {
    if (at !== null) position = Math.max(position ?? 0, at);
  };
  for (const { id, tool, definition } of plan.create) {
    const name = await claimFreeName(deps, workspace_id, id, tool, context);
    if (name === null) {
      registration.skipped.push({ tool, code: 'tool_name_taken', reason: `${definition.name} and its numbered variants are taken by other tools of this workspace` });
      continue;
    }
    const command: ToolCommand = {
      type: 'CreateTool',
      data: { tenant_id, workspace_id, tool_id: id, target: { kind: 'sdk_connection', connection_id, tool }, source: 'sdk', definition: { ...definition, name }, origin: null },
    };
    try {
      wrote((await handleCommand(deps, toolAggregate, toolStream(id), command, context)).position);
      registration.created.push({ id, name, tool });
    } catch (error) {
      // Another sync made it in between: it is this sync's tool all the same, and the name the
      // claim found held by the same tool is its own (so it is not given back).
      if ((error as DomainError).code === 'tool_exists') {
        registration.unchanged.push({ id, name, tool });
        continue;
      }
      await releaseReservation(deps, toolNameScope(workspace_id), name, id, context).catch(() => undefined);
      throw error;
    }
  }
  for (const { id, tool, name, changes } of plan.update) {
    const result = await handleCommand(deps, toolAggregate, toolStream(id), { type: 'EditTool', data: { tenant_id, changes } }, context);
    wrote(result.position);
    (result.events.length > 0 ? registration.updated : registration.unchanged).push({ id, name, tool });
  }
  for (const disabled of plan.disable) {
    const result = await handleCommand(deps, toolAggregate, toolStream(disabled.id), { type: 'EditTool', data: { tenant_id, changes: { enabled: false } } }, context);
    wrote(result.position);
    if (result.events.length > 0) registration.disabled.push(disabled);
  }
  return { registration, position };
}

/** Deletes every tool of the connection, in every workspace, and gives their names back; the last position written. */
export async function deleteConnectorTools(deps: ToolDependencies, tenantId: string, connectionId: string, context: RequestContext): Promise<number | null> {
  let position: number | null = null;
  for (const doc of await toolsOfConnection(deps, { tenant_id: tenantId, connection_id: connectionId })) {
    const { state } = await loadAggregate(deps, toolAggregate, toolStream(doc.id));
    if (state.status !== 'active') continue;
    const result = await handleCommand(deps, toolAggregate, toolStream(doc.id), { type: 'DeleteTool', data: { tenant_id: tenantId } }, context);
    if (result.position !== null) position = Math.max(position ?? 0, result.position);
    await releaseReservation(deps, toolNameScope(state.workspace_id), state.definition.name, doc.id, context).catch(() => undefined);
  }
  return position;
}
