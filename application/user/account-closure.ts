// A member closes their own account (docs/personal-data.md, "Closing an account";
// `POST /api/v1/me/close`). The request is checked in full before anything is written:
//   - their password, again (403 `invalid_password`): a stolen token alone closes nothing; past
//     RATE_LIMIT_PER_EMAIL wrong ones in a window, 429 `rate_limited` (even for the right one)
//     until it passes, so a token cannot be used to guess it;
//   - not while a super admin impersonates them (403 `impersonation_forbidden`);
//   - no organization may be left without an owner: where they are the last owner and others
//     are members, 409 `last_owner` (transfer ownership first);
//   - the organizations they are the only member of would be left with nobody: they are deleted
//     with the account, only when the request says so (`delete_organizations: true`; otherwise
//     409 `organizations_would_be_deleted`, naming them), and not while one of them has a
//     subscription that renews (409 `subscription_active`: cancel it first).
// Then `UserAccountClosed` is the decision: the account's email and name (sealed under the subject
// `user:<id>`) are erased with the subject's key (saga personal_data_erasure), and the effects
// follow, by the use case at once and by the saga `account_closure` again for a process that
// stopped in between (each is idempotent): the organizations named are deleted, every other
// membership is left (MemberRemoved, reason `left`), every session is revoked, the invitations
// it accepted (their email was the account's) are erased (invitation-erasure.ts), and the email's
// reservation is released, so that logging in with it answers as for an unknown email and it may
// sign up again. The IP and browser of their sessions and the address of the emails sent to them,
// sealed under the same key, are erased with it. The invitations sent to their email and never
// accepted (pending, expired or revoked, in any organization) are erased by this use case, which
// still knows the email; only the email ties them to the account (docs/personal-data.md).

import { DomainError, conflict, forbidden } from '../../domain/shared/errors';
import { membershipStream } from '../../domain/membership/membership';
import { userSubject } from '../../domain/user/events';
import { userStream } from '../../domain/user/user';
import { TENANTS, type TenantDocument } from '../../projections/tenants';
import { SUBSCRIPTIONS, type SubscriptionDocument } from '../../projections/subscriptions';
import { handleCommand, loadAggregate } from '../command-handling/handle-command';
import { activeMemberships, membershipAggregate } from '../membership/memberships';
import type { PasswordHasher, Secrets } from '../ports/identity';
import type { Logger } from '../ports/logger';
import type { PersonalDataVault } from '../ports/personal-data';
import type { RateLimit, RateLimiter } from '../ports/rate-limiter';
import { releaseReservationByKey, reservationKey } from '../reservation/reservations';
import type { Saga } from '../sagas/saga';
import { type Principal, type SessionRevocationDependencies, revokeAllSessions } from '../session/sessions';
import { type RequestContext, systemContext } from '../shared/request-context';
import { deleteTenant } from '../tenant/tenant-commands';
import { eraseInvitationsAcceptedBy, eraseInvitationsSentTo } from '../invitation/invitation-erasure';
import { RateLimitedError } from './abuse-controls';
import { USER_EMAIL_SCOPE, userAggregate } from './users';

export const ACCOUNT_CLOSURE = 'account_closure';

/** Subscription statuses that renew: an organization with one is not deleted by a closing account. */
const RENEWING = new Set(['active', 'past_due']);

export type AccountClosureDependencies = SessionRevocationDependencies & {
  passwords: Pick<PasswordHasher, 'verify'>;
  secrets: Pick<Secrets, 'digest'>;
  personalData: PersonalDataVault;
  logger: Logger;
};

/** What guards the password check of a closure against guessing. */
export interface PasswordGuard {
  limiter: RateLimiter;
  /** Wrong passwords allowed per account in a window. */
  failures: RateLimit;
}

export interface AccountClosureRequest {
  password: string;
  /** Delete the organizations the person is the only member of (required when there are any). */
  delete_organizations?: boolean;
}

export interface AccountClosureView {
  closed_at: string;
  /** The organizations deleted with the account. */
  deleted_organizations: string[];
}

/** What the account's memberships call for: the organizations to delete, and those in the way. */
interface Standing {
  solelyMember: Array<{ tenant_id: string; name: string }>;
  lastOwnerOf: Array<{ tenant_id: string; name: string }>;
}

async function standingOf(deps: AccountClosureDependencies, userId: string): Promise<Standing> {
  const standing: Standing = { solelyMember: [], lastOwnerOf: [] };
  const tenants = deps.readStore.collection<TenantDocument>(TENANTS);
  for (const membership of await activeMemberships(deps, userId)) {
    const { state } = await loadAggregate(deps, membershipAggregate, membershipStream(membership.tenant_id));
    if (state.status !== 'active') continue;
    const members = Object.entries(state.members);
    const others = members.filter(([id]) => id !== userId);
    const otherOwners = others.filter(([, member]) => member.role === 'owner' && member.status === 'active');
    const tenant = await tenants.get(membership.tenant_id);
    // An organization deleted already has nothing left to decide.
    if (tenant?.status === 'deleted') continue;
    const name = tenant?.name ?? membership.tenant_id;
    if (others.length === 0) standing.solelyMember.push({ tenant_id: membership.tenant_id, name });
    else if (state.members[userId]?.role === 'owner' && otherOwners.length === 0) standing.lastOwnerOf.push({ tenant_id: membership.tenant_id, name });
  }
  return standing;
}

const named = (organizations: ReadonlyArray<{ name: string }>): string => organizations.map((organization) => `“${organization.name}”`).join(', ');

