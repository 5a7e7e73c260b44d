// Team invitations and tenant switching (spec 4.10): an admin invites an email with a role,
// the invitee accepts with the emailed token (creating their account when they have none),
// and a user with several memberships switches between them. The super admin invites the
// first owner of an organization it created the same way (`inviteOwner`).
//
// One pending invitation per (tenant, email) is a reservation stream (scope `invitation`),
// released when the invitation is accepted or revoked, and taken over lazily once it expires
// (no timer). The token exists only in the sealed email: events and read models hold its
// keyed digest, which is also how a token is looked up.
//
// An invitation's version (ETag) is its stream's revision. One sent under an idempotency key
// takes its id, its token (a keyed digest of the key: unguessable without the platform's key)
// and its email's id from the key, so running it again after a crash that cut it short
// finishes the same invitation and queues the same email once.

import {
  INVITATION_TTL_SECONDS,
  type InvitationEvent,
  invitationEvents,
  type InvitationCommand,
  type InvitationState,
  type InvitationStatus,
  type InvitationRole,
  type InvitedRole,
  acceptanceProblem,
  invitationDecider,
  invitationStatusAt,
  invitationStream,
  invitationSubject,
  isExpired,
} from '../../domain/invitation/invitation';
import { type MemberStatus, type Role, membershipStream } from '../../domain/membership/membership';
import { DomainError, conflict, forbidden, invalid, notFound } from '../../domain/shared/errors';
import { emailProblem, nameProblem, normalizeEmail, userStream } from '../../domain/user/user';
import { INVITATIONS, type InvitationDocument } from '../../projections/invitations';
import { MEMBERSHIPS, type MembershipDocument, membershipId } from '../../projections/memberships';
import { TENANTS, type TenantDocument } from '../../projections/tenants';
import { USERS, type UserDocument } from '../../projections/users';
import { type Aggregate, handleCommand, loadAggregate } from '../command-handling/handle-command';
import type { PasswordHasher, Secrets } from '../ports/identity';
import { type Principal, type SessionDependencies, type SessionResult, actingContext, startSession } from '../session/sessions';
import { USER_EMAIL_SCOPE, passwordProblem, userAggregate, userIdByEmail } from '../user/users';
import { type AuthenticationDependencies, authenticateTenantToken } from '../session/authentication';
import { membershipAggregate } from '../membership/memberships';
import { requireActiveTenant } from '../tenant/active-tenant';
import { queueEmail } from '../mail/outbox';
import { InvalidCursorError, MAX_PAGE_SIZE, type Page, type Where } from '../ports/read-store';
import { claimReservation, releaseReservation, reservationClaim } from '../reservation/reservations';
import { requireQuota } from '../entitlement/entitlements';
import type { RequestContext } from '../shared/request-context';
import { type Versioned, type WritePreconditions, expectedRevisionOf, versionOfRevision } from '../shared/versions';
import { ReadModelBehindError, readBackChange } from '../shared/read-models';

/** Invitation commands with their email slots, the read models, the outbox, and the session an accepted invitation opens. */
export type InvitationDependencies = SessionDependencies & AuthenticationDependencies & { secrets: Secrets; passwords: PasswordHasher };

export const invitationAggregate: Aggregate<InvitationCommand, InvitationEvent, InvitationState> = { decider: invitationDecider, events: invitationEvents };

export const INVITATION_SCOPE = 'invitation';

/** The reserved value of a pending invitation: one per email in a tenant. */
export const pendingSlot = (tenantId: string, email: string): string => `${tenantId}:${normalizeEmail(email)}`;

export interface InvitationView {
  id: string;
  email: string;
  role: InvitationRole;
  status: InvitationStatus;
  expires_at: string;
  invited_by: string;
  created_at: string;
  accepted_at: string | null;
  revoked_at: string | null;
}

