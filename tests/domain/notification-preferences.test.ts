import { type NotificationPreferencesCommand, type NotificationPreferencesEvent, notificationPreferencesDecider } from '../../domain/notification-preferences/notification-preferences';
import { FIXED_NOW, deciderSpec } from '../support/decider-spec';

describe('notification preferences (decider)', () => {
  const spec = deciderSpec(notificationPreferencesDecider);
  const changed = (orchestration_alerts: boolean): NotificationPreferencesEvent => ({
    type: 'NotificationPreferencesChanged',
    data: { tenant_id: 't1', user_id: 'u1', orchestration_alerts, handoff_failures: true, crm_failures: true, knowledge_gaps: true, changed_at: FIXED_NOW.toISOString() },
  });
  const set = (preferences: NotificationPreferencesCommand['data']['preferences']): NotificationPreferencesCommand => ({
    type: 'SetNotificationPreferences',
    data: { tenant_id: 't1', user_id: 'u1', preferences },
  });

  it('turns a preference off and on again', () => {
    spec.given([]).when(set({ orchestration_alerts: false })).then([changed(false)]);
    spec.given([changed(false)]).when(set({ orchestration_alerts: true })).then([changed(true)]);
  });

  it('reads a preference an older event predates as on, and records the whole set with the next change', () => {
    const before: NotificationPreferencesEvent = { type: 'NotificationPreferencesChanged', data: { tenant_id: 't1', user_id: 'u1', orchestration_alerts: false, changed_at: FIXED_NOW.toISOString() } };
    spec.given([before]).when(set({ handoff_failures: true })).thenNothingHappened();
    spec.given([before]).when(set({ handoff_failures: false })).then([
      { type: 'NotificationPreferencesChanged', data: { tenant_id: 't1', user_id: 'u1', orchestration_alerts: false, handoff_failures: false, crm_failures: true, knowledge_gaps: true, changed_at: FIXED_NOW.toISOString() } },
    ]);
  });

  it('records nothing for the values it has, the defaults included, nor for a preference left out', () => {
    spec.given([]).when(set({ orchestration_alerts: true })).thenNothingHappened();
    spec.given([changed(false)]).when(set({ orchestration_alerts: false })).thenNothingHappened();
    spec.given([changed(false)]).when(set({})).thenNothingHappened();
    spec.given([changed(false)]).when(set({ orchestration_alerts: undefined })).thenNothingHappened();
  });
});
