// Saga `orchestration_alert_emails`: when an organization's orchestration event is
// dead-lettered, or expires before it could be dispatched, its owner and admins are told by
// email, so that a flow that stopped working does not go unnoticed until a customer asks where
// their order is. At most one such email per person and hour (the hour the event ended in:
// the email's idempotency key names it); the email says where the others of that hour are
// listed. Only the error's code is told, never its message (it may hold personal data, and is
// sealed under the day's key). On by default; a person turns it off for themselves (their
// notification preference `orchestration_alerts`, or the email's one-click unsubscribe link
// where PUBLIC_URL is set: application/notification/unsubscribe-links.ts), the organization's setting
// `orchestration_alert_emails: false` for everyone. A suspended or deleted organization is
// told nothing. The platform's notices (docs/orchestration-events.md, "Dead-letter notices")
// are the way to tell anyone else, or anything else.

import { userSubject } from '../../domain/user/events';
import { turnedOff } from '../notification/notification-preferences';
import { unsubscribeUrl } from '../notification/unsubscribe-links';
import { queueEmail } from '../mail/outbox';
import type { Secrets } from '../ports/identity';
import type { RecordedOf } from '../ports/domain-event-store';
import type { Saga } from '../sagas/saga';
import { systemContext } from '../shared/request-context';
import { MEMBERSHIPS, type MembershipDocument } from '../../projections/memberships';
import { ORCHESTRATION_EVENTS, type OrchestrationEventDocument, orchestrationEventsProjection } from '../../projections/orchestration-events';
import { TENANTS, type TenantDocument } from '../../projections/tenants';
import { loadDispatch } from './dispatch-queue';
import type { OrchestrationDependencies } from './orchestration-events';

export const ORCHESTRATION_ALERT_EMAILS = 'orchestration_alert_emails';
const HOUR_MS = 3_600_000;
/** More owners and admins than an organization has; each gets their email. */
const MAX_RECIPIENTS = 100;

type Ending = RecordedOf<'OrchestrationEventDeadLettered' | 'OrchestrationEventExpired'>;

/** `2026-12-02 14:05 UTC`. */
const readableTime = (iso: string): string => `${iso.slice(0, 10)} ${iso.slice(11, 16)} UTC`;

/** How a person stops these emails: their one-click link where there is one, the API otherwise. */
const turningOff = (unsubscribeLink: string | null): string =>
  unsubscribeLink === null
    ? 'Owners and admins get them. Turn them off for yourself: PATCH /api/v1/me/notifications {"orchestration_alerts": false}; for everyone: the organization\'s setting orchestration_alert_emails (GraphQL update_settings).'
    : `Owners and admins get them. Turn them off for yourself: ${unsubscribeLink} (or PATCH /api/v1/me/notifications {"orchestration_alerts": false}); for everyone: the organization's setting orchestration_alert_emails (GraphQL update_settings).`;

/**
 * The email of an ending, for an organization; `standing` is how many of its events stand so
 * ended (dead-lettered, or expired) as it is sent, this one included; `unsubscribeLink` is the
 * recipient's one-click link, where there is one.
 */
