// Organization membership use cases (spec 4.11): thin functions over the membership roster.
//
// A member's version (ETag) is the roster revision of the last event that changed them. The
// roster is one stream for the tenant, so a write given the version the client saw checks
// that no later event changed this member, then appends at the revision it checked: another
// member's change in between makes it check again rather than fail.

import { type MemberStatus, type MembershipCommand, type MembershipEvent, type Role, membershipEvents, membershipStream } from '../../domain/membership/membership';
import { DomainError, conflict, forbidden, notFound } from '../../domain/shared/errors';
import { MEMBERSHIPS, type MembershipDocument, membershipId } from '../../projections/memberships';
import { SESSIONS, type SessionDocument } from '../../projections/sessions';
import { type CommandResult, handleCommand, recordOf } from '../command-handling/handle-command';
import { type Principal, type SessionRevocationDependencies, actingContext, revokeAllSessions, revokeSession } from '../session/sessions';
import { membershipAggregate } from './memberships';
import type { Page, Where } from '../ports/read-store';
import { requireApplied } from '../shared/read-models';
import type { RequestContext } from '../shared/request-context';
import { type Versioned, type WritePreconditions, versionMismatch, versionOfRevision } from '../shared/versions';

export interface MemberView {
  user_id: string;
  email: string | null;
  name: string | null;
  role: Role;
  status: MemberStatus;
  joined_at: string;
}

export function memberView(membership: MembershipDocument): MemberView {
  return { user_id: membership.user_id, email: membership.email ?? null, name: membership.name ?? null, role: membership.role, status: membership.status, joined_at: membership.joined_at };
}

export async function listMembers(
  deps: SessionRevocationDependencies,
  tenantId: string,
  filter: { role?: Role; status?: MemberStatus },
  page: { limit?: number; cursor?: string },
): Promise<Page<MemberView>> {
  const where: Where = { tenant_id: tenantId, ...filter };
  const found = await deps.readStore.collection<MembershipDocument>(MEMBERSHIPS).find({ where, sort: { field: 'joined_at', direction: 'asc' }, ...page });
  return { items: found.items.map(memberView), next_cursor: found.next_cursor };
}

/** The member of the caller's tenant with their version, or 404 (another tenant's member is never visible). */
export async function getMember(deps: SessionRevocationDependencies, tenantId: string, userId: string): Promise<Versioned<MemberView>> {
  const membership = await deps.readStore.collection<MembershipDocument>(MEMBERSHIPS).get(membershipId(tenantId, userId));
  if (!membership) throw notFound('member_not_found', 'no such member');
  return { value: memberView(membership), version: versionOfRevision(membership.revision) };
}

/** The members an event of the roster changes. */
function membersChangedBy(event: MembershipEvent): string[] {
  return event.type === 'OwnershipTransferred' ? [event.data.from_user_id, event.data.to_user_id] : [event.data.user_id];
}

/** Bounds the re-checks when other members keep changing while a conditional write runs. */
const MAX_CONDITIONAL_ATTEMPTS = 5;

/** A roster command on `userId` that runs only if the member is still at `expectedVersion`. */
async function onMemberAtVersion(
  deps: SessionRevocationDependencies,
  principal: Principal,
  userId: string,
  expectedVersion: string,
  command: MembershipCommand,
  context: RequestContext,
): Promise<CommandResult<MembershipEvent>> {
  const stream = membershipStream(principal.tenant_id);
  for (let attempt = 1; attempt <= MAX_CONDITIONAL_ATTEMPTS; attempt += 1) {
    const recorded = await deps.eventStore.readStream(stream);
    const head = recorded.length > 0 ? recorded[recorded.length - 1].revision : -1;
    let changedAt = -1;
    for (const event of recorded) {
      if (!membershipEvents.includes(event)) throw new Error(`${stream}@${event.revision}: event ${event.type} is not a membership event`);
      if (membersChangedBy(event).includes(userId)) changedAt = event.revision;
    }
    const actual = versionOfRevision(changedAt);
    if (actual !== expectedVersion) throw versionMismatch('member', expectedVersion, actual);
    try {
      return await handleCommand(deps, membershipAggregate, stream, command, actingContext(principal, context), { expectedRevision: head });
    } catch (error) {
      // Another member changed meanwhile: check this one again at the new head.
      if (!(error instanceof DomainError && error.kind === 'precondition_failed')) throw error;
    }
  }
  throw conflict('concurrent_modification', `the ${recordOf(stream)} kept changing while the command ran; try again`);
}

