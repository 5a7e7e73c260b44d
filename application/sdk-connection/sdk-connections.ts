// SDK connections (spec 2.1, 3, 4.2; issue #13 point 2): an organization's own connector
// server, which the platform calls with signed protocol requests (spec 5.2).
//
// - Who: owners and admins only (the routes refuse members with 403 `insufficient_role`).
//   Another tenant's connection is 404, as is a missing one.
// - Creating needs the `sdk_connections` feature of the plan (403 `feature_not_in_plan`). The
//   name is unique per tenant, case-insensitively: a reservation holds it (409
//   `sdk_connection_name_taken`). The webhook URL goes through the outbound guard when saved
//   (https only, no private address, unless the deployment allows them) and on every call.
// - The signing secret is sealed before it enters an event and never answered again, except by
//   the request that set it: the create, and an update that rotates it (`signing_secret` given,
//   or empty for the platform to make one). Elsewhere `has_secret`.
// - A rotation keeps the previous secret usable for a grace period (`grace_seconds`, default
//   SDK_SECRET_GRACE_SECONDS; 0: none), so a connector can be redeployed with the new secret
//   without downtime: during it, a call the connector refuses with `invalid_signature` is sent
//   once more, signed with the previous secret.
// - Test: a signed `ping`; `healthy` when a `pong` comes back within the timeout with protocol
//   version `1` (or none), otherwise `degraded` with the reason. Recorded either way. A deep
//   test also runs the connector doctor's conformance cases (with the secret the ping worked
//   with) and records how many passed.
// - Sync: `capabilities.list`, or `tools.list` for a connector that does not know it (an error
//   answer, or no protocol answer at all such as a 404); what it advertises is recorded. With
//   `workspace_id` and `auto_register` its chat tools become business tools of the workspace
//   (application/tool/connector-tools.ts). A sync that gets no list is recorded as failed and
//   answered 502 `connector_unavailable`.
// - Delete: the connection's business tools go first (in every workspace), then the connection,
//   then its name. A disabled connection can still be tested and synced (before it is enabled,
//   for instance); whether its tools are offered in chat is the chat's to ask.

import { type ScheduleView, type UnrunnableScheduleView, scheduleViews } from '../orchestration/schedules';
import { signingSecretProblem } from '../../domain/handoff-config/handoff-config';
import {
  type AdvertisedTool,
  type DegradedReason,
  type LiveSdkConnection,
  type SdkConnectionCommand,
  type SdkConnectionEvent,
  type SdkConnectionState,
  sdkConnectionDecider,
  sdkConnectionEvents,
  sdkConnectionFieldsProblem,
  sdkConnectionStream,
  usableSecrets,
} from '../../domain/sdk-connection/sdk-connection';
import { type DomainError, conflict, invalid, notFound, messageOf } from '../../domain/shared/errors';
import { normalizeText } from '../../domain/shared/text';
import { type ConnectionSyncFailure, type ConnectionSyncRecord, type ConnectionTestRecord, SDK_CONNECTIONS, type SdkConnectionDocument, schedulesOf } from '../../projections/sdk-connections';
import { type Aggregate, type HandleOptions, handleCommand, loadAggregate } from '../command-handling/handle-command';
import { requireFeature } from '../entitlement/entitlements';
import { type OutboundDependencies, requireCallableEndpoint } from '../outbound/callable-endpoint';
import { type ConnectorAnswer, ConnectorCallError, type ConnectorClient, type ConnectorExchange, type ConnectorRequest } from '../ports/connector-client';
import type { ConformanceCase, ConnectorDoctor } from '../ports/connector-doctor';
import type { Actor } from '../ports/event-store';
import type { Secrets } from '../ports/identity';
import type { Page } from '../ports/read-store';
import { claimReservation, releaseReservation } from '../reservation/reservations';
import { type Principal, actingContext } from '../session/sessions';
import type { RequestContext } from '../shared/request-context';
import { type Versioned, type WritePreconditions, expectedRevisionOf, versionOfRevision } from '../shared/versions';
import { type ToolRegistration, deleteConnectorTools, planToolRegistration, registerPlannedTools } from '../tool/connector-tools';
import type { ToolDependencies } from '../tool/tools';
import { workspaceAccess } from '../workspace/workspace-access';
import { type Written, readBackChange } from '../shared/read-models';

export const sdkConnectionAggregate: Aggregate<SdkConnectionCommand, SdkConnectionEvent, SdkConnectionState> = { decider: sdkConnectionDecider, events: sdkConnectionEvents };

