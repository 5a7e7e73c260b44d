// The membership aggregate: who belongs to a tenant, with which role and status. One stream
// per tenant (`membership-<tenant_id>`), because its rules span members: an admin cannot
// demote an owner, the last owner cannot leave or be demoted, and ownership moves only
// through a transfer (spec 4.11).

import * as t from 'io-ts';
import { type Either, left, right } from 'fp-ts/Either';
import { declareEvent, eventGroup, type GroupEvent } from '../shared/events';
import type { Decider } from '../shared/decider';
import { type DomainError, conflict, forbidden, invalid, notFound } from '../shared/errors';
import { toStreamName } from '../shared/stream-names';

export const Role = t.keyof({ owner: null, admin: null, member: null });
export type Role = t.TypeOf<typeof Role>;
export const MemberStatus = t.keyof({ active: null, disabled: null });
export type MemberStatus = t.TypeOf<typeof MemberStatus>;

export const ROLE_RANK: Record<Role, number> = { member: 1, admin: 2, owner: 3 };

export const MemberJoined = declareEvent('MemberJoined', t.type({ tenant_id: t.string, user_id: t.string, role: Role, joined_at: t.string }));
export const MemberRoleChanged = declareEvent('MemberRoleChanged', t.type({ tenant_id: t.string, user_id: t.string, role: Role, previous_role: Role }));
export const MemberStatusChanged = declareEvent('MemberStatusChanged', t.type({ tenant_id: t.string, user_id: t.string, status: MemberStatus }));
/**
 * Version 2 records when the member left or was removed; a version-1 event did not say, and
 * reads with `removed_at: null` (the audit log still has the time it was recorded).
 */
export const MemberRemoved = declareEvent(
  'MemberRemoved',
  t.type({ tenant_id: t.string, user_id: t.string, reason: t.keyof({ removed: null, left: null }), removed_at: t.union([t.string, t.null]) }),
  { version: 2, upcasters: { 1: (v1) => ({ ...v1, removed_at: null }) } },
);
export const OwnershipTransferred = declareEvent('OwnershipTransferred', t.type({ tenant_id: t.string, from_user_id: t.string, to_user_id: t.string }));

export const membershipEvents = eventGroup('membership', [MemberJoined, MemberRoleChanged, MemberStatusChanged, MemberRemoved, OwnershipTransferred]);
export type MembershipEvent = GroupEvent<typeof membershipEvents>;

export type MembershipCommand =
  | { type: 'AddMember'; data: { tenant_id: string; user_id: string; role: Role } }
  | { type: 'ChangeMemberRole'; data: { actor_user_id: string; user_id: string; role: Role } }
  | { type: 'ChangeMemberStatus'; data: { actor_user_id: string; user_id: string; status: MemberStatus } }
  | { type: 'RemoveMember'; data: { actor_user_id: string; user_id: string } }
  | { type: 'TransferOwnership'; data: { actor_user_id: string; to_user_id: string } };

export interface Member {
  role: Role;
  status: MemberStatus;
}

export type MembershipState = { status: 'absent' } | { status: 'active'; tenant_id: string; members: Readonly<Record<string, Member>> };

export const membershipStream = (tenantId: string): string => toStreamName(membershipEvents.category, tenantId);

type Roster = Extract<MembershipState, { status: 'active' }>;

function activeOwners(roster: Roster): string[] {
  return Object.entries(roster.members)
    .filter(([, member]) => member.role === 'owner' && member.status === 'active')
    .map(([userId]) => userId);
}

/** The acting member, who must be active and at least `minimum`. */
function actorOf(roster: Roster, actorUserId: string, minimum: Role): Either<DomainError, Member> {
  const actor = roster.members[actorUserId];
  if (!actor || actor.status !== 'active') return left(forbidden('not_a_member', 'you are not an active member of this organization'));
  if (ROLE_RANK[actor.role] < ROLE_RANK[minimum]) return left(forbidden('insufficient_role', `this needs the ${minimum} role or higher`));
  return right(actor);
}

function targetOf(roster: Roster, userId: string): Either<DomainError, Member> {
  const member = roster.members[userId];
  return member ? right(member) : left(notFound('member_not_found', 'no such member'));
}

/** The checks shared by role, status and removal changes made to someone else. */
function mayManage(roster: Roster, actorUserId: string, targetUserId: string): Either<DomainError, { actor: Member; target: Member }> {
  const actor = actorOf(roster, actorUserId, 'admin');
  if (actor._tag === 'Left') return actor;
  const target = targetOf(roster, targetUserId);
  if (target._tag === 'Left') return target;
  if (target.right.role === 'owner' && actor.right.role !== 'owner') {
    return left(forbidden('owner_protected', 'only an owner can change an owner'));
  }
  return right({ actor: actor.right, target: target.right });
}

const isLastActiveOwner = (roster: Roster, userId: string): boolean => {
  const owners = activeOwners(roster);
  return owners.length === 1 && owners[0] === userId;
};

