// Business tools (spec 4.12, issue #12 point 3): operations of a workspace's integrations that
// the assistant may call.
//
// - Who: anyone who may read the workspace lists and reads its tools; creating, changing and
//   deleting them needs the write flag of one of the caller's teams on it (admins and owners
//   always), the rule of application/workspace/workspace-access.ts. A tool of a workspace the
//   caller may not read is 404, as is another tenant's.
// - A tool calls an integration of its own workspace (400 `integration_not_found` naming
//   `integration_id` otherwise).
// - The plan's business tools limit is asked before a tool is created (429 `quota_exceeded`).
// - A tool's name is how the model calls it, so it is unique within the workspace: a
//   reservation (`tool_name` scope per workspace) holds it, taken before the tool is created or
//   renamed and given back when it is deleted or renamed (409 `tool_name_taken`).
// - `input_schema` must be a JSON Schema ajv compiles (application/tool/input-schema.ts).
// - A tool's version (its ETag) is its stream's revision; a write given the version the client
//   saw (If-Match) appends only at that revision (412 otherwise).

import { integrationDecider, integrationEvents, integrationStream } from '../../domain/integration/integration';
import { DomainError, conflict, invalid, notFound } from '../../domain/shared/errors';
import {
  type HttpMethod,
  type ParameterMapping,
  type RiskTier,
  type ToolCommand,
  type ToolDefinition,
  type ToolEvent,
  type ToolOrigin,
  type ToolSource,
  type ToolState,
  type ToolTarget,
  editedDefinition,
  normalizedDefinition,
  reimportedDefinition,
  toolDecider,
  toolDefinitionProblem,
  toolEvents,
  toolStream,
} from '../../domain/tool/tool';
import { BUSINESS_TOOLS, type BusinessToolDocument } from '../../projections/business-tools';
import { type Aggregate, type CommandDependencies, type HandleOptions, handleCommand, loadAggregate } from '../command-handling/handle-command';
import { type EntitlementDependencies, requireQuota } from '../entitlement/entitlements';
import type { Actor } from '../ports/event-store';
import type { Page } from '../ports/read-store';
import { type ReservationDependencies, claimReservation, isReservationFree, releaseReservation } from '../reservation/reservations';
import { type Principal, actingContext } from '../session/sessions';
import { type ReadModelDependencies, type ReadYourWritesDependencies, type Written, readBackChange } from '../shared/read-models';
import type { RequestContext } from '../shared/request-context';
import { type Versioned, type WritePreconditions, expectedRevisionOf, versionOfRevision } from '../shared/versions';
import { requireReadableWorkspace, requireWritableWorkspace, workspaceAccess } from '../workspace/workspace-access';
import { inputSchemaProblem } from './input-schema';

export const toolAggregate: Aggregate<ToolCommand, ToolEvent, ToolState> = { decider: toolDecider, events: toolEvents };
// The integration's own aggregate, built here rather than imported from its use cases, which
// call back into this file to delete an integration's tools.
const integrationAggregate = { decider: integrationDecider, events: integrationEvents };

export type ToolDependencies = CommandDependencies & ReadModelDependencies & ReadYourWritesDependencies & EntitlementDependencies & ReservationDependencies;

/** A tool as its readers see it. */
export interface ToolView extends ToolDefinition {
  id: string;
  workspace_id: string;
  integration_id: string | null;
  connection_id: string | null;
  source: ToolSource;
  /** For an imported tool: the operation it came from and when it was last imported. */
  origin: { operation_key: string; imported_at: string } | null;
  /** Definition fields a person changed since the last import (a reimport keeps them unless told otherwise). */
  edited_fields: string[];
  created_at: string;
  updated_at: string;
  updated_by: Actor;
}

export const viewOfTool = (doc: BusinessToolDocument): ToolView => ({
  id: doc.id,
  workspace_id: doc.workspace_id,
  integration_id: doc.integration_id,
  connection_id: doc.connection_id,
  source: doc.source,
  ...doc.definition,
  origin: doc.origin === null ? null : { operation_key: doc.origin.operation_key, imported_at: doc.origin.imported_at },
  edited_fields: doc.edited_fields,
  created_at: doc.created_at,
  updated_at: doc.updated_at,
  updated_by: doc.updated_by,
});

