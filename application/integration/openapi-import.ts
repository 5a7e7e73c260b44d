// OpenAPI import (spec 4.12, issue #12 point 2): a workspace's integration and its business
// tools made from an OpenAPI 3.0 or 3.1 document, and kept up with the document later.
//
// - Preview: the document (by URL, fetched through the outbound guard within
//   OPENAPI_MAX_BYTES and OPENAPI_FETCH_TIMEOUT_MS, or uploaded) read as
//   application/integration/openapi-document.ts says, and what it proposes
//   (openapi-proposal.ts). Needs read access to the workspace; writes nothing.
// - Apply: creates the integration (or adds to one of the workspace's) and the chosen tools,
//   source `openapi`, each remembering its operation and its definition as imported. Every
//   check is made before the first write: the workspace's write flag, the integration's
//   fields and addresses, each tool's definition and name (free in the workspace), and the
//   plan's business tools limit for the whole batch (429). Under an Idempotency-Key every id
//   comes from the key, so a retry finishes what a broken request started and makes nothing
//   twice. The integration remembers the document (`IntegrationOpenApiImported`: its URL and
//   SHA-256).
// - Reimport: the document again (the remembered URL unless another source is given),
//   compared with the integration's imported tools by operation key: `added` (no tool yet),
//   `changed` (what the API describes differs from what was imported, with the fields),
//   `removed` (the document no longer has the operation, or it can no longer be a tool),
//   `unchanged`. A dry run answers only that (read access suffices). Applied: the new
//   operations chosen (`add`, default all) become tools; changed ones are reimported
//   (ReimportTool), keeping the fields a person edited unless `overwrite_edits`; removed ones
//   are disabled by default (`removed: disable`), so nothing a person relies on vanishes
//   without a decision (`delete` deletes them, `keep` leaves them). Checked in full before
//   the first write as apply is, including that kept edits still fit the new definition.
// - Credentials given for the integration are sealed by recordIntegration and never answered.
// - The document is read off the request's thread, within a time limit (deps.openapiReader).

import {
  type DefaultHeaders,
  type IntegrationAuth,
  credentialsProblem,
  integrationFieldsProblem,
  integrationStream,
} from '../../domain/integration/integration';
import { DomainError, conflict, invalid, notFound } from '../../domain/shared/errors';
import { IMPORTED_FIELDS, type RiskTier, TOOL_NAME_PATTERN, type ToolDefinition, type ToolField, changedFields, reimportedDefinition, toolDefinitionProblem, toolStream } from '../../domain/tool/tool';
import { BUSINESS_TOOLS, type BusinessToolDocument } from '../../projections/business-tools';
import { handleCommand, loadAggregate } from '../command-handling/handle-command';
import { requireQuota } from '../entitlement/entitlements';
import { requireCallableEndpoint } from '../outbound/callable-endpoint';
import { OutboundCallError } from '../ports/outbound-http';
import { reservationHolder } from '../reservation/reservations';
import { type Principal, actingContext } from '../session/sessions';
import { type Written, readBackChange } from '../shared/read-models';
import type { RequestContext } from '../shared/request-context';
import { type ToolDependencies, recordTool, recordToolDeletion, recordToolEdit, reimportTool, toolAggregate, toolNameScope } from '../tool/tools';
import { requireReadableWorkspace, requireWritableWorkspace, workspaceAccess } from '../workspace/workspace-access';
import { type IntegrationDependencies, type IntegrationView, getIntegration, integrationAggregate, recordIntegration } from './integrations';
import type { OpenApiReader } from '../ports/openapi-reader';
import { type ImportProposal, type ProposedOperation, type SkippedOperation, definitionOfProposal } from './openapi-proposal';

export interface OpenApiImportSettings {
  /** The largest document read, fetched or uploaded (OPENAPI_MAX_BYTES). */
  maxBytes: number;
  /** How long fetching a document by URL may take (OPENAPI_FETCH_TIMEOUT_MS). */
  fetchTimeoutMs: number;
}

