// The invitation aggregate: an admin's offer to an email address to join a tenant with a
// role, accepted once with the emailed token, or revoked. Stream `invitation-<id>`.
// The token itself never enters an event: only its keyed digest does. Expiry needs no timer:
// it is decided against `now` when someone tries to use the invitation, and read models
// compute the `expired` status from `expires_at` at read time.
// The invitee's email is personal data of the subject `invitation:<id>` (docs/personal-data.md):
// sealed under its key, which `InvitationErased` deletes (an admin's erasure at the invitee's
// request, or the closing of the account that accepted it). An erased invitation is gone: it
// cannot be accepted, revoked or seen again.

import * as t from 'io-ts';
import { type Either, left, right } from 'fp-ts/Either';
import { declareEvent, eventGroup, type GroupEvent } from '../shared/events';
import type { Decider } from '../shared/decider';
import { type DomainError, conflict, forbidden, invalid, notFound, gone } from '../shared/errors';
import { emailProblem, normalizeEmail } from '../user/user';
import { toStreamName } from '../shared/stream-names';

/** How long an invitation can be accepted. */
export const INVITATION_TTL_SECONDS = 7 * 24 * 60 * 60;

/** What a member may invite as: ownership moves only through a transfer, so no member invites an owner. */
export const InvitedRole = t.keyof({ admin: null, member: null });
export type InvitedRole = t.TypeOf<typeof InvitedRole>;

/**
 * Every role an invitation may carry: also `owner`, which only the super admin invites, for
 * the first owner of an organization it created.
 */
export const InvitationRole = t.keyof({ owner: null, admin: null, member: null });
export type InvitationRole = t.TypeOf<typeof InvitationRole>;

/** `invited_by` is the inviting member's user id, or the super admin's id for an owner's invitation. */
export const InvitationSent = declareEvent(
  'InvitationSent',
  t.type({ tenant_id: t.string, invitation_id: t.string, email: t.string, role: InvitationRole, token_digest: t.string, invited_by: t.string, expires_at: t.string }),
);
export const InvitationAccepted = declareEvent('InvitationAccepted', t.type({ invitation_id: t.string, user_id: t.string, accepted_at: t.string }));
export const InvitationRevoked = declareEvent('InvitationRevoked', t.type({ invitation_id: t.string, by: t.string, revoked_at: t.string }));

/** Who erased an invitation: an admin of its organization, the super admin, or the platform (an account's closure). */
const Eraser = t.type({ kind: t.keyof({ user: null, admin: null, system: null }), id: t.string });
export type InvitationEraser = t.TypeOf<typeof Eraser>;
/** The invitation is erased: its key is deleted, the invitee's email can no longer be read. */
export const InvitationErased = declareEvent('InvitationErased', t.type({ invitation_id: t.string, tenant_id: t.string, erased_by: Eraser, erased_at: t.string }));

/** The data subject of an invitee (the invitation's email, and the email that carried its token). */
export const invitationSubject = (invitationId: string): string => `invitation:${invitationId}`;

export const invitationEvents = eventGroup('invitation', [InvitationSent, InvitationAccepted, InvitationRevoked, InvitationErased], {
  subject: (data) => invitationSubject(String(data.invitation_id)),
  fields: { InvitationSent: ['email'] },
  erasedBy: 'InvitationErased',
});
export type InvitationEvent = GroupEvent<typeof invitationEvents>;

export type InvitationCommand =
  /** `by_platform_admin`: sent by the super admin, the one inviter who may invite an owner. */
  | { type: 'SendInvitation'; data: { tenant_id: string; invitation_id: string; email: string; role: InvitationRole; token_digest: string; invited_by: string; by_platform_admin?: boolean } }
  /** `email` is the accepting user's: it must be the invited one. */
  | { type: 'AcceptInvitation'; data: { user_id: string; email: string } }
  /** `tenant_id` is the revoker's: another tenant's invitation does not exist for them. */
  | { type: 'RevokeInvitation'; data: { tenant_id: string; by: string } }
  /** `tenant_id` is the eraser's, as for a revocation. */
  | { type: 'EraseInvitation'; data: { tenant_id: string; erased_by: InvitationEraser } };

export type InvitationState =
  | { status: 'absent' }
  | { status: 'pending' | 'accepted' | 'revoked'; invitation_id: string; tenant_id: string; email: string; role: InvitationRole; expires_at: string }
  | { status: 'erased'; invitation_id: string; tenant_id: string; erased_at: string };

/** What a reader sees: a pending invitation past its expiry is `expired`. */
export type InvitationStatus = 'pending' | 'accepted' | 'revoked' | 'expired';

