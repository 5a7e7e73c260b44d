// Sign-up: the registration aggregate, and the steps of a sign-up: the user, the organization
// with its default workspace and widget token, the owner membership, and the email verification
// code. application/registration/registration-process.ts finishes or releases a stopped one.

import { membershipStream } from '../../domain/membership/membership';
import { type RegistrationCommand, type RegistrationEvent, type RegistrationPlan, type RegistrationState, registrationDecider, registrationEvents, registrationStream } from '../../domain/registration/registration';
import { DomainError } from '../../domain/shared/errors';
import { normalizeText } from '../../domain/shared/text';
import type { TenantCommand } from '../../domain/tenant/commands';
import { slugFromName } from '../../domain/tenant/slug';
import { tenantDecider, tenantNameProblem, tenantStream } from '../../domain/tenant/tenant';
import { emailProblem, nameProblem, normalizeEmail, userStream } from '../../domain/user/user';
import { type Aggregate, handleCommand, loadAggregate } from '../command-handling/handle-command';
import { membershipAggregate } from '../membership/memberships';
import type { PasswordHasher } from '../ports/identity';
import { requireSignupOpen } from '../platform-settings/platform-settings';
import { claimReservation, releaseReservation, reservationKey } from '../reservation/reservations';
import type { UseCaseSettings } from '../shared/dependencies';
import type { ReadYourWritesDependencies } from '../shared/read-models';
import type { RequestContext } from '../shared/request-context';
import { TENANT_SLUG_SCOPE, tenantAggregate } from '../tenant/tenant-commands';
import { openTenantDefaults } from '../tenant/widget-token';
import { type OtpDependencies, USER_EMAIL_SCOPE, issueOtp, passwordProblem, userAggregate } from '../user/users';

/** The commands of every step, the password hasher, the secrets of the reservations, token and code, the deadline, and read-your-writes. */
export type RegistrationDependencies = OtpDependencies &
  ReadYourWritesDependencies & { passwords: Pick<PasswordHasher, 'hash'>; settings: Pick<UseCaseSettings, 'otpTtlSeconds' | 'registrationTimeoutSeconds'> };

export const registrationAggregate: Aggregate<RegistrationCommand, RegistrationEvent, RegistrationState> = { decider: registrationDecider, events: registrationEvents };

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
 * the owner membership and the email OTP. Inputs are validated before anything is written;
 * while the super admin keeps sign-up closed it is 403 `signup_closed`.
 *
 * A registration (domain/registration) is recorded first, holding every id the steps use and
 * a deadline (REGISTRATION_TIMEOUT_SECONDS), and `RegistrationCompleted` last. Each step is
 * idempotent (its event ids derive from the registration's id and the step), so a resumed
 * step appends nothing twice. A sign-up that stops half-way holds its email and slug only
 * tentatively: past the deadline the registration process manager finishes it (once the
 * user exists) or releases them (application/registration/registration-process.ts).
 */
export async function register(deps: RegistrationDependencies, input: RegisterInput, context: RequestContext): Promise<{ user_id: string; tenant_id: string }> {
  // Closed by the super admin: nothing is written. Sign-ups already under way still finish.
  await requireSignupOpen(deps);
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
export async function finishRegistration(deps: OtpDependencies & ReadYourWritesDependencies, plan: RegistrationPlan, context: RequestContext): Promise<void> {
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
  const position = await openTenantDefaults(deps, { tenantId, workspaceId }, step, scoped);
  await deps.readYourWrites(position);
  if (!user.email_verified) await issueOtp(deps, userId, user.email, 'email_verification', scoped);
  await handleCommand(deps, registrationAggregate, registrationStream(registrationId), { type: 'CompleteRegistration', data: {} }, scoped, { tenantId });
}