export type OpenApiImportDependencies = IntegrationDependencies & ToolDependencies & { openapi: OpenApiImportSettings; openapiReader: OpenApiReader };

/** Where the document comes from: a URL to fetch, or its text (an upload, or a JSON body's `document`), named by the request field it came in. */
export type DocumentSource = { kind: 'url'; url: string; field: string } | { kind: 'text'; text: Buffer | string; field: string };

type Caller = Pick<Principal, 'tenant_id' | 'user_id' | 'role'>;

/** Media types an OpenAPI document is served as, JSON first. */
const ACCEPT = 'application/vnd.oai.openapi+json, application/json;q=0.9, application/vnd.oai.openapi, application/yaml;q=0.8, text/yaml;q=0.8, */*;q=0.5';

// ------------------------------------------------------------------------------- documents

/** Fetches the document through the outbound guard: 400 with a code per failure, naming the field. */
async function fetchDocument(deps: OpenApiImportDependencies, url: string, field: string): Promise<Buffer> {
  await requireCallableEndpoint(deps, url, field);
  const { maxBytes, fetchTimeoutMs } = deps.openapi;
  let response;
  try {
    response = await deps.outbound.request({ method: 'GET', url, headers: { accept: ACCEPT }, body: null, timeoutMs: fetchTimeoutMs, maxResponseBytes: maxBytes });
  } catch (error) {
    if (!(error instanceof OutboundCallError)) throw error;
    switch (error.reason) {
      case 'response_too_large':
        throw invalid('openapi_too_large', `${field}: the document is larger than ${maxBytes} bytes (OPENAPI_MAX_BYTES)`, field);
      case 'timeout':
        throw invalid('openapi_unreachable', `${field}: the server did not send the document within ${fetchTimeoutMs} ms`, field);
      case 'network':
        throw invalid('openapi_unreachable', `${field}: the document could not be fetched (${error.message})`, field);
      default:
        throw invalid(error.reason, `${field}: ${error.message}`, field);
    }
  }
  if (response.status >= 300 && response.status < 400) {
    throw invalid('openapi_unreachable', `${field}: the server answered ${response.status} (a redirect, which is not followed: give the URL it points to)`, field);
  }
  if (response.status < 200 || response.status >= 300) throw invalid('openapi_unreachable', `${field}: the server answered ${response.status}, not the document`, field);
  return response.body;
}

async function documentBytes(deps: OpenApiImportDependencies, source: DocumentSource): Promise<Buffer | string> {
  if (source.kind === 'url') return fetchDocument(deps, source.url, source.field);
  const size = typeof source.text === 'string' ? Buffer.byteLength(source.text) : source.text.length;
  if (size > deps.openapi.maxBytes) throw invalid('openapi_too_large', `${source.field}: the document is larger than ${deps.openapi.maxBytes} bytes (OPENAPI_MAX_BYTES)`, source.field);
  return source.text;
}

/** The tool names a workspace uses, from the read model (the reservations decide when a tool is created). */
async function workspaceToolNames(deps: OpenApiImportDependencies, tenantId: string, workspaceId: string): Promise<string[]> {
  return (await allTools(deps, { tenant_id: tenantId, workspace_id: workspaceId })).map((tool) => tool.name);
}

async function allTools(deps: OpenApiImportDependencies, where: Record<string, string>): Promise<BusinessToolDocument[]> {
  const tools: BusinessToolDocument[] = [];
  let cursor: string | undefined;
  do {
    const page = await deps.readStore.collection<BusinessToolDocument>(BUSINESS_TOOLS).find({ where, sort: { field: 'created_at', direction: 'asc' }, limit: 1000, ...(cursor ? { cursor } : {}) });
    tools.push(...page.items);
    cursor = page.next_cursor ?? undefined;
  } while (cursor);
  return tools;
}

async function readProposal(
  deps: OpenApiImportDependencies,
  source: DocumentSource,
  tenantId: string,
  workspaceId: string,
  namesByOperation?: ReadonlyMap<string, string>,
): Promise<ImportProposal> {
  const bytes = await documentBytes(deps, source);
  const takenNames = await workspaceToolNames(deps, tenantId, workspaceId);
  return deps.openapiReader.propose({ bytes, field: source.field, url: source.kind === 'url' ? source.url : null, takenNames, namesByOperation: [...(namesByOperation ?? [])] });
}

