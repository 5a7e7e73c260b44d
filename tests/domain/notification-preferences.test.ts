import { type NotificationPreferencesCommand, type NotificationPreferencesEvent, notificationPreferencesDecider } from '../../domain/notification-preferences/notification-preferences';
import { FIXED_NOW, deciderSpec } from '../support/decider-spec';

describe('notification preferences (decider)', () => {
  const spec = deciderSpec(notificationPreferencesDecider);
  const changed = (orchestration_alerts: boolean): NotificationPreferencesEvent => ({
    type: 'NotificationPreferencesChanged',
    data: { tenant_id: 't1', user_id: 'u1', orchestration_alerts, changed_at: FIXED_NOW.toISOString() },
  });
  const set = (preferences: NotificationPreferencesCommand['data']['preferences']): NotificationPreferencesCommand => ({
    type: 'SetNotificationPreferences',
    data: { tenant_id: 't1', user_id: 'u1', preferences },
  });

  it('turns a preference off and on again', () => {
    spec.given([]).when(set({ orchestration_alerts: false })).then([changed(false)]);
    spec.given([changed(false)]).when(set({ orchestration_alerts: true })).then([changed(true)]);
  });

  it('records nothing for the values it has, the defaults included, nor for a preference left out', () => {
    spec.given([]).when(set({ orchestration_alerts: true })).thenNothingHappened();
    spec.given([changed(false)]).when(set({ orchestration_alerts: false })).thenNothingHappened();
    spec.given([changed(false)]).when(set({})).thenNothingHappened();
    spec.given([changed(false)]).when(set({ orchestration_alerts: undefined })).thenNothingHappened();
  });
});
