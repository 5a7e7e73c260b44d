// The handoff webhook configuration (spec 4.8, `GET, POST /api/v1/tenant/handoff`): an owner
// or admin sets where the platform posts a conversation a person takes over, and the secret
// those posts are signed with. The plan must include handoff. The secret is sealed before it
// enters an event and never answered again: a read says that there is one and shows its last
// four characters; a secret the platform makes (none given, or an empty one: rotation) is
// answered once, by the POST that made it.

import {
  type HandoffConfigCommand,
  type HandoffConfigEvent,
  type HandoffConfigState,
  type SecretChoice,
  type SecretSource,
  handoffConfigDecider,
  handoffConfigEvents,
  handoffConfigStream,
  secretHint,
  signingSecretProblem,
} from '../../domain/handoff-config/handoff-config';
import { HANDOFF_CONFIGS, type HandoffConfigDocument } from '../../projections/handoff-configs';
import { type Aggregate, type CommandDependencies, handleCommand, loadAggregate, revisionExpectedBy } from '../command-handling/handle-command';
import { requireFeature } from '../entitlement/entitlements';
import { type OutboundDependencies, requireCallableEndpoint } from '../outbound/callable-endpoint';
import type { Actor } from '../ports/event-store';
import type { Secrets } from '../ports/identity';
import { type Principal, actingContext } from '../session/sessions';
import { type ReadModelDependencies, type ReadYourWritesDependencies, readBackChange } from '../shared/read-models';
import type { RequestContext } from '../shared/request-context';
import { type Versioned, type WritePreconditions, versionOfRevision } from '../shared/versions';

export const handoffConfigAggregate: Aggregate<HandoffConfigCommand, HandoffConfigEvent, HandoffConfigState> = { decider: handoffConfigDecider, events: handoffConfigEvents };

export interface HandoffConfigDependencies extends CommandDependencies, ReadModelDependencies, ReadYourWritesDependencies, OutboundDependencies {
  secrets: Secrets;
}

/** The configuration as its admins read it: never the secret. */
export interface HandoffConfigView {
  configured: boolean;
  url: string | null;
  enabled: boolean;
  has_secret: boolean;
  /** The secret's last four characters. */
  secret_hint: string | null;
  /** Whether the secret was given by a person or made by the platform. */
  secret_source: Exclude<SecretSource, 'kept'> | null;
  updated_at: string | null;
  updated_by: Actor | null;
}

/** The answer of a POST: the configuration, and the secret the platform made in this request (shown this once). */
export type HandoffConfigAnswer = HandoffConfigView & { secret?: string };

const NOT_CONFIGURED: HandoffConfigView = { configured: false, url: null, enabled: false, has_secret: false, secret_hint: null, secret_source: null, updated_at: null, updated_by: null };

function viewOf(doc: HandoffConfigDocument | null): Versioned<HandoffConfigView> {
  if (!doc) return { value: NOT_CONFIGURED, version: versionOfRevision(-1) };
  return {
    value: {
      configured: true,
      url: doc.url,
      enabled: doc.enabled,
      has_secret: true,
      secret_hint: doc.secret_hint,
      secret_source: doc.secret_source === 'kept' ? null : doc.secret_source,
      updated_at: doc.updated_at,
      updated_by: doc.updated_by,
    },
    version: versionOfRevision(doc.revision),
  };
}

/** The tenant's handoff configuration with its version (ETag); `configured: false` before any. */
export async function readHandoffConfig(deps: ReadModelDependencies, tenantId: string): Promise<Versioned<HandoffConfigView>> {
  return viewOf(await deps.readStore.collection<HandoffConfigDocument>(HANDOFF_CONFIGS).get(tenantId));
}

export interface HandoffConfigInput {
  url: string;
  /** Omitted: keep the current secret (one is made when there is none); empty: make a new one. */
  secret?: string;
  /** Omitted: keep (on for a first configuration). */
  enabled?: boolean;
}

/** A secret the platform makes: 32 random bytes, base64url, with a prefix that says what it is. */
const newSigningSecret = (secrets: Secrets): string => `hsec_${secrets.randomToken(32)}`;

/**
 * Sets the configuration as an owner or admin: 403 `feature_not_in_plan` without handoff in
 * the plan; 400 naming `url` or `secret` for a refused one; 412 when If-Match names another
 * version. The same configuration again records nothing.
 */
export async function configureHandoff(
  deps: HandoffConfigDependencies,
  principal: Principal,
  input: HandoffConfigInput,
  context: RequestContext,
  preconditions: WritePreconditions = {},
): Promise<Versioned<HandoffConfigAnswer>> {
  const tenantId = principal.tenant_id;
  await requireFeature(deps, tenantId, 'handoff');
  await requireCallableEndpoint(deps, input.url, 'url');
  let made: string | null = null;
  let secret: SecretChoice;
  if (input.secret !== undefined && input.secret !== '') {
    const problem = signingSecretProblem(input.secret);
    if (problem) throw problem;
    secret = { kind: 'given', sealed: deps.secrets.seal(input.secret), hint: secretHint(input.secret) };
  } else {
    made = newSigningSecret(deps.secrets);
    const sealed = { sealed: deps.secrets.seal(made), hint: secretHint(made) };
    secret = input.secret === '' ? { kind: 'generate', ...sealed } : { kind: 'keep', otherwise: sealed };
  }
  const stream = handoffConfigStream(tenantId);
  const expectedRevision = await revisionExpectedBy(deps, handoffConfigAggregate, stream, 'handoff configuration', preconditions);
  const result = await handleCommand(
    deps,
    handoffConfigAggregate,
    stream,
    { type: 'ConfigureHandoff', data: { tenant_id: tenantId, url: input.url, enabled: input.enabled ?? null, secret } },
    actingContext(principal, context),
    { expectedRevision },
  );
  const generated = result.events.some((event) => event.data.secret_source === 'generated');
  const read = await readBackChange(deps, result, 'the handoff configuration', () => readHandoffConfig(deps, tenantId), { evenIfBehind: generated && made !== null });
  return { ...read, value: generated && made !== null ? { ...read.value, secret: made } : read.value };
}

/** The configuration a delivery uses, from its stream (always current), with the secret in clear; null when handoffs are off. */
export async function enabledHandoffConfig(deps: Pick<CommandDependencies, 'eventStore'> & { secrets: Secrets }, tenantId: string): Promise<{ url: string; secret: string } | null> {
  const { state } = await loadAggregate(deps, handoffConfigAggregate, handoffConfigStream(tenantId));
  if (state.status !== 'configured' || !state.enabled) return null;
  return { url: state.url, secret: deps.secrets.open(state.secret_sealed) };
}