// --------------------------------------------------------------------------------- preview

/** What the document proposes for the workspace (read access); writes nothing. */
export async function previewImport(deps: OpenApiImportDependencies, principal: Caller, workspaceId: string, source: DocumentSource): Promise<ImportProposal> {
  await requireReadableWorkspace(deps, principal, workspaceId);
  return readProposal(deps, source, principal.tenant_id, workspaceId);
}

// ----------------------------------------------------------------------------------- apply

/** A new integration's fields (the proposal's where absent), or an existing one of the workspace. */
export interface ImportIntegrationInput {
  integration_id?: string;
  name?: string;
  base_url?: string;
  auth?: IntegrationAuth;
  default_headers?: DefaultHeaders;
  credentials?: string | null;
}

/** A tenant's choices for one operation's tool. */
export interface OperationChoices {
  name?: string;
  chat?: boolean;
  risk?: RiskTier;
}

export interface ApplyImportInput {
  source: DocumentSource;
  integration: ImportIntegrationInput;
  /** The operation keys to make tools of; every importable operation when absent. */
  operations?: string[];
  /** Per operation key. */
  overrides?: Record<string, OperationChoices>;
}

/** A tool an import made. */
export interface ImportedTool {
  id: string;
  operation_key: string;
  name: string;
  method: string;
  path: string;
}

export interface AppliedImport {
  integration: IntegrationView;
  tools: ImportedTool[];
  skipped: SkippedOperation[];
}

/** The same refusal, naming the field under `prefix` (`base_url` -> `integration.base_url`). */
function under(prefix: string, error: unknown): unknown {
  if (!(error instanceof DomainError) || error.field === undefined) return error;
  const field = `${prefix}.${error.field}`;
  const message = error.message.startsWith(error.field) ? `${prefix}.${error.message}` : error.message;
  return new DomainError(error.kind, error.code, message, field);
}

/** The integration a new import creates, checked in full (400 naming `integration.<field>`) before anything is written. */
async function newIntegrationFields(deps: OpenApiImportDependencies, input: ImportIntegrationInput, proposal: ImportProposal) {
  const base_url = input.base_url ?? proposal.integration.base_url;
  if (base_url === null) throw invalid('invalid_url', 'integration.base_url: the document names no server URL the platform can resolve; give integration.base_url', 'integration.base_url');
  const fields = { name: input.name ?? proposal.integration.name, base_url, auth: input.auth ?? proposal.integration.auth, default_headers: input.default_headers ?? {} };
  try {
    const problem = integrationFieldsProblem(fields) ?? (typeof input.credentials === 'string' ? credentialsProblem(input.credentials) : null);
    if (problem) throw problem;
    if (fields.auth.kind === 'none' && typeof input.credentials === 'string') throw invalid('invalid_credentials', 'credentials: an integration without auth (kind none) takes no credentials', 'credentials');
    await requireCallableEndpoint(deps, fields.base_url, 'base_url');
    if (fields.auth.kind === 'oauth2_client_credentials') await requireCallableEndpoint(deps, fields.auth.token_url, 'auth.token_url');
  } catch (error) {
    throw under('integration', error);
  }
  return { ...fields, ...(typeof input.credentials === 'string' ? { credentials: input.credentials } : {}) };
}

/** 400 naming `field` unless the integration is a live one of the tenant in this workspace. */
async function requireWorkspaceIntegration(deps: OpenApiImportDependencies, tenantId: string, workspaceId: string, integrationId: string, field: string): Promise<void> {
  const { state } = await loadAggregate(deps, integrationAggregate, integrationStream(integrationId));
  if (state.status !== 'active' || state.tenant_id !== tenantId || state.workspace_id !== workspaceId) throw invalid('integration_not_found', `${field}: no such integration in this workspace`, field);
}

