// Leads (spec 4.4 and 4.8): a widget visitor leaves their contact details
// (`POST /api/v1/widget/leads`), recorded as the lead aggregate's LeadCaptured (domain/lead),
// then sent to the tenant's CRM by the `lead_crm_delivery` saga (lead-crm-delivery.ts); the
// tenant's owners and admins list them with how each delivery stands (`GET /api/v1/tenant/leads`)
// and delete one (`DELETE /api/v1/tenant/leads/{id}`: it leaves the list, a delivery under way
// ends; the event log keeps what was captured) or erase it for a person who asks to be
// forgotten (`POST /api/v1/tenant/leads/{id}/erase`: what was captured cannot be read again,
// anywhere; docs/personal-data.md).
//
// Capturing: the widget must offer the lead form (403 `widget_feature_disabled`); the fields
// are checked one by one (400 `invalid_lead` naming the field; an email or a phone is needed);
// a conversation named must be the visitor's own widget conversation (404); each visitor, and
// each client address, may leave WIDGET_LEADS_PER_HOUR / WIDGET_LEADS_PER_IP_PER_HOUR leads an
// hour (429 `rate_limited`), so a script cannot fill the tenant's CRM. Under an Idempotency-Key
// the lead's id and event derive from the key: a retry finds the lead the first one recorded.

import { type LeadFields, checkedLeadFields, leadStream } from '../../domain/lead/lead';
import { LEADS, type LeadCrmStatus, type LeadDocument } from '../../projections/leads';
import { type CommandDependencies, handleCommand } from '../command-handling/handle-command';
import type { Actor } from '../ports/event-store';
import type { RateLimiter } from '../ports/rate-limiter';
import type { FieldCondition, Page, Where } from '../ports/read-store';
import type { ReadModelDependencies, ReadYourWritesDependencies } from '../shared/read-models';
import type { RequestContext } from '../shared/request-context';
import { type Principal, actingContext } from '../session/sessions';
import { RateLimitedError } from '../user/abuse-controls';
import { notFound } from '../../domain/shared/errors';
import { leadAggregate } from './lead-aggregate';
import { requireWidgetFeature } from '../widget/visitor-conversations';
import { requireVisitorConversation } from '../widget/widget-chat';
import { type Visitor, type WidgetPrincipal, visitorContext } from '../widget/widget-access';


export interface LeadLimits {
  /** Leads one visitor may leave an hour (WIDGET_LEADS_PER_HOUR). */
  perVisitorPerHour: number;
  /** Leads one client address may leave an hour (WIDGET_LEADS_PER_IP_PER_HOUR). */
  perIpPerHour: number;
}

export interface LeadDependencies extends CommandDependencies, ReadModelDependencies, ReadYourWritesDependencies {
  limiter: RateLimiter;
  leadLimits: LeadLimits;
}

export interface LeadInput extends LeadFields {
  conversation_id?: string | null;
}

/** Spends one lead of the visitor's and of the client address's hourly budgets (429 past either). */
async function spendLeadBudget(deps: LeadDependencies, widget: WidgetPrincipal, visitor: Visitor, ip: string | null): Promise<void> {
  const hour = 3600;
  const decisions = await Promise.all([
    deps.limiter.consume(`widget-lead:${widget.tenant_id}:${visitor.party.id}`, { limit: deps.leadLimits.perVisitorPerHour, windowSeconds: hour }),
    deps.limiter.consume(`widget-lead:ip:${ip ?? 'unknown'}`, { limit: deps.leadLimits.perIpPerHour, windowSeconds: hour }),
  ]);
  const refused = decisions.filter((decision) => !decision.allowed);
  if (refused.length > 0) throw new RateLimitedError(Math.max(...refused.map((decision) => decision.retryAfterSeconds)));
}

/** Records the visitor's lead; answers its id. The CRM delivery follows in the background. */
export async function captureLead(
  deps: LeadDependencies,
  widget: WidgetPrincipal,
  visitor: Visitor,
  input: LeadInput,
  context: RequestContext,
  options: { idempotencyKey?: string } = {},
): Promise<{ lead_id: string }> {
  requireWidgetFeature(widget, 'lead_form');
  // Checked before the budget is spent: a visitor correcting a field loses nothing.
  const fields = checkedLeadFields(input);
  if (fields._tag === 'Left') throw fields.left;
  const conversationId = input.conversation_id === undefined || input.conversation_id === null || input.conversation_id === '' ? null : input.conversation_id;
  if (conversationId !== null) await requireVisitorConversation(deps, widget, visitor, conversationId);
  await spendLeadBudget(deps, widget, visitor, context.ip);
  const key = options.idempotencyKey === undefined ? undefined : `${options.idempotencyKey}:lead`;
  const leadId = key === undefined ? deps.ids.newId() : deps.ids.fromKey(key);
  const result = await handleCommand(
    deps,
    leadAggregate,
    leadStream(leadId),
    {
      type: 'CaptureLead',
      data: {
        lead_id: leadId,
        tenant_id: widget.tenant_id,
        fields: input,
        conversation_id: conversationId,
        source: 'widget',
        visitor: visitor.party,
        ...(visitor.user_id === null ? {} : { verified_user_id: visitor.user_id }),
      },
    },
    visitorContext(widget, visitor, context),
    { idempotencyKey: key },
  );
  await deps.readYourWrites(result.position);
  return { lead_id: leadId };
}

