// Read model `sessions`: every issued token's session, checked on each authenticated request
// (a revoked or expired one answers 401) and listed per user.

import { type SessionEvent, sessionEvents } from '../domain/session/session';
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

export const sessionsProjection: EventProjection<SessionEvent['type']> = {
  name: 'sessions',
  version: 1,
  collections: [{ name: SESSIONS, indexes: [{ field: 'user_id' }, { field: 'tenant_id' }, { field: 'status' }, { field: 'issued_at' }] }],
  handles: sessionEvents.types,
  async apply(event, view) {
    if (event.type === 'SessionStarted') {
      const doc: SessionDocument = {
        id: event.data.jti,
        user_id: event.data.user_id,
        tenant_id: event.data.tenant_id,
        audience: event.data.audience,
        status: 'active',
        issued_at: event.data.issued_at,
        expires_at: event.data.expires_at,
        revoked_at: null,
        revoked_reason: null,
        ip: event.data.ip,
        user_agent: event.data.user_agent,
        impersonated_by: event.data.impersonated_by ?? null,
        position: event.position,
      };
      view.put(SESSIONS, doc);
      return;
    }
    if (event.type === 'ImpersonationStarted') return;
    if (await view.get(SESSIONS, event.data.jti)) {
      view.patch(SESSIONS, event.data.jti, { status: 'revoked', revoked_at: event.data.revoked_at, revoked_reason: event.data.reason, position: event.position });
    }
  },
};
