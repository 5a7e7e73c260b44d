// Organization membership use cases (spec 4.11): thin functions over the membership roster.

import { type MemberStatus, type MembershipCommand, type Role, membershipStream } from '../../domain/membership/membership';
import { forbidden, notFound } from '../../domain/shared/errors';
import { MEMBERSHIPS, type MembershipDocument, membershipId } from '../../projections/memberships';
import { SESSIONS, type SessionDocument } from '../../projections/sessions';
import { handleCommand } from '../command-handling/handle-command';
import { type IdentityDependencies, type Principal, membershipAggregate, revokeAllSessions, revokeSession } from '../identity/identity';
import type { Page, Where } from '../ports/read-store';
import type { RequestContext } from '../shared/request-context';

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
  deps: IdentityDependencies,
  tenantId: string,
  filter: { role?: Role; status?: MemberStatus },
  page: { limit?: number; cursor?: string },
): Promise<Page<MemberView>> {
  const where: Where = { tenant_id: tenantId, ...filter };
  const found = await deps.readStore.collection<MembershipDocument>(MEMBERSHIPS).find({ where, sort: { field: 'joined_at', direction: 'asc' }, ...page });
  return { items: found.items.map(memberView), next_cursor: found.next_cursor };
}

/** The member of the caller's tenant, or 404 (another tenant's member is never visible). */
export async function getMember(deps: IdentityDependencies, tenantId: string, userId: string): Promise<MemberView> {
  const membership = await deps.readStore.collection<MembershipDocument>(MEMBERSHIPS).get(membershipId(tenantId, userId));
  if (!membership) throw notFound('member_not_found', 'no such member');
  return memberView(membership);
}

function actingContext(principal: Principal, context: RequestContext): RequestContext {
  return { ...context, tenant_id: principal.tenant_id, actor: { kind: 'user', id: principal.user_id } };
}

async function onRoster(deps: IdentityDependencies, principal: Principal, command: MembershipCommand, context: RequestContext): Promise<void> {
  const result = await handleCommand(deps, membershipAggregate, membershipStream(principal.tenant_id), command, actingContext(principal, context));
  await deps.readYourWrites(result.position);
}

export const changeMemberRole = (deps: IdentityDependencies, principal: Principal, userId: string, role: Role, context: RequestContext) =>
  onRoster(deps, principal, { type: 'ChangeMemberRole', data: { actor_user_id: principal.user_id, user_id: userId, role } }, context);

/**
 * Disabling a member also ends every session they have in this organization, so enabling
 * them again does not bring an old token back to life. (While disabled, authentication
 * refuses them whatever their sessions say.)
 */
export async function changeMemberStatus(deps: IdentityDependencies, principal: Principal, userId: string, status: MemberStatus, context: RequestContext): Promise<void> {
  await onRoster(deps, principal, { type: 'ChangeMemberStatus', data: { actor_user_id: principal.user_id, user_id: userId, status } }, context);
  if (status === 'disabled') await revokeAllSessions(deps, userId, 'member_disabled', actingContext(principal, context), { tenantId: principal.tenant_id });
}

/** Ends one of a member's sessions; an owner's sessions are an owner's business only. */
export async function revokeMemberSession(deps: IdentityDependencies, principal: Principal, userId: string, jti: string, context: RequestContext): Promise<void> {
  const member = await getMember(deps, principal.tenant_id, userId);
  if (member.role === 'owner' && principal.role !== 'owner') throw forbidden('owner_protected', 'only an owner can end an owner’s session');
  const session = await deps.readStore.collection<SessionDocument>(SESSIONS).get(jti);
  if (!session || session.user_id !== userId || session.tenant_id !== principal.tenant_id) throw notFound('session_not_found', 'no such session');
  await revokeSession(deps, session.id, 'revoked_by_admin', actingContext(principal, context));
}

export const removeMember = (deps: IdentityDependencies, principal: Principal, userId: string, context: RequestContext) =>
  onRoster(deps, principal, { type: 'RemoveMember', data: { actor_user_id: principal.user_id, user_id: userId } }, context);

export const transferOwnership = (deps: IdentityDependencies, principal: Principal, toUserId: string, context: RequestContext) =>
  onRoster(deps, principal, { type: 'TransferOwnership', data: { actor_user_id: principal.user_id, to_user_id: toUserId } }, context);