/** Deletes one of the principal's organization's leads (404 `lead_not_found` for any other, or one deleted already). */
export async function deleteLead(deps: Omit<LeadDependencies, 'limiter' | 'leadLimits'>, principal: Principal, leadId: string, context: RequestContext): Promise<void> {
  // The list's own document first: an id that was never a lead of this organization reads no stream.
  const listed = await deps.readStore.collection<LeadDocument>(LEADS).get(leadId);
  if (!listed || listed.tenant_id !== principal.tenant_id) throw notFound('lead_not_found', 'no such lead');
  const deletedBy = principal.impersonator ?? { kind: 'user' as const, id: principal.user_id };
  const result = await handleCommand(deps, leadAggregate, leadStream(leadId), { type: 'DeleteLead', data: { tenant_id: principal.tenant_id, deleted_by: deletedBy } }, actingContext(principal, context));
  await deps.readYourWrites(result.position);
}

// ---------------------------------------------------------------------------------- the list

/** How a lead's delivery to the CRM stands, as the API shows it. */
export const LEAD_CRM_STATUSES = ['not_sent', 'pending', 'retrying', 'sent', 'failed'] as const;
export type LeadCrmStatusView = (typeof LEAD_CRM_STATUSES)[number];

const SHOWN_AS: Record<LeadCrmStatus, LeadCrmStatusView> = { none: 'not_sent', requested: 'pending', sending: 'pending', retrying: 'retrying', sent: 'sent', abandoned: 'failed' };
const STORED_AS: Record<LeadCrmStatusView, LeadCrmStatus[]> = { not_sent: ['none'], pending: ['requested', 'sending'], retrying: ['retrying'], sent: ['sent'], failed: ['abandoned'] };

export interface LeadView {
  id: string;
  name: string | null;
  email: string | null;
  phone: string | null;
  company: string | null;
  message: string | null;
  page_url: string | null;
  conversation_id: string | null;
  source: string;
  /** The widget visitor who left it. */
  visitor: Actor;
  /** The host site's user id of a visitor it vouched for; null for an anonymous one. */
  verified_user_id: string | null;
  captured_at: string;
  /** not_sent (no CRM was on), pending, retrying (the next attempt is at crm.next_attempt_at), sent, failed (given up). */
  crm_status: LeadCrmStatusView;
  /** The delivery; null when the lead was not sent anywhere. */
  crm: {
    kind: string;
    attempts: number;
    last_status_code: number | null;
    last_error: string | null;
    record_id: string | null;
    requested_at: string | null;
    last_attempt_at: string | null;
    next_attempt_at: string | null;
    sent_at: string | null;
    failed_at: string | null;
  } | null;
}

export const leadView = (doc: LeadDocument): LeadView => ({
  id: doc.id,
  name: doc.name,
  email: doc.email,
  phone: doc.phone,
  company: doc.company,
  message: doc.message,
  page_url: doc.page_url,
  conversation_id: doc.conversation_id,
  source: doc.source,
  visitor: doc.visitor,
  verified_user_id: doc.verified_user_id ?? null,
  captured_at: doc.captured_at,
  crm_status: SHOWN_AS[doc.crm_status],
  crm:
    doc.crm_kind === null
      ? null
      : {
          kind: doc.crm_kind,
          attempts: doc.crm_attempts,
          last_status_code: doc.crm_last_status_code,
          last_error: doc.crm_last_error,
          record_id: doc.crm_record_id,
          requested_at: doc.crm_requested_at,
          last_attempt_at: doc.crm_last_attempt_at,
          next_attempt_at: doc.crm_next_attempt_at,
          sent_at: doc.crm_sent_at,
          failed_at: doc.crm_abandoned_at,
        },
});

export interface LeadFilter {
  crm_status?: LeadCrmStatusView;
  /** Inclusive ISO time bounds on captured_at. */
  from?: string;
  to?: string;
}

/** The tenant's leads, newest first. */
export async function listLeads(deps: ReadModelDependencies, tenantId: string, filter: LeadFilter, page: { limit?: number; cursor?: string }): Promise<Page<LeadView>> {
  const where: Where = { tenant_id: tenantId };
  if (filter.crm_status) {
    const stored = STORED_AS[filter.crm_status];
    where.crm_status = stored.length === 1 ? stored[0]! : { in: stored };
  }
  if (filter.from !== undefined || filter.to !== undefined) {
    const range: FieldCondition = {};
    if (filter.from !== undefined) range.gte = filter.from;
    if (filter.to !== undefined) range.lte = filter.to;
    where.captured_at = range;
  }
  const found = await deps.readStore.collection<LeadDocument>(LEADS).find({ where, sort: { field: 'captured_at', direction: 'desc' }, ...page });
  return { items: found.items.map(leadView), next_cursor: found.next_cursor };
}