/** The protocol version the platform speaks (spec 9). */
export const PROTOCOL_VERSION = '1';
/** The longest grace a rotation may give the previous secret: 30 days. */
export const MAX_SECRET_GRACE_SECONDS = 30 * 24 * 3600;
/** A connector's words in a recorded detail, at most. */
const MAX_DETAIL_LENGTH = 500;

export interface SdkConnectionSettings {
  /** How long a rotated-out secret still signs when the update names no grace (SDK_SECRET_GRACE_SECONDS). */
  secretGraceSeconds: number;
  /** The largest event payload (ORCHESTRATION_MAX_PAYLOAD_BYTES): a schedule whose payload is larger does not run. */
  maxPayloadBytes: number;
}

export type SdkConnectionDependencies = ToolDependencies &
  OutboundDependencies & {
    secrets: Secrets;
    connectorClient: ConnectorClient;
    connectorDoctor: ConnectorDoctor;
    sdkConnections: SdkConnectionSettings;
  };

/** What reading needs: the read models and the clock (a grace that has ended is not shown). */
export type SdkConnectionReadDependencies = Pick<SdkConnectionDependencies, 'readStore' | 'clock'>;

/** A tool the connector advertised, as a connection's readers see it (the schema is on the business tool). */
export interface AdvertisedToolSummary {
  name: string;
  description: string | null;
  auth: string | null;
  chat: boolean;
}

/** A connection as its owners and admins see it: never the secret. */
export interface SdkConnectionView {
  id: string;
  name: string;
  webhook_url: string;
  enabled: boolean;
  has_secret: boolean;
  /** Until when the secret before the last rotation still signs; null when only the current one does. */
  previous_secret_valid_until: string | null;
  secret_rotated_at: string | null;
  /** `untested` until the first test, then the last test's outcome. */
  status: SdkConnectionDocument['status'];
  last_test: ConnectionTestRecord | null;
  tools_count: number;
  flows_count: number;
  events_count: number;
  schedules_count: number;
  tools: AdvertisedToolSummary[];
  organization: Record<string, unknown> | null;
  last_sync: ConnectionSyncRecord | null;
  last_sync_failure: ConnectionSyncFailure | null;
  created_at: string;
  updated_at: string;
  updated_by: Actor;
}

/** The answer of the create and of an update that rotated the secret: the secret in clear, this once. */
export type SdkConnectionWithSecret = SdkConnectionView & { signing_secret?: string };

const summaryOf = (tool: AdvertisedTool): AdvertisedToolSummary => ({ name: tool.name, description: tool.description ?? null, auth: tool.auth ?? null, chat: tool.chat !== false });

function viewOf(doc: SdkConnectionDocument, now: Date): SdkConnectionView {
  const graceLasts = doc.previous_secret_valid_until !== null && new Date(doc.previous_secret_valid_until).getTime() > now.getTime();
  return {
    id: doc.id,
    name: doc.name,
    webhook_url: doc.webhook_url,
    enabled: doc.enabled,
    has_secret: true,
    previous_secret_valid_until: graceLasts ? doc.previous_secret_valid_until : null,
    secret_rotated_at: doc.secret_rotated_at,
    status: doc.status,
    last_test: doc.last_test,
    tools_count: doc.tools.length,
    flows_count: doc.flows.length,
    events_count: doc.events.length,
    schedules_count: schedulesOf(doc).schedules.length,
    tools: doc.tools.map(summaryOf),
    organization: doc.organization,
    last_sync: doc.last_sync,
    last_sync_failure: doc.last_sync_failure,
    created_at: doc.created_at,
    updated_at: doc.updated_at,
    updated_by: doc.updated_by,
  };
}

const connectionNotFound = (): DomainError => notFound('sdk_connection_not_found', 'no such SDK connection');

/** The reservation scope of connection names in one tenant. */
export const sdkConnectionNameScope = (tenantId: string): string => `sdk_connection_name:${tenantId}`;

type Caller = Pick<Principal, 'tenant_id'>;

const clip = (text: string): string => (text.length <= MAX_DETAIL_LENGTH ? text : `${text.slice(0, MAX_DETAIL_LENGTH - 1)}…`);

// ---------------------------------------------------------------------------------- queries

