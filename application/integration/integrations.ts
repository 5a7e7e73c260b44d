// Integrations (spec 4.12, issue #12 point 1): a workspace's own APIs that business tools call.
//
// - Who: anyone who may read the workspace lists and reads its integrations; changing them
//   needs the write flag of one of the caller's teams on it (admins and owners always), the
//   same rule as documents (application/workspace/workspace-access.ts). An integration of a
//   workspace the caller may not read is 404, as is another tenant's.
// - The base URL and the OAuth2 token URL go through the outbound guard when saved (https
//   only, no private address unless the deployment allows it); calls check them again.
// - The secret of the auth kind is sealed here, before the command, and never answered:
//   views say `has_credentials`. `integrationCredentials` opens it for the execution of a tool.
// - An integration's version (its ETag) is its stream's revision; a write given the version
//   the client saw (If-Match) appends only at that revision (412 otherwise).
// - An integration that tools still call is not deleted by surprise: 409
//   `integration_has_tools` with how many, unless the caller asks to delete them too
//   (`cascade`), which deletes each tool (its name given back, its quota freed), then the
//   integration. A tool created while that runs (between the listing and the deletion) would
//   be left calling nothing: its calls fail with the integration gone, and it can be deleted.

import {
  type CredentialsChoice,
  type DefaultHeaders,
  type IntegrationAuth,
  type IntegrationCommand,
  type IntegrationEvent,
  type IntegrationState,
  type OpenApiSource,
  credentialsProblem,
  integrationDecider,
  integrationEvents,
  integrationFieldsProblem,
  integrationStream,
} from '../../domain/integration/integration';
import { DomainError, notFound } from '../../domain/shared/errors';
import { INTEGRATIONS, type IntegrationDocument } from '../../projections/integrations';
import { type Aggregate, type CommandDependencies, type HandleOptions, handleCommand, loadAggregate } from '../command-handling/handle-command';
import { type OutboundDependencies, requireCallableEndpoint } from '../outbound/callable-endpoint';
import type { Actor } from '../ports/event-store';
import type { Secrets } from '../ports/identity';
import type { Page } from '../ports/read-store';
import { type Principal, actingContext } from '../session/sessions';
import { type ReadModelDependencies, type ReadYourWritesDependencies, type Written, readBackChange } from '../shared/read-models';
import type { RequestContext } from '../shared/request-context';
import { type Versioned, type WritePreconditions, expectedRevisionOf, versionOfRevision } from '../shared/versions';
import { countToolsOfIntegration, deleteToolsOfIntegration } from '../tool/tools';
import { requireReadableWorkspace, requireWritableWorkspace, workspaceAccess } from '../workspace/workspace-access';

export const integrationAggregate: Aggregate<IntegrationCommand, IntegrationEvent, IntegrationState> = { decider: integrationDecider, events: integrationEvents };

export interface IntegrationDependencies extends CommandDependencies, ReadModelDependencies, ReadYourWritesDependencies, OutboundDependencies {
  secrets: Secrets;
}

/** An integration as its readers see it: never the credentials. */
export interface IntegrationView {
  id: string;
  workspace_id: string;
  name: string;
  base_url: string;
  auth: IntegrationAuth;
  has_credentials: boolean;
  default_headers: DefaultHeaders;
  /** The OpenAPI document its tools were last imported from, or null. */
  openapi_source: OpenApiSource | null;
  created_at: string;
  updated_at: string;
  updated_by: Actor;
}

const viewOf = (doc: IntegrationDocument): IntegrationView => ({
  id: doc.id,
  workspace_id: doc.workspace_id,
  name: doc.name,
  base_url: doc.base_url,
  auth: doc.auth,
  has_credentials: doc.has_credentials,
  default_headers: doc.default_headers,
  openapi_source: doc.openapi_source ?? null,
  created_at: doc.created_at,
  updated_at: doc.updated_at,
  updated_by: doc.updated_by,
});

const integrationNotFound = (): DomainError => notFound('integration_not_found', 'no such integration');

type Caller = Pick<Principal, 'tenant_id' | 'user_id' | 'role'>;

// ---------------------------------------------------------------------------------- queries

