// The lead aggregate: one person who left their contact details (the widget's lead form, spec
// 4.4), and its delivery to the tenant's CRM. Stream `lead-<id>`.
//
// A lead is captured once, with its fields checked one by one (400 naming the field): a name,
// an email or a phone (at least one of the two), a company, a message, the page it was left on
// and the visitor's conversation it came from. Empty fields are absent. Then, when the tenant's
// CRM is configured, its delivery: requested, every attempt claimed before the call, its
// outcome (sent, or failed with the next attempt's time), and the give-up after the last
// attempt, all events of this stream (the pattern of domain/handoff), so the stream alone says
// where the lead is. A lead captured while no CRM is configured stays unsent.
//
// The organization may delete a lead (it is spam, say): deleted, it is not found by anything,
// and a delivery not yet settled ends there (abandoned, "the lead was deleted"): a call in
// flight may still reach the CRM, its outcome is not recorded. The event log keeps what was
// captured. For a person who asks to be forgotten it erases the lead (docs/personal-data.md):
// the captured fields are personal data of the subject `lead:<id>`, stored sealed under its
// key, and `LeadErased` deletes that key, so they read as ERASED_PERSONAL_DATA from then on;
// the lead is deleted too, if it was not already.

import * as t from 'io-ts';
import { type Either, left, right } from 'fp-ts/Either';
import { CrmKind } from '../crm-config/crm-config';
import type { Decider } from '../shared/decider';
import { type DomainError, conflict, invalid, notFound } from '../shared/errors';
import { type EventOf, declareEvent, eventGroup, type GroupEvent } from '../shared/events';
import { toStreamName } from '../shared/stream-names';
import { checkText } from '../shared/text';
import { emailProblem, normalizeEmail } from '../user/user';

const Party = t.type({ kind: t.keyof({ user: null, end_user: null, admin: null, system: null }), id: t.string });
const Nullable = t.union([t.string, t.null]);

/** Where a lead came from: the widget's form (the assistant may collect leads in a later issue). */
export const LeadSource = t.keyof({ widget: null });
export type LeadSource = t.TypeOf<typeof LeadSource>;

export const LeadCaptured = declareEvent(
  'LeadCaptured',
  t.intersection([
    t.type({
      lead_id: t.string,
      tenant_id: t.string,
      name: Nullable,
      /** Lower case. */
      email: Nullable,
      phone: Nullable,
      company: Nullable,
      message: Nullable,
      /** The page the visitor left it on. */
      page_url: Nullable,
      /** The visitor's widget conversation it came from. */
      conversation_id: Nullable,
      source: LeadSource,
      /** Who left it: the widget's visitor. */
      visitor: Party,
      captured_at: t.string,
    }),
    // The host site's user id of a visitor it vouched for (their party id is a digest of it).
    t.partial({ verified_user_id: t.string }),
  ]),
);
/** A CRM is configured: the lead is to be sent there (the kind and address at the request; every attempt uses the configuration of its time). */
export const LeadCrmDeliveryRequested = declareEvent('LeadCrmDeliveryRequested', t.type({ lead_id: t.string, tenant_id: t.string, kind: CrmKind, url: t.string, requested_at: t.string }));
/** An attempt is claimed before the CRM is called: of two deliveries racing, one calls. */
export const LeadCrmAttemptStarted = declareEvent('LeadCrmAttemptStarted', t.type({ lead_id: t.string, attempt: t.number, kind: CrmKind, url: t.string, started_at: t.string }));
export const LeadSentToCrm = declareEvent(
  'LeadSentToCrm',
  t.type({
    lead_id: t.string,
    attempt: t.number,
    status_code: t.number,
    /** The id the CRM gave the contact or lead, when its answer names one. */
    crm_record_id: Nullable,
    sent_at: t.string,
  }),
);
/** An attempt failed (no answer, or not 2xx); the next one is due at `next_attempt_at`. */
export const LeadCrmDeliveryFailed = declareEvent(
  'LeadCrmDeliveryFailed',
  t.type({ lead_id: t.string, attempt: t.number, status_code: t.union([t.number, t.null]), error: t.string, failed_at: t.string, next_attempt_at: t.string }),
);
/**
 * No more attempts: the last one failed (`reason: 'attempts_exhausted'`), or the delivery had
 * no point any more (`'withdrawn'`: the CRM turned off or its configuration unusable meanwhile,
 * the lead deleted or erased). Recorded without a reason before the reason was.
 */
