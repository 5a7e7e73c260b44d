// What sending a lead to each kind of CRM is, on the wire (docs/widget.md, "Leads and the
// CRM"): pure functions from the lead and the tenant's CRM configuration to one HTTP request,
// and from the CRM's answer to the id it gave the record. The delivery saga sends them through
// the outbound guard (lead-crm-delivery.ts).
//
// The configured `url` is the CRM's API root; each kind's documented create call is appended:
//   hubspot     POST <url>/crm/v3/objects/contacts          Authorization: Bearer <private app token>
//               {"properties": {"email": ..., "firstname": ..., ...}}; the answer's `id`.
//   salesforce  POST <url>/services/data/v60.0/sobjects/Lead  Authorization: Bearer <access token>
//               {"LastName": ..., "Company": ..., "Email": ..., ...}; the answer's `id`. LastName and
//               Company are required by Salesforce: the name (or the email) and "[not provided]"
//               stand in when the visitor gave none.
//   pipedrive   POST <url>/v1/persons                        x-api-token: <API token>
//               {"name": ..., "email": [{"value", "primary", "label"}], "phone": [...]}; `data.id`.
//   webhook     POST <url> exactly, the lead as JSON, signed with the credential as the handoff
//               webhook is (x-svc-signature over `v1:<timestamp>:<body>`); unsigned without one.
// A field mapping (lead field -> CRM field) renames a field or adds one the kind does not send by
// default (HubSpot's custom properties, Salesforce's `Score__c`, Pipedrive's 40-hex-digit keys).

import type { CrmKind, FieldMapping, LeadField } from '../../domain/crm-config/crm-config';
import { type LeadCapturedData, verifiedUserIdOfLead } from '../../domain/lead/lead';

/** A lead with every field a CRM may take, null where the visitor gave none. */
export type LeadRecord = Record<LeadField, string | null>;

/** The CRM configuration a delivery uses (application/crm/crm-config.ts `enabledCrmConfig`). */
export interface CrmTarget {
  kind: CrmKind;
  url: string;
  credential: string | null;
  field_mapping: FieldMapping;
}

/** The body of a `webhook` delivery. */
export interface LeadWebhookPayload {
  type: 'lead.captured';
  /** The lead's id: the same on every attempt (also `x-svc-delivery-id`), receivers drop repeats by it. */
  delivery_id: string;
  tenant_id: string;
  captured_at: string;
  /** Every lead field, by its lead field name. */
  lead: LeadRecord & { id: string; visitor: { kind: string; id: string } };
  /** The given fields under their mapped names (a field without a mapping keeps its own name). */
  fields: Record<string, string>;
}

export type CrmRequest =
  | { kind: 'signed'; url: string; secret: string; body: string }
  | { kind: 'plain'; method: 'POST'; url: string; headers: Record<string, string>; body: string };

export const SALESFORCE_API_VERSION = 'v60.0';
/** What Salesforce's required Company gets when the visitor named none. */
export const NO_COMPANY = '[not provided]';

/** The lead fields each kind sends by default, under the CRM's own names; the tenant's mapping overrides and extends them. */
export const DEFAULT_FIELD_NAMES: Record<Exclude<CrmKind, 'webhook' | 'pipedrive'>, Partial<Record<LeadField, string>>> = {
  hubspot: { email: 'email', first_name: 'firstname', last_name: 'lastname', phone: 'phone', company: 'company' },
  salesforce: { email: 'Email', first_name: 'FirstName', last_name: 'LastName', phone: 'Phone', company: 'Company', message: 'Description' },
};

/** Splits a name at its last space: "Ada King Lovelace" is Ada King and Lovelace; one word is a first name. */
export function nameParts(name: string | null): { first_name: string | null; last_name: string | null } {
  if (name === null) return { first_name: null, last_name: null };
  const words = name.trim().split(/\s+/);
  if (words.length < 2) return { first_name: words[0] ?? null, last_name: null };
  return { first_name: words.slice(0, -1).join(' '), last_name: words[words.length - 1]! };
}

export function leadRecordOf(lead: LeadCapturedData): LeadRecord {
  const { first_name, last_name } = nameParts(lead.name);
  return {
    name: lead.name,
    first_name,
    last_name,
    email: lead.email,
    phone: lead.phone,
    company: lead.company,
    message: lead.message,
    source: lead.source,
    page_url: lead.page_url,
    conversation_id: lead.conversation_id,
    // The host site's own id of a visitor it vouched for: a CRM maps it to its external id.
    verified_user_id: verifiedUserIdOfLead(lead),
  };
}

