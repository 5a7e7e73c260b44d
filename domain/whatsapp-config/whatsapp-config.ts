// The WhatsApp channel's configuration of a tenant (spec 4.14, 4.16): which WhatsApp Business
// number is the tenant's (Meta's `phone_number_id`, unique across tenants through a
// reservation the application claims), how Meta's webhook is checked (the verify token of the
// subscription handshake, the app secret that signs every delivery), how replies are sent (the
// access token of the Cloud API, the Graph API version), whether the channel is on, and which
// workspace's knowledge answers the messages. One stream per tenant, `whatsappConfig-<tenant id>`;
// the super admin sets it.
//
// Secrets only ever enter an event sealed (app secret, access token) or as a keyed digest
// (the verify token: it is only ever compared, never used), and are never shown again:
// readers learn whether there is one. Every change records the whole configuration, and the
// names of the fields it changed (a secret's name, never its value).

import * as t from 'io-ts';
import { type Either, left, right } from 'fp-ts/Either';
import type { Decider } from '../shared/decider';
import { type DomainError, invalid } from '../shared/errors';
import { declareEvent, eventGroup, type GroupEvent } from '../shared/events';
import { toStreamName } from '../shared/stream-names';

/** The Graph API version a configuration uses until the super admin names another. */
export const DEFAULT_GRAPH_API_VERSION = 'v23.0';

/** The uniqueness scope of a phone number id (application/reservation): one tenant per number. */
export const PHONE_NUMBER_ID_SCOPE = 'whatsapp_phone_number_id';

export const WhatsAppConfigured = declareEvent(
  'WhatsAppConfigured',
  t.type({
    tenant_id: t.string,
    /** Meta's id of the business phone number (digits); the webhook names it in every change. */
    phone_number_id: t.string,
    /** The number as people see it (`+1 555 0100`); shown to admins only. */
    display_phone_number: t.string,
    /** A keyed digest of the verify token (Meta's subscription handshake compares it, nothing uses it). */
    verify_token_digest: t.string,
    /** The Meta app's secret (X-Hub-Signature-256 is its HMAC), sealed. */
    app_secret_sealed: t.string,
    /** The Cloud API access token, sealed; null: replies stay in the embedded outbox. */
    access_token_sealed: t.union([t.string, t.null]),
    enabled: t.boolean,
    graph_api_version: t.string,
    /** The workspace whose knowledge answers; null: the tenant's default workspace. */
    workspace_id: t.union([t.string, t.null]),
    /** The fields this change set (names only). */
    changed: t.array(t.string),
    configured_at: t.string,
  }),
);

export const whatsappConfigEvents = eventGroup('whatsappConfig', [WhatsAppConfigured]);
export type WhatsAppConfigEvent = GroupEvent<typeof whatsappConfigEvents>;

/** The access token after a change: a sealed new one, removed (replies go to the outbox), or kept. */
export type AccessTokenChoice = { kind: 'given'; sealed: string } | { kind: 'remove' } | { kind: 'keep' };

/** What a change sets; every field left out keeps what is configured. Secrets come sealed or digested. */
export interface WhatsAppConfigChanges {
  phone_number_id?: string;
  display_phone_number?: string;
  verify_token_digest?: string;
  app_secret_sealed?: string;
  access_token: AccessTokenChoice;
  enabled?: boolean;
  graph_api_version?: string;
  workspace_id?: string | null;
}

export type WhatsAppConfigCommand = { type: 'ConfigureWhatsApp'; data: { tenant_id: string; changes: WhatsAppConfigChanges } };

export interface WhatsAppConfiguration {
  tenant_id: string;
  phone_number_id: string;
  display_phone_number: string;
  verify_token_digest: string;
  app_secret_sealed: string;
  access_token_sealed: string | null;
  enabled: boolean;
  graph_api_version: string;
  workspace_id: string | null;
  configured_at: string;
}

export type WhatsAppConfigState = { status: 'absent' } | ({ status: 'configured' } & WhatsAppConfiguration);

export const whatsappConfigStream = (tenantId: string): string => toStreamName(whatsappConfigEvents.category, tenantId);

const PHONE_NUMBER_ID = /^[0-9]{1,32}$/;
const DISPLAY_PHONE_NUMBER = /^\+?[0-9][0-9 ().-]{0,39}$/;
const GRAPH_API_VERSION = /^v[0-9]{1,3}\.[0-9]{1,2}$/;
const SECRET_CHARACTERS = /^[\x21-\x7e]+$/;

/** The lengths each secret may have: Meta's app secrets are 32 hex digits, access tokens a few hundred characters. */
export const SECRET_LENGTHS = { verify_token: { min: 8, max: 200 }, app_secret: { min: 16, max: 200 }, access_token: { min: 16, max: 4096 } } as const;
export type SecretField = keyof typeof SECRET_LENGTHS;