export function alertEmailOf(
  ending: Ending,
  event: { name: string },
  organization: string,
  standing: number,
  unsubscribeLink: string | null,
): { subject: string; text: string } {
  const { event_id } = ending.data;
  const about = `The orchestration event ${event.name} (id ${event_id}) of ${organization}`;
  const status = ending.type === 'OrchestrationEventDeadLettered' ? 'dead_letter' : 'expired';
  const others = standing - 1;
  const limit = [
    others > 0
      ? `${organization} has ${others} other ${ending.type === 'OrchestrationEventDeadLettered' ? 'dead-lettered' : 'expired'} ${others === 1 ? 'event' : 'events'} as this email is sent: GET /api/v1/org/events?status=${status}.`
      : `It is the only ${ending.type === 'OrchestrationEventDeadLettered' ? 'dead-lettered' : 'expired'} event of ${organization} as this email is sent.`,
    'You get at most one of these emails an hour; the events that end this way later in the hour are listed, not emailed:',
    'GET /api/v1/org/events?status=dead_letter (or status=expired).',
    turningOff(unsubscribeLink),
  ].join('\n');
  if (ending.type === 'OrchestrationEventDeadLettered') {
    const { attempts, error, dead_lettered_at } = ending.data;
    return {
      subject: `[${organization}] An orchestration event was dead-lettered`,
      text: [
        `${about} was dead-lettered at ${readableTime(dead_lettered_at)} after ${attempts} ${attempts === 1 ? 'attempt' : 'attempts'}; the last failed with ${error.code}.`,
        `It is not tried again by itself. Once the cause is fixed, retry it: POST /api/v1/org/events/${event_id}/retry, or every dead letter of its name at once: POST /api/v1/org/events/redrive {"name": "${event.name}"}.`,
        limit,
      ].join('\n\n'),
    };
  }
  const { expires_at, expired_at } = ending.data;
  return {
    subject: `[${organization}] An orchestration event expired before it was dispatched`,
    text: [
      `${about} expired at ${readableTime(expired_at)} (it was to be dispatched by ${readableTime(expires_at)}) before it could be dispatched. It never will be; emit it again if it is still wanted.`,
      limit,
    ].join('\n\n'),
  };
}

const endedAt = (ending: Ending): string => (ending.type === 'OrchestrationEventDeadLettered' ? ending.data.dead_lettered_at : ending.data.expired_at);

/** `publicUrl`: the platform's public base URL (PUBLIC_URL), on which each email's one-click unsubscribe link is made; null: no link, the email says how through the API. */
export function orchestrationAlertEmailsSaga(deps: OrchestrationDependencies & { secrets: Secrets; publicUrl: string | null }): Saga<'OrchestrationEventDeadLettered' | 'OrchestrationEventExpired'> {
  return {
    name: ORCHESTRATION_ALERT_EMAILS,
    version: 1,
    filter: { kind: 'event_type', types: ['OrchestrationEventDeadLettered', 'OrchestrationEventExpired'] },
    async handle(ending) {
      const { event_id, tenant_id } = ending.data;
      const tenant = await deps.readStore.collection<TenantDocument>(TENANTS).get(tenant_id);
      if (tenant === null || tenant.status !== 'active' || tenant.settings.orchestration_alert_emails === false) return;
      const ended = await loadDispatch(deps, event_id);
      if (ended === null) return;
      const recipients = await deps.readStore.collection<MembershipDocument>(MEMBERSHIPS).find({
        where: { tenant_id, status: 'active', role: { in: ['owner', 'admin'] } },
        sort: { field: 'joined_at', direction: 'asc' },
        limit: MAX_RECIPIENTS,
      });
      const unwanted = await turnedOff(deps, tenant_id, recipients.items.map((member) => member.user_id), 'orchestration_alerts');
      const told = recipients.items.flatMap((member) => (member.email !== null && !unwanted.has(member.user_id) ? [{ ...member, email: member.email }] : []));
      if (told.length === 0) return;
      // Counted once the read model holds this end (it is among them).
      await deps.readYourWrites(ending.position, [orchestrationEventsProjection.name]);
      const standing = await deps.readStore.collection<OrchestrationEventDocument>(ORCHESTRATION_EVENTS).count({ status: ending.type === 'OrchestrationEventDeadLettered' ? 'dead_letter' : 'expired', tenant_id });
      const hour = Math.floor(Date.parse(endedAt(ending)) / HOUR_MS);
      const context = { ...systemContext(ended.event.correlation_id, ORCHESTRATION_ALERT_EMAILS, ending.id), tenant_id };
      for (const member of told) {
        const unsubscribe = unsubscribeUrl(deps.secrets, deps.publicUrl, { tenant_id, user_id: member.user_id, kind: 'orchestration_alerts' });
        const { subject, text } = alertEmailOf(ending, ended.event, tenant.name, Math.max(1, standing), unsubscribe);
        await queueEmail(
          deps,
          { to: member.email, data_subject: userSubject(member.user_id), subject, text, kind: 'orchestration_alert', unsubscribe_url: unsubscribe },
          context,
          { idempotencyKey: `orchestration-alert:${tenant_id}:${member.user_id}:${hour}` },
        );
      }
    },
  };
}