export function invitationView(doc: InvitationDocument, now: Date): InvitationView {
  return {
    id: doc.id,
    email: doc.email,
    role: doc.role,
    status: invitationStatusAt(doc.status, doc.expires_at, now),
    expires_at: doc.expires_at,
    invited_by: doc.invited_by,
    created_at: doc.created_at,
    accepted_at: doc.accepted_at,
    revoked_at: doc.revoked_at,
  };
}

export interface InvitationPreview {
  organization_name: string;
  inviter_name: string | null;
  role: InvitationRole;
  email: string;
  expires_at: string;
}

export interface TenantMembershipView {
  tenant_id: string;
  name: string;
  slug: string;
  role: Role;
  status: MemberStatus;
}

const actingAs = (context: RequestContext, tenantId: string, userId: string): RequestContext => ({ ...context, tenant_id: tenantId, actor: { kind: 'user', id: userId } });

const invitationNotFound = (): DomainError => notFound('invitation_not_found', 'no such invitation');

async function isMember(deps: InvitationDependencies, tenantId: string, userId: string): Promise<boolean> {
  const { state } = await loadAggregate(deps, membershipAggregate, membershipStream(tenantId));
  return state.status === 'active' && state.members[userId] !== undefined;
}

// An invitation's stream is written right after its slot is claimed; a holder whose stream is
// still absent is another request in flight, not a leftover, unless its claim is older than
// any request could take (a crash between claim and write).
const ABANDONED_CLAIM_MS = 5 * 60 * 1000;

/**
 * Claims the (tenant, email) slot for a new invitation. A slot still held by an invitation that
 * expired, was settled without releasing it, or was never written by a request that died
 * (ABANDONED_CLAIM_MS) is released on its behalf and claimed again.
 */
async function claimPendingSlot(deps: InvitationDependencies, tenantId: string, email: string, invitationId: string, context: RequestContext): Promise<void> {
  const slot = pendingSlot(tenantId, email);
  const pending = (): DomainError => conflict('invitation_pending', 'a pending invitation for this email already exists; revoke it to send a new one');
  try {
    await claimReservation(deps, INVITATION_SCOPE, slot, invitationId, context);
    return;
  } catch (error) {
    if (!(error instanceof DomainError && error.code === `${INVITATION_SCOPE}_taken`)) throw error;
  }
  const claim = await reservationClaim(deps, INVITATION_SCOPE, slot);
  if (!claim) throw pending();
  const now = deps.clock.now();
  const { state } = await loadAggregate(deps, invitationAggregate, invitationStream(claim.owner_id));
  if (state.status === 'absent' && now.getTime() - Date.parse(claim.claimed_at) < ABANDONED_CLAIM_MS) throw pending();
  if (state.status === 'pending' && !isExpired(state.expires_at, now)) throw pending();
  await releaseReservation(deps, INVITATION_SCOPE, slot, claim.owner_id, context);
  await claimReservation(deps, INVITATION_SCOPE, slot, invitationId, context).catch((error: unknown) => {
    throw error instanceof DomainError && error.code === `${INVITATION_SCOPE}_taken` ? pending() : error;
  });
}

export interface InviteInput {
  email: string;
  role: InvitedRole;
}

/** Records the invitation and emails its token; 409 for a member or a pending invitation. */
export function inviteMember(
  deps: InvitationDependencies,
  principal: Principal,
  input: InviteInput,
  context: RequestContext,
  options: { idempotencyKey?: string } = {},
): Promise<Versioned<InvitationView>> {
  return sendInvitation(deps, { tenant_id: principal.tenant_id, id: principal.user_id, platform_admin: false }, input, actingContext(principal, context), options);
}

/**
 * The super admin invites the owner of an organization it created (the one way an owner is
 * invited); the email is sent through the outbox as any invitation's.
 */
