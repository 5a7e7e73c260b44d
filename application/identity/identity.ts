// Identity use cases: registration, one-time codes, login, password reset, sessions and the
// per-request authentication of tokens. GraphQL and REST are thin adapters over these.

import type { MembershipCommand, MembershipEvent, MembershipState, Role } from '../../domain/membership/membership';
import { membershipDecider, membershipEvents, membershipStream } from '../../domain/membership/membership';
import { type SessionCommand, type SessionEvent, type SessionState, sessionDecider, sessionEvents, sessionStream } from '../../domain/session/session';
import {
  type RegistrationCommand,
  type RegistrationEvent,
  type RegistrationPlan,
  type RegistrationState,
  registrationDecider,
  registrationEvents,
  registrationStream,
} from '../../domain/registration/registration';
import { DomainError, forbidden, invalid } from '../../domain/shared/errors';
import { normalizeText } from '../../domain/shared/text';
import { slugFromName } from '../../domain/tenant/slug';
import type { TenantCommand } from '../../domain/tenant/commands';
import { tenantDecider, tenantNameProblem, tenantStream } from '../../domain/tenant/tenant';
import { type OtpPurpose, type UserEvent, userEvents } from '../../domain/user/events';
import { type UserCommand, type UserState, emailProblem, nameProblem, normalizeEmail, userDecider, userStream } from '../../domain/user/user';
import { type WorkspaceCommand, type WorkspaceEvent, type WorkspaceState, workspaceDecider, workspaceEvents, workspaceStream } from '../../domain/workspace/workspace';
import { MEMBERSHIPS, type MembershipDocument, membershipId } from '../../projections/memberships';
import { SESSIONS, type SessionDocument } from '../../projections/sessions';
import { TENANTS, type TenantDocument } from '../../projections/tenants';
import { USERS, type UserDocument } from '../../projections/users';
import { type Aggregate, type CommandDependencies, handleCommand, loadAggregate } from '../command-handling/handle-command';
import { queueEmail } from '../mail/outbox';
import type { PasswordHasher, Secrets, TokenAudience, TokenClaims, TokenService } from '../ports/identity';
import type { Page, ReadStore, Where } from '../ports/read-store';
import { claimReservation, releaseReservation, reservationHolder, reservationKey } from '../reservation/reservations';
import type { RequestContext } from '../shared/request-context';
import { TENANT_SLUG_SCOPE, rotateWidgetToken, tenantAggregate } from '../tenant/tenant-commands';

export const userAggregate: Aggregate<UserCommand, UserEvent, UserState> = { decider: userDecider, events: userEvents };
export const sessionAggregate: Aggregate<SessionCommand, SessionEvent, SessionState> = { decider: sessionDecider, events: sessionEvents };
export const membershipAggregate: Aggregate<MembershipCommand, MembershipEvent, MembershipState> = { decider: membershipDecider, events: membershipEvents };
export const workspaceAggregate: Aggregate<WorkspaceCommand, WorkspaceEvent, WorkspaceState> = { decider: workspaceDecider, events: workspaceEvents };
export const registrationAggregate: Aggregate<RegistrationCommand, RegistrationEvent, RegistrationState> = { decider: registrationDecider, events: registrationEvents };

export const USER_EMAIL_SCOPE = 'user_email';
export const WIDGET_TOKEN_PREFIX = 'wt_';

export interface IdentitySettings {
  tokenTtlSeconds: number;
  otpTtlSeconds: number;
  /** How long an Idempotency-Key's answer is kept for retries (IDEMPOTENCY_KEY_TTL_SECONDS). */
  idempotencyKeyTtlSeconds: number;
  /** How long a sign-up may take before it is finished or released (REGISTRATION_TIMEOUT_SECONDS). */
  registrationTimeoutSeconds: number;
}

export interface IdentityDependencies extends CommandDependencies {
  readStore: ReadStore;
  secrets: Secrets;
  passwords: PasswordHasher;
  tokens: TokenService;
  settings: IdentitySettings;
  /** Waits until the read models have passed a write's position (read-your-writes). */
  readYourWrites(position: number | null): Promise<boolean>;
}

export interface SessionResult {
  token: string;
  user: UserDocument;
  tenant: TenantDocument;
  role: Role;
}

/** What an authenticated request knows about its caller. */
export interface Principal {
  kind: 'user';
  user_id: string;
  tenant_id: string;
  role: Role;
  jti: string;
}

