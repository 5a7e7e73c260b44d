// Saga `orchestration_alert_emails`: when an organization's orchestration event is
// dead-lettered, or expires before it could be dispatched, its owner and admins are told by
// email, so that a flow that stopped working does not go unnoticed until a customer asks where
// their order is. The first such end of a UTC hour is emailed at once (the hour's alert digest,
// domain/orchestration-alert-digest, names it: one email per person and hour). Once the hour
// is over, its due pass emails the hour's digest, when more of the hour's ends than that one
// still stand dead-lettered or expired: how many, by event name. Only the error's code is
// told, never its message (it may hold personal data, and is sealed under the day's key). On by
// default; a person turns it off for themselves (their notification preference
// `orchestration_alerts`, or the email's one-click unsubscribe link where PUBLIC_URL is set:
// application/notification/unsubscribe-links.ts), the organization's setting
// `orchestration_alert_emails: false` for everyone. A suspended or deleted organization is
// told nothing. The platform's notices (docs/orchestration-events.md, "Dead-letter notices")
// are the way to tell anyone else, or anything else.

import {
  HOUR_MS,
  type OrchestrationAlertDigestCommand,
  type OrchestrationAlertDigestEvent,
  type OrchestrationAlertDigestState,
  hourOf,
  orchestrationAlertDigestDecider,
  orchestrationAlertDigestEvents,
  orchestrationAlertDigestStream,
} from '../../domain/orchestration-alert-digest/alert-digest';
import { type Aggregate, handleCommand, loadAggregate } from '../command-handling/handle-command';
import { ownersAndAdminsWanting } from '../notification/notification-preferences';
import { type NotificationEmailDependencies, emailEach, readableUtc, turnOffForYourself } from '../notification/notification-emails';
import type { RecordedOf } from '../ports/domain-event-store';
import type { Saga } from '../sagas/saga';
import { systemContext } from '../shared/request-context';
import { ORCHESTRATION_ALERT_DIGESTS, type OrchestrationAlertDigestDocument } from '../../projections/orchestration-alert-digests';
import { ORCHESTRATION_EVENTS, type OrchestrationEventDocument, orchestrationEventsProjection } from '../../projections/orchestration-events';
import { TENANTS, type TenantDocument } from '../../projections/tenants';
import { loadDispatch } from './dispatch-queue';
import type { OrchestrationDependencies } from './orchestration-events';

export const ORCHESTRATION_ALERT_EMAILS = 'orchestration_alert_emails';
/** How long after its hour's end a digest waits, so that ends handled a moment late are among those it counts. */
export const DIGEST_GRACE_MS = 60_000;
/** Most names a digest lists; the rest are counted together. */
const DIGEST_NAMES = 20;
/** Most standing events of one status a digest reads for its hour. */
const DIGEST_SCAN = 10_000;

type Ending = RecordedOf<'OrchestrationEventDeadLettered' | 'OrchestrationEventExpired'>;

/** How a person stops these emails, and how everyone does. */
const turningOff = (unsubscribeLink: string | null): string =>
  `Owners and admins get them. ${turnOffForYourself('orchestration_alerts', unsubscribeLink)}; for everyone: the organization's setting orchestration_alert_emails (GraphQL update_settings).`;

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
        `${about} was dead-lettered at ${readableUtc(dead_lettered_at)} after ${attempts} ${attempts === 1 ? 'attempt' : 'attempts'}; the last failed with ${error.code}.`,
        `It is not tried again by itself. Once the cause is fixed, retry it: POST /api/v1/org/events/${event_id}/retry, or every dead letter of its name at once: POST /api/v1/org/events/redrive {"name": "${event.name}"}.`,
        limit,
      ].join('\n\n'),
    };
  }
  const { expires_at, expired_at } = ending.data;
  return {
    subject: `[${organization}] An orchestration event expired before it was dispatched`,
    text: [
      `${about} expired at ${readableUtc(expired_at)} (it was to be dispatched by ${readableUtc(expires_at)}) before it could be dispatched. It never will be; emit it again if it is still wanted.`,
      limit,
    ].join('\n\n'),
  };
}