export function inviteOwner(
  deps: InvitationDependencies,
  adminId: string,
  tenantId: string,
  owner: { email: string; name?: string },
  context: RequestContext,
  options: { idempotencyKey?: string } = {},
): Promise<Versioned<InvitationView>> {
  const scoped: RequestContext = { ...context, tenant_id: tenantId, actor: { kind: 'admin', id: adminId } };
  return sendInvitation(deps, { tenant_id: tenantId, id: adminId, platform_admin: true }, { email: owner.email, role: 'owner', invitee_name: owner.name }, scoped, options);
}

/** Who sends an invitation: a member of the tenant, or the super admin. */
interface Inviter {
  tenant_id: string;
  id: string;
  platform_admin: boolean;
}

async function sendInvitation(
  deps: InvitationDependencies,
  inviter: Inviter,
  input: { email: string; role: InvitationRole; invitee_name?: string },
  scoped: RequestContext,
  options: { idempotencyKey?: string },
): Promise<Versioned<InvitationView>> {
  const tenantId = inviter.tenant_id;
  const email = normalizeEmail(input.email);
  const emailInvalid = emailProblem(email);
  if (emailInvalid) throw emailInvalid;
  const invitee = await userIdByEmail(deps, email);
  if (invitee && (await isMember(deps, tenantId, invitee))) throw conflict('already_member', 'this email belongs to a member of this organization');

  const key = options.idempotencyKey === undefined ? undefined : `${options.idempotencyKey}:invitation`;
  const invitationId = key === undefined ? deps.ids.newId() : deps.ids.fromKey(key);
  const token = key === undefined ? deps.secrets.randomToken(32) : deps.secrets.digest(`${key}:token`);
  const command: InvitationCommand = {
    type: 'SendInvitation',
    data: {
      tenant_id: tenantId,
      invitation_id: invitationId,
      email,
      role: input.role,
      token_digest: deps.secrets.digest(token),
      invited_by: inviter.id,
      ...(inviter.platform_admin ? { by_platform_admin: true } : {}),
    },
  };
  // Validate before claiming, so a bad request leaves no reservation behind.
  const dryRun = invitationDecider.decide(command, invitationDecider.initialState(), { now: deps.clock.now() });
  if (dryRun._tag === 'Left') throw dryRun.left;
  // A seat per pending invitation: past the plan's users limit, 429 before anything is written.
  // A retry under the same Idempotency-Key finds its own invitation already counted.
  const retried = key !== undefined && (await deps.readStore.collection(INVITATIONS).get(invitationId)) !== null;
  if (!retried) await requireQuota(deps, tenantId, 'users');

  await claimPendingSlot(deps, tenantId, email, invitationId, scoped);
  let position: number | null;
  try {
    position = (await handleCommand(deps, invitationAggregate, invitationStream(invitationId), command, scoped, { idempotencyKey: key })).position;
  } catch (error) {
    await releaseReservation(deps, INVITATION_SCOPE, pendingSlot(tenantId, email), invitationId, scoped).catch(() => undefined);
    throw error;
  }
  const [tenant, inviterUser] = await Promise.all([
    deps.readStore.collection<TenantDocument>(TENANTS).get(tenantId),
    inviter.platform_admin ? null : deps.readStore.collection<UserDocument>(USERS).get(inviter.id),
  ]);
  const organization = tenant?.name ?? 'an organization';
  const days = Math.round(INVITATION_TTL_SECONDS / 86400);
  const as = { owner: 'its owner', admin: 'an admin', member: 'a member' }[input.role];
  await queueEmail(
    deps,
    {
      to: email,
      data_subject: invitationSubject(invitationId),
      subject: `You are invited to join ${organization}`,
      text: `${input.invitee_name ? `Hello ${input.invitee_name},\n\n` : ''}${inviterUser?.name ?? 'An administrator'} invited you to join ${organization} as ${as}. Your invitation token is ${token}. It expires in ${days} days.`,
      kind: 'invitation',
    },
    scoped,
    { idempotencyKey: key === undefined ? undefined : `${key}:email` },
  );
  await deps.readYourWrites(position);
  return versionedInvitation(await readInvitation(deps, invitationId), deps.clock.now());
}

