// Impersonation (spec 4.16): the super admin opens a short-lived session as a member of a
// tenant, to see and do what they see and do. The session records the admin
// (`SessionStarted.impersonated_by`, and `ImpersonationStarted` in the tenant's audit log), and
// every event written with its token names the admin as actor and the member as subject
// (application/session/sessions.ts `actingContext`). The token lasts
// IMPERSONATION_TTL_SECONDS, at most an hour, and cannot switch tenants.

import { conflict, notFound } from '../../domain/shared/errors';
import { type Member, membershipStream } from '../../domain/membership/membership';
import { tenantStream } from '../../domain/tenant/tenant';
import { MEMBERSHIPS, type MembershipDocument } from '../../projections/memberships';
import { USERS, type UserDocument } from '../../projections/users';
import { loadAggregate } from '../command-handling/handle-command';
import { membershipAggregate } from '../membership/memberships';
import { type SessionDependencies, openSession } from '../session/sessions';
import type { UseCaseSettings } from '../shared/dependencies';
import type { RequestContext } from '../shared/request-context';
import { tenantAggregate } from '../tenant/tenant-commands';
import type { AdminPrincipal } from './admin-auth';

/** The longest an impersonation token may last, whatever the configuration says. */
export const MAX_IMPERSONATION_TTL_SECONDS = 3600;

export type ImpersonationDependencies = SessionDependencies & { settings: Pick<UseCaseSettings, 'tokenTtlSeconds' | 'impersonationTtlSeconds'> };

export interface ImpersonationView {
  /** A tenant token for the member: send it as `Authorization: Bearer`. */
  token: string;
  session_id: string;
  expires_at: string;
  tenant_id: string;
  user: { id: string; email: string; name: string };
  role: Member['role'];
  impersonated_by: { kind: 'admin'; id: string };
}

/** The member to impersonate: the one named, or else the tenant's longest-standing active owner. */
async function targetOf(deps: ImpersonationDependencies, tenantId: string, userId: string | undefined): Promise<{ userId: string; member: Member }> {
  const { state: roster } = await loadAggregate(deps, membershipAggregate, membershipStream(tenantId));
  const members = roster.status === 'active' ? roster.members : {};
  let chosen = userId;
  if (chosen === undefined) {
    const owners = await deps.readStore
      .collection<MembershipDocument>(MEMBERSHIPS)
      .find({ where: { tenant_id: tenantId, role: 'owner', status: 'active' }, sort: { field: 'joined_at', direction: 'asc' }, limit: 1 });
    chosen = owners.items[0]?.user_id;
    if (chosen === undefined) throw conflict('no_owner', 'the organization has no active owner yet (its invitation may still be pending); name a user_id');
  }
  const member = members[chosen];
  if (!member) throw notFound('member_not_found', 'no such member of this organization');
  if (member.status !== 'active') throw conflict('member_disabled', 'this member is disabled; enable them first');
  return { userId: chosen, member };
}

/**
 * A short-lived token for a member of an active tenant (409 `tenant_suspended` /
 * `tenant_deleted` otherwise: their members cannot use a token either).
 */
export async function impersonateMember(
  deps: ImpersonationDependencies,
  admin: AdminPrincipal,
  tenantId: string,
  userId: string | undefined,
  context: RequestContext,
): Promise<ImpersonationView> {
  const { state: tenant } = await loadAggregate(deps, tenantAggregate, tenantStream(tenantId));
  if (tenant.status === 'absent') throw notFound('tenant_not_found', 'no such tenant');
  if (tenant.status === 'suspended') throw conflict('tenant_suspended', 'the organization is suspended: its members cannot sign in, so neither can an impersonation');
  if (tenant.status === 'deleted') throw conflict('tenant_deleted', 'the organization is deleted');
  const target = await targetOf(deps, tenantId, userId);
  const user = await deps.readStore.collection<UserDocument>(USERS).get(target.userId);
  if (!user) throw notFound('member_not_found', 'no such member of this organization');
  const ttl = Math.min(deps.settings.impersonationTtlSeconds, MAX_IMPERSONATION_TTL_SECONDS);
  const session = await openSession(
    deps,
    {
      user_id: target.userId,
      tenant_id: tenantId,
      role: target.member.role,
      audience: 'tenant',
      actor: { kind: 'admin', id: admin.admin_id },
      impersonated_by: admin.admin_id,
      ttl_seconds: ttl,
    },
    context,
  );
  return {
    token: session.token,
    session_id: session.jti,
    expires_at: session.expires_at,
    tenant_id: tenantId,
    user: { id: user.id, email: user.email, name: user.name },
    role: target.member.role,
    impersonated_by: { kind: 'admin', id: admin.admin_id },
  };
}