const alertDigestAggregate: Aggregate<OrchestrationAlertDigestCommand, OrchestrationAlertDigestEvent, OrchestrationAlertDigestState> = {
  decider: orchestrationAlertDigestDecider,
  events: orchestrationAlertDigestEvents,
};

type EndsByName = Map<string, Record<'dead_letter' | 'expired', number>>;

const plural = (count: number, one: string, many: string): string => `${count} ${count === 1 ? one : many}`;

/**
 * The digest of an hour for an organization: `ends` are its events of the hour, besides the one
 * emailed at the time, that stand dead-lettered or expired, by name.
 */
export function alertDigestEmailOf(hour: number, organization: string, ends: EndsByName, unsubscribeLink: string | null): { subject: string; text: string } {
  const start = new Date(hour * HOUR_MS).toISOString();
  const end = new Date((hour + 1) * HOUR_MS).toISOString();
  const total = [...ends.values()].reduce((sum, byStatus) => sum + byStatus.dead_letter + byStatus.expired, 0);
  const ranked = [...ends].sort(([nameA, a], [nameB, b]) => b.dead_letter + b.expired - (a.dead_letter + a.expired) || (nameA < nameB ? -1 : 1));
  const lines = ranked.slice(0, DIGEST_NAMES).map(([name, byStatus]) => {
    const parts = [byStatus.dead_letter > 0 ? `${byStatus.dead_letter} dead-lettered` : '', byStatus.expired > 0 ? `${byStatus.expired} expired` : ''];
    return `${name}: ${parts.filter((part) => part !== '').join(', ')}`;
  });
  const others = ranked.slice(DIGEST_NAMES);
  if (others.length > 0) {
    const count = others.reduce((sum, [, byStatus]) => sum + byStatus.dead_letter + byStatus.expired, 0);
    lines.push(`and ${plural(count, 'event', 'events')} of ${plural(others.length, 'other name', 'other names')}`);
  }
  const span = `${start.slice(0, 10)} ${start.slice(11, 16)} and ${end.slice(11, 16)} UTC`;
  return {
    subject: `[${organization}] ${plural(total, 'more orchestration event', 'more orchestration events')} dead-lettered or expired between ${span}`,
    text: [
      `Between ${span}, ${plural(total, 'more orchestration event', 'more orchestration events')} of ${organization} ${total === 1 ? 'was' : 'were'} dead-lettered or expired besides the one the hour's first alert told of, and still ${total === 1 ? 'stands' : 'stand'} so:`,
      lines.join('\n'),
      'List them with their errors: GET /api/v1/org/events?status=dead_letter (or status=expired). Once the cause is fixed, retry every dead letter of a name at once: POST /api/v1/org/events/redrive {"name": "<name>"}.',
      [`This summary comes once an hour is over, when more of ${organization}'s events ended so within it than the one emailed at the time.`, turningOff(unsubscribeLink)].join('\n'),
    ].join('\n\n'),
  };
}

/** The organization's events that ended within `hour` and stand so, `first` left out, by name. */
async function standingEndsOf(deps: OrchestrationDependencies, tenantId: string, hour: number, first: string): Promise<EndsByName> {
  const [from, to] = [new Date(hour * HOUR_MS).toISOString(), new Date((hour + 1) * HOUR_MS).toISOString()];
  const ends: EndsByName = new Map();
  const events = deps.readStore.collection<OrchestrationEventDocument>(ORCHESTRATION_EVENTS);
  for (const status of ['dead_letter', 'expired'] as const) {
    // When it ended is not indexed (that would cost every event a write): the organization's
    // standing ones are read, newest first, and those of the hour kept.
    let cursor: string | undefined;
    for (let scanned = 0; scanned < DIGEST_SCAN; ) {
      const page = await events.find({ where: { status, tenant_id: tenantId }, sort: { field: 'received_at', direction: 'desc' }, limit: 1000, cursor });
      for (const event of page.items) {
        if (event.id === first || event.settled_at === null || event.settled_at < from || event.settled_at >= to) continue;
        const byStatus = ends.get(event.name) ?? { dead_letter: 0, expired: 0 };
        ends.set(event.name, { ...byStatus, [status]: byStatus[status] + 1 });
      }
      scanned += page.items.length;
      if (page.next_cursor === null) break;
      cursor = page.next_cursor;
    }
  }
  return ends;
}