export const membershipDecider: Decider<MembershipCommand, MembershipEvent, MembershipState> = {
  initialState: () => ({ status: 'absent' }),

  evolve(state, event) {
    const roster: Roster = state.status === 'absent' ? { status: 'active', tenant_id: event.data.tenant_id, members: {} } : state;
    const members = { ...roster.members };
    switch (event.type) {
      case 'MemberJoined':
        members[event.data.user_id] = { role: event.data.role, status: 'active' };
        break;
      case 'MemberRoleChanged':
        if (members[event.data.user_id]) members[event.data.user_id] = { ...members[event.data.user_id], role: event.data.role };
        break;
      case 'MemberStatusChanged':
        if (members[event.data.user_id]) members[event.data.user_id] = { ...members[event.data.user_id], status: event.data.status };
        break;
      case 'MemberRemoved':
        delete members[event.data.user_id];
        break;
      case 'OwnershipTransferred':
        if (members[event.data.from_user_id]) members[event.data.from_user_id] = { ...members[event.data.from_user_id], role: 'admin' };
        if (members[event.data.to_user_id]) members[event.data.to_user_id] = { ...members[event.data.to_user_id], role: 'owner' };
        break;
    }
    return { ...roster, members };
  },

  decide(command, state, { now }): Either<DomainError, MembershipEvent[]> {
    if (command.type === 'AddMember') {
      const { tenant_id, user_id, role } = command.data;
      if (state.status === 'absent' && role !== 'owner') return left(invalid('first_member_owner', 'the first member of an organization is its owner'));
      if (state.status === 'active' && state.members[user_id]) return left(conflict('already_member', 'this user is already a member'));
      if (state.status === 'active' && role === 'owner') return left(invalid('invalid_role', 'ownership moves only through transfer-ownership', 'role'));
      return right([{ type: 'MemberJoined', data: { tenant_id, user_id, role, joined_at: now.toISOString() } }]);
    }
    if (state.status === 'absent') return left(notFound('organization_not_found', 'no such organization'));
    const tenant_id = state.tenant_id;
    switch (command.type) {
      case 'ChangeMemberRole': {
        const { actor_user_id, user_id, role } = command.data;
        if (role === 'owner') return left(invalid('invalid_role', 'ownership moves only through transfer-ownership', 'role'));
        const allowed = mayManage(state, actor_user_id, user_id);
        if (allowed._tag === 'Left') return allowed;
        const { target } = allowed.right;
        if (target.role === role) return right([]);
        if (target.role === 'owner' && isLastActiveOwner(state, user_id)) return left(conflict('last_owner', 'the last owner cannot be demoted; transfer ownership first'));
        return right([{ type: 'MemberRoleChanged', data: { tenant_id, user_id, role, previous_role: target.role } }]);
      }
      case 'ChangeMemberStatus': {
        const { actor_user_id, user_id, status } = command.data;
        if (actor_user_id === user_id) return left(invalid('cannot_change_own_status', 'you cannot change your own status', 'user_id'));
        const allowed = mayManage(state, actor_user_id, user_id);
        if (allowed._tag === 'Left') return allowed;
        if (allowed.right.target.status === status) return right([]);
        if (status === 'disabled' && isLastActiveOwner(state, user_id)) return left(conflict('last_owner', 'the last owner cannot be disabled'));
        return right([{ type: 'MemberStatusChanged', data: { tenant_id, user_id, status } }]);
      }
      case 'RemoveMember': {
        const { actor_user_id, user_id } = command.data;
        const leaving = actor_user_id === user_id;
        if (leaving) {
          const self = targetOf(state, user_id);
          if (self._tag === 'Left') return self;
        } else {
          const allowed = mayManage(state, actor_user_id, user_id);
          if (allowed._tag === 'Left') return allowed;
        }
        if (isLastActiveOwner(state, user_id) || (state.members[user_id].role === 'owner' && activeOwners(state).length <= 1)) {
          return left(conflict('last_owner', 'the last owner cannot leave; transfer ownership first'));
        }
        return right([{ type: 'MemberRemoved', data: { tenant_id, user_id, reason: leaving ? 'left' : 'removed', removed_at: now.toISOString() } }]);
      }
      case 'TransferOwnership': {
        const { actor_user_id, to_user_id } = command.data;
        const actor = actorOf(state, actor_user_id, 'owner');
        if (actor._tag === 'Left') return actor;
        if (to_user_id === actor_user_id) return left(invalid('invalid_target', 'you already own this organization', 'user_id'));
        const target = targetOf(state, to_user_id);
        if (target._tag === 'Left') return target;
        if (target.right.status !== 'active') return left(conflict('member_disabled', 'ownership can only go to an active member'));
        return right([{ type: 'OwnershipTransferred', data: { tenant_id, from_user_id: actor_user_id, to_user_id } }]);
      }
    }
  },
};