const versionedInvitation = (doc: InvitationDocument, now: Date): Versioned<InvitationView> => ({ value: invitationView(doc, now), version: versionOfRevision(doc.revision) });

async function readInvitation(deps: InvitationDependencies, invitationId: string): Promise<InvitationDocument> {
  const doc = await deps.readStore.collection<InvitationDocument>(INVITATIONS).get(invitationId);
  if (!doc) throw new ReadModelBehindError('the invitation');
  return doc;
}

/**
 * The tenant's invitations, newest first. `pending` and `expired` depend on the time: their
 * cursor carries the instant of the first page, so later pages split at the same moment.
 */
export async function listInvitations(
  deps: InvitationDependencies,
  tenantId: string,
  filter: { status?: InvitationStatus },
  page: { limit?: number; cursor?: string },
): Promise<Page<InvitationView>> {
  const timed = filter.status === 'pending' || filter.status === 'expired';
  let asOf = deps.clock.now();
  let cursor = page.cursor;
  if (timed && cursor !== undefined) {
    const separator = cursor.indexOf('.');
    const millis = Number(cursor.slice(0, separator));
    if (separator <= 0 || !Number.isSafeInteger(millis)) throw new InvalidCursorError();
    asOf = new Date(millis);
    cursor = cursor.slice(separator + 1);
  }
  const where: Where = { tenant_id: tenantId };
  if (filter.status === 'pending') Object.assign(where, { status: 'pending', expires_at: { gt: asOf.toISOString() } });
  else if (filter.status === 'expired') Object.assign(where, { status: 'pending', expires_at: { lte: asOf.toISOString() } });
  else if (filter.status) where.status = filter.status;
  const found = await deps.readStore.collection<InvitationDocument>(INVITATIONS).find({ where, sort: { field: 'created_at', direction: 'desc' }, limit: page.limit, cursor });
  const now = deps.clock.now();
  return {
    items: found.items.map((doc) => invitationView(doc, now)),
    next_cursor: found.next_cursor && timed ? `${asOf.getTime()}.${found.next_cursor}` : found.next_cursor,
  };
}

/** Revokes a pending invitation of the caller's tenant and frees its email for a new one. */
export async function revokeInvitation(
  deps: InvitationDependencies,
  principal: Principal,
  invitationId: string,
  context: RequestContext,
  preconditions: WritePreconditions = {},
): Promise<Versioned<InvitationView>> {
  const scoped = actingContext(principal, context);
  let expectedRevision: number | undefined;
  if (preconditions.expectedVersion !== undefined) {
    // Another tenant's invitation is 404 before its version is compared.
    const { state, revision } = await loadAggregate(deps, invitationAggregate, invitationStream(invitationId));
    if (state.status === 'absent' || state.tenant_id !== principal.tenant_id) throw invitationNotFound();
    expectedRevision = expectedRevisionOf('invitation', preconditions.expectedVersion, revision);
  }
  const result = await handleCommand(
    deps,
    invitationAggregate,
    invitationStream(invitationId),
    { type: 'RevokeInvitation', data: { tenant_id: principal.tenant_id, by: principal.user_id } },
    scoped,
    { expectedRevision },
  );
  const { state } = await loadAggregate(deps, invitationAggregate, invitationStream(invitationId));
  if (state.status !== 'absent' && state.status !== 'erased') await releaseReservation(deps, INVITATION_SCOPE, pendingSlot(state.tenant_id, state.email), invitationId, scoped);
  return readBackChange(deps, result, 'the revocation', async () => versionedInvitation(await readInvitation(deps, invitationId), deps.clock.now()));
}

async function invitationByToken(deps: InvitationDependencies, token: string): Promise<InvitationDocument> {
  const found = await deps.readStore.collection<InvitationDocument>(INVITATIONS).find({ where: { token_digest: deps.secrets.digest(token) }, limit: 1 });
  if (found.items.length === 0) throw invitationNotFound();
  return found.items[0];
}