/** The chosen operations, each once and importable: 400 naming `<field>.<i>` otherwise. */
function chosenOperations(proposal: ImportProposal, keys: string[] | undefined, field: string): ProposedOperation[] {
  if (keys === undefined) return proposal.operations;
  const byKey = new Map(proposal.operations.map((operation) => [operation.operation_key, operation]));
  const seen = new Set<string>();
  return keys.map((key, index) => {
    const at = `${field}.${index}`;
    if (seen.has(key)) throw invalid('invalid_request', `${at}: ${key} is chosen twice`, at);
    seen.add(key);
    const operation = byKey.get(key);
    if (operation) return operation;
    const skipped = proposal.skipped.find((candidate) => candidate.operation_key === key);
    if (skipped) throw invalid('operation_not_importable', `${at}: ${key} cannot be a tool: ${skipped.reason}`, at);
    throw invalid('unknown_operation', `${at}: the document has no operation ${key} (operation keys are operationIds, or METHOD /path)`, at);
  });
}

interface PlannedTool {
  operation: ProposedOperation;
  definition: ToolDefinition;
  /** The idempotency key its id and events come from, when the request has one. */
  key: string | undefined;
  /** Made already by an earlier attempt of the same request. */
  exists: boolean;
}

/** The id recordTool derives from an idempotency key (application/tool/tools.ts), to find what an earlier attempt made. */
const toolIdOfKey = (deps: OpenApiImportDependencies, key: string): string => deps.ids.fromKey(`${key}:tool`);

async function planTools(
  deps: OpenApiImportDependencies,
  workspaceId: string,
  operations: ProposedOperation[],
  overrides: Record<string, OperationChoices>,
  seed: string | undefined,
): Promise<PlannedTool[]> {
  const planned: PlannedTool[] = [];
  const names = new Map<string, string>();
  for (const operation of operations) {
    const choices = overrides[operation.operation_key] ?? {};
    const definition = definitionOfProposal(operation, choices);
    const field = `overrides.${operation.operation_key}.name`;
    if (!TOOL_NAME_PATTERN.test(definition.name)) throw invalid('invalid_name', `${field}: expected 1 to 64 letters, digits, _ or -, starting with a letter`, field);
    const problem = toolDefinitionProblem(definition);
    if (problem) throw invalid(problem.code, `${operation.operation_key}: ${problem.message}`, `overrides.${operation.operation_key}`);
    const other = names.get(definition.name.toLowerCase());
    if (other !== undefined) throw invalid('tool_name_taken', `${field}: ${definition.name} is also the name of ${other}'s tool (names ignore case)`, field);
    names.set(definition.name.toLowerCase(), operation.operation_key);
    const key = seed === undefined ? undefined : `${seed}:operation:${operation.operation_key}`;
    const toolId = key === undefined ? null : toolIdOfKey(deps, key);
    const exists = toolId !== null && (await loadAggregate(deps, toolAggregate, toolStream(toolId))).state.status !== 'absent';
    if (!exists) {
      const holder = await reservationHolder(deps, toolNameScope(workspaceId), definition.name);
      if (holder !== null && holder !== toolId) throw conflict('tool_name_taken', `${operation.operation_key}: a tool of this workspace is already called ${definition.name} (names ignore case); choose another in overrides.${operation.operation_key}.name`);
    }
    planned.push({ operation, definition, key, exists });
  }
  return planned;
}

async function createPlannedTools(deps: OpenApiImportDependencies, principal: Principal, workspaceId: string, integrationId: string, planned: PlannedTool[], context: RequestContext): Promise<ImportedTool[]> {
  const importedAt = deps.clock.now().toISOString();
  const tools: ImportedTool[] = [];
  for (const { operation, definition, key } of planned) {
    // Recorded without waiting for the read models after each: the import waits once, at its end.
    const tool = await recordTool(deps, principal, workspaceId, { integration_id: integrationId, ...definition }, context, {
      ...(key === undefined ? {} : { idempotencyKey: key }),
      origin: { operation_key: operation.operation_key, imported: definition, imported_at: importedAt },
      quotaChecked: true,
    });
    tools.push({ id: tool.toolId, operation_key: operation.operation_key, name: tool.definition.name, method: tool.definition.method, path: tool.definition.path });
  }
  return tools;
}