/** The password rules of registration, invitations and resets. */
export function passwordProblem(password: string, email: string): DomainError | null {
  if (password.length < 10) return invalid('weak_password', 'password must be at least 10 characters', 'password');
  if (password.length > 200) return invalid('invalid_password', 'password must be at most 200 characters', 'password');
  if (password.toLowerCase() === email.toLowerCase()) return invalid('weak_password', 'password must not be the email', 'password');
  return null;
}

const credentialsRejected = (): DomainError => new DomainError('unauthorized', 'invalid_credentials', 'email or password is wrong');

/** The user id an email belongs to, from its reservation stream (always current). */
export function userIdByEmail(deps: Pick<IdentityDependencies, 'eventStore' | 'secrets'>, email: string): Promise<string | null> {
  return reservationHolder(deps, USER_EMAIL_SCOPE, normalizeEmail(email));
}

async function issueOtp(deps: IdentityDependencies, userId: string, email: string, purpose: OtpPurpose, context: RequestContext): Promise<void> {
  const code = deps.secrets.randomDigits(6);
  const expiresAt = new Date(deps.clock.now().getTime() + deps.settings.otpTtlSeconds * 1000).toISOString();
  await handleCommand(deps, userAggregate, userStream(userId), { type: 'IssueOtp', data: { purpose, code_hash: deps.secrets.digest(`${userId}:${purpose}:${code}`), expires_at: expiresAt } }, context);
  const minutes = Math.round(deps.settings.otpTtlSeconds / 60);
  const [subject, text] =
    purpose === 'email_verification'
      ? ['Verify your email', `Your verification code is ${code}. It expires in ${minutes} minutes.`]
      : ['Reset your password', `Your password reset code is ${code}. It expires in ${minutes} minutes. If you did not ask for it, ignore this email.`];
  await queueEmail(deps, { to: email, subject, text, kind: purpose }, context);
}

export interface RegisterInput {
  email: string;
  password: string;
  name: string;
  organization_name: string;
  slug?: string | null;
}

/** The slug chosen for a sign-up: the one asked for, or one made from the organization's name. */
const slugOf = (input: RegisterInput, organizationName: string): string => input.slug ?? slugFromName(organizationName);

/**
 * Signs a person up: the user, then the tenant (with its default workspace and widget token),
 * the owner membership and the email OTP. Inputs are validated before anything is written.
 *
 * A registration (domain/registration) is recorded first, holding every id the steps use and
 * a deadline (REGISTRATION_TIMEOUT_SECONDS), and `RegistrationCompleted` last. Each step is
 * idempotent (its event ids derive from the registration's id and the step), so a resumed
 * step appends nothing twice. A sign-up that stops half-way holds its email and slug only
 * tentatively: past the deadline the registration process manager finishes it (once the
 * user exists) or releases them (application/registration/registration-process.ts).
 */
