// A person's notification preferences in their current organization (`GET, PATCH
// /api/v1/me/notifications`; domain/notification-preferences): any member sets their own, and
// only their own. The sagas that email a preference covers ask `turnedOff` who does not want it.

import {
  DEFAULT_NOTIFICATION_PREFERENCES,
  type NotificationKind,
  type NotificationPreferences,
  type NotificationPreferencesCommand,
  type NotificationPreferencesEvent,
  type NotificationPreferencesState,
  notificationPreferencesDecider,
  notificationPreferencesEvents,
  notificationPreferencesStream,
  preferencesOf,
} from '../../domain/notification-preferences/notification-preferences';
import { NOTIFICATION_PREFERENCES, type NotificationPreferencesDocument } from '../../projections/notification-preferences';
import { MEMBERSHIPS, type MembershipDocument, membershipId } from '../../projections/memberships';
import { type Aggregate, type CommandDependencies, handleCommand, revisionExpectedBy } from '../command-handling/handle-command';
import type { ReadModelDependencies, ReadYourWritesDependencies } from '../shared/read-models';
import { readBackChange } from '../shared/read-models';
import type { RequestContext } from '../shared/request-context';
import { type Versioned, type WritePreconditions, versionOfRevision } from '../shared/versions';
import { type Principal, actingContext } from '../session/sessions';

export const notificationPreferencesAggregate: Aggregate<NotificationPreferencesCommand, NotificationPreferencesEvent, NotificationPreferencesState> = {
  decider: notificationPreferencesDecider,
  events: notificationPreferencesEvents,
};

export type NotificationPreferencesView = NotificationPreferences & { updated_at: string | null };

/** The caller's preferences in their organization with their version (ETag); the defaults, `updated_at: null`, before any change. */
export async function readNotificationPreferences(deps: ReadModelDependencies, principal: Principal): Promise<Versioned<NotificationPreferencesView>> {
  const doc = await deps.readStore.collection<NotificationPreferencesDocument>(NOTIFICATION_PREFERENCES).get(membershipId(principal.tenant_id, principal.user_id));
  if (doc === null) return { value: { ...DEFAULT_NOTIFICATION_PREFERENCES, updated_at: null }, version: versionOfRevision(-1) };
  return { value: { ...preferencesOf(doc), updated_at: doc.updated_at }, version: versionOfRevision(doc.revision) };
}

/**
 * Changes the caller's preferences in their organization: those left out keep their value, the
 * same values again record nothing. 412 when If-Match names another version.
 */
export async function setNotificationPreferences(
  deps: CommandDependencies & ReadModelDependencies & ReadYourWritesDependencies,
  principal: Principal,
  preferences: Partial<NotificationPreferences>,
  context: RequestContext,
  preconditions: WritePreconditions = {},
): Promise<Versioned<NotificationPreferencesView>> {
  const stream = notificationPreferencesStream(principal.tenant_id, principal.user_id);
  const expectedRevision = await revisionExpectedBy(deps, notificationPreferencesAggregate, stream, 'notification preferences', preconditions);
  const result = await handleCommand(
    deps,
    notificationPreferencesAggregate,
    stream,
    { type: 'SetNotificationPreferences', data: { tenant_id: principal.tenant_id, user_id: principal.user_id, preferences } },
    actingContext(principal, context),
    { expectedRevision },
  );
  return readBackChange(deps, result, 'the notification preferences', () => readNotificationPreferences(deps, principal));
}

/** Those of `userIds` who turned the email `kind` off in the organization. */
export async function turnedOff(deps: ReadModelDependencies, tenantId: string, userIds: readonly string[], kind: NotificationKind): Promise<Set<string>> {
  if (userIds.length === 0) return new Set();
  const found = await deps.readStore
    .collection<NotificationPreferencesDocument>(NOTIFICATION_PREFERENCES)
    .find({ where: { id: { in: userIds.map((userId) => membershipId(tenantId, userId)) } }, limit: userIds.length });
  return new Set(found.items.filter((doc) => doc[kind] === false).map((doc) => doc.user_id));
}

/** More owners and admins than an organization has; each gets their email. */
const MAX_RECIPIENTS = 100;

/** The organization's active owners and admins with an address who did not turn the email `kind` off, oldest members first. */
export async function ownersAndAdminsWanting(deps: ReadModelDependencies, tenantId: string, kind: NotificationKind): Promise<Array<MembershipDocument & { email: string }>> {
  const recipients = await deps.readStore.collection<MembershipDocument>(MEMBERSHIPS).find({
    where: { tenant_id: tenantId, status: 'active', role: { in: ['owner', 'admin'] } },
    sort: { field: 'joined_at', direction: 'asc' },
    limit: MAX_RECIPIENTS,
  });
  const unwanted = await turnedOff(deps, tenantId, recipients.items.map((member) => member.user_id), kind);
  return recipients.items.flatMap((member) => (member.email !== null && !unwanted.has(member.user_id) ? [{ ...member, email: member.email }] : []));
}
