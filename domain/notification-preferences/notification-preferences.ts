// A person's notification preferences in one organization: which of the platform's emails they
// want from it. One stream per person and organization, `notificationPreferences-<tenant
// id>:<user id>`: a preference is the person's own, set by them alone, and changes nothing any
// other member decides, so it does not share the organization's membership stream.
//
// Only emails a person may do without have a preference: the alert emails of orchestration
// events that were dead-lettered or expired (docs/orchestration-events.md, "Alert emails"), and
// those of handoffs and leads the organization's webhook or CRM never took
// (docs/tenant-configuration.md), and the weekly list of questions the assistant could not
// answer from the knowledge base. An
// invitation, a password reset or a verification code is always sent. Every preference is on
// until its person turns it off; the organization's own setting `orchestration_alert_emails`
// turns the orchestration alerts off for everyone.

import * as t from 'io-ts';
import { type Either, right } from 'fp-ts/Either';
import type { Decider } from '../shared/decider';
import type { DomainError } from '../shared/errors';
import { declareEvent, eventGroup, type GroupEvent } from '../shared/events';
import { toStreamName } from '../shared/stream-names';

/** Every preference and its value before its person sets it. */
export const DEFAULT_NOTIFICATION_PREFERENCES = { orchestration_alerts: true, handoff_failures: true, crm_failures: true, knowledge_gaps: true };
export type NotificationPreferences = typeof DEFAULT_NOTIFICATION_PREFERENCES;
export type NotificationKind = keyof NotificationPreferences;

/** The whole set after the change; the optional ones are absent from those recorded before they existed (on, then). */
export const NotificationPreferencesChanged = declareEvent(
  'NotificationPreferencesChanged',
  t.intersection([t.type({ tenant_id: t.string, user_id: t.string, orchestration_alerts: t.boolean, changed_at: t.string }), t.partial({ handoff_failures: t.boolean, crm_failures: t.boolean, knowledge_gaps: t.boolean })]),
);

/** The preferences an event records, a preference it predates at its default. */
export const preferencesOf = (data: { orchestration_alerts: boolean; handoff_failures?: boolean; crm_failures?: boolean; knowledge_gaps?: boolean }): NotificationPreferences => ({
  orchestration_alerts: data.orchestration_alerts,
  handoff_failures: data.handoff_failures ?? DEFAULT_NOTIFICATION_PREFERENCES.handoff_failures,
  crm_failures: data.crm_failures ?? DEFAULT_NOTIFICATION_PREFERENCES.crm_failures,
  knowledge_gaps: data.knowledge_gaps ?? DEFAULT_NOTIFICATION_PREFERENCES.knowledge_gaps,
});

export const notificationPreferencesEvents = eventGroup('notificationPreferences', [NotificationPreferencesChanged]);
export type NotificationPreferencesEvent = GroupEvent<typeof notificationPreferencesEvents>;

/** A preference left out keeps its value. */
export type NotificationPreferencesCommand = {
  type: 'SetNotificationPreferences';
  data: { tenant_id: string; user_id: string; preferences: Partial<NotificationPreferences> };
};

export type NotificationPreferencesState = { preferences: NotificationPreferences; changed_at: string | null };

export const notificationPreferencesStream = (tenantId: string, userId: string): string => toStreamName(notificationPreferencesEvents.category, `${tenantId}:${userId}`);

export const notificationPreferencesDecider: Decider<NotificationPreferencesCommand, NotificationPreferencesEvent, NotificationPreferencesState> = {
  initialState: () => ({ preferences: DEFAULT_NOTIFICATION_PREFERENCES, changed_at: null }),
  evolve(_state, event) {
    switch (event.type) {
      case 'NotificationPreferencesChanged':
        return { preferences: preferencesOf(event.data), changed_at: event.data.changed_at };
    }
  },
  decide(command, state, { now }): Either<DomainError, NotificationPreferencesEvent[]> {
    switch (command.type) {
      case 'SetNotificationPreferences': {
        const { tenant_id, user_id } = command.data;
        const next: NotificationPreferences = { ...state.preferences, ...definedOf(command.data.preferences) };
        // The same preferences again: nothing to record.
        if ((Object.keys(next) as NotificationKind[]).every((kind) => next[kind] === state.preferences[kind])) return right([]);
        return right([{ type: 'NotificationPreferencesChanged', data: { tenant_id, user_id, ...next, changed_at: now.toISOString() } }]);
      }
    }
  },
};

/** The preferences given, without those left out (an undefined value keeps the current one). */
const definedOf = (given: Partial<NotificationPreferences>): Partial<NotificationPreferences> =>
  Object.fromEntries(Object.entries(given).filter(([, value]) => value !== undefined));
