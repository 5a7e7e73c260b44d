// The super admin's authentication for admin routers: an admin token whose session is active;
// anything else (none, a tenant token) is 401.

import type { Middleware } from 'koa';
import { type AdminPrincipal, authenticateAdminToken } from '../../../application/admin/admin-auth';
import type { UseCaseDependencies } from '../../../application/shared/dependencies';
import { DomainError } from '../../../domain/shared/errors';
import type { RequestState } from '../middleware/request-context';
import { bearerToken } from '../request-context';

export interface AdminState extends RequestState {
  admin: AdminPrincipal;
}

export function requireAdmin(identity: UseCaseDependencies): Middleware<AdminState> {
  return async (ctx, next) => {
    const token = bearerToken(ctx);
    if (!token) throw new DomainError('unauthorized', 'unauthenticated', 'send Authorization: Bearer <admin token>');
    ctx.state.admin = await authenticateAdminToken(identity, token);
    await next();
  };
}