async function readDocument(deps: SdkConnectionReadDependencies, principal: Caller, connectionId: string): Promise<SdkConnectionDocument> {
  const doc = await deps.readStore.collection<SdkConnectionDocument>(SDK_CONNECTIONS).get(connectionId);
  if (!doc || doc.tenant_id !== principal.tenant_id) throw connectionNotFound();
  return doc;
}

/** The tenant's connections, oldest first. */
export async function listSdkConnections(deps: SdkConnectionReadDependencies, principal: Caller, page: { limit?: number; cursor?: string }): Promise<Page<SdkConnectionView>> {
  const found = await deps.readStore
    .collection<SdkConnectionDocument>(SDK_CONNECTIONS)
    .find({ where: { tenant_id: principal.tenant_id }, sort: { field: 'created_at', direction: 'asc' }, ...page });
  const now = deps.clock.now();
  return { items: found.items.map((doc) => viewOf(doc, now)), next_cursor: found.next_cursor };
}

/** The connection with its version (ETag); 404 when it is not the tenant's. */
export async function getSdkConnection(deps: SdkConnectionReadDependencies, principal: Caller, connectionId: string): Promise<Versioned<SdkConnectionView>> {
  const doc = await readDocument(deps, principal, connectionId);
  return { value: viewOf(doc, deps.clock.now()), version: versionOfRevision(doc.revision) };
}

/** The flows the connector advertised at the last sync (spec 4.2 `GET .../flows`): the platform runs them, the connector does not. */
export async function listSdkConnectionFlows(deps: SdkConnectionReadDependencies, principal: Caller, connectionId: string): Promise<Page<Record<string, unknown>>> {
  const doc = await readDocument(deps, principal, connectionId);
  // A connector advertises a handful of flows: one page holds them.
  return { items: doc.flows, next_cursor: null };
}

/**
 * The schedules the connector advertised at the last sync, as the platform reads them: each
 * with its next run (null while the connection is disabled), or the reason it does not run.
 */
export async function listSdkConnectionSchedules(deps: SdkConnectionReadDependencies & Pick<SdkConnectionDependencies, 'sdkConnections'>, principal: Caller, connectionId: string): Promise<Page<ScheduleView | UnrunnableScheduleView>> {
  const doc = await readDocument(deps, principal, connectionId);
  // At most MAX_SCHEDULES run; the rest are listed with why: one page holds them.
  return { items: scheduleViews(doc, deps.sdkConnections, deps.clock.now()), next_cursor: null };
}

/** What calling a connector needs, from the stream (always current): its endpoint and the secrets it may be signed with now, in clear; null when the connection is gone. */
export async function sdkConnectionTarget(
  deps: Pick<SdkConnectionDependencies, 'eventStore' | 'secrets' | 'clock'>,
  tenantId: string,
  connectionId: string,
): Promise<{ endpoint: string; enabled: boolean; secrets: string[] } | null> {
  const { state } = await loadAggregate(deps, sdkConnectionAggregate, sdkConnectionStream(connectionId));
  if (state.status !== 'active' || state.tenant_id !== tenantId) return null;
  return { endpoint: state.webhook_url, enabled: state.enabled, secrets: usableSecrets(state, deps.clock.now()).map((sealed) => deps.secrets.open(sealed)) };
}

// ------------------------------------------------------------------------------- write checks

async function checkFields(deps: SdkConnectionDependencies, fields: { name?: string; webhook_url?: string; signing_secret?: string }): Promise<void> {
  const problem = sdkConnectionFieldsProblem(fields);
  if (problem) throw problem;
  if (fields.signing_secret !== undefined && fields.signing_secret !== '') {
    const secretProblem = signingSecretProblem(fields.signing_secret, 'signing_secret');
    if (secretProblem) throw secretProblem;
  }
  if (fields.webhook_url !== undefined) await requireCallableEndpoint(deps, fields.webhook_url, 'webhook_url');
}

/** A secret the platform makes: 32 random bytes, base64url (from the idempotency key's keyed digest under a key, so a retry makes the same). */
function newSigningSecret(deps: SdkConnectionDependencies, seed: string | undefined): string {
  return `ssec_${seed === undefined ? deps.secrets.randomToken(32) : deps.secrets.digest(`${seed}:signing_secret`)}`;
}

/** The caller's live connection from the write model (404 otherwise), and the revision a write must append at when the client named the version it saw. */
async function loadLive(deps: SdkConnectionDependencies, principal: Caller, connectionId: string, preconditions: WritePreconditions = {}): Promise<{ state: LiveSdkConnection; options: HandleOptions }> {
  const { state, revision } = await loadAggregate(deps, sdkConnectionAggregate, sdkConnectionStream(connectionId));
  if (state.status !== 'active' || state.tenant_id !== principal.tenant_id) throw connectionNotFound();
  return { state, options: { expectedRevision: expectedRevisionOf('SDK connection', preconditions.expectedVersion, revision) } };
}

