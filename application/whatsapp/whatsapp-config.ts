// The WhatsApp channel's per-tenant configuration (spec 4.14, 4.16: `GET, PUT
// /api/v1/admin/whatsapp/config`, `GET /api/v1/admin/whatsapp/configs`), set by the super
// admin: the tenant's business number (Meta's phone_number_id, unique across tenants: its
// reservation is claimed before the configuration names it, 409
// `whatsapp_phone_number_id_taken` when another tenant holds it), the verify token and app
// secret that check Meta's webhook, the access token replies are sent with, on/off, the Graph
// API version, and the workspace that answers. The app secret and the access token are sealed
// before they enter an event, the verify token only digested; none is ever answered.
//
// The webhook finds a number's configuration through the reservation and the configuration's
// own stream (`configurationOfNumber`), both always current: a number moved to another tenant
// is that tenant's from the next delivery on.

import {
  type AccessTokenChoice,
  PHONE_NUMBER_ID_SCOPE,
  type SecretField,
  type WhatsAppConfigChanges,
  type WhatsAppConfigCommand,
  type WhatsAppConfigEvent,
  type WhatsAppConfigState,
  type WhatsAppConfiguration,
  changesProblem,
  secretProblem,
  whatsappConfigDecider,
  whatsappConfigEvents,
  whatsappConfigStream,
} from '../../domain/whatsapp-config/whatsapp-config';
import { conflict, invalid, notFound } from '../../domain/shared/errors';
import { TENANTS, type TenantDocument } from '../../projections/tenants';
import { WHATSAPP_CONFIGS, type WhatsAppConfigDocument } from '../../projections/whatsapp-configs';
import { WORKSPACES, type WorkspaceDocument } from '../../projections/workspaces';
import { type Aggregate, type CommandDependencies, handleCommand, loadAggregate } from '../command-handling/handle-command';
import { entitlementsOf } from '../entitlement/entitlements';
import { inactiveTenantError, isActiveTenant } from '../tenant/active-tenant';
import type { Actor } from '../ports/event-store';
import type { Secrets } from '../ports/identity';
import type { Page, Where } from '../ports/read-store';
import { claimReservation, releaseReservation, reservationHolder } from '../reservation/reservations';
import { type ReadModelDependencies, type ReadYourWritesDependencies, type Written, readBackChange } from '../shared/read-models';
import type { RequestContext } from '../shared/request-context';
import { type Versioned, type WritePreconditions, expectedRevisionOf, versionOfRevision } from '../shared/versions';

export const whatsappConfigAggregate: Aggregate<WhatsAppConfigCommand, WhatsAppConfigEvent, WhatsAppConfigState> = { decider: whatsappConfigDecider, events: whatsappConfigEvents };

/** The deployment's WhatsApp settings the use cases need. */
export interface WhatsAppSettings {
  /** WHATSAPP_OUTBOX=true: every reply stays in the embedded outbox, whatever the tenant's access token. */
  outboxOnly: boolean;
}

export interface WhatsAppConfigDependencies extends CommandDependencies, ReadModelDependencies, ReadYourWritesDependencies {
  secrets: Secrets;
  whatsapp: WhatsAppSettings;
}

/** The configuration as the super admin reads it: never a secret, only whether there is one. */
export interface WhatsAppConfigView {
  tenant_id: string;
  configured: boolean;
  phone_number_id: string | null;
  display_phone_number: string | null;
  has_verify_token: boolean;
  has_app_secret: boolean;
  has_access_token: boolean;
  enabled: boolean;
  graph_api_version: string | null;
  /** Null: the tenant's default workspace answers. */
  workspace_id: string | null;
  /** Where replies go now: the Cloud API, or the embedded outbox (no access token, or WHATSAPP_OUTBOX=true). */
  replies_via: 'cloud_api' | 'outbox';
  updated_at: string | null;
  updated_by: Actor | null;
}

/** The route Meta's webhook is set to (the callback URL is the platform's base URL and this). */
export const WEBHOOK_PATH = '/api/v1/whatsapp/webhook';

/** The keyed digest a verify token is kept and looked up as. */
export const verifyTokenDigest = (secrets: Pick<Secrets, 'digest'>, token: string): string => secrets.digest(`whatsapp-verify-token\u0000${token}`);

function viewOf(tenantId: string, doc: WhatsAppConfigDocument | null, settings: WhatsAppSettings): WhatsAppConfigView {
  if (!doc) {
    return {
      tenant_id: tenantId,
      configured: false,
      phone_number_id: null,
      display_phone_number: null,
      has_verify_token: false,
      has_app_secret: false,
      has_access_token: false,
      enabled: false,
      graph_api_version: null,
      workspace_id: null,
      replies_via: 'outbox',
      updated_at: null,
      updated_by: null,
    };
  }
  const { phone_number_id, display_phone_number, has_access_token, enabled, graph_api_version, workspace_id, updated_at, updated_by } = doc;
  return {
    tenant_id: tenantId,
    configured: true,
    phone_number_id,
    display_phone_number,
    has_verify_token: true,
    has_app_secret: true,
    has_access_token,
    enabled,
    graph_api_version,
    workspace_id,
    replies_via: has_access_token && !settings.outboxOnly ? 'cloud_api' : 'outbox',
    updated_at,
    updated_by,
  };
}