/** What the invitee sees before accepting: 404 unknown, 409 used or revoked, expired (410). */
export async function previewInvitation(deps: InvitationDependencies, token: string): Promise<InvitationPreview> {
  const doc = await invitationByToken(deps, token);
  const { state } = await loadAggregate(deps, invitationAggregate, invitationStream(doc.id));
  const problem = acceptanceProblem(state, deps.clock.now());
  if (problem) throw problem;
  const [tenant, inviter] = await Promise.all([
    deps.readStore.collection<TenantDocument>(TENANTS).get(doc.tenant_id),
    deps.readStore.collection<UserDocument>(USERS).get(doc.invited_by),
  ]);
  return { organization_name: tenant?.name ?? '', inviter_name: inviter?.name ?? null, role: doc.role, email: doc.email, expires_at: doc.expires_at };
}

export interface AcceptInput {
  token: string;
  name?: string;
  password?: string;
}

/**
 * Accepts an invitation and opens a session in its tenant. The invited email's existing account
 * must prove itself (its bearer token from any tenant, or its password); without an account, a
 * new one is created with `name` and `password`, its email verified by the token's possession.
 */
export async function acceptInvitation(deps: InvitationDependencies, input: AcceptInput, bearer: string | null, context: RequestContext): Promise<SessionResult> {
  const doc = await invitationByToken(deps, input.token);
  const invitation = (await loadAggregate(deps, invitationAggregate, invitationStream(doc.id))).state;
  const problem = acceptanceProblem(invitation, deps.clock.now());
  if (problem) throw problem;
  if (invitation.status !== 'pending') throw invitationNotFound();
  const { tenant_id: tenantId, email, role } = invitation;
  await requireActiveTenant(deps, tenantId);
  if (role === 'owner') {
    // An owner joins only an organization that has no member yet (the one the super admin
    // created for them); checked before the invitation is used up.
    const { state: roster } = await loadAggregate(deps, membershipAggregate, membershipStream(tenantId));
    if (roster.status !== 'absent') throw conflict('organization_has_owner', 'this organization already has its members; ask its owner for an invitation');
  }

  const existing = await userIdByEmail(deps, email);
  const userId = existing ?? deps.ids.newId();
  const scoped = actingAs(context, tenantId, userId);
  // Positions of this flow's writes; the answer waits until the read models have passed them.
  const positions: Array<number | null> = [];
  const accept = async (): Promise<void> => {
    positions.push((await handleCommand(deps, invitationAggregate, invitationStream(doc.id), { type: 'AcceptInvitation', data: { user_id: userId, email } }, scoped)).position);
  };

  if (existing) {
    await proveAccount(deps, existing, input.password, bearer, scoped);
    if (await isMember(deps, tenantId, existing)) throw conflict('already_member', 'you are already a member of this organization');
    await accept();
  } else {
    if (input.name === undefined) throw invalid('invalid_request', 'name: required to create your account', 'name');
    if (input.password === undefined) throw invalid('invalid_request', 'password: required to create your account', 'password');
    const invalidField = nameProblem(input.name) ?? passwordProblem(input.password, email);
    if (invalidField) throw invalidField;
    const passwordHash = await deps.passwords.hash(input.password);
    // The email reservation makes two accepts racing for one email create one user.
    await claimReservation(deps, USER_EMAIL_SCOPE, email, userId, scoped).catch((error: unknown) => {
      throw error instanceof DomainError && error.code === `${USER_EMAIL_SCOPE}_taken` ? conflict('email_taken', 'an account with this email already exists') : error;
    });
    try {
      await accept();
    } catch (error) {
      await releaseReservation(deps, USER_EMAIL_SCOPE, email, userId, scoped).catch(() => undefined);
      throw error;
    }
    const registered = { user_id: userId, email, name: input.name, password_hash: passwordHash };
    positions.push((await handleCommand(deps, userAggregate, userStream(userId), { type: 'RegisterUser', data: registered }, scoped)).position);
  }
  positions.push((await handleCommand(deps, userAggregate, userStream(userId), { type: 'MarkEmailVerified', data: {} }, scoped)).position);
  try {
    positions.push((await handleCommand(deps, membershipAggregate, membershipStream(tenantId), { type: 'AddMember', data: { tenant_id: tenantId, user_id: userId, role } }, scoped)).position);
  } catch (error) {
    // Joined meanwhile by another path: the membership is there, which is what was asked.
    if (!(error instanceof DomainError && error.code === 'already_member')) throw error;
  }
  await releaseReservation(deps, INVITATION_SCOPE, pendingSlot(tenantId, email), doc.id, scoped);
  await deps.readYourWrites(Math.max(0, ...positions.map((position) => position ?? 0)));
  const membership = await deps.readStore.collection<MembershipDocument>(MEMBERSHIPS).get(membershipId(tenantId, userId));
  if (!membership) throw new ReadModelBehindError('your membership', 'log in in a moment');
  return startSession(deps, userId, membership, context);
}