export const LeadCrmDeliveryAbandoned = declareEvent(
  'LeadCrmDeliveryAbandoned',
  t.intersection([
    t.type({ lead_id: t.string, attempts: t.number, status_code: t.union([t.number, t.null]), error: t.string, abandoned_at: t.string }),
    t.partial({ reason: t.keyof({ attempts_exhausted: null, withdrawn: null }) }),
  ]),
);
export type CrmDeliveryAbandonReason = 'attempts_exhausted' | 'withdrawn';

/** The organization deleted the lead: it leaves every list, and nothing more happens to it. */
export const LeadDeleted = declareEvent('LeadDeleted', t.type({ lead_id: t.string, tenant_id: t.string, deleted_by: Party, deleted_at: t.string }));
/** The organization erased the lead: its key is deleted, what was captured can no longer be read. */
export const LeadErased = declareEvent('LeadErased', t.type({ lead_id: t.string, tenant_id: t.string, erased_by: Party, erased_at: t.string }));

/** The data subject of what a lead captured. */
export const leadSubject = (leadId: string): string => `lead:${leadId}`;

export const leadEvents = eventGroup('lead', [LeadCaptured, LeadCrmDeliveryRequested, LeadCrmAttemptStarted, LeadSentToCrm, LeadCrmDeliveryFailed, LeadCrmDeliveryAbandoned, LeadDeleted, LeadErased], {
  subject: (data) => leadSubject(String(data.lead_id)),
  fields: { LeadCaptured: ['name', 'email', 'phone', 'company', 'message', 'page_url', 'verified_user_id'] },
  erasedBy: 'LeadErased',
});
export type LeadEvent = GroupEvent<typeof leadEvents>;
export type LeadCapturedData = EventOf<typeof LeadCaptured>['data'];
export type LeadParty = t.TypeOf<typeof Party>;

/**
 * The host site's user id of the verified visitor who left the lead: its `verified_user_id`
 * (ERASED_PERSONAL_DATA once erased), or what a party id of old held (`verified:<user id>`);
 * null for an anonymous visitor.
 */
export function verifiedUserIdOfLead(captured: Pick<LeadCapturedData, 'visitor' | 'verified_user_id'>): string | null {
  if (captured.verified_user_id !== undefined) return captured.verified_user_id;
  return captured.visitor.kind === 'end_user' && captured.visitor.id.startsWith('verified:') ? captured.visitor.id.slice('verified:'.length) : null;
}

/** The fields a visitor fills in; absent, null or empty (once trimmed) all mean "not given". */
export interface LeadFields {
  name?: string | null;
  email?: string | null;
  phone?: string | null;
  company?: string | null;
  message?: string | null;
  page_url?: string | null;
}

export type LeadCommand =
  | { type: 'CaptureLead'; data: { lead_id: string; tenant_id: string; fields: LeadFields; conversation_id: string | null; source: LeadSource; visitor: LeadParty; verified_user_id?: string } }
  | { type: 'RequestCrmDelivery'; data: { kind: CrmKind; url: string } }
  | { type: 'StartCrmAttempt'; data: { attempt: number; kind: CrmKind; url: string } }
  | { type: 'RecordSentToCrm'; data: { attempt: number; status_code: number; crm_record_id: string | null } }
  | { type: 'RecordCrmFailure'; data: { attempt: number; status_code: number | null; error: string; next_attempt_at: string } }
  | { type: 'AbandonCrmDelivery'; data: { attempt: number; status_code: number | null; error: string; reason: CrmDeliveryAbandonReason } }
  | { type: 'DeleteLead'; data: { tenant_id: string; deleted_by: LeadParty } }
  | { type: 'EraseLead'; data: { tenant_id: string; erased_by: LeadParty } };