/** Runs a roster command; answers where it was committed. */
async function onRoster(
  deps: SessionRevocationDependencies,
  principal: Principal,
  userId: string,
  command: MembershipCommand,
  context: RequestContext,
  preconditions: WritePreconditions,
): Promise<number | null> {
  const result =
    preconditions.expectedVersion === undefined
      ? await handleCommand(deps, membershipAggregate, membershipStream(principal.tenant_id), command, actingContext(principal, context))
      : await onMemberAtVersion(deps, principal, userId, preconditions.expectedVersion, command, context);
  return result.position;
}

/** For a change the route answers with the member as read next: 503 when the read model has not applied it. */
function requireMemberShows(deps: SessionRevocationDependencies, tenantId: string, userId: string, position: number | null): Promise<void> {
  return requireApplied(deps, position, 'the change of the member', () => deps.readStore.collection<MembershipDocument>(MEMBERSHIPS).get(membershipId(tenantId, userId)));
}

export async function changeMemberRole(deps: SessionRevocationDependencies, principal: Principal, userId: string, role: Role, context: RequestContext, preconditions: WritePreconditions = {}): Promise<void> {
  const position = await onRoster(deps, principal, userId, { type: 'ChangeMemberRole', data: { actor_user_id: principal.user_id, user_id: userId, role } }, context, preconditions);
  await requireMemberShows(deps, principal.tenant_id, userId, position);
}

/**
 * Disabling a member also ends every session they have in this organization, so enabling
 * them again does not bring an old token back to life. (While disabled, authentication
 * refuses them whatever their sessions say.)
 */
export async function changeMemberStatus(
  deps: SessionRevocationDependencies,
  principal: Principal,
  userId: string,
  status: MemberStatus,
  context: RequestContext,
  preconditions: WritePreconditions = {},
): Promise<void> {
  const position = await onRoster(deps, principal, userId, { type: 'ChangeMemberStatus', data: { actor_user_id: principal.user_id, user_id: userId, status } }, context, preconditions);
  // The sessions end whether or not the read models show the change yet.
  if (status === 'disabled') await revokeAllSessions(deps, userId, 'member_disabled', actingContext(principal, context), { tenantId: principal.tenant_id });
  await requireMemberShows(deps, principal.tenant_id, userId, position);
}

/** Ends one of a member's sessions; an owner's sessions are an owner's business only. */
export async function revokeMemberSession(deps: SessionRevocationDependencies, principal: Principal, userId: string, jti: string, context: RequestContext): Promise<void> {
  const { value: member } = await getMember(deps, principal.tenant_id, userId);
  if (member.role === 'owner' && principal.role !== 'owner') throw forbidden('owner_protected', 'only an owner can end an owner’s session');
  const session = await deps.readStore.collection<SessionDocument>(SESSIONS).get(jti);
  if (!session || session.user_id !== userId || session.tenant_id !== principal.tenant_id) throw notFound('session_not_found', 'no such session');
  await revokeSession(deps, session.id, 'revoked_by_admin', actingContext(principal, context));
}

export async function removeMember(deps: SessionRevocationDependencies, principal: Principal, userId: string, context: RequestContext, preconditions: WritePreconditions = {}): Promise<void> {
  await deps.readYourWrites(await onRoster(deps, principal, userId, { type: 'RemoveMember', data: { actor_user_id: principal.user_id, user_id: userId } }, context, preconditions));
}

export async function transferOwnership(deps: SessionRevocationDependencies, principal: Principal, toUserId: string, context: RequestContext): Promise<void> {
  await deps.readYourWrites(await onRoster(deps, principal, toUserId, { type: 'TransferOwnership', data: { actor_user_id: principal.user_id, to_user_id: toUserId } }, context, {}));
}
