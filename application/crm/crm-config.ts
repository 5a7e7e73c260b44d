// The CRM connector configuration (spec 4.8, `GET, POST /api/v1/tenant/crm`): an owner or
// admin sets which CRM the leads go to, its address, the credential, and the field mapping.
// The plan must include crm. The credential is sealed before it enters an event and never
// answered: a read says whether there is one. The lead CRM delivery saga
// (application/lead/lead-crm-delivery.ts) reads `enabledCrmConfig` for the address and the
// credential in clear.

import {
  type CredentialChoice,
  type CrmConfigCommand,
  type CrmConfigEvent,
  type CrmConfigState,
  type CrmKind,
  type FieldMapping,
  credentialProblem,
  crmConfigDecider,
  crmConfigEvents,
  crmConfigStream,
} from '../../domain/crm-config/crm-config';
import { CRM_CONFIGS, type CrmConfigDocument } from '../../projections/crm-configs';
import { type Aggregate, type CommandDependencies, handleCommand, loadAggregate, revisionExpectedBy } from '../command-handling/handle-command';
import { requireFeature } from '../entitlement/entitlements';
import { type OutboundDependencies, requireCallableEndpoint } from '../outbound/callable-endpoint';
import type { Actor } from '../ports/event-store';
import type { Secrets } from '../ports/identity';
import { type Principal, actingContext } from '../session/sessions';
import { type ReadModelDependencies, type ReadYourWritesDependencies, readBackChange } from '../shared/read-models';
import type { RequestContext } from '../shared/request-context';
import { type Versioned, type WritePreconditions, versionOfRevision } from '../shared/versions';

export const crmConfigAggregate: Aggregate<CrmConfigCommand, CrmConfigEvent, CrmConfigState> = { decider: crmConfigDecider, events: crmConfigEvents };

export interface CrmConfigDependencies extends CommandDependencies, ReadModelDependencies, ReadYourWritesDependencies, OutboundDependencies {
  secrets: Secrets;
}

/** The configuration as its admins read it: never the credential. */
export interface CrmConfigView {
  configured: boolean;
  kind: CrmKind | null;
  url: string | null;
  enabled: boolean;
  has_credential: boolean;
  field_mapping: FieldMapping;
  updated_at: string | null;
  updated_by: Actor | null;
}

const NOT_CONFIGURED: CrmConfigView = { configured: false, kind: null, url: null, enabled: false, has_credential: false, field_mapping: {}, updated_at: null, updated_by: null };

function viewOf(doc: CrmConfigDocument | null): Versioned<CrmConfigView> {
  if (!doc) return { value: NOT_CONFIGURED, version: versionOfRevision(-1) };
  const { kind, url, enabled, has_credential, field_mapping, updated_at, updated_by } = doc;
  return { value: { configured: true, kind, url, enabled, has_credential, field_mapping, updated_at, updated_by }, version: versionOfRevision(doc.revision) };
}

/** The tenant's CRM configuration with its version (ETag); `configured: false` before any. */
export async function readCrmConfig(deps: ReadModelDependencies, tenantId: string): Promise<Versioned<CrmConfigView>> {
  return viewOf(await deps.readStore.collection<CrmConfigDocument>(CRM_CONFIGS).get(tenantId));
}

export interface CrmConfigInput {
  kind: CrmKind;
  url: string;
  /** Omitted: keep the current one; null: remove it. */
  credential?: string | null;
  /** Omitted: keep the current one ({} for a first configuration). */
  field_mapping?: FieldMapping;
  /** Omitted: keep (on for a first configuration). */
  enabled?: boolean;
}

/**
 * Sets the configuration as an owner or admin: 403 `feature_not_in_plan` without crm in the
 * plan; 400 naming `url`, `credential` or the `field_mapping` entry at fault; 412 when
 * If-Match names another version. The same configuration again records nothing.
 */
export async function configureCrm(
  deps: CrmConfigDependencies,
  principal: Principal,
  input: CrmConfigInput,
  context: RequestContext,
  preconditions: WritePreconditions = {},
): Promise<Versioned<CrmConfigView>> {
  const tenantId = principal.tenant_id;
  await requireFeature(deps, tenantId, 'crm');
  await requireCallableEndpoint(deps, input.url, 'url');
  let credential: CredentialChoice = { kind: 'keep' };
  if (input.credential === null) credential = { kind: 'remove' };
  else if (input.credential !== undefined) {
    const problem = credentialProblem(input.credential);
    if (problem) throw problem;
    credential = { kind: 'given', sealed: deps.secrets.seal(input.credential) };
  }
  const stream = crmConfigStream(tenantId);
  const expectedRevision = await revisionExpectedBy(deps, crmConfigAggregate, stream, 'CRM configuration', preconditions);
  const result = await handleCommand(
    deps,
    crmConfigAggregate,
    stream,
    { type: 'ConfigureCrm', data: { tenant_id: tenantId, kind: input.kind, url: input.url, enabled: input.enabled ?? null, credential, field_mapping: input.field_mapping ?? null } },
    actingContext(principal, context),
    { expectedRevision },
  );
  return readBackChange(deps, result, 'the CRM configuration', () => readCrmConfig(deps, tenantId));
}

/** What sending a lead needs, from the stream (always current), the credential in clear; null when the CRM is not configured or off. */
export async function enabledCrmConfig(
  deps: Pick<CommandDependencies, 'eventStore'> & { secrets: Secrets },
  tenantId: string,
): Promise<{ kind: CrmKind; url: string; credential: string | null; field_mapping: FieldMapping } | null> {
  const { state } = await loadAggregate(deps, crmConfigAggregate, crmConfigStream(tenantId));
  if (state.status !== 'configured' || !state.enabled) return null;
  return { kind: state.kind, url: state.url, credential: state.credential_sealed === null ? null : deps.secrets.open(state.credential_sealed), field_mapping: state.field_mapping };
}