async function claimName(deps: SdkConnectionDependencies, tenantId: string, name: string, connectionId: string, context: RequestContext): Promise<void> {
  try {
    await claimReservation(deps, sdkConnectionNameScope(tenantId), normalizeText(name), connectionId, context);
  } catch (error) {
    if ((error as DomainError).kind === 'conflict') throw conflict('sdk_connection_name_taken', `an SDK connection of this organization is already called ${normalizeText(name)} (names ignore case)`);
    throw error;
  }
}

const releaseName = (deps: SdkConnectionDependencies, tenantId: string, name: string, connectionId: string, context: RequestContext): Promise<void> =>
  releaseReservation(deps, sdkConnectionNameScope(tenantId), normalizeText(name), connectionId, context).catch(() => undefined);

async function answered(deps: SdkConnectionDependencies, principal: Caller, connectionId: string, written: Written | null, options: { evenIfBehind?: boolean; advice?: string } = {}): Promise<Versioned<SdkConnectionView>> {
  return readBackChange(deps, written, 'the change of the SDK connection', () => getSdkConnection(deps, principal, connectionId), options);
}

const latest = (...positions: Array<number | null>): number | null => positions.reduce<number | null>((max, at) => (at === null ? max : Math.max(max ?? 0, at)), null);

// -------------------------------------------------------------------------------- use cases

export interface SdkConnectionInput {
  name: string;
  webhook_url: string;
  /** Omitted or empty: the platform makes one. */
  signing_secret?: string;
  /** Default false. */
  enabled?: boolean;
}

/**
 * Creates a connection and answers it with its signing secret, the one time it is answered.
 * Under an idempotency key the connection's id (and a secret the platform makes) come from the
 * key, so a retry finds the one it made.
 */
export async function createSdkConnection(
  deps: SdkConnectionDependencies,
  principal: Principal,
  input: SdkConnectionInput,
  context: RequestContext,
  options: { idempotencyKey?: string } = {},
): Promise<Versioned<SdkConnectionWithSecret>> {
  const tenantId = principal.tenant_id;
  await requireFeature(deps, tenantId, 'sdk_connections');
  await checkFields(deps, input);
  const key = options.idempotencyKey === undefined ? undefined : `${options.idempotencyKey}:sdk_connection`;
  const connectionId = key === undefined ? deps.ids.newId() : deps.ids.fromKey(key);
  const secret = input.signing_secret === undefined || input.signing_secret === '' ? newSigningSecret(deps, key) : input.signing_secret;
  const acting = actingContext(principal, context);
  // A retry of a create that went through finds its connection: no second name, no second secret.
  const existing = key === undefined ? null : (await loadAggregate(deps, sdkConnectionAggregate, sdkConnectionStream(connectionId))).state;
  let written: Written | null = null;
  if (existing === null || existing.status === 'absent') {
    await claimName(deps, tenantId, input.name, connectionId, acting);
    const command: SdkConnectionCommand = {
      type: 'CreateSdkConnection',
      data: { tenant_id: tenantId, connection_id: connectionId, name: input.name, webhook_url: input.webhook_url, secret_sealed: deps.secrets.seal(secret), enabled: input.enabled ?? false },
    };
    try {
      written = await handleCommand(deps, sdkConnectionAggregate, sdkConnectionStream(connectionId), command, acting, { idempotencyKey: key });
    } catch (error) {
      await releaseName(deps, tenantId, input.name, connectionId, acting);
      throw error;
    }
  }
  // A connection the read models do not show yet cannot be answered (it was a 404, its secret lost):
  // 503, and the way to a secret, as this one is shown only here.
  const read = await answered(deps, principal, connectionId, written, {
    evenIfBehind: true,
    advice: 'its signing secret is shown only in this answer, so once it is listed, rotate the secret (PATCH with signing_secret "") rather than create it again',
  });
  return { ...read, value: { ...read.value, signing_secret: secret } };
}

export interface SdkConnectionChanges {
  name?: string;
  webhook_url?: string;
  enabled?: boolean;
  /** A new secret, or empty for the platform to make one: a rotation. Omitted keeps the secret. */
  signing_secret?: string;
  /** With a rotation: how long the previous secret still signs (0: not at all). Default SDK_SECRET_GRACE_SECONDS. */
  grace_seconds?: number;
}

