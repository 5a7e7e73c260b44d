// The session aggregate: one signed token's server-side life, so that it can be revoked.
// Stream `session-<jti>`. A session the super admin opens as a member (impersonation) names
// the admin in `impersonated_by` and records `ImpersonationStarted` with it, so the tenant's
// audit log shows who looked through whose eyes. The IP and User-Agent a session started from
// are sealed under the member's key (`user:<id>`), so closing the account erases them.

import * as t from 'io-ts';
import { type Either, left, right } from 'fp-ts/Either';
import { type EventOf, declareEvent, eventGroup, type GroupEvent } from '../shared/events';
import type { Decider } from '../shared/decider';
import { type DomainError, conflict, invalid, notFound } from '../shared/errors';
import { toStreamName } from '../shared/stream-names';
import { userSubject } from '../user/events';

export const SessionAudience = t.keyof({ tenant: null, admin: null });
export type SessionAudience = t.TypeOf<typeof SessionAudience>;

/** `impersonated_by` (the admin's id) is optional: sessions recorded before impersonation existed have none. */
export const SessionStarted = declareEvent(
  'SessionStarted',
  t.intersection([
    t.type({
      jti: t.string,
      user_id: t.string,
      tenant_id: t.union([t.string, t.null]),
      audience: SessionAudience,
      issued_at: t.string,
      expires_at: t.string,
      ip: t.union([t.string, t.null]),
      user_agent: t.union([t.string, t.null]),
    }),
    t.partial({ impersonated_by: t.string }),
  ]),
);
export const SessionRevoked = declareEvent('SessionRevoked', t.type({ jti: t.string, user_id: t.string, reason: t.string, revoked_at: t.string }));
export const ImpersonationStarted = declareEvent(
  'ImpersonationStarted',
  t.type({ jti: t.string, tenant_id: t.string, user_id: t.string, admin_id: t.string, expires_at: t.string }),
);
export const sessionEvents = eventGroup('session', [SessionStarted, SessionRevoked, ImpersonationStarted], {
  // The IP and browser a member logged in from are theirs: closing the account (the user's UserAccountClosed) erases them.
  subject: (data) => userSubject(String(data.user_id)),
  fields: { SessionStarted: ['ip', 'user_agent'] },
});
export type SessionEvent = GroupEvent<typeof sessionEvents>;

export type SessionCommand =
  | { type: 'StartSession'; data: EventOf<typeof SessionStarted>['data'] }
  | { type: 'RevokeSession'; data: { reason: string } };

export type SessionState = { status: 'absent' } | { status: 'active' | 'revoked'; jti: string; user_id: string; tenant_id: string | null };

export const sessionStream = (jti: string): string => toStreamName(sessionEvents.category, jti);

export const sessionDecider: Decider<SessionCommand, SessionEvent, SessionState> = {
  initialState: () => ({ status: 'absent' }),
  evolve(state, event) {
    switch (event.type) {
      case 'SessionStarted':
        return { status: 'active', jti: event.data.jti, user_id: event.data.user_id, tenant_id: event.data.tenant_id };
      case 'SessionRevoked':
        return state.status === 'absent' ? state : { ...state, status: 'revoked' };
      case 'ImpersonationStarted':
        return state;
    }
  },
  decide(command, state, { now }): Either<DomainError, SessionEvent[]> {
    switch (command.type) {
      case 'StartSession':
        if (state.status !== 'absent') return left(conflict('session_exists', 'the session already exists'));
        if (command.data.impersonated_by !== undefined && command.data.tenant_id === null) return left(invalid('invalid_session', 'an impersonation session belongs to a tenant'));
        return right(startedEvents(command.data));
      case 'RevokeSession':
        if (state.status === 'absent') return left(notFound('session_not_found', 'no such session'));
        if (state.status === 'revoked') return right([]);
        return right([{ type: 'SessionRevoked', data: { jti: state.jti, user_id: state.user_id, reason: command.data.reason, revoked_at: now.toISOString() } }]);
    }
  },
};

/** A session's start, and when an admin opens it as a tenant's member, the impersonation that names them both. */
function startedEvents(data: EventOf<typeof SessionStarted>['data']): SessionEvent[] {
  const started: SessionEvent = { type: 'SessionStarted', data };
  const { impersonated_by: adminId, tenant_id: tenantId } = data;
  if (adminId === undefined || tenantId === null) return [started];
  return [started, { type: 'ImpersonationStarted', data: { jti: data.jti, tenant_id: tenantId, user_id: data.user_id, admin_id: adminId, expires_at: data.expires_at } }];
}
