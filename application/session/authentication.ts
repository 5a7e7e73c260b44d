// The per-request authentication of a tenant token: signature, stored session, membership.

import { DomainError } from '../../domain/shared/errors';
import { MEMBERSHIPS, type MembershipDocument, membershipId } from '../../projections/memberships';
import { SESSIONS, type SessionDocument } from '../../projections/sessions';
import { TENANTS, type TenantDocument } from '../../projections/tenants';
import type { Clock } from '../ports/clock';
import type { Secrets, TokenService } from '../ports/identity';
import type { ReadModelDependencies } from '../shared/read-models';
import { inactiveTenantError, isActiveTenant } from '../tenant/active-tenant';
import type { Principal } from './sessions';

/** The token verifier, the read models of sessions, memberships and tenants, the keyed digest and the clock. */
export type AuthenticationDependencies = ReadModelDependencies & { tokens: Pick<TokenService, 'verify'>; secrets: Pick<Secrets, 'digest'>; clock: Clock };

const unauthorized = (code: string, message: string): DomainError => new DomainError('unauthorized', code, message);

/** Whether `token` is a tenant's current widget token, looked up by its keyed digest in the tenants read model. */
async function isWidgetToken(deps: Pick<AuthenticationDependencies, 'readStore' | 'secrets'>, token: string): Promise<boolean> {
  const found = await deps.readStore.collection<TenantDocument>(TENANTS).find({ where: { widget_token_hash: deps.secrets.digest(token) }, limit: 1 });
  return found.items.length > 0;
}

/**
 * Authenticates a tenant token: signature, audience and expiry, then the stored session
 * (a revoked one fails) and the membership (a disabled or removed member fails; the role is
 * the current one, not the one in the token), then the tenant (suspended: 403
 * `tenant_suspended`; deleted: 403 `tenant_deleted`). An impersonation session makes the
 * principal carry its admin (`impersonator`). A token that is not a user token is told
 * apart only on that failing path, by looking it up: a tenant's widget token is
 * `widget_token_not_allowed`, anything else (whatever it looks like) `invalid_token`.
 */
export async function authenticateTenantToken(deps: AuthenticationDependencies, token: string): Promise<Principal> {
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
  if (!isActiveTenant(tenant)) throw inactiveTenantError(tenant);
  const principal: Principal = { kind: 'user', user_id: claims.user_id, tenant_id: claims.tenant_id, role: membership.role, jti: claims.jti };
  // Sessions recorded before impersonation existed have no such field.
  return session.impersonated_by ? { ...principal, impersonator: { kind: 'admin', id: session.impersonated_by } } : principal;
}