/** The given fields under the names `defaults` and `mapping` (which wins) give them; a field with neither is left out unless `keepOthers`. */
function mapped(record: LeadRecord, defaults: Partial<Record<LeadField, string>>, mapping: FieldMapping, keepOthers: boolean): Record<string, string> {
  const fields: Record<string, string> = {};
  for (const [field, value] of Object.entries(record) as Array<[LeadField, string | null]>) {
    if (value === null) continue;
    const name = mapping[field] ?? defaults[field] ?? (keepOthers ? field : undefined);
    if (name !== undefined) fields[name] = value;
  }
  return fields;
}

const endpoint = (root: string, path: string): string => `${root.replace(/\/+$/, '')}${path}`;

/** The request that sends `lead` to `target`; a kind that needs a credential and has none is an Error saying so. */
export function crmRequestOf(target: CrmTarget, lead: LeadCapturedData): CrmRequest {
  const record = leadRecordOf(lead);
  const json = { 'content-type': 'application/json', accept: 'application/json' };
  if (target.kind === 'webhook') {
    const payload: LeadWebhookPayload = {
      type: 'lead.captured',
      delivery_id: lead.lead_id,
      tenant_id: lead.tenant_id,
      captured_at: lead.captured_at,
      lead: { id: lead.lead_id, ...record, visitor: lead.visitor },
      fields: mapped(record, {}, target.field_mapping, true),
    };
    const body = JSON.stringify(payload);
    return target.credential === null ? { kind: 'plain', method: 'POST', url: target.url, headers: json, body } : { kind: 'signed', url: target.url, secret: target.credential, body };
  }
  if (target.credential === null) throw new Error(`the ${target.kind} CRM needs a credential (an API token): an admin sets one with POST /api/v1/tenant/crm`);
  switch (target.kind) {
    case 'hubspot': {
      const properties = mapped(record, DEFAULT_FIELD_NAMES.hubspot, target.field_mapping, false);
      return { kind: 'plain', method: 'POST', url: endpoint(target.url, '/crm/v3/objects/contacts'), headers: { ...json, authorization: `Bearer ${target.credential}` }, body: JSON.stringify({ properties }) };
    }
    case 'salesforce': {
      const fields = mapped(record, DEFAULT_FIELD_NAMES.salesforce, target.field_mapping, false);
      const lastName = target.field_mapping.last_name ?? 'LastName';
      const company = target.field_mapping.company ?? 'Company';
      fields[lastName] ??= record.last_name ?? record.name ?? record.email ?? record.phone ?? '';
      fields[company] ??= NO_COMPANY;
      return {
        kind: 'plain',
        method: 'POST',
        url: endpoint(target.url, `/services/data/${SALESFORCE_API_VERSION}/sobjects/Lead`),
        headers: { ...json, authorization: `Bearer ${target.credential}` },
        body: JSON.stringify(fields),
      };
    }
    case 'pipedrive': {
      // Name, email and phone are the person's own fields (email and phone as lists); the
      // mapping adds the rest under the account's custom field keys.
      const custom = mapped({ ...record, name: null, email: null, phone: null }, {}, target.field_mapping, false);
      const person: Record<string, unknown> = { ...custom, name: record.name ?? record.email ?? record.phone };
      if (record.email !== null) person.email = [{ value: record.email, primary: true, label: 'work' }];
      if (record.phone !== null) person.phone = [{ value: record.phone, primary: true, label: 'work' }];
      return { kind: 'plain', method: 'POST', url: endpoint(target.url, '/v1/persons'), headers: { ...json, 'x-api-token': target.credential }, body: JSON.stringify(person) };
    }
  }
}

/** The id the CRM gave the record, from its JSON answer (HubSpot's and Salesforce's `id`, Pipedrive's `data.id`), or null. */
export function crmRecordIdOf(kind: CrmKind, body: Buffer): string | null {
  let answer: unknown;
  try {
    answer = JSON.parse(body.toString('utf8'));
  } catch {
    return null;
  }
  const container = kind === 'pipedrive' ? (answer as { data?: unknown } | null)?.data : answer;
  const id = (container as { id?: unknown } | null)?.id;
  if (typeof id === 'string' && id.length > 0 && id.length <= 200) return id;
  if (typeof id === 'number' && Number.isFinite(id)) return String(id);
  return null;
}

/** A short, one-line excerpt of a CRM's error answer, for the admins reading why a delivery failed. */
export function answerExcerpt(body: Buffer): string {
  const text = body.toString('utf8', 0, Math.min(body.length, 1000)).replace(/\s+/g, ' ').trim();
  return text.length > 200 ? `${text.slice(0, 200)}…` : text;
}
