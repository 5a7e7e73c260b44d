// Saga `handoff_failure_emails`: when the handoff of a conversation is given up because the
// organization's webhook failed every attempt (HandoffAbandoned, `attempts_exhausted`), its
// owners and admins are told by email: someone asked for a person and no person was told, so
// the conversation waits, and so does a customer. At most one such email per person and hour (a
// webhook that is down fails every handoff); each says how many of the organization's handoffs
// stand failed, where they are listed and how to fix the webhook. A handoff withdrawn (handoffs
// turned off, the conversation deleted) is told nobody: nothing failed. On by default; a person
// turns it off for themselves with their notification preference `handoff_failures`, or the
// email's one-click unsubscribe link where PUBLIC_URL is set. A suspended or deleted
// organization is told nothing.

import { handoffStream } from '../../domain/handoff/handoff';
import { HANDOFF_DELIVERIES, type HandoffDeliveryDocument } from '../../projections/handoff-deliveries';
import { TENANTS, type TenantDocument } from '../../projections/tenants';
import { type NotificationEmailDependencies, emailEach, readableUtc, turnOffForYourself, utcHourOf } from '../notification/notification-emails';
import { ownersAndAdminsWanting } from '../notification/notification-preferences';
import type { RecordedOf } from '../ports/domain-event-store';
import type { Saga } from '../sagas/saga';
import type { ReadModelDependencies, ReadYourWritesDependencies } from '../shared/read-models';
import { systemContext } from '../shared/request-context';

export const HANDOFF_FAILURE_EMAILS = 'handoff_failure_emails';

export interface HandoffFailureEmailDependencies extends NotificationEmailDependencies, ReadModelDependencies, ReadYourWritesDependencies {}

/**
 * The email of a handoff given up, for an organization; `failed` is how many of its handoffs
 * stand failed as it is sent, this one included.
 */
export function handoffFailureEmailOf(
  abandoned: RecordedOf<'HandoffAbandoned'>['data'],
  handoff: { conversation_id: string; url: string },
  organization: string,
  failed: number,
  unsubscribeLink: string | null,
): { subject: string; text: string } {
  const others = failed - 1;
  return {
    subject: `[${organization}] A conversation waits for a person: its handoff was not delivered`,
    text: [
      `A conversation of ${organization} was handed to a person, but the handoff webhook (${handoff.url}) did not take it: the platform gave up at ${readableUtc(abandoned.abandoned_at)} after ${abandoned.attempts} ${abandoned.attempts === 1 ? 'attempt' : 'attempts'}; the last: ${abandoned.error}.`,
      `Nobody was told of it, and the conversation waits: GET /api/v1/conversations/${handoff.conversation_id}.`,
      [
        others > 0
          ? `${organization} has ${others} other failed ${others === 1 ? 'handoff' : 'handoffs'}: GET /api/v1/tenant/handoff/deliveries?status=failed.`
          : 'The failed handoffs are listed: GET /api/v1/tenant/handoff/deliveries?status=failed.',
        'Fix the webhook (POST /api/v1/tenant/handoff with its URL, or your receiver); the handoffs that come after are delivered to it.',
      ].join('\n'),
      [
        'You get at most one of these emails an hour.',
        `Owners and admins get them. ${turnOffForYourself('handoff_failures', unsubscribeLink)}.`,
      ].join('\n'),
    ].join('\n\n'),
  };
}

export function handoffFailureEmailsSaga(deps: HandoffFailureEmailDependencies): Saga<'HandoffAbandoned'> {
  return {
    name: HANDOFF_FAILURE_EMAILS,
    version: 1,
    filter: { kind: 'event_type', types: ['HandoffAbandoned'] },
    async handle(abandoned) {
      if (abandoned.data.reason !== 'attempts_exhausted') return;
      const { handoff_id } = abandoned.data;
      const [requested] = await deps.eventStore.readStream(handoffStream(handoff_id), { maxCount: 1 });
      if (requested?.type !== 'HandoffRequested') return;
      const { tenant_id } = requested.data;
      const tenant = await deps.readStore.collection<TenantDocument>(TENANTS).get(tenant_id);
      if (tenant === null || tenant.status !== 'active') return;
      const told = await ownersAndAdminsWanting(deps, tenant_id, 'handoff_failures');
      if (told.length === 0) return;
      // Counted once the read model holds this one (it is among them).
      await deps.readYourWrites(abandoned.position);
      const deliveries = deps.readStore.collection<HandoffDeliveryDocument>(HANDOFF_DELIVERIES);
      const [delivery, failed] = await Promise.all([deliveries.get(handoff_id), deliveries.count({ tenant_id, status: 'abandoned' satisfies HandoffDeliveryDocument['status'] })]);
      const handoff = { conversation_id: requested.data.conversation_id, url: delivery?.url ?? 'unknown' };
      const hour = utcHourOf(abandoned.data.abandoned_at);
      const context = { ...systemContext(abandoned.metadata.correlation_id, HANDOFF_FAILURE_EMAILS, abandoned.id), tenant_id };
      await emailEach(
        deps,
        told,
        {
          tenantId: tenant_id,
          preference: 'handoff_failures',
          kind: 'handoff_failure',
          compose: (link) => handoffFailureEmailOf(abandoned.data, handoff, tenant.name, Math.max(1, failed), link),
          idempotencyKey: (userId) => `handoff-failure:${tenant_id}:${userId}:${hour}`,
        },
        context,
      );
    },
  };
}