interface DeliveryFacts {
  kind: CrmKind;
  url: string;
  requested_at: string;
  /** Attempts started so far. */
  attempts: number;
  last_error: string | null;
}

export type CrmDelivery =
  | ({ status: 'requested' } & DeliveryFacts)
  | ({ status: 'sending'; started_at: string } & DeliveryFacts)
  | ({ status: 'retrying'; next_attempt_at: string } & DeliveryFacts)
  | ({ status: 'sent' } & DeliveryFacts)
  | ({ status: 'abandoned' } & DeliveryFacts);

export type CrmDeliveryStatus = CrmDelivery['status'];

export type LeadState =
  | { status: 'absent' }
  | { status: 'captured'; lead: LeadCapturedData; delivery: CrmDelivery | null }
  | { status: 'deleted'; lead_id: string; tenant_id: string; erased_at: string | null };

/** Why a delivery still under way ends when its lead is deleted. */
export const LEAD_DELETED_ERROR = 'the lead was deleted';

export const leadStream = (leadId: string): string => toStreamName(leadEvents.category, leadId);

export const MAX_LEAD_NAME_LENGTH = 200;
export const MAX_LEAD_COMPANY_LENGTH = 200;
export const MAX_LEAD_MESSAGE_LENGTH = 2000;
export const MAX_LEAD_PAGE_URL_LENGTH = 2048;
/** Digits, spaces and + ( ) . - / as people write numbers; 5 to 20 digits (E.164 has at most 15, extensions add some). */
const PHONE = /^\+?[0-9 ().\-/]{5,32}$/;

const given = (value: string | null | undefined): string | null => (value === undefined || value === null || value.trim() === '' ? null : value);

function phoneProblem(phone: string): DomainError | null {
  const digits = phone.replace(/[^0-9]/g, '').length;
  if (!PHONE.test(phone) || digits < 5 || digits > 20) return invalid('invalid_lead', 'phone: expected a phone number of 5 to 20 digits (with + ( ) . - / and spaces), such as +44 20 7946 0958', 'phone');
  return null;
}

function pageUrlProblem(pageUrl: string): DomainError | null {
  if (pageUrl.length > MAX_LEAD_PAGE_URL_LENGTH) return invalid('invalid_lead', `page_url: expected at most ${MAX_LEAD_PAGE_URL_LENGTH} characters`, 'page_url');
  let parsed: URL;
  try {
    parsed = new URL(pageUrl);
  } catch {
    return invalid('invalid_lead', 'page_url: expected an absolute http(s) URL', 'page_url');
  }
  if (parsed.protocol !== 'https:' && parsed.protocol !== 'http:') return invalid('invalid_lead', 'page_url: expected an absolute http(s) URL', 'page_url');
  return null;
}

type CheckedFields = Pick<LeadCapturedData, 'name' | 'email' | 'phone' | 'company' | 'message' | 'page_url'>;

