// Saga `crm_failure_emails`: when a lead's delivery to the organization's CRM is given up
// because the CRM failed every attempt (LeadCrmDeliveryAbandoned, `attempts_exhausted`), its
// owners and admins are told by email: a visitor left their details, and the CRM where the
// sales team looks never got them. At most one such email per person and hour (a CRM that is
// down, or whose credential expired, fails every lead); each says how many of the
// organization's leads stand failed and where they are listed. The lead's details are not in
// the email (they are the visitor's personal data, and a CRM's answer may quote them: only its
// status is told): its id is. A delivery withdrawn (the CRM
// turned off, the lead deleted or erased) is told nobody. On by default; a person turns it off
// for themselves with their notification preference `crm_failures`, or the email's one-click
// unsubscribe link where PUBLIC_URL is set. A suspended or deleted organization is told
// nothing.

import { leadStream } from '../../domain/lead/lead';
import { LEADS, type LeadDocument } from '../../projections/leads';
import { TENANTS, type TenantDocument } from '../../projections/tenants';
import { type NotificationEmailDependencies, emailEach, readableUtc, turnOffForYourself, utcHourOf } from '../notification/notification-emails';
import { ownersAndAdminsWanting } from '../notification/notification-preferences';
import type { RecordedOf } from '../ports/domain-event-store';
import type { Saga } from '../sagas/saga';
import type { ReadModelDependencies, ReadYourWritesDependencies } from '../shared/read-models';
import { systemContext } from '../shared/request-context';

export const CRM_FAILURE_EMAILS = 'crm_failure_emails';

export interface CrmFailureEmailDependencies extends NotificationEmailDependencies, ReadModelDependencies, ReadYourWritesDependencies {}

/** The email of a lead given up, for an organization; `failed` is how many of its leads stand failed as it is sent, this one included. */
export function crmFailureEmailOf(
  abandoned: RecordedOf<'LeadCrmDeliveryAbandoned'>['data'],
  crm: { kind: string; url: string },
  organization: string,
  failed: number,
  unsubscribeLink: string | null,
): { subject: string; text: string } {
  const others = failed - 1;
  // A CRM's answer may quote the lead (an existing contact's email): only its status is told here.
  const last = abandoned.status_code === null ? abandoned.error : `the CRM answered HTTP ${abandoned.status_code} (its answer is in the lead's crm.last_error)`;
  return {
    subject: `[${organization}] A lead did not reach your CRM`,
    text: [
      `A visitor left their details with ${organization}, but the CRM (${crm.kind}, ${crm.url}) did not take them: the platform gave up at ${readableUtc(abandoned.abandoned_at)} after ${abandoned.attempts} ${abandoned.attempts === 1 ? 'attempt' : 'attempts'}; the last: ${last}.`,
      `The lead is kept: GET /api/v1/tenant/leads?crm_status=failed (its id: ${abandoned.lead_id}).`,
      [
        others > 0 ? `${organization} has ${others} other ${others === 1 ? 'lead' : 'leads'} the CRM did not take.` : null,
        'Fix the CRM connection (POST /api/v1/tenant/crm: its URL, or a new credential); the leads that come after are sent to it.',
      ]
        .filter((line) => line !== null)
        .join('\n'),
      [
        'You get at most one of these emails an hour.',
        `Owners and admins get them. ${turnOffForYourself('crm_failures', unsubscribeLink)}.`,
      ].join('\n'),
    ].join('\n\n'),
  };
}

export function crmFailureEmailsSaga(deps: CrmFailureEmailDependencies): Saga<'LeadCrmDeliveryAbandoned'> {
  return {
    name: CRM_FAILURE_EMAILS,
    version: 1,
    filter: { kind: 'event_type', types: ['LeadCrmDeliveryAbandoned'] },
    async handle(abandoned) {
      if (abandoned.data.reason !== 'attempts_exhausted') return;
      const { lead_id } = abandoned.data;
      const recorded = await deps.eventStore.readStream(leadStream(lead_id));
      const captured = recorded.find((event) => event.type === 'LeadCaptured');
      const requested = recorded.filter((event) => event.type === 'LeadCrmDeliveryRequested').at(-1);
      if (captured?.type !== 'LeadCaptured' || requested?.type !== 'LeadCrmDeliveryRequested') return;
      const { tenant_id } = captured.data;
      const tenant = await deps.readStore.collection<TenantDocument>(TENANTS).get(tenant_id);
      if (tenant === null || tenant.status !== 'active') return;
      const told = await ownersAndAdminsWanting(deps, tenant_id, 'crm_failures');
      if (told.length === 0) return;
      // Counted once the read model holds this one (it is among them).
      await deps.readYourWrites(abandoned.position);
      const failed = await deps.readStore.collection<LeadDocument>(LEADS).count({ tenant_id, crm_status: 'abandoned' satisfies LeadDocument['crm_status'] });
      // The address of the last attempt, where there was one: the configuration then.
      const lastAttempt = recorded.filter((event) => event.type === 'LeadCrmAttemptStarted').at(-1);
      const crm = lastAttempt?.type === 'LeadCrmAttemptStarted' ? { kind: lastAttempt.data.kind, url: lastAttempt.data.url } : { kind: requested.data.kind, url: requested.data.url };
      const hour = utcHourOf(abandoned.data.abandoned_at);
      const context = { ...systemContext(abandoned.metadata.correlation_id, CRM_FAILURE_EMAILS, abandoned.id), tenant_id };
      await emailEach(
        deps,
        told,
        {
          tenantId: tenant_id,
          preference: 'crm_failures',
          kind: 'crm_failure',
          compose: (link) => crmFailureEmailOf(abandoned.data, crm, tenant.name, Math.max(1, failed), link),
          idempotencyKey: (userId) => `crm-failure:${tenant_id}:${userId}:${hour}`,
        },
        context,
      );
    },
  };
}
