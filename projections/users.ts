// Read model `users`: identity as members lists and logins show it (never the password hash).
// A closed account has no document: closing deletes it, and a rebuild after the erasure (its
// email and name read as erased) makes none, so no erased email ever meets the unique index.

import { type UserEvent, userEvents } from '../domain/user/events';
import { ERASED_PERSONAL_DATA } from '../domain/shared/events';
import { documentProjection } from './document-projection';

export interface UserDocument {
  id: string;
  email: string;
  name: string;
  email_verified: boolean;
  registered_at: string;
  last_failed_login_at: string | null;
  position: number;
  [field: string]: unknown;
}

export const USERS = 'users';

export const usersProjection = documentProjection<UserEvent['type'], UserDocument>({
  name: 'users',
  version: 1,
  collection: { name: USERS, indexes: [{ field: 'email', unique: true }, { field: 'registered_at' }] },
  handles: userEvents.types,
  documentId: (event) => event.data.user_id,
  evolve(current, event) {
    if (event.type === 'UserRegistered') {
      const { user_id, email, name, registered_at } = event.data;
      if (email === ERASED_PERSONAL_DATA) return null;
      return { id: user_id, email, name, email_verified: false, registered_at, last_failed_login_at: null };
    }
    if (event.type === 'UserAccountClosed') return null;
    if (!current) return null;
    switch (event.type) {
      case 'EmailVerified':
      case 'PasswordReset':
        return { ...current, email_verified: true };
      case 'LoginFailed':
        return { ...current, last_failed_login_at: event.data.failed_at };
      default:
        // Its position moves on: the document says which events it has seen.
        return { ...current };
    }
  },
});
