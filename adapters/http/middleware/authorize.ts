// Role checks for REST routes. A refusal is 403 and is recorded as an AccessDenied event
// (bounded per principal and minute, the excess counted), so the audit log shows permission
// denials as well as writes.

import type { Middleware } from 'koa';
import type { AccessDenialRecorder } from '../../../application/access-denial/access-denials';
import { ROLE_RANK, type Role } from '../../../domain/membership/membership';
import { DomainError, forbidden } from '../../../domain/shared/errors';
import { requestContextOf } from '../request-context';
import type { UseCaseDependencies } from '../../../application/shared/dependencies';
import { actingContext } from '../../../application/session/sessions';
import { type AuthenticatedState, principalOf } from './authenticate';

type DeniableContext = Parameters<Middleware<AuthenticatedState>>[0];

/** Records a denial for the caller (best effort: the 403 is answered either way). */
export function recordDenial(denials: AccessDenialRecorder, ctx: DeniableContext, code: string): Promise<void> {
  const { principal } = ctx.state;
  return denials.record({ tenant_id: principal.tenant_id, user_id: principal.user_id, method: ctx.method, path: ctx.path, code }, actingContext(principal, requestContextOf(ctx)));
}

/** 403 `insufficient_role` unless the caller's current role is at least `minimum`. */
export function requireRole(minimum: Role): Middleware<AuthenticatedState> {
  return async (ctx, next) => {
    if (ROLE_RANK[ctx.state.principal.role] < ROLE_RANK[minimum]) throw forbidden('insufficient_role', `this needs the ${minimum} role or higher`);
    await next();
  };
}

/**
 * Authenticates the user (401 otherwise), then records every 403 answered after that, role
 * checks and domain rules alike. One middleware rather than two: it runs on most requests.
 */
export function authenticateUserRecordingDenials(identity: UseCaseDependencies, denials: AccessDenialRecorder): Middleware<AuthenticatedState> {
  return async (ctx, next) => {
    ctx.state.principal = await principalOf(identity, ctx);
    try {
      await next();
    } catch (error) {
      if (error instanceof DomainError && error.kind === 'forbidden') await recordDenial(denials, ctx, error.code);
      throw error;
    }
  };
}