async function requireTenant(deps: ReadModelDependencies, tenantId: string): Promise<TenantDocument> {
  const tenant = await deps.readStore.collection<TenantDocument>(TENANTS).get(tenantId);
  if (!tenant) throw notFound('tenant_not_found', 'no such tenant');
  return tenant;
}

/** A tenant's configuration with its version (ETag); `configured: false` before any; 404 `tenant_not_found`. */
export async function readWhatsAppConfig(deps: ReadModelDependencies & { whatsapp: WhatsAppSettings }, tenantId: string): Promise<Versioned<WhatsAppConfigView>> {
  await requireTenant(deps, tenantId);
  const doc = await deps.readStore.collection<WhatsAppConfigDocument>(WHATSAPP_CONFIGS).get(tenantId);
  return { value: viewOf(tenantId, doc, deps.whatsapp), version: versionOfRevision(doc?.revision ?? -1) };
}

/** Every configured tenant, most recently changed first; `enabled` filters. */
export async function listWhatsAppConfigs(
  deps: ReadModelDependencies & { whatsapp: WhatsAppSettings },
  filter: { enabled?: boolean },
  page: { limit?: number; cursor?: string },
): Promise<Page<WhatsAppConfigView>> {
  const where: Where = filter.enabled === undefined ? {} : { enabled: filter.enabled };
  const found = await deps.readStore.collection<WhatsAppConfigDocument>(WHATSAPP_CONFIGS).find({ where, sort: { field: 'updated_at', direction: 'desc' }, ...page });
  return { items: found.items.map((doc) => viewOf(doc.tenant_id, doc, deps.whatsapp)), next_cursor: found.next_cursor };
}

/** What PUT takes: every field optional, a field left out keeps what is configured. */
export interface WhatsAppConfigInput {
  phone_number_id?: string;
  display_phone_number?: string;
  verify_token?: string;
  app_secret?: string;
  /** Null removes it: replies then stay in the outbox. */
  access_token?: string | null;
  enabled?: boolean;
  graph_api_version?: string;
  workspace_id?: string | null;
}

/** The secrets of the input checked (400 naming the field), the plain fields checked, and the workspace one of the tenant's. */
async function checkedChanges(deps: WhatsAppConfigDependencies, tenantId: string, input: WhatsAppConfigInput): Promise<WhatsAppConfigChanges> {
  for (const field of ['verify_token', 'app_secret', 'access_token'] as const satisfies readonly SecretField[]) {
    const value = input[field];
    if (typeof value === 'string') {
      const refused = secretProblem(field, value);
      if (refused) throw refused;
    }
  }
  const plain = {
    phone_number_id: input.phone_number_id,
    display_phone_number: input.display_phone_number?.trim(),
    enabled: input.enabled,
    graph_api_version: input.graph_api_version,
    workspace_id: input.workspace_id,
  };
  const refused = changesProblem(plain);
  if (refused) throw refused;
  if (typeof input.workspace_id === 'string') {
    const workspace = await deps.readStore.collection<WorkspaceDocument>(WORKSPACES).get(input.workspace_id);
    if (!workspace || workspace.tenant_id !== tenantId) throw invalid('invalid_whatsapp_config', 'workspace_id: no such workspace in this organization (null: its default workspace)', 'workspace_id');
  }
  const access_token: AccessTokenChoice =
    input.access_token === null ? { kind: 'remove' } : input.access_token === undefined ? { kind: 'keep' } : { kind: 'given', sealed: deps.secrets.seal(input.access_token) };
  const changes: WhatsAppConfigChanges = { access_token };
  for (const [field, value] of Object.entries(plain)) if (value !== undefined) Object.assign(changes, { [field]: value });
  if (input.verify_token !== undefined) changes.verify_token_digest = verifyTokenDigest(deps.secrets, input.verify_token);
  if (input.app_secret !== undefined) changes.app_secret_sealed = deps.secrets.seal(input.app_secret);
  return changes;
}

/**
 * Sets a tenant's configuration as the super admin: 404 `tenant_not_found`, 409 `tenant_deleted`;
 * 400 `invalid_whatsapp_config` naming the field (a malformed one, or one a first
 * configuration lacks: phone_number_id, verify_token, app_secret); 409
 * `whatsapp_phone_number_id_taken` when another tenant has the number; 412 when If-Match
 * names another version. The same configuration again records nothing.
 */