const toolNotFound = (): DomainError => notFound('tool_not_found', 'no such tool');

type Caller = Pick<Principal, 'tenant_id' | 'user_id' | 'role'>;

/** The reservation scope of tool names in one workspace. */
export const toolNameScope = (workspaceId: string): string => `tool_name:${workspaceId}`;

/** Whether `name` is free for a tool in the workspace (names compare without case). */
export function isToolNameFree(deps: Pick<ReservationDependencies, 'eventStore' | 'secrets'>, workspaceId: string, name: string): Promise<boolean> {
  return isReservationFree(deps, toolNameScope(workspaceId), name);
}

// ---------------------------------------------------------------------------------- queries

export interface ToolFilter {
  integration_id?: string;
  source?: ToolSource;
}

/** The tools of a workspace the caller may read (404 `workspace_not_found` otherwise), oldest first. */
export async function listTools(deps: ReadModelDependencies, principal: Caller, workspaceId: string, filter: ToolFilter, page: { limit?: number; cursor?: string }): Promise<Page<ToolView>> {
  await requireReadableWorkspace(deps, principal, workspaceId);
  const found = await deps.readStore.collection<BusinessToolDocument>(BUSINESS_TOOLS).find({
    where: {
      tenant_id: principal.tenant_id,
      workspace_id: workspaceId,
      ...(filter.integration_id === undefined ? {} : { integration_id: filter.integration_id }),
      ...(filter.source === undefined ? {} : { source: filter.source }),
    },
    sort: { field: 'created_at', direction: 'asc' },
    ...page,
  });
  return { items: found.items.map(viewOfTool), next_cursor: found.next_cursor };
}

/** The tool with its version, or 404 when it is not in a workspace the caller may read. */
export async function getTool(deps: ReadModelDependencies, principal: Caller, toolId: string): Promise<Versioned<ToolView>> {
  const doc = await deps.readStore.collection<BusinessToolDocument>(BUSINESS_TOOLS).get(toolId);
  if (!doc || doc.tenant_id !== principal.tenant_id || !(await workspaceAccess(deps, principal)).readable.has(doc.workspace_id)) throw toolNotFound();
  return { value: viewOfTool(doc), version: versionOfRevision(doc.revision) };
}

/** How many live tools call the integration (from the read model). */
export function countToolsOfIntegration(deps: ReadModelDependencies, tenantId: string, integrationId: string): Promise<number> {
  return deps.readStore.collection<BusinessToolDocument>(BUSINESS_TOOLS).count({ tenant_id: tenantId, integration_id: integrationId });
}

async function toolIdsOfIntegration(deps: ReadModelDependencies, tenantId: string, integrationId: string): Promise<string[]> {
  const ids: string[] = [];
  let cursor: string | undefined;
  do {
    const found = await deps.readStore
      .collection<BusinessToolDocument>(BUSINESS_TOOLS)
      .find({ where: { tenant_id: tenantId, integration_id: integrationId }, sort: { field: 'created_at', direction: 'asc' }, limit: 1000, ...(cursor ? { cursor } : {}) });
    ids.push(...found.items.map((doc) => doc.id));
    cursor = found.next_cursor ?? undefined;
  } while (cursor);
  return ids;
}

// ------------------------------------------------------------------------------- write checks

/** 400 naming `integration_id` unless it is a live integration of the tenant in this workspace. */
async function requireIntegrationOf(deps: ToolDependencies, tenantId: string, workspaceId: string, integrationId: string): Promise<void> {
  const { state } = await loadAggregate(deps, integrationAggregate, integrationStream(integrationId));
  if (state.status !== 'active' || state.tenant_id !== tenantId || state.workspace_id !== workspaceId) {
    throw invalid('integration_not_found', 'integration_id: no such integration in this workspace', 'integration_id');
  }
}