export async function register(deps: IdentityDependencies, input: RegisterInput, context: RequestContext): Promise<{ user_id: string; tenant_id: string }> {
  const email = normalizeEmail(input.email);
  const problem =
    emailProblem(email) ?? passwordProblem(input.password, email) ?? nameProblem(input.name) ?? tenantNameProblem(input.organization_name, 'organization_name');
  if (problem) throw problem;
  const organizationName = normalizeText(input.organization_name);
  const slug = slugOf(input, organizationName);

  const registrationId = deps.ids.newId();
  const step = (name: string): string => `registration:${registrationId}:${name}`;
  const plan: RegistrationPlan = {
    registration_id: registrationId,
    user_id: deps.ids.fromKey(step('user')),
    tenant_id: deps.ids.fromKey(step('tenant')),
    workspace_id: deps.ids.fromKey(step('workspace')),
    email_reservation: reservationKey(deps, USER_EMAIL_SCOPE, email),
    slug_reservation: reservationKey(deps, TENANT_SLUG_SCOPE, slug),
    organization_name: organizationName,
    slug,
  };
  const { user_id: userId, tenant_id: tenantId } = plan;
  // Validate the tenant before anything is written, so a bad request leaves nothing behind.
  const dryRun = tenantDecider.decide(createTenantOf(plan), tenantDecider.initialState(), { now: deps.clock.now() });
  if (dryRun._tag === 'Left') throw dryRun.left;

  const asUser: RequestContext = { ...context, actor: { kind: 'user', id: userId } };
  const scoped: RequestContext = { ...asUser, tenant_id: tenantId };
  const onRegistration = (command: RegistrationCommand) => handleCommand(deps, registrationAggregate, registrationStream(registrationId), command, scoped, { tenantId });
  await onRegistration({ type: 'StartRegistration', data: { ...plan, timeout_seconds: deps.settings.registrationTimeoutSeconds } });
  const refuse = async (reason: string, error: DomainError): Promise<never> => {
    await onRegistration({ type: 'AbandonRegistration', data: { reason } });
    throw error;
  };

  try {
    await claimReservation(deps, USER_EMAIL_SCOPE, email, userId, scoped);
  } catch (error) {
    if (error instanceof DomainError && error.code === `${USER_EMAIL_SCOPE}_taken`) return refuse('email_taken', new DomainError('conflict', 'email_taken', 'an account with this email already exists'));
    throw error;
  }
  try {
    await claimReservation(deps, TENANT_SLUG_SCOPE, slug, tenantId, scoped);
  } catch (error) {
    if (error instanceof DomainError && error.code === `${TENANT_SLUG_SCOPE}_taken`) {
      await releaseReservation(deps, USER_EMAIL_SCOPE, email, userId, scoped);
      return refuse('slug_taken', new DomainError('conflict', 'slug_taken', `the slug ${slug} is taken`, 'slug'));
    }
    throw error;
  }
  const passwordHash = await deps.passwords.hash(input.password);
  await handleCommand(deps, userAggregate, userStream(userId), { type: 'RegisterUser', data: { user_id: userId, email, name: input.name, password_hash: passwordHash } }, scoped, {
    idempotencyKey: step('user'),
  });
  await finishRegistration(deps, plan, scoped);
  return { user_id: userId, tenant_id: tenantId };
}

const createTenantOf = (plan: RegistrationPlan): TenantCommand => ({ type: 'CreateTenant', data: { tenant_id: plan.tenant_id, name: plan.organization_name, slug: plan.slug } });

/**
 * The steps of a registration once its user exists: the tenant (its slug is already held),
 * owner membership, default workspace, widget token, verification code, and
 * `RegistrationCompleted`. The tenant comes after the user so that a sign-up that stopped
 * before its user leaves no tenant behind, only reservations to release. Run by
 * `register`, and by the registration process manager for a sign-up that stopped half-way.
 * Every step but the code is keyed on the registration, so a repeat appends nothing; the code
 * is issued anew on a resume (the earlier one may never have been sent; a new one replaces it).
 */
export async function finishRegistration(deps: IdentityDependencies, plan: RegistrationPlan, context: RequestContext): Promise<void> {
  const { registration_id: registrationId, user_id: userId, tenant_id: tenantId, workspace_id: workspaceId } = plan;
  const step = (name: string): string => `registration:${registrationId}:${name}`;
  const scoped: RequestContext = { ...context, tenant_id: tenantId };
  const { state: user } = await loadAggregate(deps, userAggregate, userStream(userId));
  if (user.status !== 'registered') throw new Error(`registration ${registrationId}: its user ${userId} is not registered`);
  // A sign-up that outlived its deadline may have been abandoned meanwhile (its slug released): it creates no tenant then.
  const { state: registration } = await loadAggregate(deps, registrationAggregate, registrationStream(registrationId));
  if (registration.status === 'abandoned') throw new DomainError('conflict', 'registration_abandoned', 'this sign-up took too long and was abandoned; sign up again');
  await handleCommand(deps, tenantAggregate, tenantStream(tenantId), createTenantOf(plan), scoped, { tenantId, idempotencyKey: step('tenant') });
  await handleCommand(deps, membershipAggregate, membershipStream(tenantId), { type: 'AddMember', data: { tenant_id: tenantId, user_id: userId, role: 'owner' } }, scoped, {
    idempotencyKey: step('membership'),
  });
  await handleCommand(
    deps,
    workspaceAggregate,
    workspaceStream(workspaceId),
    { type: 'CreateWorkspace', data: { tenant_id: tenantId, workspace_id: workspaceId, name: 'Default', is_default: true } },
    scoped,
    { idempotencyKey: step('workspace') },
  );
  const token = `${WIDGET_TOKEN_PREFIX}${deps.secrets.randomToken(24)}`;
  const rotated = await handleCommand(
    deps,
    tenantAggregate,
    tenantStream(tenantId),
    { type: 'RotateWidgetToken', data: { token_hash: deps.secrets.digest(token), token_sealed: deps.secrets.seal(token) } },
    scoped,
    { tenantId, idempotencyKey: step('widget-token') },
  );
  await deps.readYourWrites(rotated.position);
  if (!user.email_verified) await issueOtp(deps, userId, user.email, 'email_verification', scoped);
  await handleCommand(deps, registrationAggregate, registrationStream(registrationId), { type: 'CompleteRegistration', data: {} }, scoped, { tenantId });
}