/** The integrations of a workspace the caller may read (404 `workspace_not_found` otherwise), oldest first. */
export async function listIntegrations(deps: ReadModelDependencies, principal: Caller, workspaceId: string, page: { limit?: number; cursor?: string }): Promise<Page<IntegrationView>> {
  await requireReadableWorkspace(deps, principal, workspaceId);
  const found = await deps.readStore
    .collection<IntegrationDocument>(INTEGRATIONS)
    .find({ where: { tenant_id: principal.tenant_id, workspace_id: workspaceId }, sort: { field: 'created_at', direction: 'asc' }, ...page });
  return { items: found.items.map(viewOf), next_cursor: found.next_cursor };
}

/** The integration with its version, or 404 when it is not in a workspace the caller may read. */
export async function getIntegration(deps: ReadModelDependencies, principal: Caller, integrationId: string): Promise<Versioned<IntegrationView>> {
  const doc = await deps.readStore.collection<IntegrationDocument>(INTEGRATIONS).get(integrationId);
  if (!doc || doc.tenant_id !== principal.tenant_id || !(await workspaceAccess(deps, principal)).readable.has(doc.workspace_id)) throw integrationNotFound();
  return { value: viewOf(doc), version: versionOfRevision(doc.revision) };
}

/**
 * What executing a tool needs, from the stream (always current), the secret in clear; null when
 * the integration is gone. `revision` changes with every change of the integration: what is
 * derived from its credentials (an OAuth2 access token) is kept per revision.
 */
export async function integrationCredentials(
  deps: Pick<CommandDependencies, 'eventStore'> & { secrets: Secrets },
  tenantId: string,
  integrationId: string,
): Promise<{ workspace_id: string; base_url: string; auth: IntegrationAuth; default_headers: DefaultHeaders; credentials: string | null; revision: number } | null> {
  const { state, revision } = await loadAggregate(deps, integrationAggregate, integrationStream(integrationId));
  if (state.status !== 'active' || state.tenant_id !== tenantId) return null;
  const { workspace_id, base_url, auth, default_headers, credentials_sealed } = state;
  return { workspace_id, base_url, auth, default_headers, credentials: credentials_sealed === null ? null : deps.secrets.open(credentials_sealed), revision };
}

// ------------------------------------------------------------------------------- write checks

/** The form of every field, then whether the platform may call the addresses: 400 naming the field. */
async function checkFields(deps: IntegrationDependencies, fields: Partial<IntegrationInput>): Promise<void> {
  const problem = integrationFieldsProblem(fields);
  if (problem) throw problem;
  if (fields.base_url !== undefined) await requireCallableEndpoint(deps, fields.base_url, 'base_url');
  if (fields.auth?.kind === 'oauth2_client_credentials') await requireCallableEndpoint(deps, fields.auth.token_url, 'auth.token_url');
}

function credentialsChoice(deps: IntegrationDependencies, credentials: string | null | undefined): CredentialsChoice {
  if (credentials === undefined) return { kind: 'keep' };
  if (credentials === null) return { kind: 'remove' };
  const problem = credentialsProblem(credentials);
  if (problem) throw problem;
  return { kind: 'given', sealed: deps.secrets.seal(credentials) };
}

/**
 * The caller's live integration from the write model, in a workspace they may write (404 when
 * they may not read it, 403 `workspace_read_only` when they only read it), and the revision
 * the write must append at when the client named the version it saw.
 */
async function loadWritable(deps: IntegrationDependencies, principal: Principal, integrationId: string, preconditions: WritePreconditions): Promise<HandleOptions> {
  const { state, revision } = await loadAggregate(deps, integrationAggregate, integrationStream(integrationId));
  if (state.status !== 'active' || state.tenant_id !== principal.tenant_id) throw integrationNotFound();
  if (!(await workspaceAccess(deps, principal)).readable.has(state.workspace_id)) throw integrationNotFound();
  await requireWritableWorkspace(deps, principal, state.workspace_id);
  return { expectedRevision: expectedRevisionOf('integration', preconditions.expectedVersion, revision) };
}

async function answered(deps: IntegrationDependencies, principal: Principal, integrationId: string, written: Written | null): Promise<Versioned<IntegrationView>> {
  return readBackChange(deps, written, 'the change of the integration', () => getIntegration(deps, principal, integrationId));
}

// -------------------------------------------------------------------------------- use cases

export interface IntegrationInput {
  name: string;
  base_url: string;
  auth: IntegrationAuth;
  default_headers?: DefaultHeaders;
  /** The secret of the auth kind. On an update: omitted keeps it, null removes it. */
  credentials?: string | null;
}