const endedAt = (ending: Ending): string => (ending.type === 'OrchestrationEventDeadLettered' ? ending.data.dead_lettered_at : ending.data.expired_at);

/** `publicUrl`: the platform's public base URL (PUBLIC_URL), on which each email's one-click unsubscribe link is made; null: no link, the email says how through the API. */
export function orchestrationAlertEmailsSaga(deps: OrchestrationDependencies & NotificationEmailDependencies): Saga<'OrchestrationEventDeadLettered' | 'OrchestrationEventExpired'> {
  /** Emails the hour's digest, where there is anything to tell and anyone to tell it, and closes it; again, nothing. */
  async function closeDigest({ tenant_id, hour, first_event_id }: OrchestrationAlertDigestDocument): Promise<void> {
    const stream = orchestrationAlertDigestStream(tenant_id, hour);
    const context = { ...systemContext(deps.ids.newId(), ORCHESTRATION_ALERT_EMAILS, null), tenant_id };
    const tenant = await deps.readStore.collection<TenantDocument>(TENANTS).get(tenant_id);
    let standing = 0;
    let recipients = 0;
    if (tenant !== null && tenant.status === 'active' && tenant.settings.orchestration_alert_emails !== false) {
      const ends = await standingEndsOf(deps, tenant_id, hour, first_event_id);
      standing = [...ends.values()].reduce((sum, byStatus) => sum + byStatus.dead_letter + byStatus.expired, 0);
      const told = standing > 0 ? await ownersAndAdminsWanting(deps, tenant_id, 'orchestration_alerts') : [];
      await emailEach(
        deps,
        told,
        {
          tenantId: tenant_id,
          preference: 'orchestration_alerts',
          kind: 'orchestration_alert_digest',
          compose: (link) => alertDigestEmailOf(hour, tenant.name, ends, link),
          idempotencyKey: (userId) => `orchestration-alert-digest:${tenant_id}:${userId}:${hour}`,
        },
        context,
      );
      recipients = told.length;
    }
    await handleCommand(deps, alertDigestAggregate, stream, { type: 'CloseAlertDigest', data: { tenant_id, hour, standing, recipients } }, context);
  }

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
      const hour = hourOf(endedAt(ending));
      const context = { ...systemContext(ended.event.correlation_id, ORCHESTRATION_ALERT_EMAILS, ending.id), tenant_id };
      // The hour's first end opens its digest and is emailed now; a later one waits for the digest.
      const digestStream = orchestrationAlertDigestStream(tenant_id, hour);
      await handleCommand(deps, alertDigestAggregate, digestStream, { type: 'OpenAlertDigest', data: { tenant_id, hour, first_event_id: event_id } }, context);
      const { state: digest } = await loadAggregate(deps, alertDigestAggregate, digestStream);
      if (digest.status === 'none' || digest.first_event_id !== event_id) return;
      const told = await ownersAndAdminsWanting(deps, tenant_id, 'orchestration_alerts');
      if (told.length === 0) return;
      // Counted once the read model holds this end (it is among them).
      await deps.readYourWrites(ending.position, [orchestrationEventsProjection.name]);
      const standing = await deps.readStore.collection<OrchestrationEventDocument>(ORCHESTRATION_EVENTS).count({ status: ending.type === 'OrchestrationEventDeadLettered' ? 'dead_letter' : 'expired', tenant_id });
      await emailEach(
        deps,
        told,
        {
          tenantId: tenant_id,
          preference: 'orchestration_alerts',
          kind: 'orchestration_alert',
          compose: (link) => alertEmailOf(ending, ended.event, tenant.name, Math.max(1, standing), link),
          idempotencyKey: (userId) => `orchestration-alert:${tenant_id}:${userId}:${hour}`,
        },
        context,
      );
    },
    async runDue() {
      const before = new Date(deps.clock.now().getTime() - DIGEST_GRACE_MS).toISOString();
      const due = await deps.readStore
        .collection<OrchestrationAlertDigestDocument>(ORCHESTRATION_ALERT_DIGESTS)
        .find({ where: { due_at: { lte: before } }, sort: { field: 'due_at', direction: 'asc' }, limit: 100 });
      for (const digest of due.items) await closeDigest(digest);
    },
  };
}