/**
 * 400 naming the field unless the definition a write would store is sound: its input schema
 * compiles (ajv) and the decider would accept the rest. Asked before the name is claimed, so a
 * refused request records nothing.
 */
function requireSoundDefinition(definition: ToolDefinition): void {
  const problem = inputSchemaProblem(definition.input_schema) ?? toolDefinitionProblem(definition);
  if (problem) throw problem;
}

/**
 * The caller's live tool from the write model, in a workspace they may write (404 when they
 * may not read it, 403 `workspace_read_only` when they only read it), and the revision the
 * write must append at when the client named the version it saw.
 */
async function loadWritable(deps: ToolDependencies, principal: Principal, toolId: string, preconditions: WritePreconditions): Promise<{ state: Extract<ToolState, { status: 'active' }>; options: HandleOptions }> {
  const { state, revision } = await loadAggregate(deps, toolAggregate, toolStream(toolId));
  if (state.status !== 'active' || state.tenant_id !== principal.tenant_id) throw toolNotFound();
  if (!(await workspaceAccess(deps, principal)).readable.has(state.workspace_id)) throw toolNotFound();
  await requireWritableWorkspace(deps, principal, state.workspace_id);
  return { state, options: { expectedRevision: expectedRevisionOf('tool', preconditions.expectedVersion, revision) } };
}

/**
 * Runs a write that may give the tool a new name: the new name is claimed first (409
 * `tool_name_taken`), then the write; the old name is given back after it, the new one when
 * the write is refused.
 */
async function withName<T>(deps: ToolDependencies, context: RequestContext, workspaceId: string, toolId: string, names: { from: string | null; to: string | null }, write: () => Promise<T>): Promise<T> {
  const renamed = names.to !== null && names.to.toLowerCase() !== names.from?.toLowerCase();
  if (renamed) await claimName(deps, context, workspaceId, names.to as string, toolId);
  let result: T;
  try {
    result = await write();
  } catch (error) {
    if (renamed) await releaseReservation(deps, toolNameScope(workspaceId), names.to as string, toolId, context).catch(() => undefined);
    throw error;
  }
  if (renamed && names.from !== null) await releaseReservation(deps, toolNameScope(workspaceId), names.from, toolId, context).catch(() => undefined);
  return result;
}

async function claimName(deps: ToolDependencies, context: RequestContext, workspaceId: string, name: string, toolId: string): Promise<void> {
  try {
    await claimReservation(deps, toolNameScope(workspaceId), name, toolId, context);
  } catch (error) {
    if ((error as DomainError).kind === 'conflict') throw conflict('tool_name_taken', `a tool of this workspace is already called ${name} (names ignore case)`);
    throw error;
  }
}

async function answered(deps: ToolDependencies, principal: Principal, toolId: string, written: Written | null): Promise<Versioned<ToolView>> {
  return readBackChange(deps, written, 'the change of the tool', () => getTool(deps, principal, toolId));
}

// -------------------------------------------------------------------------------- use cases

/** A tool as a client describes it; the defaults fill what it leaves out. */
export interface ToolInput {
  integration_id: string;
  name: string;
  description?: string;
  method: HttpMethod;
  path: string;
  parameters?: ParameterMapping[];
  input_schema?: Record<string, unknown>;
  chat?: boolean;
  /** Default: `read` for GET, `write` otherwise. */
  risk?: RiskTier;
  enabled?: boolean;
}

/** The definition an input describes, with the defaults. */
export function definitionOf(input: Omit<ToolInput, 'integration_id'>): ToolDefinition {
  return {
    name: input.name,
    description: input.description ?? '',
    method: input.method,
    path: input.path,
    parameters: input.parameters ?? [],
    input_schema: input.input_schema ?? { type: 'object', properties: {} },
    chat: input.chat ?? true,
    risk: input.risk ?? (input.method === 'GET' ? 'read' : 'write'),
    enabled: input.enabled ?? true,
  };
}

export interface CreateToolOptions {
  idempotencyKey?: string;
  /** An imported tool: the operation and the definition as imported (source `openapi`). */
  origin?: ToolOrigin;
  /** Asked by the caller for a batch (an import asks for all its tools at once). */
  quotaChecked?: boolean;
}

