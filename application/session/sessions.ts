// The caller's own sessions (spec: /me/sessions): revoking one of them. Listing is
// `listSessions`; another user's or another tenant's session is 404, never 403.

import { notFound } from '../../domain/shared/errors';
import { SESSIONS, type SessionDocument } from '../../projections/sessions';
import { type IdentityDependencies, type Principal, revokeSession } from '../identity/identity';
import type { RequestContext } from '../shared/request-context';

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
export async function revokeOwnSession(deps: IdentityDependencies, principal: Principal, jti: string, context: RequestContext): Promise<void> {
  const session = await deps.readStore.collection<SessionDocument>(SESSIONS).get(jti);
  if (!session || session.user_id !== principal.user_id || session.tenant_id !== principal.tenant_id) throw notFound('session_not_found', 'no such session');
  await revokeSession(deps, session.id, 'revoked_by_user', { ...context, tenant_id: principal.tenant_id, actor: { kind: 'user', id: principal.user_id } });
}