/**
 * Changes what is given (an absent field keeps its value); the same values again record
 * nothing. A rotation answers the new secret, this once.
 */
export async function updateSdkConnection(
  deps: SdkConnectionDependencies,
  principal: Principal,
  connectionId: string,
  changes: SdkConnectionChanges,
  context: RequestContext,
  preconditions: WritePreconditions = {},
): Promise<Versioned<SdkConnectionWithSecret>> {
  const tenantId = principal.tenant_id;
  const { state, options } = await loadLive(deps, principal, connectionId, preconditions);
  await checkFields(deps, changes);
  const rotates = changes.signing_secret !== undefined;
  if (changes.grace_seconds !== undefined) {
    if (!rotates) throw invalid('grace_without_rotation', 'grace_seconds: only with signing_secret (it is the grace of the secret a rotation replaces)', 'grace_seconds');
    if (!Number.isInteger(changes.grace_seconds) || changes.grace_seconds < 0 || changes.grace_seconds > MAX_SECRET_GRACE_SECONDS) {
      throw invalid('invalid_grace', `grace_seconds: expected a whole number of seconds from 0 to ${MAX_SECRET_GRACE_SECONDS}`, 'grace_seconds');
    }
  }
  const acting = actingContext(principal, context);
  const renamed = changes.name !== undefined && normalizeText(changes.name).toLowerCase() !== state.name.toLowerCase();
  if (renamed) await claimName(deps, tenantId, changes.name as string, connectionId, acting);
  let written: Written | null = null;
  let secret: string | null = null;
  try {
    const { name, webhook_url, enabled } = changes;
    const update = await handleCommand(
      deps,
      sdkConnectionAggregate,
      sdkConnectionStream(connectionId),
      { type: 'UpdateSdkConnection', data: { tenant_id: tenantId, ...(name === undefined ? {} : { name }), ...(webhook_url === undefined ? {} : { webhook_url }), ...(enabled === undefined ? {} : { enabled }) } },
      acting,
      options,
    );
    written = update;
    if (rotates) {
      secret = changes.signing_secret === '' ? newSigningSecret(deps, undefined) : (changes.signing_secret as string);
      const graceSeconds = changes.grace_seconds ?? deps.sdkConnections.secretGraceSeconds;
      const graceUntil = graceSeconds === 0 ? null : new Date(deps.clock.now().getTime() + graceSeconds * 1000).toISOString();
      const rotation = await handleCommand(
        deps,
        sdkConnectionAggregate,
        sdkConnectionStream(connectionId),
        { type: 'RotateSdkConnectionSecret', data: { tenant_id: tenantId, secret_sealed: deps.secrets.seal(secret), grace_until: graceUntil } },
        acting,
        // The If-Match was checked by the update, which appended at that revision (or nothing).
        { expectedRevision: options.expectedRevision === undefined ? undefined : update.revision },
      );
      written = { position: latest(update.position, rotation.position), revision: rotation.revision };
    }
  } catch (error) {
    if (renamed) await releaseName(deps, tenantId, changes.name as string, connectionId, acting);
    throw error;
  }
  if (renamed) await releaseName(deps, tenantId, state.name, connectionId, acting);
  const read = await answered(deps, principal, connectionId, written, { evenIfBehind: secret !== null });
  return secret === null ? read : { ...read, value: { ...read.value, signing_secret: secret } };
}

/** Deletes the connection's business tools, then the connection, then gives its name back. */
export async function deleteSdkConnection(deps: SdkConnectionDependencies, principal: Principal, connectionId: string, context: RequestContext, preconditions: WritePreconditions = {}): Promise<void> {
  const { state, options } = await loadLive(deps, principal, connectionId, preconditions);
  const acting = actingContext(principal, context);
  // Tools first: should this stop half-way, the connection is still there to delete again.
  const tools = await deleteConnectorTools(deps, principal.tenant_id, connectionId, acting);
  const result = await handleCommand(deps, sdkConnectionAggregate, sdkConnectionStream(connectionId), { type: 'DeleteSdkConnection', data: { tenant_id: principal.tenant_id } }, acting, options);
  await releaseName(deps, principal.tenant_id, state.name, connectionId, acting);
  await deps.readYourWrites(latest(tools, result.position));
}

// ------------------------------------------------------------------------ calling the connector

