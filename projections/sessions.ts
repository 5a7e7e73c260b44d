// Read model `sessions`: every issued token's session, checked on each authenticated request
// (a revoked or expired one answers 401) and listed per user.

import { type SessionEvent, sessionEvents } from '../domain/session/session';
import { documentProjection } from './document-projection';

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

export const sessionsProjection = documentProjection<SessionEvent['type'], SessionDocument>({
  name: 'sessions',
  version: 1,
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