export async function configureWhatsApp(
  deps: WhatsAppConfigDependencies,
  tenantId: string,
  input: WhatsAppConfigInput,
  context: RequestContext,
  preconditions: WritePreconditions = {},
): Promise<Versioned<WhatsAppConfigView>> {
  const tenant = await requireTenant(deps, tenantId);
  if (tenant.status === 'deleted') throw conflict('tenant_deleted', 'this organization has been deleted');
  const changes = await checkedChanges(deps, tenantId, input);
  const stream = whatsappConfigStream(tenantId);
  const { state, revision } = await loadAggregate(deps, whatsappConfigAggregate, stream);
  const expectedRevision = expectedRevisionOf('WhatsApp configuration', preconditions.expectedVersion, revision);
  const command: WhatsAppConfigCommand = { type: 'ConfigureWhatsApp', data: { tenant_id: tenantId, changes } };
  // Refusals come before the number is claimed: a refused change claims nothing.
  const decision = whatsappConfigDecider.decide(command, state, { now: deps.clock.now() });
  if (decision._tag === 'Left') throw decision.left;
  const acting: RequestContext = { ...context, tenant_id: tenantId };
  const held = state.status === 'configured' ? state.phone_number_id : null;
  const wanted = changes.phone_number_id ?? held;
  const claiming = wanted !== null && wanted !== held;
  if (claiming) await claimReservation(deps, PHONE_NUMBER_ID_SCOPE, wanted, tenantId, acting);
  let written: Written;
  try {
    written = await handleCommand(deps, whatsappConfigAggregate, stream, command, acting, { expectedRevision });
  } catch (error) {
    // The number is not the tenant's after all: another may claim it.
    if (claiming) await releaseReservation(deps, PHONE_NUMBER_ID_SCOPE, wanted, tenantId, acting);
    throw error;
  }
  if (claiming && held !== null) await releaseReservation(deps, PHONE_NUMBER_ID_SCOPE, held, tenantId, acting);
  return readBackChange(deps, written, 'the WhatsApp configuration', () => readWhatsAppConfig(deps, tenantId));
}

/** What the webhook and the sagas need of a number's configuration: its tenant and its state, secrets sealed. */
export interface NumberConfiguration {
  tenant_id: string;
  configuration: WhatsAppConfiguration;
}

/** The configuration naming this number now (its reservation's holder, then that tenant's stream); null when none does. */
export async function configurationOfNumber(deps: Pick<CommandDependencies, 'eventStore'> & { secrets: Pick<Secrets, 'digest'> }, phoneNumberId: string): Promise<NumberConfiguration | null> {
  if (!/^[0-9]{1,32}$/.test(phoneNumberId)) return null;
  const tenantId = await reservationHolder(deps, PHONE_NUMBER_ID_SCOPE, phoneNumberId);
  if (tenantId === null) return null;
  const configuration = await configurationOfTenant(deps, tenantId);
  return configuration?.phone_number_id === phoneNumberId ? { tenant_id: tenantId, configuration } : null;
}

/** A tenant's configuration from its stream (always current); null before any. */
export async function configurationOfTenant(deps: Pick<CommandDependencies, 'eventStore'>, tenantId: string): Promise<WhatsAppConfiguration | null> {
  const { state } = await loadAggregate(deps, whatsappConfigAggregate, whatsappConfigStream(tenantId));
  if (state.status !== 'configured') return null;
  const { status: _status, ...configuration } = state;
  return configuration;
}

/** The tenant whose configuration holds this verify token (Meta's subscription handshake); null when none does. */
export async function configurationOfVerifyToken(deps: ReadModelDependencies & { secrets: Pick<Secrets, 'digest'> }, token: string): Promise<WhatsAppConfigDocument | null> {
  const { items } = await deps.readStore.collection<WhatsAppConfigDocument>(WHATSAPP_CONFIGS).find({ where: { verify_token_digest: verifyTokenDigest(deps.secrets, token) }, limit: 1 });
  return items[0] ?? null;
}

/**
 * Why a tenant's WhatsApp messages are not served now (the webhook drops them, queued replies
 * are given up): its channel is off, it is suspended or deleted, or its plan lacks the
 * `whatsapp` feature. Null when they are.
 */
export async function whyNotServed(deps: ReadModelDependencies, tenantId: string, enabled: boolean): Promise<string | null> {
  if (!enabled) return 'whatsapp_disabled';
  const tenant = await deps.readStore.collection<TenantDocument>(TENANTS).get(tenantId);
  if (!isActiveTenant(tenant)) return inactiveTenantError(tenant).code;
  const { features } = await entitlementsOf(deps, tenantId);
  return features.whatsapp ? null : 'feature_not_in_plan';
}