async function recordImport(deps: OpenApiImportDependencies, principal: Principal, integrationId: string, proposal: ImportProposal, context: RequestContext, key: string | undefined): Promise<Written> {
  const { url, sha256, version } = proposal.document;
  return handleCommand(
    deps,
    integrationAggregate,
    integrationStream(integrationId),
    { type: 'RecordOpenApiImport', data: { tenant_id: principal.tenant_id, source: { url, sha256, api_version: version } } },
    actingContext(principal, context),
    key === undefined ? {} : { idempotencyKey: key },
  );
}

/**
 * Creates the integration (or adds to an existing one of the workspace) and a tool per chosen
 * operation. Refusals come before any write: 404/403 for the workspace, 400 naming the field,
 * 409 `tool_name_taken` or `operation_imported`, 429 `quota_exceeded` for the whole batch.
 */
export async function applyImport(
  deps: OpenApiImportDependencies,
  principal: Principal,
  workspaceId: string,
  input: ApplyImportInput,
  context: RequestContext,
  options: { idempotencyKey?: string } = {},
): Promise<AppliedImport> {
  await requireWritableWorkspace(deps, principal, workspaceId);
  const { integration_id: existingId, ...newFields } = input.integration;
  if (existingId !== undefined && Object.values(newFields).some((value) => value !== undefined)) {
    throw invalid('invalid_request', 'integration: give integration_id to add tools to an existing integration, or the fields of a new one, not both', 'integration');
  }
  if (existingId !== undefined) await requireWorkspaceIntegration(deps, principal.tenant_id, workspaceId, existingId, 'integration.integration_id');
  const proposal = await readProposal(deps, input.source, principal.tenant_id, workspaceId);
  const operations = chosenOperations(proposal, input.operations, 'operations');
  const overrides = input.overrides ?? {};
  for (const key of Object.keys(overrides)) {
    if (!operations.some((operation) => operation.operation_key === key)) throw invalid('unknown_operation', `overrides.${key}: ${key} is not one of the chosen operations`, `overrides.${key}`);
  }
  if (existingId !== undefined) {
    const imported = new Set((await allTools(deps, { tenant_id: principal.tenant_id, integration_id: existingId })).flatMap((tool) => (tool.origin ? [tool.origin.operation_key] : [])));
    const again = operations.find((operation) => imported.has(operation.operation_key));
    if (again) throw conflict('operation_imported', `${again.operation_key} has a tool in this integration already; POST /api/v1/integrations/${existingId}/reimport updates it`);
  }
  const planned = await planTools(deps, workspaceId, operations, overrides, options.idempotencyKey);
  const fields = existingId === undefined ? await newIntegrationFields(deps, newFields, proposal) : null;
  const more = planned.filter((tool) => !tool.exists).length;
  if (more > 0) await requireQuota(deps, principal.tenant_id, 'business_tools', more);

  const integrationId = fields === null ? (existingId as string) : (await recordIntegration(deps, principal, workspaceId, fields, context, options)).integrationId;
  const tools = await createPlannedTools(deps, principal, workspaceId, integrationId, planned, context);
  // The last write of the import: once the read models show it, they show every one before it.
  const recorded = await recordImport(deps, principal, integrationId, proposal, context, options.idempotencyKey === undefined ? undefined : `${options.idempotencyKey}:openapi`);
  const integration = await readBackChange(deps, recorded, 'the import', () => getIntegration(deps, principal, integrationId));
  return { integration: integration.value, tools, skipped: proposal.skipped };
}

// -------------------------------------------------------------------------------- reimport

export const REMOVED_ACTIONS = ['disable', 'delete', 'keep'] as const;
export type RemovedAction = (typeof REMOVED_ACTIONS)[number];

