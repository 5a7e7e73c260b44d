// GET /api/v1/me/sessions, DELETE /api/v1/me/sessions/{jti}: the caller's own sessions in the
// current organization.

import Router from '@koa/router';
import { type IdentityDependencies, listSessions, revokeSession } from '../../../application/identity/identity';
import { notFound } from '../../../domain/shared/errors';
import { SESSIONS, type SessionDocument } from '../../../projections/sessions';
import { type AuthenticatedState, authenticateUser } from '../middleware/authenticate';
import { pageQuery } from '../pagination';
import { requestContextOf } from '../request-context';

export const sessionView = (session: SessionDocument, currentJti: string) => ({
  jti: session.id,
  status: session.status,
  issued_at: session.issued_at,
  expires_at: session.expires_at,
  revoked_at: session.revoked_at,
  ip: session.ip,
  user_agent: session.user_agent,
  current: session.id === currentJti,
});

export function meSessionsRouter(identity: IdentityDependencies): Router<AuthenticatedState> {
  const router = new Router<AuthenticatedState>({ prefix: '/api/v1/me/sessions' });
  router.use(authenticateUser(identity));
  router.get('/', async (ctx) => {
    const { principal } = ctx.state;
    const page = await listSessions(identity, principal.user_id, principal.tenant_id, pageQuery(ctx.query));
    ctx.body = { items: page.items.map((session) => sessionView(session, principal.jti)), next_cursor: page.next_cursor };
  });
  router.delete('/:jti', async (ctx) => {
    const { principal } = ctx.state;
    const session = await identity.readStore.collection<SessionDocument>(SESSIONS).get(ctx.params.jti);
    if (!session || session.user_id !== principal.user_id || session.tenant_id !== principal.tenant_id) throw notFound('session_not_found', 'no such session');
    await revokeSession(identity, session.id, 'revoked_by_user', { ...requestContextOf(ctx), tenant_id: principal.tenant_id, actor: { kind: 'user', id: principal.user_id } });
    ctx.status = 204;
  });
  return router;
}