/** One call's outcome: the answer, or why there was none; which secret signed the last try. */
interface CallOutcome {
  exchange: ConnectorExchange | null;
  failure: ConnectorCallError | null;
  signedWith: 'current' | 'previous';
  secret: string;
}

function asCallError(error: unknown): ConnectorCallError {
  if (error instanceof ConnectorCallError) return error;
  // The port promises ConnectorCallError only; anything else still becomes an outcome, never a crash.
  return new ConnectorCallError('unreachable', messageOf(error), 0);
}

const refusedSignature = (outcome: Pick<CallOutcome, 'exchange' | 'failure'>): boolean =>
  outcome.failure?.reason === 'invalid_signature' || (outcome.exchange?.answer.type === 'error' && outcome.exchange.answer.code === 'invalid_signature');

/**
 * Sends the request signed with the current secret; when the connector refuses the signature
 * and the previous secret's grace lasts, once more signed with that one.
 */
async function callConnector(deps: SdkConnectionDependencies, connection: LiveSdkConnection, request: ConnectorRequest): Promise<CallOutcome> {
  const [current, previous] = usableSecrets(connection, deps.clock.now()).map((sealed) => deps.secrets.open(sealed));
  const attempt = async (secret: string, signedWith: CallOutcome['signedWith']): Promise<CallOutcome> => {
    try {
      // Organization-wide calls (no workspace): the connector-manager path names the tenant and `*`.
      const target = { endpoint: connection.webhook_url, signingSecret: secret, connectionId: connection.connection_id, tenantId: connection.tenant_id, workspaceId: null };
      return { exchange: await deps.connectorClient.call(target, { ...request, organization_id: connection.tenant_id }), failure: null, signedWith, secret };
    } catch (error) {
      return { exchange: null, failure: asCallError(error), signedWith, secret };
    }
  };
  const first = await attempt(current, 'current');
  return previous !== undefined && refusedSignature(first) ? attempt(previous, 'previous') : first;
}

interface Verdict {
  status: 'healthy' | 'degraded';
  reason: DegradedReason | null;
  detail: string | null;
}

const degraded = (reason: DegradedReason, detail: string): Verdict => ({ status: 'degraded', reason, detail: clip(detail) });

/** Why an answer of a protocol error is no answer to the request, as a degraded reason. */
function errorAnswerVerdict(answer: Extract<ConnectorAnswer, { type: 'error' }>, request: string): Verdict {
  if (answer.code === 'invalid_signature') return degraded('invalid_signature', `the connector refused the signature: ${answer.message}`);
  if (answer.code === 'protocol_mismatch') return degraded('protocol_mismatch', `the connector refused protocol version ${PROTOCOL_VERSION}: ${answer.message}`);
  return degraded('bad_response', `the connector answered ${request} with the error ${answer.code}: ${answer.message}`);
}

/** The health rule (docs/sdk-connections.md): a pong with protocol version 1, or none, is healthy. */
function pingVerdict(outcome: CallOutcome, graceUntil: string | null): Verdict {
  if (outcome.failure) return degraded(outcome.failure.reason, outcome.failure.detail);
  const answer = (outcome.exchange as ConnectorExchange).answer;
  if (answer.type === 'error') return errorAnswerVerdict(answer, 'ping');
  if (answer.type !== 'pong') return degraded('bad_response', `the connector answered ping with ${answer.type}, not pong`);
  if (answer.protocol_version !== undefined && answer.protocol_version !== PROTOCOL_VERSION) {
    return degraded('protocol_mismatch', `the connector speaks protocol version ${answer.protocol_version}; the platform speaks ${PROTOCOL_VERSION}`);
  }
  if (outcome.signedWith === 'previous') {
    return { status: 'healthy', reason: null, detail: `the connector accepted only the previous signing secret, usable until ${graceUntil}; give it the new one` };
  }
  return { status: 'healthy', reason: null, detail: null };
}

export interface ConnectionTestAnswer {
  connection_id: string;
  status: 'healthy' | 'degraded';
  reason: DegradedReason | null;
  detail: string | null;
  latency_ms: number | null;
  protocol_version: string | null;
  sdk_version: string | null;
  /** Which secret the connector accepted (or, degraded, the last one tried). */
  signed_with: 'current' | 'previous';
  /** A deep test: the doctor's conformance cases, each with its fix hint. */
  deep: { passed: number; total: number; cases: ConformanceCase[] } | null;
  tested_at: string;
}

