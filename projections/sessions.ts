// Read model `sessions`: every issued token's session, checked on each authenticated request
// (a revoked or expired one answers 401) and listed per user. A closed account's sessions leave
// it (UserAccountClosed): their IP and browser were the person's, and their tokens answer 401
// as for any session the platform does not know.

import { type SessionEvent, sessionEvents } from '../domain/session/session';
import { documentProjection } from './document-projection';
import type { EventProjection } from './projection';

export interface SessionDocument {
  id: string;
  user_id: string;
  tenant_id: string | null;
  audience: 'tenant' | 'admin';
  status: 'active' | 'revoked';
  issued_at: string;
  expires_at: string;
  revoked_at: string | null;
  revoked_reason: string | null;
  ip: string | null;
  user_agent: string | null;
  /** The super admin who opened this session as the member; null for the member's own (absent on documents written before). */
  impersonated_by?: string | null;
  position: number;
  [field: string]: unknown;
}

export const SESSIONS = 'sessions';

const sessionDocuments = documentProjection<SessionEvent['type'], SessionDocument>({
  name: 'sessions',
  // 2: a closed account's sessions are dropped.
  version: 2,
  collection: { name: SESSIONS, indexes: [{ field: 'user_id' }, { field: 'tenant_id' }, { field: 'status' }, { field: 'issued_at' }] },
  handles: sessionEvents.types,
  documentId: (event) => event.data.jti,
  evolve(current, event) {
    switch (event.type) {
      case 'SessionStarted': {
        const { jti, user_id, tenant_id, audience, issued_at, expires_at, ip, user_agent, impersonated_by } = event.data;
        return {
          id: jti,
          user_id,
          tenant_id,
          audience,
          status: 'active',
          issued_at,
          expires_at,
          revoked_at: null,
          revoked_reason: null,
          ip,
          user_agent,
          impersonated_by: impersonated_by ?? null,
        };
      }
      // For the audit log: the session's document shows it already (`impersonated_by`).
      case 'ImpersonationStarted':
        return current;
      case 'SessionRevoked':
        return current && { ...current, status: 'revoked', revoked_at: event.data.revoked_at, revoked_reason: event.data.reason };
    }
  },
});

export const sessionsProjection: EventProjection<SessionEvent['type'] | 'UserAccountClosed'> = {
  ...sessionDocuments,
  handles: [...sessionDocuments.handles, 'UserAccountClosed'],
  apply(event, view) {
    if (event.type === 'UserAccountClosed') return view.deleteWhere(SESSIONS, { user_id: event.data.user_id });
    return sessionDocuments.apply(event, view);
  },
};