/**
 * Creates a tool in a workspace the caller may write. Under an idempotency key the tool's id
 * and events come from the key, so a retry finds the one it made.
 */
export async function createTool(...args: Parameters<typeof recordTool>): Promise<Versioned<ToolView>> {
  const [deps, principal] = args;
  const { toolId, written } = await recordTool(...args);
  return answered(deps, principal, toolId, written);
}

/**
 * createTool without its answer: the tool's id, its definition as stored, and the write (null
 * when a retry under the same key found the tool made). For a batch (an import) that answers
 * once for all its tools rather than wait for the read models after each.
 */
export async function recordTool(
  deps: ToolDependencies,
  principal: Principal,
  workspaceId: string,
  input: ToolInput,
  context: RequestContext,
  options: CreateToolOptions = {},
): Promise<{ toolId: string; definition: ToolDefinition; written: Written | null }> {
  await requireWritableWorkspace(deps, principal, workspaceId);
  const definition = normalizedDefinition(definitionOf(input));
  requireSoundDefinition(definition);
  await requireIntegrationOf(deps, principal.tenant_id, workspaceId, input.integration_id);
  const key = options.idempotencyKey === undefined ? undefined : `${options.idempotencyKey}:tool`;
  const toolId = key === undefined ? deps.ids.newId() : deps.ids.fromKey(key);
  const acting = actingContext(principal, context);
  // A retry of a create that went through finds its tool: no new quota, no new name.
  if (key !== undefined && (await loadAggregate(deps, toolAggregate, toolStream(toolId))).state.status !== 'absent') return { toolId, definition, written: null };
  if (!options.quotaChecked) await requireQuota(deps, principal.tenant_id, 'business_tools');
  const target: ToolTarget = { kind: 'integration', integration_id: input.integration_id };
  const command: ToolCommand = {
    type: 'CreateTool',
    data: { tenant_id: principal.tenant_id, workspace_id: workspaceId, tool_id: toolId, target, source: options.origin ? 'openapi' : 'manual', definition, origin: options.origin ?? null },
  };
  const written = await withName(deps, acting, workspaceId, toolId, { from: null, to: definition.name }, () =>
    handleCommand(deps, toolAggregate, toolStream(toolId), command, acting, { idempotencyKey: key }),
  );
  return { toolId, definition, written };
}

/**
 * What a person may change of a tool: its definition's fields. `integration_id` is accepted
 * only as the tool's own (a client sending back what it read); a tool does not move to
 * another integration (400 `integration_fixed`): create one there instead.
 */
export type ToolChanges = Partial<ToolDefinition> & { integration_id?: string };

/** Changes the fields given (an absent one keeps its value); the same values again record nothing. */
export async function editTool(...args: Parameters<typeof recordToolEdit>): Promise<Versioned<ToolView>> {
  const [deps, principal, toolId] = args;
  return answered(deps, principal, toolId, await recordToolEdit(...args));
}

/** editTool without its answer, for a batch (a reimport) that waits for the read models once at its end. */
export async function recordToolEdit(
  deps: ToolDependencies,
  principal: Principal,
  toolId: string,
  changes: ToolChanges,
  context: RequestContext,
  preconditions: WritePreconditions = {},
): Promise<Written> {
  const { state, options } = await loadWritable(deps, principal, toolId, preconditions);
  const { integration_id, ...definitionChanges } = changes;
  if (integration_id !== undefined && !(state.target.kind === 'integration' && state.target.integration_id === integration_id)) {
    throw invalid('integration_fixed', "integration_id: a tool's integration does not change; create the tool in the other integration instead", 'integration_id');
  }
  requireSoundDefinition(editedDefinition(state.definition, definitionChanges));
  const acting = actingContext(principal, context);
  return withName(deps, acting, state.workspace_id, toolId, { from: state.definition.name, to: definitionChanges.name ?? null }, () =>
    handleCommand(deps, toolAggregate, toolStream(toolId), { type: 'EditTool', data: { tenant_id: principal.tenant_id, changes: definitionChanges } }, acting, options),
  );
}

