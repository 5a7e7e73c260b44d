// The session aggregate: one signed token's server-side life, so that it can be revoked.
// Stream `session-<jti>`.

import * as t from 'io-ts';
import { type Either, left, right } from 'fp-ts/Either';
import { type EventOf, declareEvent, eventGroup, type GroupEvent } from '../shared/events';
import type { Decider } from '../shared/decider';
import { type DomainError, conflict, notFound } from '../shared/errors';
import { toStreamName } from '../shared/stream-names';

export const SessionAudience = t.keyof({ tenant: null, admin: null });
export type SessionAudience = t.TypeOf<typeof SessionAudience>;

export const SessionStarted = declareEvent(
  'SessionStarted',
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
);
export const SessionRevoked = declareEvent('SessionRevoked', t.type({ jti: t.string, user_id: t.string, reason: t.string, revoked_at: t.string }));
export const sessionEvents = eventGroup('session', [SessionStarted, SessionRevoked]);
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
    }
  },
  decide(command, state, { now }): Either<DomainError, SessionEvent[]> {
    switch (command.type) {
      case 'StartSession':
        if (state.status !== 'absent') return left(conflict('session_exists', 'the session already exists'));
        return right([{ type: 'SessionStarted', data: command.data }]);
      case 'RevokeSession':
        if (state.status === 'absent') return left(notFound('session_not_found', 'no such session'));
        if (state.status === 'revoked') return right([]);
        return right([{ type: 'SessionRevoked', data: { jti: state.jti, user_id: state.user_id, reason: command.data.reason, revoked_at: now.toISOString() } }]);
    }
  },
};