/** Checks the request, records the closure and carries out its effects; the answer says when and which organizations went with it. */
export async function closeAccount(deps: AccountClosureDependencies, guard: PasswordGuard, principal: Principal, request: AccountClosureRequest, context: RequestContext): Promise<AccountClosureView> {
  if (principal.impersonator) throw forbidden('impersonation_forbidden', 'an account is closed by its owner only, not while impersonated');
  const userId = principal.user_id;
  const failures = `account_close:failures:${userId}`;
  const budget = await guard.limiter.check(failures, guard.failures);
  if (!budget.allowed) throw new RateLimitedError(budget.retryAfterSeconds, 'too many wrong passwords');
  const stream = userStream(userId);
  const { state } = await loadAggregate(deps, userAggregate, stream);
  if (state.status !== 'registered' || !(await deps.passwords.verify(request.password, state.password_hash))) {
    await guard.limiter.consume(failures, guard.failures);
    throw new DomainError('forbidden', 'invalid_password', 'password: this is not the account’s password', 'password');
  }
  const standing = await standingOf(deps, userId);
  if (standing.lastOwnerOf.length > 0) {
    throw conflict('last_owner', `you are the last owner of ${named(standing.lastOwnerOf)}: transfer ownership to another member first (POST /api/v1/org/transfer-ownership)`);
  }
  if (standing.solelyMember.length > 0 && request.delete_organizations !== true) {
    throw conflict('organizations_would_be_deleted', `you are the only member of ${named(standing.solelyMember)}: closing the account deletes them; send delete_organizations: true to go on`);
  }
  const subscriptions = deps.readStore.collection<SubscriptionDocument>(SUBSCRIPTIONS);
  for (const organization of standing.solelyMember) {
    const subscription = await subscriptions.get(organization.tenant_id);
    if (subscription && RENEWING.has(subscription.status)) {
      throw conflict('subscription_active', `the subscription of “${organization.name}” renews: cancel it first (POST /api/v1/billing/cancel), then close the account`);
    }
  }
  const deleted = standing.solelyMember.map((organization) => organization.tenant_id);
  const acting: RequestContext = { ...context, tenant_id: principal.tenant_id, actor: { kind: 'user', id: userId } };
  const emailReservation = reservationKey(deps, USER_EMAIL_SCOPE, state.email);
  const result = await handleCommand(deps, userAggregate, stream, { type: 'CloseAccount', data: { deleted_tenants: deleted, email_reservation: emailReservation } }, acting);
  const closed = result.events.find((event) => event.type === 'UserAccountClosed');
  if (closed?.type !== 'UserAccountClosed') throw new Error(`user ${userId}: closed, yet no UserAccountClosed`);
  // The invitations sent to its email and never accepted hold the email, and only it ties them
  // to the account: erased while it is still known here (read above). The saga cannot do this
  // again once the key is gone; a process stopping in this very step leaves them to an admin.
  await eraseInvitationsSentTo(deps, state.email, acting);
  // Its email and name are unreadable from here (the saga personal_data_erasure does it again).
  await deps.personalData.erase(userSubject(userId));
  await carryOutClosure(deps, userId, emailReservation, deleted, acting);
  return { closed_at: closed.data.closed_at, deleted_organizations: deleted };
}

/** The effects of a closure, each idempotent: the organizations named deleted, every other membership left, every session revoked, the invitations it accepted erased, the email released. */
async function carryOutClosure(deps: AccountClosureDependencies, userId: string, emailReservation: string, deletedTenants: readonly string[], context: RequestContext): Promise<void> {
  for (const tenantId of deletedTenants) {
    try {
      await deleteTenant(deps, tenantId, { ...context, tenant_id: tenantId });
    } catch (error) {
      // Deleted already (a repeat).
      if (!(error instanceof DomainError && error.code === 'tenant_deleted')) throw error;
    }
  }
  for (const membership of await activeMemberships(deps, userId)) {
    if (deletedTenants.includes(membership.tenant_id)) continue;
    try {
      await handleCommand(deps, membershipAggregate, membershipStream(membership.tenant_id), { type: 'RemoveMember', data: { actor_user_id: userId, user_id: userId } }, { ...context, tenant_id: membership.tenant_id });
    } catch (error) {
      // Left already, or made the last owner meanwhile (a race with a transfer): the organization keeps them, and a line says so.
      if (!(error instanceof DomainError)) throw error;
      if (error.code !== 'member_not_found' && error.code !== 'not_a_member') deps.logger.warn({ user_id: userId, tenant_id: membership.tenant_id, code: error.code }, 'a closing account could not leave an organization');
    }
  }
  await revokeAllSessions(deps, userId, 'account_closed', context);
  await eraseInvitationsAcceptedBy(deps, userId, context);
  await releaseReservationByKey(deps, emailReservation, userId, context);
}

export function accountClosureSaga(deps: AccountClosureDependencies): Saga<'UserAccountClosed'> {
  return {
    name: ACCOUNT_CLOSURE,
    version: 1,
    filter: { kind: 'event_type', types: ['UserAccountClosed'] },
    async handle(event) {
      const { user_id, email_reservation, deleted_tenants } = event.data;
      await carryOutClosure(deps, user_id, email_reservation, deleted_tenants, { ...systemContext(event.metadata.correlation_id, ACCOUNT_CLOSURE, event.id), tenant_id: event.metadata.tenant_id });
    },
  };
}
