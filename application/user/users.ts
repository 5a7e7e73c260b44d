// User use cases: the user aggregate, its email reservation, the one-time codes of email
// verification and password reset, and the password rules.

import { DomainError, invalid } from '../../domain/shared/errors';
import { type OtpPurpose, type UserEvent, userEvents, userSubject } from '../../domain/user/events';
import { type UserCommand, type UserState, normalizeEmail, userDecider, userStream } from '../../domain/user/user';
import { type Aggregate, type CommandDependencies, handleCommand, loadAggregate } from '../command-handling/handle-command';
import { queueEmail } from '../mail/outbox';
import { activeMemberships } from '../membership/memberships';
import type { DomainEventStore } from '../ports/domain-event-store';
import type { PasswordHasher, Secrets } from '../ports/identity';
import { reservationHolder } from '../reservation/reservations';
import { type SessionDependencies, type SessionResult, type SessionRevocationDependencies, revokeAllSessions, startSession } from '../session/sessions';
import type { UseCaseSettings } from '../shared/dependencies';
import type { ReadModelDependencies } from '../shared/read-models';
import type { RequestContext } from '../shared/request-context';

/** Issuing a one-time code: the user command, the secrets that make and digest it, its lifetime, and the outbox. */
export type OtpDependencies = CommandDependencies & { secrets: Secrets; settings: Pick<UseCaseSettings, 'otpTtlSeconds'> };

export const userAggregate: Aggregate<UserCommand, UserEvent, UserState> = { decider: userDecider, events: userEvents };

export const USER_EMAIL_SCOPE = 'user_email';

/** The password rules of registration, invitations and resets. */
export function passwordProblem(password: string, email: string): DomainError | null {
  if (password.length < 10) return invalid('weak_password', 'password must be at least 10 characters', 'password');
  if (password.length > 200) return invalid('invalid_password', 'password must be at most 200 characters', 'password');
  if (password.toLowerCase() === email.toLowerCase()) return invalid('weak_password', 'password must not be the email', 'password');
  return null;
}

/** The user id an email belongs to, from its reservation stream (always current). */
export function userIdByEmail(deps: { eventStore: DomainEventStore; secrets: Pick<Secrets, 'digest'> }, email: string): Promise<string | null> {
  return reservationHolder(deps, USER_EMAIL_SCOPE, normalizeEmail(email));
}

export async function issueOtp(deps: OtpDependencies, userId: string, email: string, purpose: OtpPurpose, context: RequestContext): Promise<void> {
  const code = deps.secrets.randomDigits(6);
  const expiresAt = new Date(deps.clock.now().getTime() + deps.settings.otpTtlSeconds * 1000).toISOString();
  await handleCommand(deps, userAggregate, userStream(userId), { type: 'IssueOtp', data: { purpose, code_hash: deps.secrets.digest(`${userId}:${purpose}:${code}`), expires_at: expiresAt } }, context);
  const minutes = Math.round(deps.settings.otpTtlSeconds / 60);
  const [subject, text] =
    purpose === 'email_verification'
      ? ['Verify your email', `Your verification code is ${code}. It expires in ${minutes} minutes.`]
      : ['Reset your password', `Your password reset code is ${code}. It expires in ${minutes} minutes. If you did not ask for it, ignore this email.`];
  await queueEmail(deps, { to: email, data_subject: userSubject(userId), subject, text, kind: purpose }, context);
}

/** Sends a new email-verification code (for a user whose email is not verified yet). */
export async function resendVerification(deps: OtpDependencies, email: string, context: RequestContext): Promise<void> {
  const userId = await userIdByEmail(deps, email);
  if (!userId) return;
  const { state } = await loadAggregate(deps, userAggregate, userStream(userId));
  if (state.status === 'registered' && !state.email_verified) await issueOtp(deps, userId, state.email, 'email_verification', context);
}

export async function verifyOtp(deps: SessionDependencies & { secrets: Pick<Secrets, 'digest'> }, email: string, code: string, context: RequestContext): Promise<SessionResult> {
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

/** Always answers the same, whether or not the email exists. */
export async function requestPasswordReset(deps: OtpDependencies & ReadModelDependencies, email: string, context: RequestContext): Promise<void> {
  const userId = await userIdByEmail(deps, email);
  if (!userId) return;
  const { state } = await loadAggregate(deps, userAggregate, userStream(userId));
  if (state.status !== 'registered') return;
  const [membership] = await activeMemberships(deps, userId);
  await issueOtp(deps, userId, state.email, 'password_reset', { ...context, tenant_id: membership?.tenant_id ?? null, actor: { kind: 'user', id: userId } });
}

/** Sets the new password and revokes every session of the user. */
export async function resetPassword(deps: SessionRevocationDependencies & { secrets: Pick<Secrets, 'digest'>; passwords: Pick<PasswordHasher, 'hash'> }, email: string, code: string, newPassword: string, context: RequestContext): Promise<void> {
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
