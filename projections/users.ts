// Read model `users`: identity as members lists and logins show it (never the password hash).

import { type UserEvent, userEvents } from '../domain/user/events';
import type { EventProjection } from './projection';

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

export const usersProjection: EventProjection<UserEvent['type']> = {
  name: 'users',
  version: 1,
  collections: [{ name: USERS, indexes: [{ field: 'email', unique: true }, { field: 'registered_at' }] }],
  handles: userEvents.types,
  async apply(event, view) {
    if (event.type === 'UserRegistered') {
      const doc: UserDocument = {
        id: event.data.user_id,
        email: event.data.email,
        name: event.data.name,
        email_verified: false,
        registered_at: event.data.registered_at,
        last_failed_login_at: null,
        position: event.position,
      };
      view.put(USERS, doc);
      return;
    }
    const current = await view.get<UserDocument>(USERS, event.data.user_id);
    if (!current || current.position >= event.position) return;
    switch (event.type) {
      case 'EmailVerified':
      case 'PasswordReset':
        view.patch(USERS, current.id, { email_verified: true, position: event.position });
        return;
      case 'LoginFailed':
        view.patch(USERS, current.id, { last_failed_login_at: event.data.failed_at, position: event.position });
        return;
      default:
        view.patch(USERS, current.id, { position: event.position });
    }
  },
};