/** The fields in their stored form (trimmed, NFC, email in lower case, empty ones null), or the first problem naming its field. */
export function checkedLeadFields(fields: LeadFields): Either<DomainError, CheckedFields> {
  const checked: CheckedFields = { name: null, email: null, phone: null, company: null, message: null, page_url: null };
  for (const [field, rules] of [
    ['name', { max: MAX_LEAD_NAME_LENGTH, code: 'invalid_lead' }],
    ['company', { max: MAX_LEAD_COMPANY_LENGTH, code: 'invalid_lead' }],
    ['message', { max: MAX_LEAD_MESSAGE_LENGTH, multiline: true, code: 'invalid_lead' }],
  ] as const) {
    const value = given(fields[field]);
    if (value === null) continue;
    const text = checkText(field, value, rules);
    if (text._tag === 'Left') return text;
    checked[field] = text.right;
  }
  const email = given(fields.email);
  if (email !== null) {
    const normal = normalizeEmail(email);
    const problem = emailProblem(normal);
    if (problem) return left(invalid('invalid_lead', 'email: expected an email address such as name@example.com', 'email'));
    checked.email = normal;
  }
  const phone = given(fields.phone);
  if (phone !== null) {
    const normal = phone.trim();
    const problem = phoneProblem(normal);
    if (problem) return left(problem);
    checked.phone = normal;
  }
  if (checked.email === null && checked.phone === null) return left(invalid('invalid_lead', 'email: give an email address or a phone number, so the organization can reach you', 'email'));
  const pageUrl = given(fields.page_url);
  if (pageUrl !== null) {
    const problem = pageUrlProblem(pageUrl.trim());
    if (problem) return left(problem);
    checked.page_url = pageUrl.trim();
  }
  return right(checked);
}

const factsOf = ({ kind, url, requested_at, attempts, last_error }: DeliveryFacts): DeliveryFacts => ({ kind, url, requested_at, attempts, last_error });

function evolveDelivery(delivery: CrmDelivery | null, event: LeadEvent): CrmDelivery | null {
  if (event.type === 'LeadCrmDeliveryRequested') {
    const { kind, url, requested_at } = event.data;
    return { status: 'requested', kind, url, requested_at, attempts: 0, last_error: null };
  }
  if (delivery === null) return null;
  const facts = factsOf(delivery);
  switch (event.type) {
    case 'LeadCrmAttemptStarted':
      return { ...facts, status: 'sending', kind: event.data.kind, url: event.data.url, attempts: event.data.attempt, started_at: event.data.started_at };
    case 'LeadSentToCrm':
      return { ...facts, status: 'sent' };
    case 'LeadCrmDeliveryFailed':
      return { ...facts, status: 'retrying', attempts: Math.max(facts.attempts, event.data.attempt), last_error: event.data.error, next_attempt_at: event.data.next_attempt_at };
    case 'LeadCrmDeliveryAbandoned':
      return { ...facts, status: 'abandoned', last_error: event.data.error };
    default:
      return delivery;
  }
}