/**
 * Tests the connection with a signed ping (and, deep, the doctor's conformance cases) and
 * records the outcome, healthy or degraded; answers it. Never fails for the connector's sake.
 */
export async function testSdkConnection(
  deps: SdkConnectionDependencies,
  principal: Principal,
  connectionId: string,
  options: { deep: boolean },
  context: RequestContext,
): Promise<ConnectionTestAnswer> {
  const { state } = await loadLive(deps, principal, connectionId);
  const outcome = await callConnector(deps, state, { type: 'ping', request_id: deps.ids.newId() });
  const verdict = pingVerdict(outcome, state.previous_valid_until);
  const pong = outcome.exchange?.answer.type === 'pong' ? outcome.exchange.answer : null;
  const cases = options.deep ? await deps.connectorDoctor.check({ endpoint: state.webhook_url, signingSecret: outcome.secret }) : null;
  const deep = cases === null ? null : { passed: cases.filter((one) => one.passed).length, total: cases.length };
  const recorded = {
    tenant_id: principal.tenant_id,
    status: verdict.status,
    reason: verdict.reason,
    detail: verdict.detail,
    latency_ms: outcome.exchange?.latency_ms ?? outcome.failure?.latencyMs ?? null,
    protocol_version: pong?.protocol_version ?? null,
    sdk_version: pong?.sdk_version ?? null,
    deep,
  };
  const result = await handleCommand(deps, sdkConnectionAggregate, sdkConnectionStream(connectionId), { type: 'RecordSdkConnectionTest', data: recorded }, actingContext(principal, context));
  await deps.readYourWrites(result.position);
  const tested = result.events[0] as Extract<SdkConnectionEvent, { type: 'SdkConnectionTested' }>;
  const { tenant_id: _tenant, ...answer } = recorded;
  return { connection_id: connectionId, ...answer, signed_with: outcome.signedWith, deep: cases === null || deep === null ? null : { ...deep, cases }, tested_at: tested.data.tested_at };
}

/** A sync that got no list from the connector (recorded as SdkConnectionSyncFailed): 502 `connector_unavailable` at the edge. */
export class ConnectorUnavailableError extends Error {
  constructor(
    readonly reason: DegradedReason,
    readonly detail: string,
  ) {
    super(`the connector gave no list of its tools (${reason}): ${detail}`);
    this.name = 'ConnectorUnavailableError';
  }
}

type Capabilities = Omit<Extract<SdkConnectionCommand, { type: 'RecordSdkConnectionSync' }>['data'], 'tenant_id'>;

type Fetched = { capabilities: Capabilities } | { failure: Verdict & { reason: DegradedReason; detail: string }; latency_ms: number | null };

function failed(verdict: Verdict, outcome: CallOutcome): Fetched {
  return { failure: { ...verdict, reason: verdict.reason as DegradedReason, detail: verdict.detail ?? '' }, latency_ms: outcome.exchange?.latency_ms ?? outcome.failure?.latencyMs ?? null };
}

const wrongVersion = (answer: { protocol_version?: string }): boolean => answer.protocol_version !== undefined && answer.protocol_version !== PROTOCOL_VERSION;

/** `capabilities.list`, or `tools.list` when the connector does not know it. */
async function fetchCapabilities(deps: SdkConnectionDependencies, connection: LiveSdkConnection): Promise<Fetched> {
  const preferred = await callConnector(deps, connection, { type: 'capabilities.list', request_id: deps.ids.newId() });
  const answer = preferred.exchange?.answer;
  if (answer?.type === 'capabilities.list') {
    if (wrongVersion(answer)) return failed(degraded('protocol_mismatch', `the connector speaks protocol version ${answer.protocol_version}`), preferred);
    return {
      capabilities: {
        via: 'capabilities.list',
        tools: answer.tools,
        flows: answer.flows,
        events: answer.events ?? [],
        schedules: answer.schedules ?? [],
        organization: answer.organization ?? null,
        sdk_name: answer.sdk_name ?? null,
        sdk_version: answer.sdk_version ?? null,
      },
    };
  }
  // Only a connector that does not know the request falls back: one that cannot be reached,
  // refuses the signature or speaks another protocol would not answer tools.list either.
  const unknownRequest = (answer?.type === 'error' && answer.code !== 'invalid_signature' && answer.code !== 'protocol_mismatch') || preferred.failure?.reason === 'bad_response';
  if (!unknownRequest) {
    if (preferred.failure) return failed(degraded(preferred.failure.reason, preferred.failure.detail), preferred);
    if (answer?.type === 'error') return failed(errorAnswerVerdict(answer, 'capabilities.list'), preferred);
    return failed(degraded('bad_response', `the connector answered capabilities.list with ${answer?.type}`), preferred);
  }
  const legacy = await callConnector(deps, connection, { type: 'tools.list', request_id: deps.ids.newId() });
  const listed = legacy.exchange?.answer;
  if (listed?.type === 'tools.list') {
    if (wrongVersion(listed)) return failed(degraded('protocol_mismatch', `the connector speaks protocol version ${listed.protocol_version}`), legacy);
    return { capabilities: { via: 'tools.list', tools: listed.tools, flows: [], events: [], schedules: [], organization: null, sdk_name: null, sdk_version: listed.sdk_version ?? null } };
  }
  if (legacy.failure) return failed(degraded(legacy.failure.reason, `capabilities.list and tools.list both failed; tools.list: ${legacy.failure.detail}`), legacy);
  if (listed?.type === 'error') return failed(errorAnswerVerdict(listed, 'capabilities.list and tools.list'), legacy);
  return failed(degraded('bad_response', `the connector answered tools.list with ${listed?.type}`), legacy);
}