/**
 * Applies an operation's new definition from a reimport; fields a person edited stay unless
 * `overwrite_edits`. Answers the write: the reimport waits for the read models once at its end.
 */
export async function reimportTool(
  deps: ToolDependencies,
  principal: Principal,
  toolId: string,
  reimport: { imported: ToolDefinition; operation_key: string; overwrite_edits: boolean },
  context: RequestContext,
): Promise<Written> {
  const { state, options } = await loadWritable(deps, principal, toolId, {});
  if (state.origin === null) throw conflict('tool_not_imported', 'the tool was not imported from an OpenAPI document');
  // The imported schema is asked even when a local edit keeps the tool's own: it becomes the origin.
  const importedSchema = inputSchemaProblem(reimport.imported.input_schema);
  if (importedSchema) throw importedSchema;
  const next = reimportedDefinition(state, reimport.imported, reimport.overwrite_edits);
  requireSoundDefinition(next);
  const acting = actingContext(principal, context);
  return withName(deps, acting, state.workspace_id, toolId, { from: state.definition.name, to: next.name }, () =>
    handleCommand(deps, toolAggregate, toolStream(toolId), { type: 'ReimportTool', data: { tenant_id: principal.tenant_id, ...reimport } }, acting, options),
  );
}

/** Deletes the tool and gives its name back; its calls stay in the log and the audit. */
export async function deleteTool(deps: ToolDependencies, principal: Principal, toolId: string, context: RequestContext, preconditions: WritePreconditions = {}): Promise<void> {
  await deps.readYourWrites((await recordToolDeletion(deps, principal, toolId, context, preconditions)).position);
}

/** deleteTool without the wait for the read models, for a batch (a reimport) that waits once at its end. */
export async function recordToolDeletion(deps: ToolDependencies, principal: Principal, toolId: string, context: RequestContext, preconditions: WritePreconditions = {}): Promise<Written> {
  const { state, options } = await loadWritable(deps, principal, toolId, preconditions);
  const acting = actingContext(principal, context);
  const result = await handleCommand(deps, toolAggregate, toolStream(toolId), { type: 'DeleteTool', data: { tenant_id: principal.tenant_id } }, acting, options);
  await releaseReservation(deps, toolNameScope(state.workspace_id), state.definition.name, toolId, acting).catch(() => undefined);
  return result;
}

/**
 * Deletes every tool that calls the integration, each giving its name back, for the deletion
 * of the integration itself with `cascade` (application/integration/integrations.ts), whose
 * caller was found to write the integration's workspace, where its tools are. `acting` is that
 * caller's acting context. Answers how many it deleted and the position of the last write
 * (read-your-writes is the caller's, once).
 */
export async function deleteToolsOfIntegration(
  deps: CommandDependencies & ReadModelDependencies & ReservationDependencies,
  tenantId: string,
  integrationId: string,
  acting: RequestContext,
): Promise<{ deleted: number; position: number | null }> {
  let deleted = 0;
  let position: number | null = null;
  for (const toolId of await toolIdsOfIntegration(deps, tenantId, integrationId)) {
    const { state } = await loadAggregate(deps, toolAggregate, toolStream(toolId));
    // Gone since the read model listed it (deleted by someone else meanwhile): nothing to do.
    if (state.status !== 'active' || state.tenant_id !== tenantId || state.target.kind !== 'integration' || state.target.integration_id !== integrationId) continue;
    const result = await handleCommand(deps, toolAggregate, toolStream(toolId), { type: 'DeleteTool', data: { tenant_id: tenantId } }, acting).catch((error: unknown) => {
      if (error instanceof DomainError && error.code === 'tool_not_found') return null;
      throw error;
    });
    if (result === null) continue;
    await releaseReservation(deps, toolNameScope(state.workspace_id), state.definition.name, toolId, acting).catch(() => undefined);
    deleted += 1;
    position = result.position ?? position;
  }
  return { deleted, position };
}
