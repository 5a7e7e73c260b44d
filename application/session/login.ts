// Login: the password checked (at the same cost whether or not the email exists), then a
// session opened for one of the user's memberships.

import { DomainError } from '../../domain/shared/errors';
import { userStream } from '../../domain/user/user';
import type { MembershipDocument } from '../../projections/memberships';
import { TENANTS, type TenantDocument } from '../../projections/tenants';
import { handleCommand, loadAggregate } from '../command-handling/handle-command';
import { activeMemberships } from '../membership/memberships';
import type { PasswordHasher, Secrets } from '../ports/identity';
import type { RequestContext } from '../shared/request-context';
import { isActiveTenant } from '../tenant/active-tenant';
import { userAggregate, userIdByEmail } from '../user/users';
import { type SessionDependencies, type SessionResult, startSession } from './sessions';

/** Opening a session, the password hasher, and the secrets of the email lookup and the decoy hash. */
export type LoginDependencies = SessionDependencies & { passwords: PasswordHasher; secrets: Pick<Secrets, 'digest' | 'randomToken'> };

const credentialsRejected = (): DomainError => new DomainError('unauthorized', 'invalid_credentials', 'email or password is wrong');

/** Where a login without a tenant lands: the oldest active membership of an active tenant, else the oldest active one, else the oldest. */
async function defaultMembership(deps: Pick<LoginDependencies, 'readStore'>, memberships: MembershipDocument[]): Promise<MembershipDocument | undefined> {
  const active = memberships.filter((m) => m.status === 'active');
  const tenants = deps.readStore.collection<TenantDocument>(TENANTS);
  for (const membership of active) if (isActiveTenant(await tenants.get(membership.tenant_id))) return membership;
  return active[0] ?? memberships[0];
}

const decoyHashes = new WeakMap<PasswordHasher, Promise<string>>();

/**
 * A hash made once per hasher, at the hasher's own cost, of a password nobody knows: checking
 * a password against it costs exactly what checking a real account's does.
 */
function decoyPasswordHash(deps: Pick<LoginDependencies, 'passwords' | 'secrets'>): Promise<string> {
  let decoy = decoyHashes.get(deps.passwords);
  if (!decoy) {
    decoy = deps.passwords.hash(deps.secrets.randomToken(24));
    decoyHashes.set(deps.passwords, decoy);
  }
  return decoy;
}

/** An email's budget of failed logins (application/user/abuse-controls.ts `loginFailureBudget`). */
export interface LoginFailureBudget {
  /** Throws RateLimitedError when even a right password must wait (the email's failures passed the lock bound). */
  admit(): Promise<void>;
  /** Spends one failure; throws RateLimitedError past the failure budget, and then the failure is not recorded. */
  fail(): Promise<void>;
}

const unlimitedFailures: LoginFailureBudget = { admit: async () => undefined, fail: async () => undefined };

export async function login(
  deps: LoginDependencies,
  email: string,
  password: string,
  tenantId: string | null,
  context: RequestContext,
  failures: LoginFailureBudget = unlimitedFailures,
): Promise<SessionResult> {
  await failures.admit();
  const userId = await userIdByEmail(deps, email);
  if (!userId) {
    // The same password work as a real account, so the answer's timing does not tell which emails exist.
    await deps.passwords.verify(password, await decoyPasswordHash(deps));
    await failures.fail();
    throw credentialsRejected();
  }
  const { state } = await loadAggregate(deps, userAggregate, userStream(userId));
  if (state.status !== 'registered') {
    // A closed account whose email is not released yet: answered as an unknown email, at the same cost.
    await deps.passwords.verify(password, await decoyPasswordHash(deps));
    await failures.fail();
    throw credentialsRejected();
  }
  const memberships = await activeMemberships(deps, userId);
  const membership = tenantId ? memberships.find((m) => m.tenant_id === tenantId) : await defaultMembership(deps, memberships);
  const actorContext: RequestContext = { ...context, tenant_id: membership?.tenant_id ?? memberships[0]?.tenant_id ?? null, actor: { kind: 'user', id: userId } };
  if (!(await deps.passwords.verify(password, state.password_hash))) {
    await failures.fail();
    await handleCommand(deps, userAggregate, userStream(userId), { type: 'RecordLoginFailure', data: { reason: 'wrong_password' } }, actorContext);
    throw credentialsRejected();
  }
  if (!state.email_verified) throw new DomainError('forbidden', 'email_not_verified', 'verify your email with the code we sent before logging in');
  if (!membership) throw new DomainError('forbidden', tenantId ? 'not_a_member' : 'no_membership', tenantId ? 'you are not a member of that organization' : 'this account belongs to no organization');
  if (membership.status !== 'active') throw new DomainError('forbidden', 'member_disabled', 'your membership of this organization is disabled');
  return startSession(deps, userId, membership, context);
}
