// The super-admin aggregate: the platform operator's account, bootstrapped from
// SUPER_ADMIN_EMAIL / SUPER_ADMIN_PASSWORD. Stream `admin-<id>`.

import * as t from 'io-ts';
import { type Either, left, right } from 'fp-ts/Either';
import { declareEvent, eventGroup, type GroupEvent } from '../shared/events';
import type { Decider } from '../shared/decider';
import { type DomainError, conflict, notFound } from '../shared/errors';
import { toStreamName } from '../shared/stream-names';

export const AdminCreated = declareEvent('AdminCreated', t.type({ admin_id: t.string, email: t.string, password_hash: t.string, created_at: t.string }));
export const AdminPasswordChanged = declareEvent('AdminPasswordChanged', t.type({ admin_id: t.string, password_hash: t.string, changed_at: t.string }));
export const adminEvents = eventGroup('admin', [AdminCreated, AdminPasswordChanged]);
export type AdminEvent = GroupEvent<typeof adminEvents>;

export type AdminCommand =
  | { type: 'CreateAdmin'; data: { admin_id: string; email: string; password_hash: string } }
  | { type: 'ChangeAdminPassword'; data: { password_hash: string } };

export type AdminState = { status: 'absent' } | { status: 'active'; admin_id: string; email: string; password_hash: string };

export const adminStream = (adminId: string): string => toStreamName(adminEvents.category, adminId);

export const adminDecider: Decider<AdminCommand, AdminEvent, AdminState> = {
  initialState: () => ({ status: 'absent' }),
  evolve(state, event) {
    switch (event.type) {
      case 'AdminCreated':
        return { status: 'active', admin_id: event.data.admin_id, email: event.data.email, password_hash: event.data.password_hash };
      case 'AdminPasswordChanged':
        return state.status === 'absent' ? state : { ...state, password_hash: event.data.password_hash };
    }
  },
  decide(command, state, { now }): Either<DomainError, AdminEvent[]> {
    switch (command.type) {
      case 'CreateAdmin':
        if (state.status !== 'absent') return left(conflict('admin_exists', 'the admin already exists'));
        return right([{ type: 'AdminCreated', data: { ...command.data, created_at: now.toISOString() } }]);
      case 'ChangeAdminPassword':
        if (state.status === 'absent') return left(notFound('admin_not_found', 'no such admin'));
        return right([{ type: 'AdminPasswordChanged', data: { admin_id: state.admin_id, password_hash: command.data.password_hash, changed_at: now.toISOString() } }]);
    }
  },
};
