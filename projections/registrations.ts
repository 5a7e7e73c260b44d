// Read model `registrations`: sign-ups by status and deadline, what the registration due pass
// looks for (`pending` ones whose `expires_at` has passed). No personal data: ids and times.

import { type RegistrationEvent, registrationEvents } from '../domain/registration/registration';
import type { EventProjection } from './projection';

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

export const registrationsProjection: EventProjection<RegistrationEvent['type']> = {
  name: 'registrations',
  version: 1,
  collections: [{ name: REGISTRATIONS, indexes: [{ field: 'status' }, { field: 'expires_at' }] }],
  handles: registrationEvents.types,
  async apply(event, view) {
    if (event.type === 'RegistrationStarted') {
      const { registration_id, user_id, tenant_id, started_at, expires_at } = event.data;
      const doc: RegistrationDocument = { id: registration_id, user_id, tenant_id, status: 'pending', started_at, expires_at, reason: null, position: event.position };
      view.put(REGISTRATIONS, doc);
      return;
    }
    const current = await view.get<RegistrationDocument>(REGISTRATIONS, event.data.registration_id);
    if (!current || current.position >= event.position) return;
    if (event.type === 'RegistrationCompleted') view.patch(REGISTRATIONS, current.id, { status: 'completed', position: event.position });
    else view.patch(REGISTRATIONS, current.id, { status: 'abandoned', reason: event.data.reason, position: event.position });
  },
};
