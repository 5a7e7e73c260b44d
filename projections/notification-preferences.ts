// Read model `notification_preferences`: a person's notification preferences in one
// organization, once they set any (id: `<tenant id>:<user id>`); a person without a document has
// the defaults. The sagas that email read their recipients' documents by id. Its revision is
// the preferences' version (ETag).

import { type NotificationPreferencesEvent, notificationPreferencesEvents, preferencesOf } from '../domain/notification-preferences/notification-preferences';
import { documentProjection } from './document-projection';
import { membershipId } from './memberships';

export interface NotificationPreferencesDocument {
  id: string;
  tenant_id: string;
  user_id: string;
  orchestration_alerts: boolean;
  /** These are absent from documents written before the preference existed: on. */
  handoff_failures?: boolean;
  crm_failures?: boolean;
  knowledge_gaps?: boolean;
  updated_at: string;
  /** Revision of the preferences' stream: their version. */
  revision: number;
  position: number;
  [field: string]: unknown;
}

export const NOTIFICATION_PREFERENCES = 'notification_preferences';

export const notificationPreferencesProjection = documentProjection<NotificationPreferencesEvent['type'], NotificationPreferencesDocument>({
  name: 'notification_preferences',
  version: 1,
  collection: { name: NOTIFICATION_PREFERENCES },
  handles: notificationPreferencesEvents.types,
  documentId: (event) => membershipId(event.data.tenant_id, event.data.user_id),
  evolve(_current, event) {
    const { tenant_id, user_id, changed_at } = event.data;
    return { id: membershipId(tenant_id, user_id), tenant_id, user_id, ...preferencesOf(event.data), updated_at: changed_at, revision: event.revision };
  },
});