export const invitationStream = (invitationId: string): string => toStreamName(invitationEvents.category, invitationId);

export const isExpired = (expiresAt: string, now: Date): boolean => Date.parse(expiresAt) <= now.getTime();

export function invitationStatusAt(status: 'pending' | 'accepted' | 'revoked', expiresAt: string, now: Date): InvitationStatus {
  return status === 'pending' && isExpired(expiresAt, now) ? 'expired' : status;
}

const notFoundError = (): DomainError => notFound('invitation_not_found', 'no such invitation');

/**
 * Why the invitation cannot be accepted now, or null. Shared by decide and by the use case,
 * which checks before it creates anything for a new user.
 */
export function acceptanceProblem(state: InvitationState, now: Date): DomainError | null {
  switch (state.status) {
    case 'absent':
    case 'erased':
      return notFoundError();
    case 'accepted':
      return conflict('invitation_already_accepted', 'this invitation has already been used');
    case 'revoked':
      return conflict('invitation_revoked', 'this invitation has been revoked');
    case 'pending':
      return isExpired(state.expires_at, now) ? gone('invitation_expired', 'this invitation has expired; ask for a new one') : null;
  }
}

export const invitationDecider: Decider<InvitationCommand, InvitationEvent, InvitationState> = {
  initialState: () => ({ status: 'absent' }),

  evolve(state, event) {
    switch (event.type) {
      case 'InvitationSent': {
        const { invitation_id, tenant_id, email, role, expires_at } = event.data;
        return { status: 'pending', invitation_id, tenant_id, email, role, expires_at };
      }
      case 'InvitationAccepted':
        return state.status === 'absent' || state.status === 'erased' ? state : { ...state, status: 'accepted' };
      case 'InvitationRevoked':
        return state.status === 'absent' || state.status === 'erased' ? state : { ...state, status: 'revoked' };
      case 'InvitationErased':
        return { status: 'erased', invitation_id: event.data.invitation_id, tenant_id: event.data.tenant_id, erased_at: event.data.erased_at };
    }
  },

  decide(command, state, { now }): Either<DomainError, InvitationEvent[]> {
    switch (command.type) {
      case 'SendInvitation': {
        if (state.status !== 'absent') return left(conflict('invitation_exists', 'the invitation already exists'));
        const email = normalizeEmail(command.data.email);
        const problem = emailProblem(email);
        if (problem) return left(problem);
        const { by_platform_admin: byPlatformAdmin, ...sent } = command.data;
        const allowed = byPlatformAdmin ? InvitationRole : InvitedRole;
        if (!allowed.is(sent.role)) return left(invalid('invalid_role', byPlatformAdmin ? 'role must be owner, admin or member' : 'role must be admin or member', 'role'));
        const expiresAt = new Date(now.getTime() + INVITATION_TTL_SECONDS * 1000).toISOString();
        return right([{ type: 'InvitationSent', data: { ...sent, email, expires_at: expiresAt } }]);
      }
      case 'AcceptInvitation': {
        const problem = acceptanceProblem(state, now);
        if (problem) return left(problem);
        if (state.status !== 'pending') return left(notFoundError());
        if (normalizeEmail(command.data.email) !== state.email) return left(forbidden('invitation_email_mismatch', 'this invitation was sent to another email address'));
        return right([{ type: 'InvitationAccepted', data: { invitation_id: state.invitation_id, user_id: command.data.user_id, accepted_at: now.toISOString() } }]);
      }
      case 'RevokeInvitation': {
        if (state.status === 'absent' || state.status === 'erased' || state.tenant_id !== command.data.tenant_id) return left(notFoundError());
        if (state.status !== 'pending' || isExpired(state.expires_at, now)) {
          return left(conflict('invitation_not_pending', `only a pending invitation can be revoked; this one is ${invitationStatusAt(state.status, state.expires_at, now)}`));
        }
        return right([{ type: 'InvitationRevoked', data: { invitation_id: state.invitation_id, by: command.data.by, revoked_at: now.toISOString() } }]);
      }
      case 'EraseInvitation': {
        if (state.status === 'absent' || state.tenant_id !== command.data.tenant_id) return left(notFoundError());
        // Erased already: the first erasure stands.
        if (state.status === 'erased') return right([]);
        return right([{ type: 'InvitationErased', data: { invitation_id: state.invitation_id, tenant_id: state.tenant_id, erased_by: command.data.erased_by, erased_at: now.toISOString() } }]);
      }
    }
  },
};
