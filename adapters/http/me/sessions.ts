// GET /api/v1/me/sessions, DELETE /api/v1/me/sessions/{jti}: the caller's own sessions in the
// current organization.

import Router from '@koa/router';
import type { UseCaseDependencies } from '../../../application/shared/dependencies';
import { listSessions } from '../../../application/session/sessions';
import { type SessionView, revokeOwnSession } from '../../../application/session/sessions';
import { type AuthenticatedState, authenticateUser } from '../middleware/authenticate';
import { pageQuery } from '../pagination';
import { requestContextOf } from '../request-context';

export const sessionView = (session: SessionView, currentJti: string) => ({
  jti: session.id,
  status: session.status,
  issued_at: session.issued_at,
  expires_at: session.expires_at,
  revoked_at: session.revoked_at,
  ip: session.ip,
  user_agent: session.user_agent,
  current: session.id === currentJti,
});

export function meSessionsRouter(identity: UseCaseDependencies): Router<AuthenticatedState> {
  const router = new Router<AuthenticatedState>({ prefix: '/api/v1/me/sessions' });
  router.use(authenticateUser(identity));
  router.get('/', async (ctx) => {
    const { principal } = ctx.state;
    const page = await listSessions(identity, principal.user_id, principal.tenant_id, pageQuery(ctx.query));
    ctx.body = { items: page.items.map((session) => sessionView(session, principal.jti)), next_cursor: page.next_cursor };
  });
  router.delete('/:jti', async (ctx) => {
    await revokeOwnSession(identity, ctx.state.principal, ctx.params.jti, requestContextOf(ctx));
    ctx.status = 204;
  });
  return router;
}