export interface ReimportInput {
  /** The document; the integration's remembered URL when absent. */
  source?: DocumentSource;
  dry_run?: boolean;
  /** New operations to make tools of; all when absent. */
  add?: string[];
  /** Replace the fields a person edited too. */
  overwrite_edits?: boolean;
  /** What happens to the tools of operations the document no longer has (default `disable`). */
  removed?: RemovedAction;
}

export interface AddedOperation {
  operation_key: string;
  name: string;
  method: string;
  path: string;
  /** Whether this reimport makes a tool of it (it is in `add`, or `add` was not given). */
  chosen: boolean;
  /** The tool made; null in a dry run or when not chosen. */
  tool_id: string | null;
}

export interface ChangedOperation {
  operation_key: string;
  tool_id: string;
  name: string;
  /** The imported fields the document now describes differently. */
  fields: ToolField[];
  /** Fields a person edited that stay as they are (all of them, unless `overwrite_edits`). */
  kept_edits: ToolField[];
  /** Fields a person edited that go back to the document's (with `overwrite_edits`). */
  overwritten_edits: ToolField[];
}

export interface RemovedOperation {
  operation_key: string;
  tool_id: string;
  name: string;
  /** Why it is no tool of the document any more. */
  reason: string;
  action: RemovedAction;
}

export interface ReimportResult {
  dry_run: boolean;
  document: ImportProposal['document'];
  added: AddedOperation[];
  changed: ChangedOperation[];
  removed: RemovedOperation[];
  unchanged: Array<{ operation_key: string; tool_id: string; name: string }>;
  skipped: SkippedOperation[];
}

const imported = (tool: BusinessToolDocument) => tool.origin as NonNullable<BusinessToolDocument['origin']>;

/**
 * The difference between the integration's imported tools and the document, applied unless
 * `dry_run`. 404 for an integration the caller may not read; applying needs the write flag.
 */
