// POST /api/v1/me/close: the caller closes their own account (application/user/account-closure.ts;
// docs/personal-data.md, "Closing an account").

import Router from '@koa/router';
import * as t from 'io-ts';
import type { UseCaseDependencies } from '../../../application/shared/dependencies';
import type { Logger } from '../../../application/ports/logger';
import { type PasswordGuard, closeAccount } from '../../../application/user/account-closure';
import { decodeBody } from '../decode';
import { type AuthenticatedState, authenticateUser } from '../middleware/authenticate';
import { requestContextOf } from '../request-context';

export const CloseAccountBody = t.intersection([t.type({ password: t.string }), t.partial({ delete_organizations: t.boolean })], 'CloseAccountBody');

export function meAccountRouter(identity: UseCaseDependencies & { logger: Logger }, guard: PasswordGuard): Router<AuthenticatedState> {
  const router = new Router<AuthenticatedState>({ prefix: '/api/v1/me' });
  router.use(authenticateUser(identity));
  router.post('/close', async (ctx) => {
    const body = decodeBody(CloseAccountBody, ctx.request.body);
    ctx.body = await closeAccount(identity, guard, ctx.state.principal, body, requestContextOf(ctx));
  });
  return router;
}
