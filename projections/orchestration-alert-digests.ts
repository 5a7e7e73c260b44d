// Read model `orchestration_alert_digests`: one document per organization and hour whose alert
// digest was opened (domain/orchestration-alert-digest), id `<tenant id>:<hour>`. The alert
// saga's due pass reads the open ones whose hour is over (`due_at` set only while open).

import { HOUR_MS, type OrchestrationAlertDigestEvent, orchestrationAlertDigestEvents } from '../domain/orchestration-alert-digest/alert-digest';
import { documentProjection } from './document-projection';

export interface OrchestrationAlertDigestDocument {
  id: string;
  tenant_id: string;
  hour: number;
  /** When the hour ends (ISO); the due pass waits a grace after it. Null once closed. */
  due_at: string | null;
  status: 'open' | 'closed';
  first_event_id: string;
  standing: number | null;
  recipients: number | null;
  closed_at: string | null;
  position: number;
  [field: string]: unknown;
}

export const ORCHESTRATION_ALERT_DIGESTS = 'orchestration_alert_digests';

export const orchestrationAlertDigestId = (tenantId: string, hour: number): string => `${tenantId}:${hour}`;

export const orchestrationAlertDigestsProjection = documentProjection<OrchestrationAlertDigestEvent['type'], OrchestrationAlertDigestDocument>({
  name: 'orchestration_alert_digests',
  version: 1,
  collection: { name: ORCHESTRATION_ALERT_DIGESTS, indexes: [{ field: 'due_at', sparse: true }] },
  handles: orchestrationAlertDigestEvents.types,
  documentId: (event) => orchestrationAlertDigestId(event.data.tenant_id, event.data.hour),
  evolve(current, event) {
    switch (event.type) {
      case 'OrchestrationAlertDigestOpened': {
        const { tenant_id, hour, first_event_id } = event.data;
        return { id: orchestrationAlertDigestId(tenant_id, hour), tenant_id, hour, due_at: new Date((hour + 1) * HOUR_MS).toISOString(), status: 'open', first_event_id, standing: null, recipients: null, closed_at: null };
      }
      case 'OrchestrationAlertDigestClosed': {
        if (current === null) return null;
        const { standing, recipients, closed_at } = event.data;
        return { ...current, due_at: null, status: 'closed', standing, recipients, closed_at };
      }
    }
  },
});
