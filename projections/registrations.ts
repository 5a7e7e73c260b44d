// Read model `registrations`: sign-ups by status and deadline, what the registration due pass
// looks for (`pending` ones whose `expires_at` has passed). No personal data: ids and times.

import { type RegistrationEvent, registrationEvents } from '../domain/registration/registration';
import { documentProjection } from './document-projection';

export interface RegistrationDocument {
  id: string;
  user_id: string;
  tenant_id: string;
  status: 'pending' | 'completed' | 'abandoned';
  started_at: string;
  expires_at: string;
  /** Why it was abandoned (`email_taken`, `slug_taken`, `timed_out`); null otherwise. */
  reason: string | null;
  position: number;
  [field: string]: unknown;
}

export const REGISTRATIONS = 'registrations';

export const registrationsProjection = documentProjection<RegistrationEvent['type'], RegistrationDocument>({
  name: 'registrations',
  version: 1,
  collection: { name: REGISTRATIONS, indexes: [{ field: 'status' }, { field: 'expires_at' }] },
  handles: registrationEvents.types,
  documentId: (event) => event.data.registration_id,
  evolve(current, event) {
    if (event.type === 'RegistrationStarted') {
      const { registration_id, user_id, tenant_id, started_at, expires_at } = event.data;
      return { id: registration_id, user_id, tenant_id, status: 'pending', started_at, expires_at, reason: null };
    }
    if (!current) return null;
    return event.type === 'RegistrationCompleted' ? { ...current, status: 'completed' } : { ...current, status: 'abandoned', reason: event.data.reason };
  },
});
