// The website widget's configuration as a tenant's owner or admin reads and sets it (spec 4.4,
// `GET, POST /api/v1/tenant/widget`, `POST /api/v1/tenant/widget/identity-secret`): how the
// widget looks, what it offers, which sites may embed it, which workspace it answers from, and
// whether visitors must be vouched for by the host site (verified identity). The rules of each
// setting are the aggregate's (domain/widget-config); this file adds what needs the read models
// (the workspace must be one of the tenant's) and the secrets (the identity secret, made here,
// sealed before it enters an event, answered once by the rotation that made it, never again).

import { notFound } from '../../domain/shared/errors';
import {
  type WidgetConfigCommand,
  type WidgetConfigEvent,
  type WidgetConfigState,
  type WidgetSettings,
  widgetConfigDecider,
  widgetConfigEvents,
  widgetConfigStream,
} from '../../domain/widget-config/widget-config';
import { WIDGET_CONFIGS, type WidgetConfigDocument, settingsOf } from '../../projections/widget-configs';
import { WORKSPACES, type WorkspaceDocument } from '../../projections/workspaces';
import { type Aggregate, type CommandDependencies, handleCommand, revisionExpectedBy } from '../command-handling/handle-command';
import type { Actor } from '../ports/event-store';
import type { Secrets } from '../ports/identity';
import { type Principal, actingContext } from '../session/sessions';
import { type ReadModelDependencies, type ReadYourWritesDependencies, readBackChange } from '../shared/read-models';
import type { RequestContext } from '../shared/request-context';
import { type Versioned, type WritePreconditions, versionOfRevision } from '../shared/versions';

export const widgetConfigAggregate: Aggregate<WidgetConfigCommand, WidgetConfigEvent, WidgetConfigState> = { decider: widgetConfigDecider, events: widgetConfigEvents };

export interface WidgetConfigDependencies extends CommandDependencies, ReadModelDependencies, ReadYourWritesDependencies {
  secrets: Pick<Secrets, 'seal' | 'randomToken'>;
}

/** The configuration as its admins read it: every setting, and whether there is an identity secret (never the secret). */
export type WidgetConfigView = WidgetSettings & {
  /** False until the first change: the settings are the defaults. */
  configured: boolean;
  has_identity_secret: boolean;
  identity_secret_rotated_at: string | null;
  updated_at: string | null;
  updated_by: Actor | null;
};

/** The answer of a rotation: the configuration, and the new secret, shown this once. */
export type WidgetIdentitySecretAnswer = WidgetConfigView & { identity_secret: string };

function viewOf(doc: WidgetConfigDocument | null): Versioned<WidgetConfigView> {
  return {
    value: {
      ...settingsOf(doc),
      configured: doc !== null,
      has_identity_secret: (doc?.identity_secret_sealed ?? null) !== null,
      identity_secret_rotated_at: doc?.identity_secret_rotated_at ?? null,
      updated_at: doc?.updated_at ?? null,
      updated_by: doc?.updated_by ?? null,
    },
    version: versionOfRevision(doc?.revision ?? -1),
  };
}

/** The tenant's widget configuration with its version (ETag): the defaults (`configured: false`) before any change. */
export async function readWidgetConfig(deps: ReadModelDependencies, tenantId: string): Promise<Versioned<WidgetConfigView>> {
  return viewOf(await deps.readStore.collection<WidgetConfigDocument>(WIDGET_CONFIGS).get(tenantId));
}

/** 404 `workspace_not_found` unless the workspace is one of the tenant's. */
async function requireTenantWorkspace(deps: ReadModelDependencies, tenantId: string, workspaceId: string): Promise<void> {
  const workspace = await deps.readStore.collection<WorkspaceDocument>(WORKSPACES).get(workspaceId);
  if (!workspace || workspace.tenant_id !== tenantId) throw notFound('workspace_not_found', 'workspace_id: no such workspace in this organization');
}

/** The stream revision a write must find, when the client named the version it saw (412 otherwise). */
function expectedRevision(deps: WidgetConfigDependencies, tenantId: string, preconditions: WritePreconditions): Promise<number | undefined> {
  return revisionExpectedBy(deps, widgetConfigAggregate, widgetConfigStream(tenantId), 'widget configuration', preconditions);
}

/**
 * Changes the settings given, as an owner or admin; the others keep their value. 400 naming the
 * setting at fault (domain/widget-config); 404 `workspace_not_found` for a workspace that is not
 * the tenant's; 409 `identity_secret_missing` for verification without a secret; 412 when
 * If-Match names another version. The same settings again record nothing.
 */
export async function configureWidget(
  deps: WidgetConfigDependencies,
  principal: Principal,
  changes: Partial<WidgetSettings>,
  context: RequestContext,
  preconditions: WritePreconditions = {},
): Promise<Versioned<WidgetConfigView>> {
  const tenantId = principal.tenant_id;
  if (changes.workspace_id !== undefined && changes.workspace_id !== null) await requireTenantWorkspace(deps, tenantId, changes.workspace_id);
  const result = await handleCommand(
    deps,
    widgetConfigAggregate,
    widgetConfigStream(tenantId),
    { type: 'ConfigureWidget', data: { tenant_id: tenantId, changes } },
    actingContext(principal, context),
    { expectedRevision: await expectedRevision(deps, tenantId, preconditions) },
  );
  return readBackChange(deps, result, 'the widget configuration', () => readWidgetConfig(deps, tenantId));
}

/** A secret the platform makes: 32 random bytes, base64url, with a prefix that says what it is. */
const newIdentitySecret = (secrets: Pick<Secrets, 'randomToken'>): string => `wsec_${secrets.randomToken(32)}`;

/**
 * Makes a new identity secret (the host's backend signs its user ids with it) as an owner or
 * admin, and answers it this once. The previous secret stops at once: visitors signed with it
 * are refused (401 `invalid_identity`) until the host signs with the new one. 412 when If-Match
 * names another version.
 */
export async function rotateWidgetIdentitySecret(
  deps: WidgetConfigDependencies,
  principal: Principal,
  context: RequestContext,
  preconditions: WritePreconditions = {},
): Promise<Versioned<WidgetIdentitySecretAnswer>> {
  const tenantId = principal.tenant_id;
  const secret = newIdentitySecret(deps.secrets);
  const result = await handleCommand(
    deps,
    widgetConfigAggregate,
    widgetConfigStream(tenantId),
    { type: 'RotateWidgetIdentitySecret', data: { tenant_id: tenantId, secret_sealed: deps.secrets.seal(secret) } },
    actingContext(principal, context),
    { expectedRevision: await expectedRevision(deps, tenantId, preconditions) },
  );
  // The new secret is shown only in this answer: it is given even from a read model behind the rotation.
  const read = await readBackChange(deps, result, 'the new identity secret', () => readWidgetConfig(deps, tenantId), { evenIfBehind: true });
  return { ...read, value: { ...read.value, identity_secret: secret } };
}