export async function reimportIntegration(deps: OpenApiImportDependencies, principal: Principal, integrationId: string, input: ReimportInput, context: RequestContext): Promise<ReimportResult> {
  const { state } = await loadAggregate(deps, integrationAggregate, integrationStream(integrationId));
  if (state.status !== 'active' || state.tenant_id !== principal.tenant_id || !(await workspaceAccess(deps, principal)).readable.has(state.workspace_id)) {
    throw notFound('integration_not_found', 'no such integration');
  }
  const dryRun = input.dry_run ?? false;
  if (!dryRun) await requireWritableWorkspace(deps, principal, state.workspace_id);
  const source: DocumentSource | null = input.source ?? (state.openapi_source?.url ? { kind: 'url', url: state.openapi_source.url, field: 'source.url' } : null);
  if (source === null) throw invalid('no_openapi_source', 'source: the integration remembers no document URL; send source.url or source.document', 'source');

  const tools = (await allTools(deps, { tenant_id: principal.tenant_id, integration_id: integrationId })).filter((tool) => tool.source === 'openapi' && tool.origin !== null);
  const byOperation = new Map(tools.map((tool) => [imported(tool).operation_key, tool]));
  const namesByOperation = new Map(tools.map((tool) => [imported(tool).operation_key, imported(tool).imported.name]));
  const proposal = await readProposal(deps, source, principal.tenant_id, state.workspace_id, namesByOperation);
  const overwrite = input.overwrite_edits ?? false;

  const newOperations = proposal.operations.filter((operation) => !byOperation.has(operation.operation_key));
  const chosenKeys = new Set(input.add ?? newOperations.map((operation) => operation.operation_key));
  for (const [index, key] of (input.add ?? []).entries()) {
    if (!newOperations.some((operation) => operation.operation_key === key)) {
      const field = `add.${index}`;
      throw invalid('unknown_operation', `${field}: ${key} is not a new operation of the document${byOperation.has(key) ? ' (it has a tool already)' : ''}`, field);
    }
  }
  const changes: Array<{ tool: BusinessToolDocument; next: ToolDefinition; entry: ChangedOperation }> = [];
  const unchanged: ReimportResult['unchanged'] = [];
  for (const operation of proposal.operations) {
    const tool = byOperation.get(operation.operation_key);
    if (!tool) continue;
    const before = imported(tool).imported;
    // The tenant's own choices (chat, risk, enabled) are not the document's: they never change here.
    const next: ToolDefinition = { ...definitionOfProposal(operation, { name: before.name }), chat: before.chat, risk: before.risk, enabled: before.enabled };
    const fields = changedFields(before, next).filter((field) => IMPORTED_FIELDS.includes(field));
    if (fields.length === 0) {
      unchanged.push({ operation_key: operation.operation_key, tool_id: tool.id, name: tool.name });
      continue;
    }
    const edits = tool.edited_fields as ToolField[];
    changes.push({ tool, next, entry: { operation_key: operation.operation_key, tool_id: tool.id, name: tool.name, fields, kept_edits: overwrite ? [] : edits, overwritten_edits: overwrite ? edits : [] } });
  }
  const action = input.removed ?? 'disable';
  const present = new Set(proposal.operations.map((operation) => operation.operation_key));
  const removed: RemovedOperation[] = tools
    .filter((tool) => !present.has(imported(tool).operation_key))
    .map((tool) => {
      const key = imported(tool).operation_key;
      const skipped = proposal.skipped.find((candidate) => candidate.operation_key === key);
      return { operation_key: key, tool_id: tool.id, name: tool.name, reason: skipped ? `it can no longer be a tool: ${skipped.reason}` : 'the document no longer has it', action };
    });
  const added: AddedOperation[] = newOperations.map((operation) => ({
    operation_key: operation.operation_key,
    name: operation.name,
    method: operation.method,
    path: operation.path,
    chosen: chosenKeys.has(operation.operation_key),
    tool_id: null,
  }));
  const result: ReimportResult = { dry_run: dryRun, document: proposal.document, added, changed: changes.map((change) => change.entry), removed, unchanged, skipped: proposal.skipped };
  if (dryRun) return result;

  // Everything is checked before the first write.
  for (const { tool, next, entry } of changes) {
    const after = reimportedDefinition({ definition: tool.definition, edited_fields: tool.edited_fields as ToolField[] }, next, overwrite);
    const problem = toolDefinitionProblem(after);
    if (problem) {
      throw conflict('reimport_conflict', `${entry.operation_key}: the local edits of the tool ${tool.name} (${tool.edited_fields.join(', ')}) do not fit the document's new definition (${problem.message}); reimport with overwrite_edits, or edit the tool first`);
    }
    // Overwriting a local rename takes the imported name back: it must still be free.
    const holder = after.name.toLowerCase() === tool.name.toLowerCase() ? tool.id : await reservationHolder(deps, toolNameScope(state.workspace_id), after.name);
    if (holder !== null && holder !== tool.id) throw conflict('tool_name_taken', `${entry.operation_key}: overwriting the local name of ${tool.name} takes back ${after.name}, which another tool of this workspace uses now`);
  }
  const planned = await planTools(deps, state.workspace_id, newOperations.filter((operation) => chosenKeys.has(operation.operation_key)), {}, undefined);
  if (planned.length > 0) await requireQuota(deps, principal.tenant_id, 'business_tools', planned.length);

  const made = await createPlannedTools(deps, principal, state.workspace_id, integrationId, planned, context);
  for (const tool of made) {
    const entry = added.find((candidate) => candidate.operation_key === tool.operation_key);
    if (entry) entry.tool_id = tool.id;
  }
  for (const { tool, next, entry } of changes) {
    await reimportTool(deps, principal, tool.id, { imported: next, operation_key: entry.operation_key, overwrite_edits: overwrite }, context);
  }
  for (const entry of removed) {
    const tool = tools.find((candidate) => candidate.id === entry.tool_id) as BusinessToolDocument;
    if (action === 'delete') await recordToolDeletion(deps, principal, tool.id, context);
    else if (action === 'disable' && tool.definition.enabled) await recordToolEdit(deps, principal, tool.id, { enabled: false }, context);
  }
  await deps.readYourWrites((await recordImport(deps, principal, integrationId, proposal, context, undefined)).position);
  return result;
}
