import { type MembershipEvent, membershipDecider } from '../../domain/membership/membership';
import { FIXED_NOW, deciderSpec } from '../support/decider-spec';

const spec = deciderSpec(membershipDecider);
const T = 't1';
const joined = (user_id: string, role: 'owner' | 'admin' | 'member'): MembershipEvent => ({
  type: 'MemberJoined',
  data: { tenant_id: T, user_id, role, joined_at: FIXED_NOW.toISOString() },
});
const organization = [joined('olga', 'owner'), joined('adam', 'admin'), joined('mia', 'member'), joined('max', 'member')];

describe('membership decider (spec 4.11)', () => {
  describe('joining', () => {
    it('makes the first member the owner', () => {
      spec.given([]).when({ type: 'AddMember', data: { tenant_id: T, user_id: 'olga', role: 'owner' } }).then([joined('olga', 'owner')]);
      spec.given([]).when({ type: 'AddMember', data: { tenant_id: T, user_id: 'olga', role: 'member' } }).thenThrows('invalid', 'first_member_owner');
    });

    it('refuses a second membership and a second owner by joining', () => {
      spec.given(organization).when({ type: 'AddMember', data: { tenant_id: T, user_id: 'mia', role: 'member' } }).thenThrows('conflict', 'already_member');
      spec.given(organization).when({ type: 'AddMember', data: { tenant_id: T, user_id: 'new', role: 'owner' } }).thenThrows('invalid', 'invalid_role', 'role');
    });
  });

  describe('roles', () => {
    it('lets an admin promote a member and demote another admin', () => {
      spec.given(organization).when({ type: 'ChangeMemberRole', data: { actor_user_id: 'adam', user_id: 'mia', role: 'admin' } }).then([
        { type: 'MemberRoleChanged', data: { tenant_id: T, user_id: 'mia', role: 'admin', previous_role: 'member' } },
      ]);
    });

    it('forbids a member to change roles and an admin to demote an owner', () => {
      spec.given(organization).when({ type: 'ChangeMemberRole', data: { actor_user_id: 'mia', user_id: 'max', role: 'admin' } }).thenThrows('forbidden', 'insufficient_role');
      spec.given(organization).when({ type: 'ChangeMemberRole', data: { actor_user_id: 'adam', user_id: 'olga', role: 'member' } }).thenThrows('forbidden', 'owner_protected');
    });

    it('keeps the last owner from being demoted, even by themselves', () => {
      spec.given(organization).when({ type: 'ChangeMemberRole', data: { actor_user_id: 'olga', user_id: 'olga', role: 'admin' } }).thenThrows('conflict', 'last_owner');
    });

    it('moves ownership only through a transfer', () => {
      spec.given(organization).when({ type: 'ChangeMemberRole', data: { actor_user_id: 'olga', user_id: 'mia', role: 'owner' } }).thenThrows('invalid', 'invalid_role', 'role');
      spec.given(organization).when({ type: 'TransferOwnership', data: { actor_user_id: 'olga', to_user_id: 'mia' } }).then([
        { type: 'OwnershipTransferred', data: { tenant_id: T, from_user_id: 'olga', to_user_id: 'mia' } },
      ]);
      spec.given(organization).when({ type: 'TransferOwnership', data: { actor_user_id: 'adam', to_user_id: 'mia' } }).thenThrows('forbidden', 'insufficient_role');
      spec.given(organization).when({ type: 'TransferOwnership', data: { actor_user_id: 'olga', to_user_id: 'nobody' } }).thenThrows('not_found', 'member_not_found');
    });

    it('records nothing when the role is already the one asked', () => {
      spec.given(organization).when({ type: 'ChangeMemberRole', data: { actor_user_id: 'olga', user_id: 'adam', role: 'admin' } }).thenNothingHappened();
    });
  });

  describe('status and removal', () => {
    it('disables a member, but not oneself, an owner (as admin) or the last owner', () => {
      spec.given(organization).when({ type: 'ChangeMemberStatus', data: { actor_user_id: 'adam', user_id: 'mia', status: 'disabled' } }).then([
        { type: 'MemberStatusChanged', data: { tenant_id: T, user_id: 'mia', status: 'disabled' } },
      ]);
      spec.given(organization).when({ type: 'ChangeMemberStatus', data: { actor_user_id: 'adam', user_id: 'adam', status: 'disabled' } }).thenThrows('invalid', 'cannot_change_own_status');
      spec.given(organization).when({ type: 'ChangeMemberStatus', data: { actor_user_id: 'adam', user_id: 'olga', status: 'disabled' } }).thenThrows('forbidden', 'owner_protected');
    });

    it('lets a member leave and an admin remove a member, but the last owner cannot leave', () => {
      spec.given(organization).when({ type: 'RemoveMember', data: { actor_user_id: 'mia', user_id: 'mia' } }).then([
        { type: 'MemberRemoved', data: { tenant_id: T, user_id: 'mia', reason: 'left', removed_at: FIXED_NOW.toISOString() } },
      ]);
      spec.given(organization).when({ type: 'RemoveMember', data: { actor_user_id: 'adam', user_id: 'max' } }).then([
        { type: 'MemberRemoved', data: { tenant_id: T, user_id: 'max', reason: 'removed', removed_at: FIXED_NOW.toISOString() } },
      ]);
      spec.given(organization).when({ type: 'RemoveMember', data: { actor_user_id: 'olga', user_id: 'olga' } }).thenThrows('conflict', 'last_owner');
      spec.given(organization).when({ type: 'RemoveMember', data: { actor_user_id: 'mia', user_id: 'max' } }).thenThrows('forbidden', 'insufficient_role');
    });

    it('forbids a disabled admin to act', () => {
      const disabledAdam: MembershipEvent = { type: 'MemberStatusChanged', data: { tenant_id: T, user_id: 'adam', status: 'disabled' } };
      spec.given([...organization, disabledAdam]).when({ type: 'RemoveMember', data: { actor_user_id: 'adam', user_id: 'max' } }).thenThrows('forbidden', 'not_a_member');
    });
  });
});
