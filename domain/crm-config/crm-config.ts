// The CRM connector configuration of a tenant (spec 4.8): which CRM the leads the assistant
// collects go to (the widget's leads: domain/lead), its address, the credential
// the platform uses there, and how a lead's fields map onto the CRM's fields. One stream per
// tenant, `crmConfig-<tenant id>`.
//
// The credential only ever enters an event sealed, and is never shown again: readers learn
// whether there is one. As with the handoff webhook, the application checks whether the
// platform may call the URL at all; this checks its form, the kind and the mapping.

import * as t from 'io-ts';
import { type Either, left, right } from 'fp-ts/Either';
import type { Decider } from '../shared/decider';
import { type DomainError, invalid } from '../shared/errors';
import { declareEvent, eventGroup, type GroupEvent } from '../shared/events';
import { toStreamName } from '../shared/stream-names';
import { endpointUrlProblem } from '../shared/endpoint-url';

/** The CRMs the platform sends leads to; `webhook` is any endpoint that takes a lead as signed JSON. */
export const CRM_KINDS = ['hubspot', 'salesforce', 'pipedrive', 'webhook'] as const;
export const CrmKind = t.keyof({ hubspot: null, salesforce: null, pipedrive: null, webhook: null }, 'CrmKind');
export type CrmKind = t.TypeOf<typeof CrmKind>;

/** The fields of a lead (what the assistant or the widget's form collects), the keys of a field mapping. */
export const LEAD_FIELDS = ['name', 'first_name', 'last_name', 'email', 'phone', 'company', 'message', 'source', 'page_url', 'conversation_id', 'verified_user_id'] as const;
export type LeadField = (typeof LEAD_FIELDS)[number];

/** Lead field -> the CRM's field name. */
export const FieldMapping = t.record(t.string, t.string);
export type FieldMapping = t.TypeOf<typeof FieldMapping>;

/** What the configuration says of its credential after this change. */
export const CredentialChange = t.keyof({ kept: null, given: null, removed: null, none: null });

export const CrmConfigured = declareEvent(
  'CrmConfigured',
  t.type({
    tenant_id: t.string,
    kind: CrmKind,
    url: t.string,
    enabled: t.boolean,
    /** The credential (API key, token), sealed; null when there is none. */
    credential_sealed: t.union([t.string, t.null]),
    credential_change: CredentialChange,
    field_mapping: FieldMapping,
    configured_at: t.string,
  }),
);

export const crmConfigEvents = eventGroup('crmConfig', [CrmConfigured]);
export type CrmConfigEvent = GroupEvent<typeof crmConfigEvents>;

/** The credential after a change: set to a sealed one, removed, or kept as it is. */
export type CredentialChoice = { kind: 'given'; sealed: string } | { kind: 'remove' } | { kind: 'keep' };

/** `enabled` and `field_mapping` null keep what is configured (on, and no mapping, for a first configuration). */
export type CrmConfigCommand = {
  type: 'ConfigureCrm';
  data: { tenant_id: string; kind: CrmKind; url: string; enabled: boolean | null; credential: CredentialChoice; field_mapping: FieldMapping | null };
};

export type CrmConfigState =
  | { status: 'absent' }
  | { status: 'configured'; tenant_id: string; kind: CrmKind; url: string; enabled: boolean; credential_sealed: string | null; field_mapping: FieldMapping; configured_at: string };

export const crmConfigStream = (tenantId: string): string => toStreamName(crmConfigEvents.category, tenantId);

export const MAX_CREDENTIAL_LENGTH = 4096;
/** A CRM's field name: HubSpot's `firstname`, Salesforce's `LastName` or `Score__c`, Pipedrive's 40-hex-digit keys. */
const CRM_FIELD = /^[A-Za-z0-9_][A-Za-z0-9_.-]{0,99}$/;
const CREDENTIAL_CHARACTERS = /^[\x21-\x7e]+$/;

/** Why a credential given by a person is refused, or null: 1 to 4096 printable ASCII characters, no spaces. */
export function credentialProblem(credential: string, field = 'credential'): DomainError | null {
  if (credential.length === 0 || credential.length > MAX_CREDENTIAL_LENGTH) return invalid('invalid_credential', `${field}: expected 1 to ${MAX_CREDENTIAL_LENGTH} characters (null removes it)`, field);
  if (!CREDENTIAL_CHARACTERS.test(credential)) return invalid('invalid_credential', `${field}: expected printable ASCII characters without spaces`, field);
  return null;
}

/** Why a field mapping is refused, naming the entry at fault (`field_mapping.<lead field>`), or null. */
export function fieldMappingProblem(mapping: FieldMapping): DomainError | null {
  const seen = new Map<string, string>();
  for (const [leadField, crmField] of Object.entries(mapping)) {
    const field = `field_mapping.${leadField}`;
    if (!(LEAD_FIELDS as readonly string[]).includes(leadField)) return invalid('invalid_field_mapping', `${field}: ${leadField} is not a lead field (one of ${LEAD_FIELDS.join(', ')})`, field);
    if (!CRM_FIELD.test(crmField)) return invalid('invalid_field_mapping', `${field}: expected a CRM field name of letters, digits, _ . and - (at most 100)`, field);
    const earlier = seen.get(crmField);
    if (earlier) return invalid('invalid_field_mapping', `${field}: ${crmField} is already the field of ${earlier}`, field);
    seen.set(crmField, leadField);
  }
  return null;
}

const sameMapping = (a: FieldMapping, b: FieldMapping): boolean => {
  const keys = Object.keys(a);
  return keys.length === Object.keys(b).length && keys.every((key) => a[key] === b[key]);
};

export const crmConfigDecider: Decider<CrmConfigCommand, CrmConfigEvent, CrmConfigState> = {
  initialState: () => ({ status: 'absent' }),
  evolve(_state, event) {
    switch (event.type) {
      case 'CrmConfigured': {
        const { tenant_id, kind, url, enabled, credential_sealed, field_mapping, configured_at } = event.data;
        return { status: 'configured', tenant_id, kind, url, enabled, credential_sealed, field_mapping, configured_at };
      }
    }
  },
  decide(command, state, { now }): Either<DomainError, CrmConfigEvent[]> {
    switch (command.type) {
      case 'ConfigureCrm': {
        const { tenant_id, kind, url, credential } = command.data;
        const current = state.status === 'configured' ? state : null;
        const enabled = command.data.enabled ?? current?.enabled ?? true;
        const field_mapping = command.data.field_mapping ?? current?.field_mapping ?? {};
        const problem = endpointUrlProblem(url) ?? fieldMappingProblem(field_mapping);
        if (problem) return left(problem);
        const held = current?.credential_sealed ?? null;
        const next =
          credential.kind === 'given'
            ? { sealed: credential.sealed, change: 'given' as const }
            : credential.kind === 'remove'
              ? { sealed: null, change: held === null ? ('none' as const) : ('removed' as const) }
              : { sealed: held, change: held === null ? ('none' as const) : ('kept' as const) };
        const unchanged = current && credential.kind !== 'given' && next.sealed === held && current.kind === kind && current.url === url && current.enabled === enabled && sameMapping(current.field_mapping, field_mapping);
        if (unchanged) return right([]);
        return right([
          {
            type: 'CrmConfigured',
            data: { tenant_id, kind, url, enabled, credential_sealed: next.sealed, credential_change: next.change, field_mapping, configured_at: now.toISOString() },
          },
        ]);
      }
    }
  },
};