export const leadDecider: Decider<LeadCommand, LeadEvent, LeadState> = {
  initialState: () => ({ status: 'absent' }),
  evolve(state, event) {
    if (event.type === 'LeadCaptured') return { status: 'captured', lead: event.data, delivery: null };
    if (event.type === 'LeadDeleted') return { status: 'deleted', lead_id: event.data.lead_id, tenant_id: event.data.tenant_id, erased_at: null };
    if (event.type === 'LeadErased') return { status: 'deleted', lead_id: event.data.lead_id, tenant_id: event.data.tenant_id, erased_at: event.data.erased_at };
    if (state.status !== 'captured') return state;
    return { ...state, delivery: evolveDelivery(state.delivery, event) };
  },
  decide(command, state, { now }): Either<DomainError, LeadEvent[]> {
    const at = now.toISOString();
    if (command.type === 'CaptureLead') {
      if (state.status !== 'absent') return left(conflict('lead_exists', 'this lead was already captured'));
      const fields = checkedLeadFields(command.data.fields);
      if (fields._tag === 'Left') return fields;
      const { lead_id, tenant_id, conversation_id, source, visitor, verified_user_id: verifiedUserId } = command.data;
      const vouched = verifiedUserId === undefined ? {} : { verified_user_id: verifiedUserId };
      return right([{ type: 'LeadCaptured', data: { lead_id, tenant_id, ...fields.right, conversation_id, source, visitor, ...vouched, captured_at: at } }]);
    }
    if (command.type === 'EraseLead') {
      // A deleted lead may still be erased; another organization's is not there for this one.
      const tenantId = state.status === 'absent' ? null : state.status === 'deleted' ? state.tenant_id : state.lead.tenant_id;
      if (tenantId !== command.data.tenant_id) return left(notFound('lead_not_found', 'no such lead'));
      if (state.status === 'deleted') {
        if (state.erased_at !== null) return right([]);
        return right([{ type: 'LeadErased', data: { lead_id: state.lead_id, tenant_id: state.tenant_id, erased_by: command.data.erased_by, erased_at: at } }]);
      }
    }
    // Another organization's lead is not there for this one.
    if (state.status === 'absent' || (command.type === 'DeleteLead' && (state.status === 'deleted' || state.lead.tenant_id !== command.data.tenant_id))) {
      return left(notFound('lead_not_found', 'no such lead'));
    }
    // A delivery's claim or outcome arriving after the deletion records nothing.
    if (state.status === 'deleted') return right([]);
    const { lead_id, tenant_id } = state.lead;
    const delivery = state.delivery;
    if (command.type === 'DeleteLead' || command.type === 'EraseLead') {
      const underWay = delivery !== null && (delivery.status === 'requested' || delivery.status === 'sending' || delivery.status === 'retrying');
      const abandoned: LeadEvent[] = underWay
        ? [{ type: 'LeadCrmDeliveryAbandoned', data: { lead_id, attempts: delivery.attempts, status_code: null, error: LEAD_DELETED_ERROR, reason: 'withdrawn', abandoned_at: at } }]
        : [];
      const gone: LeadEvent =
        command.type === 'DeleteLead'
          ? { type: 'LeadDeleted', data: { lead_id, tenant_id, deleted_by: command.data.deleted_by, deleted_at: at } }
          : { type: 'LeadErased', data: { lead_id, tenant_id, erased_by: command.data.erased_by, erased_at: at } };
      return right([...abandoned, gone]);
    }
    if (command.type === 'RequestCrmDelivery') {
      // One delivery per lead: a redelivered trigger records nothing.
      if (delivery !== null) return right([]);
      return right([{ type: 'LeadCrmDeliveryRequested', data: { lead_id, tenant_id, ...command.data, requested_at: at } }]);
    }
    if (delivery === null) return left(notFound('crm_delivery_not_found', 'this lead is not being sent to a CRM'));
    // Claims and outcomes that no longer fit the state (another delivery settled the attempt
    // first) record nothing: the stream already says what happened.
    switch (command.type) {
      case 'StartCrmAttempt': {
        const next = delivery.status === 'requested' || delivery.status === 'retrying' ? delivery.attempts + 1 : null;
        return right(command.data.attempt === next ? [{ type: 'LeadCrmAttemptStarted', data: { lead_id, attempt: next, kind: command.data.kind, url: command.data.url, started_at: at } }] : []);
      }
      case 'RecordSentToCrm':
        // A late success is still the truth, whatever was decided meanwhile.
        return right(delivery.status === 'sent' ? [] : [{ type: 'LeadSentToCrm', data: { lead_id, ...command.data, sent_at: at } }]);
      case 'RecordCrmFailure':
        if (delivery.status !== 'sending' || delivery.attempts !== command.data.attempt) return right([]);
        return right([{ type: 'LeadCrmDeliveryFailed', data: { lead_id, ...command.data, failed_at: at } }]);
      case 'AbandonCrmDelivery': {
        const settles = delivery.status === 'sending' || delivery.status === 'requested' || delivery.status === 'retrying';
        if (!settles || delivery.attempts !== command.data.attempt) return right([]);
        const { attempt, status_code, error, reason } = command.data;
        return right([{ type: 'LeadCrmDeliveryAbandoned', data: { lead_id, attempts: attempt, status_code, error, reason, abandoned_at: at } }]);
      }
    }
  },
};