const problem = (field: string, message: string): DomainError => invalid('invalid_whatsapp_config', `${field}: ${message}`, field);

/** Why a secret given by the super admin is refused, or null: printable ASCII without spaces, of its length. */
export function secretProblem(field: SecretField, value: string): DomainError | null {
  const { min, max } = SECRET_LENGTHS[field];
  if (value.length < min || value.length > max) return problem(field, `expected ${min} to ${max} characters`);
  if (!SECRET_CHARACTERS.test(value)) return problem(field, 'expected printable ASCII characters without spaces');
  return null;
}

/** Why the plain fields of a change are refused (the first, naming it), or null. */
export function changesProblem(changes: Omit<WhatsAppConfigChanges, 'access_token'>): DomainError | null {
  if (changes.phone_number_id !== undefined && !PHONE_NUMBER_ID.test(changes.phone_number_id)) {
    return problem('phone_number_id', "expected Meta's phone number id: 1 to 32 digits (WhatsApp Manager, API setup)");
  }
  if (changes.display_phone_number !== undefined && changes.display_phone_number !== '' && !DISPLAY_PHONE_NUMBER.test(changes.display_phone_number)) {
    return problem('display_phone_number', 'expected a phone number such as +1 555 0100 (digits, spaces, + ( ) . -), at most 40 characters, or empty');
  }
  if (changes.graph_api_version !== undefined && !GRAPH_API_VERSION.test(changes.graph_api_version)) {
    return problem('graph_api_version', `expected a Graph API version such as ${DEFAULT_GRAPH_API_VERSION}`);
  }
  if (changes.workspace_id !== undefined && changes.workspace_id !== null && (changes.workspace_id.length === 0 || changes.workspace_id.length > 200)) {
    return problem('workspace_id', 'expected a workspace id, or null for the default workspace');
  }
  return null;
}

/** The fields a first configuration must give: the number, and what checks Meta's webhook. */
export const REQUIRED_FIRST = ['phone_number_id', 'verify_token', 'app_secret'] as const;

export const whatsappConfigDecider: Decider<WhatsAppConfigCommand, WhatsAppConfigEvent, WhatsAppConfigState> = {
  initialState: () => ({ status: 'absent' }),
  evolve(_state, event) {
    const { changed: _changed, ...configuration } = event.data;
    return { status: 'configured', ...configuration };
  },
  decide(command, state, { now }): Either<DomainError, WhatsAppConfigEvent[]> {
    const { tenant_id, changes } = command.data;
    const invalidChange = changesProblem(changes);
    if (invalidChange) return left(invalidChange);
    const current = state.status === 'configured' ? state : null;
    if (!current) {
      const given = { phone_number_id: changes.phone_number_id, verify_token: changes.verify_token_digest, app_secret: changes.app_secret_sealed };
      const missing = REQUIRED_FIRST.find((field) => given[field] === undefined);
      if (missing) return left(problem(missing, 'required for the first configuration of the number'));
    }
    const access_token_sealed =
      changes.access_token.kind === 'given' ? changes.access_token.sealed : changes.access_token.kind === 'remove' ? null : (current?.access_token_sealed ?? null);
    const next: WhatsAppConfiguration = {
      tenant_id,
      phone_number_id: changes.phone_number_id ?? current!.phone_number_id,
      display_phone_number: changes.display_phone_number ?? current?.display_phone_number ?? '',
      verify_token_digest: changes.verify_token_digest ?? current!.verify_token_digest,
      app_secret_sealed: changes.app_secret_sealed ?? current!.app_secret_sealed,
      access_token_sealed,
      enabled: changes.enabled ?? current?.enabled ?? true,
      graph_api_version: changes.graph_api_version ?? current?.graph_api_version ?? DEFAULT_GRAPH_API_VERSION,
      workspace_id: changes.workspace_id === undefined ? (current?.workspace_id ?? null) : changes.workspace_id,
      configured_at: now.toISOString(),
    };
    const changed: string[] = [];
    for (const field of ['phone_number_id', 'display_phone_number', 'enabled', 'graph_api_version', 'workspace_id'] as const) {
      if (!current || next[field] !== current[field]) changed.push(field);
    }
    if (!current || next.verify_token_digest !== current.verify_token_digest) changed.push('verify_token');
    // A sealed secret cannot be compared with the one held: one given counts as a change.
    if (changes.app_secret_sealed !== undefined) changed.push('app_secret');
    if (changes.access_token.kind === 'given' || (current && current.access_token_sealed !== null && access_token_sealed === null)) changed.push('access_token');
    if (changed.length === 0) return right([]);
    return right([{ type: 'WhatsAppConfigured', data: { ...next, changed } }]);
  },
};
