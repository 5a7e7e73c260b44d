// Sessions: the session aggregate (one stream per token's jti), signing a token for a new
// session, revoking sessions, and the user's own sessions as the read model lists them (another
// user's or another tenant's session is 404, never 403).

import type { Role } from '../../domain/membership/membership';
import { type SessionCommand, type SessionEvent, type SessionState, sessionDecider, sessionEvents, sessionStream } from '../../domain/session/session';
import { notFound } from '../../domain/shared/errors';
import type { MembershipDocument } from '../../projections/memberships';
import { SESSIONS, type SessionDocument } from '../../projections/sessions';
import { TENANTS, type TenantDocument } from '../../projections/tenants';
import { USERS, type UserDocument } from '../../projections/users';
import { type Aggregate, type CommandDependencies, handleCommand } from '../command-handling/handle-command';
import type { Actor } from '../ports/event-store';
import type { TokenAudience, TokenClaims, TokenService } from '../ports/identity';
import type { Page, Where } from '../ports/read-store';
import type { UseCaseSettings } from '../shared/dependencies';
import { type ReadModelDependencies, type ReadYourWritesDependencies, ReadModelBehindError } from '../shared/read-models';
import type { RequestContext } from '../shared/request-context';
import { requireActiveTenant } from '../tenant/active-tenant';

/** Opening a session: its command, the token signer and its lifetime, and the read models the answer comes from. */
export type SessionDependencies = CommandDependencies &
  ReadModelDependencies &
  ReadYourWritesDependencies & { tokens: Pick<TokenService, 'sign'>; settings: Pick<UseCaseSettings, 'tokenTtlSeconds'> };

/** Revoking sessions found in the read model. */
export type SessionRevocationDependencies = CommandDependencies & ReadModelDependencies & ReadYourWritesDependencies;

export const sessionAggregate: Aggregate<SessionCommand, SessionEvent, SessionState> = { decider: sessionDecider, events: sessionEvents };

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
  /** The super admin behind the token, when it is an impersonation session: they act, the member is the subject. */
  impersonator?: Actor & { kind: 'admin' };
}

/**
 * The context of everything a principal writes: their tenant, and who acts. With a member's
 * own token the member acts; with an impersonation token the admin acts and the member is
 * the subject. The one place a principal becomes event metadata.
 */
export function actingContext(principal: Principal, context: RequestContext): RequestContext {
  const member: Actor = { kind: 'user', id: principal.user_id };
  const { subject: _ignored, ...base } = context;
  return principal.impersonator
    ? { ...base, tenant_id: principal.tenant_id, actor: principal.impersonator, subject: member }
    : { ...base, tenant_id: principal.tenant_id, actor: member };
}

/** Who a new session is for; an impersonation names the admin and its own (shorter) lifetime. */
export interface SessionSubject {
  user_id: string;
  tenant_id: string | null;
  role: string;
  audience: TokenAudience;
  actor: RequestContext['actor'];
  /** The super admin opening the session as this member (the event's actor then, the member its subject). */
  impersonated_by?: string;
  /** Instead of TOKEN_TTL_SECONDS. */
  ttl_seconds?: number;
}

/** Records a session (its jti is the token's) and signs the token: the one way tokens are made. */
export async function signSessionToken(deps: SessionDependencies, subject: SessionSubject, context: RequestContext): Promise<string> {
  return (await openSession(deps, subject, context)).token;
}

/** signSessionToken, also answering the session's id and expiry. */
export async function openSession(deps: SessionDependencies, subject: SessionSubject, context: RequestContext): Promise<{ token: string; jti: string; expires_at: string }> {
  const jti = deps.ids.newId();
  const now = deps.clock.now();
  const expiresAt = new Date(now.getTime() + (subject.ttl_seconds ?? deps.settings.tokenTtlSeconds) * 1000).toISOString();
  const impersonation = subject.impersonated_by === undefined ? {} : { impersonated_by: subject.impersonated_by };
  // Only an impersonation has a subject: the member whose session the admin opens.
  const { subject: _unrelated, ...base } = context;
  const metadataSubject: Partial<RequestContext> = subject.impersonated_by === undefined ? {} : { subject: { kind: 'user', id: subject.user_id } };
  const result = await handleCommand(
    deps,
    sessionAggregate,
    sessionStream(jti),
    {
      type: 'StartSession',
      data: {
        jti,
        user_id: subject.user_id,
        tenant_id: subject.tenant_id,
        audience: subject.audience,
        issued_at: now.toISOString(),
        expires_at: expiresAt,
        ip: context.ip,
        user_agent: context.user_agent ?? null,
        ...impersonation,
      },
    },
    { ...base, tenant_id: subject.tenant_id, actor: subject.actor, ...metadataSubject },
  );
  await deps.readYourWrites(result.position);
  const claims: TokenClaims = { user_id: subject.user_id, tenant_id: subject.tenant_id, role: subject.role, jti, audience: subject.audience, issued_at: now.toISOString(), expires_at: expiresAt };
  return { token: await deps.tokens.sign(claims), jti, expires_at: expiresAt };
}

/** Opens a session for a membership and signs its token; 403 `tenant_suspended` / `tenant_deleted` unless its tenant is active. */
export async function startSession(deps: SessionDependencies, userId: string, membership: MembershipDocument, context: RequestContext): Promise<SessionResult> {
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
  if (!user || !tenant) throw new ReadModelBehindError('the session', 'log in again in a moment');
  return { token, user, tenant, role: membership.role };
}

/** Revokes the user's active sessions: all of them, or those in one tenant. */
export async function revokeAllSessions(deps: SessionRevocationDependencies, userId: string, reason: string, context: RequestContext, scope: { tenantId?: string } = {}): Promise<number> {
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

export async function revokeSession(deps: CommandDependencies & ReadYourWritesDependencies, jti: string, reason: string, context: RequestContext): Promise<void> {
  const result = await handleCommand(deps, sessionAggregate, sessionStream(jti), { type: 'RevokeSession', data: { reason } }, context);
  await deps.readYourWrites(result.position);
}

export async function listSessions(deps: ReadModelDependencies, userId: string, tenantId: string | null, options: { limit?: number; cursor?: string }): Promise<Page<SessionDocument>> {
  return deps.readStore.collection<SessionDocument>(SESSIONS).find({
    where: tenantId ? { user_id: userId, tenant_id: tenantId } : { user_id: userId },
    sort: { field: 'issued_at', direction: 'desc' },
    limit: options.limit,
    cursor: options.cursor,
  });
}

/** A session as its user sees it. */
export interface SessionView {
  id: string;
  user_id: string;
  tenant_id: string | null;
  audience: 'tenant' | 'admin';
  status: 'active' | 'revoked';
  issued_at: string;
  expires_at: string;
  revoked_at: string | null;
  revoked_reason: string | null;
  ip: string | null;
  user_agent: string | null;
}

/** Revokes one of the caller's sessions in the current tenant. */
export async function revokeOwnSession(deps: SessionRevocationDependencies, principal: Principal, jti: string, context: RequestContext): Promise<void> {
  const session = await deps.readStore.collection<SessionDocument>(SESSIONS).get(jti);
  if (!session || session.user_id !== principal.user_id || session.tenant_id !== principal.tenant_id) throw notFound('session_not_found', 'no such session');
  await revokeSession(deps, session.id, 'revoked_by_user', actingContext(principal, context));
}