/** A new publishable widget token for the tenant; the old one stops working. */
export async function rotateTenantWidgetToken(deps: IdentityDependencies, tenantId: string, context: RequestContext): Promise<string> {
  const token = `${WIDGET_TOKEN_PREFIX}${deps.secrets.randomToken(24)}`;
  const result = await rotateWidgetToken(deps, tenantId, { token_hash: deps.secrets.digest(token), token_sealed: deps.secrets.seal(token) }, context);
  await deps.readYourWrites(result.position);
  return token;
}

/** Sends a new email-verification code (for a user whose email is not verified yet). */
export async function resendVerification(deps: IdentityDependencies, email: string, context: RequestContext): Promise<void> {
  const userId = await userIdByEmail(deps, email);
  if (!userId) return;
  const { state } = await loadAggregate(deps, userAggregate, userStream(userId));
  if (state.status === 'registered' && !state.email_verified) await issueOtp(deps, userId, state.email, 'email_verification', context);
}

export async function verifyOtp(deps: IdentityDependencies, email: string, code: string, context: RequestContext): Promise<SessionResult> {
  const userId = await userIdByEmail(deps, email);
  const wrong = invalid('invalid_code', 'the code is wrong or has expired; request a new one', 'code');
  if (!userId) throw wrong;
  const memberships = await activeMemberships(deps, userId);
  const result = await handleCommand(
    deps,
    userAggregate,
    userStream(userId),
    { type: 'VerifyOtp', data: { purpose: 'email_verification', code_hash: deps.secrets.digest(`${userId}:email_verification:${code.trim()}`) } },
    { ...context, tenant_id: memberships[0]?.tenant_id ?? context.tenant_id, actor: { kind: 'user', id: userId } },
  );
  await deps.readYourWrites(result.position);
  if (memberships.length === 0) throw new DomainError('forbidden', 'no_membership', 'this account belongs to no organization');
  return startSession(deps, userId, memberships[0], context);
}

async function activeMemberships(deps: IdentityDependencies, userId: string): Promise<MembershipDocument[]> {
  const page = await deps.readStore.collection<MembershipDocument>(MEMBERSHIPS).find({ where: { user_id: userId }, sort: { field: 'joined_at', direction: 'asc' }, limit: 1000 });
  return page.items;
}

