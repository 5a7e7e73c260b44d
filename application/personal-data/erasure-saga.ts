// Saga `personal_data_erasure`: deletes a subject's key once an event that erases it is
// recorded (ConversationErased...). The use case that records the erasure deletes the key at
// once too; this saga makes it certain when that process stopped in between (the event is
// recorded, the key not yet deleted), since delivery is at least once. Erasing is idempotent.

import { domainEvents } from '../../domain/events';
import type { PersonalDataVault } from '../ports/personal-data';
import type { AnySaga } from '../sagas/saga';

export const PERSONAL_DATA_ERASURE = 'personal_data_erasure';

export function personalDataErasureSaga(vault: PersonalDataVault): AnySaga {
  return {
    name: PERSONAL_DATA_ERASURE,
    version: 1,
    filter: { kind: 'event_type', types: domainEvents.erasingTypes },
    async handle(event) {
      const subject = domainEvents.erasedSubjectOf(event.type, event.data);
      if (subject !== null) await vault.erase(subject);
    },
  };
}