/** The invited account proves itself with its own bearer token (any tenant) or its password. */
async function proveAccount(deps: InvitationDependencies, userId: string, password: string | undefined, bearer: string | null, context: RequestContext): Promise<void> {
  if (bearer) {
    const principal = await authenticateTenantToken(deps, bearer).catch(() => null);
    // An impersonation token is the admin's, not the account's own proof.
    if (principal?.user_id === userId && !principal.impersonator) return;
  }
  if (password === undefined) {
    throw new DomainError('unauthorized', 'credentials_required', 'this email has an account: sign in as it (Authorization: Bearer) or send its password');
  }
  const { state } = await loadAggregate(deps, userAggregate, userStream(userId));
  if (state.status === 'registered' && (await deps.passwords.verify(password, state.password_hash))) return;
  if (state.status === 'registered') await handleCommand(deps, userAggregate, userStream(userId), { type: 'RecordLoginFailure', data: { reason: 'wrong_password' } }, context);
  throw new DomainError('unauthorized', 'invalid_credentials', 'email or password is wrong');
}

/** A new session in another tenant the caller is an active member of; 403 otherwise. */
export async function switchTenant(deps: InvitationDependencies, principal: Principal, tenantId: string, context: RequestContext): Promise<SessionResult> {
  // A new session of the member's own would outlive the impersonation and drop its subject.
  if (principal.impersonator) throw forbidden('impersonation_restricted', 'an impersonation token stays in the organization it was issued for');
  const membership = await deps.readStore.collection<MembershipDocument>(MEMBERSHIPS).get(membershipId(tenantId, principal.user_id));
  if (!membership || membership.status !== 'active') throw forbidden('not_a_member', 'you are not an active member of that organization');
  return startSession(deps, principal.user_id, membership, context);
}

/** Every membership of the user, oldest first, with its tenant's name and slug. */
export async function myTenants(deps: InvitationDependencies, userId: string): Promise<TenantMembershipView[]> {
  const memberships = await deps.readStore
    .collection<MembershipDocument>(MEMBERSHIPS)
    .find({ where: { user_id: userId }, sort: { field: 'joined_at', direction: 'asc' }, limit: MAX_PAGE_SIZE });
  const tenants = deps.readStore.collection<TenantDocument>(TENANTS);
  const views = await Promise.all(
    memberships.items.map(async (membership): Promise<TenantMembershipView | null> => {
      const tenant = await tenants.get(membership.tenant_id);
      return tenant ? { tenant_id: tenant.id, name: tenant.name, slug: tenant.slug, role: membership.role, status: membership.status } : null;
    }),
  );
  return views.filter((view): view is TenantMembershipView => view !== null);
}