export interface SyncInput {
  workspace_id?: string;
  auto_register?: boolean;
}

export interface SyncAnswer {
  connection_id: string;
  via: 'capabilities.list' | 'tools.list';
  sdk_name: string | null;
  sdk_version: string | null;
  tools: AdvertisedToolSummary[];
  flows_count: number;
  events_count: number;
  schedules_count: number;
  organization: Record<string, unknown> | null;
  synced_at: string;
  /** With `workspace_id` and `auto_register`: what became of the tools there. */
  registration: ToolRegistration | null;
}

/** Fetches and records what the connector advertises; with a workspace and `auto_register`, registers its chat tools there. */
export async function syncSdkConnectionTools(deps: SdkConnectionDependencies, principal: Principal, connectionId: string, input: SyncInput, context: RequestContext): Promise<SyncAnswer> {
  const tenantId = principal.tenant_id;
  const { state } = await loadLive(deps, principal, connectionId);
  if (input.auto_register === true && input.workspace_id === undefined) {
    throw invalid('workspace_required', 'workspace_id: auto_register registers the tools in a workspace; name it', 'workspace_id');
  }
  if (input.workspace_id !== undefined && !(await workspaceAccess(deps, principal)).readable.has(input.workspace_id)) {
    throw invalid('workspace_not_found', 'workspace_id: no such workspace in this organization', 'workspace_id');
  }
  const acting = actingContext(principal, context);
  const stream = sdkConnectionStream(connectionId);
  const fetched = await fetchCapabilities(deps, state);
  if ('failure' in fetched) {
    const { reason, detail } = fetched.failure;
    const result = await handleCommand(deps, sdkConnectionAggregate, stream, { type: 'RecordSdkConnectionSyncFailure', data: { tenant_id: tenantId, reason, detail, latency_ms: fetched.latency_ms } }, acting);
    await deps.readYourWrites(result.position);
    throw new ConnectorUnavailableError(reason, detail);
  }
  const { capabilities } = fetched;
  // Planned before anything is recorded: a sync over the tools limit records nothing (429).
  const plan =
    input.workspace_id !== undefined && input.auto_register === true
      ? await planToolRegistration(deps, { tenant_id: tenantId, workspace_id: input.workspace_id, connection_id: connectionId }, capabilities.tools)
      : null;
  const synced = await handleCommand(deps, sdkConnectionAggregate, stream, { type: 'RecordSdkConnectionSync', data: { tenant_id: tenantId, ...capabilities } }, acting);
  const registered = plan === null ? null : await registerPlannedTools(deps, plan, acting);
  await deps.readYourWrites(latest(synced.position, registered?.position ?? null));
  const event = synced.events[0] as Extract<SdkConnectionEvent, { type: 'SdkConnectionToolsSynced' }>;
  return {
    connection_id: connectionId,
    via: capabilities.via,
    sdk_name: capabilities.sdk_name,
    sdk_version: capabilities.sdk_version,
    tools: capabilities.tools.map(summaryOf),
    flows_count: capabilities.flows.length,
    events_count: capabilities.events.length,
    schedules_count: capabilities.schedules.length,
    organization: capabilities.organization,
    synced_at: event.data.synced_at,
    registration: registered?.registration ?? null,
  };
}
