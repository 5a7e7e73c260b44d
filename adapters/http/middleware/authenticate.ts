// Tenant-user authentication for REST routes: a PASETO user token whose session is active and
// whose membership is active. A widget token, an admin token or none at all is 401.

import type { Context, Middleware } from 'koa';
import type { UseCaseDependencies } from '../../../application/shared/dependencies';
import type { Principal } from '../../../application/session/sessions';
import { authenticateTenantToken } from '../../../application/session/authentication';
import { DomainError } from '../../../domain/shared/errors';
import { bearerToken } from '../request-context';
import type { RequestState } from './request-context';

export interface AuthenticatedState extends RequestState {
  principal: Principal;
}

/** The caller of a request with a user token, or 401. */
export async function principalOf(identity: UseCaseDependencies, ctx: Context): Promise<Principal> {
  const token = bearerToken(ctx);
  if (!token) throw new DomainError('unauthorized', 'unauthenticated', 'send Authorization: Bearer <token>');
  return authenticateTenantToken(identity, token);
}

export function authenticateUser(identity: UseCaseDependencies): Middleware<AuthenticatedState> {
  return async (ctx, next) => {
    ctx.state.principal = await principalOf(identity, ctx);
    await next();
  };
}