/**
 * Creates an integration in a workspace the caller may write. Under an idempotency key the
 * integration's id and events come from the key, so a retry finds the one it made.
 */
export async function createIntegration(...args: Parameters<typeof recordIntegration>): Promise<Versioned<IntegrationView>> {
  const [deps, principal] = args;
  const { integrationId, written } = await recordIntegration(...args);
  return answered(deps, principal, integrationId, written);
}

/** createIntegration without its answer, for a batch that answers once at its end (an import). */
export async function recordIntegration(
  deps: IntegrationDependencies,
  principal: Principal,
  workspaceId: string,
  input: IntegrationInput,
  context: RequestContext,
  options: { idempotencyKey?: string } = {},
): Promise<{ integrationId: string; written: Written }> {
  await requireWritableWorkspace(deps, principal, workspaceId);
  await checkFields(deps, input);
  const credentials = credentialsChoice(deps, input.credentials);
  const key = options.idempotencyKey === undefined ? undefined : `${options.idempotencyKey}:integration`;
  const integrationId = key === undefined ? deps.ids.newId() : deps.ids.fromKey(key);
  const command: IntegrationCommand = {
    type: 'CreateIntegration',
    data: {
      tenant_id: principal.tenant_id,
      workspace_id: workspaceId,
      integration_id: integrationId,
      name: input.name,
      base_url: input.base_url,
      auth: input.auth,
      default_headers: input.default_headers ?? {},
      credentials,
    },
  };
  const written = await handleCommand(deps, integrationAggregate, integrationStream(integrationId), command, actingContext(principal, context), { idempotencyKey: key });
  return { integrationId, written };
}

/** Changes the fields given (an absent one keeps its value); the same values again record nothing. */
export async function updateIntegration(
  deps: IntegrationDependencies,
  principal: Principal,
  integrationId: string,
  changes: Partial<IntegrationInput>,
  context: RequestContext,
  preconditions: WritePreconditions = {},
): Promise<Versioned<IntegrationView>> {
  const options = await loadWritable(deps, principal, integrationId, preconditions);
  await checkFields(deps, changes);
  const credentials = credentialsChoice(deps, changes.credentials);
  const { name, base_url, auth, default_headers } = changes;
  const data = { tenant_id: principal.tenant_id, credentials, ...(name === undefined ? {} : { name }), ...(base_url === undefined ? {} : { base_url }), ...(auth === undefined ? {} : { auth }), ...(default_headers === undefined ? {} : { default_headers }) };
  const result = await handleCommand(deps, integrationAggregate, integrationStream(integrationId), { type: 'UpdateIntegration', data }, actingContext(principal, context), options);
  return answered(deps, principal, integrationId, result);
}

/** 409 `integration_has_tools`: tools still call the integration; `tools` says how many. */
export class IntegrationHasToolsError extends DomainError {
  constructor(readonly tools: number) {
    super('conflict', 'integration_has_tools', `${tools} ${tools === 1 ? 'tool calls' : 'tools call'} this integration: delete ${tools === 1 ? 'it' : 'them'} first, or delete the integration with cascade=true to delete ${tools === 1 ? 'it' : 'them'} too`);
  }

  override details(): Record<string, unknown> {
    return { tools: this.tools };
  }
}

/**
 * Deletes the integration. While tools call it: 409 `integration_has_tools`, unless
 * `cascade`, which deletes those tools first (so a failure part way leaves the integration
 * for a retry, never tools calling a deleted one).
 */
export async function deleteIntegration(
  deps: IntegrationDependencies,
  principal: Principal,
  integrationId: string,
  context: RequestContext,
  preconditions: WritePreconditions = {},
  options: { cascade?: boolean } = {},
): Promise<void> {
  const handleOptions = await loadWritable(deps, principal, integrationId, preconditions);
  const acting = actingContext(principal, context);
  if (options.cascade) await deleteToolsOfIntegration(deps, principal.tenant_id, integrationId, acting);
  else {
    const tools = await countToolsOfIntegration(deps, principal.tenant_id, integrationId);
    if (tools > 0) throw new IntegrationHasToolsError(tools);
  }
  const result = await handleCommand(deps, integrationAggregate, integrationStream(integrationId), { type: 'DeleteIntegration', data: { tenant_id: principal.tenant_id } }, acting, handleOptions);
  await deps.readYourWrites(result.position);
}