/** Where a login without a tenant lands: the oldest active membership of an active tenant, else the oldest active one, else the oldest. */
async function defaultMembership(deps: IdentityDependencies, memberships: MembershipDocument[]): Promise<MembershipDocument | undefined> {
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
function decoyPasswordHash(deps: Pick<IdentityDependencies, 'passwords' | 'secrets'>): Promise<string> {
  let decoy = decoyHashes.get(deps.passwords);
  if (!decoy) {
    decoy = deps.passwords.hash(deps.secrets.randomToken(24));
    decoyHashes.set(deps.passwords, decoy);
  }
  return decoy;
}

/** An email's budget of failed logins (application/identity/abuse-controls.ts `loginFailureBudget`). */
export interface LoginFailureBudget {
  /** Throws RateLimitedError when even a right password must wait (the email's failures passed the lock bound). */
  admit(): Promise<void>;
  /** Spends one failure; throws RateLimitedError past the failure budget, and then the failure is not recorded. */
  fail(): Promise<void>;
}

const unlimitedFailures: LoginFailureBudget = { admit: async () => undefined, fail: async () => undefined };

export async function login(
  deps: IdentityDependencies,
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

/** Records a session (its jti is the token's) and signs the token: the one way tokens are made. */
export async function signSessionToken(
  deps: IdentityDependencies,
  subject: { user_id: string; tenant_id: string | null; role: string; audience: TokenAudience; actor: RequestContext['actor'] },
  context: RequestContext,
): Promise<string> {
  const jti = deps.ids.newId();
  const now = deps.clock.now();
  const expiresAt = new Date(now.getTime() + deps.settings.tokenTtlSeconds * 1000).toISOString();
  const result = await handleCommand(
    deps,
    sessionAggregate,
    sessionStream(jti),
    {
      type: 'StartSession',
      data: { jti, user_id: subject.user_id, tenant_id: subject.tenant_id, audience: subject.audience, issued_at: now.toISOString(), expires_at: expiresAt, ip: context.ip, user_agent: null },
    },
    { ...context, tenant_id: subject.tenant_id, actor: subject.actor },
  );
  await deps.readYourWrites(result.position);
  const claims: TokenClaims = { user_id: subject.user_id, tenant_id: subject.tenant_id, role: subject.role, jti, audience: subject.audience, issued_at: now.toISOString(), expires_at: expiresAt };
  return deps.tokens.sign(claims);
}

const tenantSuspended = (): DomainError => forbidden('tenant_suspended', 'this organization is suspended; its owner can contact support');

/** Whether a tenant read model admits its members, widget and webhooks: only an active tenant does. */
const isActiveTenant = (tenant: TenantDocument | null): tenant is TenantDocument => tenant !== null && tenant.status === 'active';

/**
 * The tenant, when it is active; 403 `tenant_suspended` for a suspended (or deleted) one. The
 * one rule for every way into a tenant: its users' tokens, logins and sessions, its widget
 * token and its webhooks, however the suspension happened.
 */
export async function requireActiveTenant(deps: Pick<IdentityDependencies, 'readStore'>, tenantId: string): Promise<TenantDocument> {
  const tenant = await deps.readStore.collection<TenantDocument>(TENANTS).get(tenantId);
  if (!isActiveTenant(tenant)) throw tenantSuspended();
  return tenant;
}

/** Opens a session for a membership and signs its token; 403 `tenant_suspended` unless its tenant is active. */
export async function startSession(deps: IdentityDependencies, userId: string, membership: MembershipDocument, context: RequestContext): Promise<SessionResult> {
  await requireActiveTenant(deps, membership.tenant_id);
  const token = await signSessionToken(
    deps,
    { user_id: userId, tenant_id: membership.tenant_id, role: membership.role, audience: 'tenant', actor: { kind: 'user', id: userId } },
    context,
  );
  const [user, tenant] = await Promise.all([
    deps.readStore.collection<UserDocument>(USERS).get(userId),
    deps.readStore.collection<TenantDocument>(TENANTS).get(membership.tenant_id),
  ]);
  if (!user || !tenant) throw new Error(`read models lag behind the session of ${userId}`);
  return { token, user, tenant, role: membership.role };
}

/** Always answers the same, whether or not the email exists. */
export async function requestPasswordReset(deps: IdentityDependencies, email: string, context: RequestContext): Promise<void> {
  const userId = await userIdByEmail(deps, email);
  if (!userId) return;
  const { state } = await loadAggregate(deps, userAggregate, userStream(userId));
  if (state.status !== 'registered') return;
  const [membership] = await activeMemberships(deps, userId);
  await issueOtp(deps, userId, state.email, 'password_reset', { ...context, tenant_id: membership?.tenant_id ?? null, actor: { kind: 'user', id: userId } });
}

/** Sets the new password and revokes every session of the user. */
export async function resetPassword(deps: IdentityDependencies, email: string, code: string, newPassword: string, context: RequestContext): Promise<void> {
  const userId = await userIdByEmail(deps, email);
  if (!userId) throw invalid('invalid_code', 'the code is wrong or has expired; request a new one', 'code');
  const problem = passwordProblem(newPassword, normalizeEmail(email));
  if (problem) throw problem;
  const [membership] = await activeMemberships(deps, userId);
  const actorContext: RequestContext = { ...context, tenant_id: membership?.tenant_id ?? null, actor: { kind: 'user', id: userId } };
  const passwordHash = await deps.passwords.hash(newPassword);
  await handleCommand(
    deps,
    userAggregate,
    userStream(userId),
    { type: 'ResetPassword', data: { code_hash: deps.secrets.digest(`${userId}:password_reset:${code.trim()}`), password_hash: passwordHash } },
    actorContext,
  );
  await revokeAllSessions(deps, userId, 'password_reset', actorContext);
}

/** Revokes the user's active sessions: all of them, or those in one tenant. */
export async function revokeAllSessions(deps: IdentityDependencies, userId: string, reason: string, context: RequestContext, scope: { tenantId?: string } = {}): Promise<number> {
  const sessions = deps.readStore.collection<SessionDocument>(SESSIONS);
  const where: Where = scope.tenantId ? { user_id: userId, tenant_id: scope.tenantId, status: 'active' } : { user_id: userId, status: 'active' };
  let revoked = 0;
  let cursor: string | undefined;
  do {
    const page = await sessions.find({ where, limit: 200, cursor });
    for (const session of page.items) {
      const result = await handleCommand(deps, sessionAggregate, sessionStream(session.id), { type: 'RevokeSession', data: { reason } }, { ...context, tenant_id: session.tenant_id });
      await deps.readYourWrites(result.position);
      revoked += 1;
    }
    cursor = page.next_cursor ?? undefined;
  } while (cursor);
  return revoked;
}

export async function revokeSession(deps: IdentityDependencies, jti: string, reason: string, context: RequestContext): Promise<void> {
  const result = await handleCommand(deps, sessionAggregate, sessionStream(jti), { type: 'RevokeSession', data: { reason } }, context);
  await deps.readYourWrites(result.position);
}

export async function listSessions(deps: IdentityDependencies, userId: string, tenantId: string | null, options: { limit?: number; cursor?: string }): Promise<Page<SessionDocument>> {
  return deps.readStore.collection<SessionDocument>(SESSIONS).find({
    where: tenantId ? { user_id: userId, tenant_id: tenantId } : { user_id: userId },
    sort: { field: 'issued_at', direction: 'desc' },
    limit: options.limit,
    cursor: options.cursor,
  });
}

const unauthorized = (code: string, message: string): DomainError => new DomainError('unauthorized', code, message);

/** Whether `token` is a tenant's current widget token, looked up by its keyed digest in the tenants read model. */
async function isWidgetToken(deps: IdentityDependencies, token: string): Promise<boolean> {
  const found = await deps.readStore.collection<TenantDocument>(TENANTS).find({ where: { widget_token_hash: deps.secrets.digest(token) }, limit: 1 });
  return found.items.length > 0;
}

/**
 * Authenticates a tenant token: signature, audience and expiry, then the stored session
 * (a revoked one fails) and the membership (a disabled or removed member fails; the role is
 * the current one, not the one in the token), then the tenant (suspended: 403
 * `tenant_suspended`). A token that is not a user token is told
 * apart only on that failing path, by looking it up: a tenant's widget token is
 * `widget_token_not_allowed`, anything else (whatever it looks like) `invalid_token`.
 */
export async function authenticateTenantToken(deps: IdentityDependencies, token: string): Promise<Principal> {
  const claims = await deps.tokens.verify(token, 'tenant');
  if (!claims || !claims.tenant_id) {
    if (await isWidgetToken(deps, token)) throw unauthorized('widget_token_not_allowed', 'a widget token is only valid on widget routes');
    throw unauthorized('invalid_token', 'the token is invalid or has expired');
  }
  const [session, membership, tenant] = await Promise.all([
    deps.readStore.collection<SessionDocument>(SESSIONS).get(claims.jti),
    deps.readStore.collection<MembershipDocument>(MEMBERSHIPS).get(membershipId(claims.tenant_id, claims.user_id)),
    deps.readStore.collection<TenantDocument>(TENANTS).get(claims.tenant_id),
  ]);
  if (!session || session.status !== 'active') throw unauthorized('session_revoked', 'this session has been revoked; log in again');
  // verify() checked the token's expiry, which is the session's unless the session changed.
  if (session.expires_at !== claims.expires_at && Date.parse(session.expires_at) <= deps.clock.now().getTime()) throw unauthorized('invalid_token', 'the token is invalid or has expired');
  if (!membership || membership.status !== 'active') throw unauthorized('membership_inactive', 'your membership of this organization is no longer active');
  // A valid credential of a tenant that may not be used now: 403, and it works again on unsuspend.
  if (!isActiveTenant(tenant)) throw tenantSuspended();
  return { kind: 'user', user_id: claims.user_id, tenant_id: claims.tenant_id, role: membership.role, jti: claims.jti };
}
