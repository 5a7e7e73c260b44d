// OpenAPI description of the caller's notification preferences (me/notifications.ts).

import { type ApiArea, boolean, dateTime, nullable, object, ref, schemaOfCodec } from '../openapi/describe';
import { NotificationPreferencesBody } from './notifications';

export const meNotificationsApi: ApiArea = {
  tag: 'notifications',
  description: 'The caller’s notification preferences in the current organization: which of the platform’s emails they want from it (docs/notifications.md).',
  schemas: {
    NotificationPreferences: object({
      orchestration_alerts: boolean('the alert email when one of the organization’s orchestration events is dead-lettered or expires (sent to owners and admins: the first of an hour at once, the rest in a digest once the hour is over); on until turned off'),
      handoff_failures: boolean('the email when a handoff is given up because the organization’s handoff webhook failed every attempt (sent to owners and admins, at most one an hour); on until turned off'),
      crm_failures: boolean('the email when a lead is given up because the organization’s CRM failed every attempt (sent to owners and admins, at most one an hour); on until turned off'),
      knowledge_gaps: boolean('the weekly email of the questions the assistant could not answer from the knowledge base, counted as asked alike (sent to owners and admins, only for a week that had any); on until turned off'),
      updated_at: nullable(dateTime('when the caller last changed them; null while they are the defaults')),
    }),
  },
  routes: {
    '/api/v1/me/notifications': {
      get: {
        summary: 'My notification preferences in the current organization',
        access: 'user',
        versioned: 'read',
        success: { status: 200, description: 'the preferences (the defaults before any change)', json: ref('NotificationPreferences') },
      },
      patch: {
        summary: 'Change my notification preferences in the current organization',
        description:
          'A preference left out keeps its value; an unknown one is 400 naming it. The same values again record nothing. Each person sets their own: an owner or admin turns the alert emails off for everyone with the organization’s setting `orchestration_alert_emails`.',
        access: 'user',
        versioned: 'conditional',
        body: { json: schemaOfCodec(NotificationPreferencesBody) },
        success: { status: 200, description: 'the preferences as they stand', json: ref('NotificationPreferences') },
      },
    },
  },
};
