// Role checks for REST routes. A refusal is 403 and is recorded as an AccessDenied event,
// so the audit log shows permission denials as well as writes.

import type { Middleware } from 'koa';
import { type Aggregate, type CommandDependencies, handleCommand } from '../../../application/command-handling/handle-command';
import { type AccessDenialCommand, type AccessDenialEvent, accessDenialDecider, accessDenialEvents, accessDenialStream } from '../../../domain/access-denial/access-denial';
import { ROLE_RANK, type Role } from '../../../domain/membership/membership';
import { DomainError, forbidden } from '../../../domain/shared/errors';
import { requestContextOf } from '../request-context';
import type { IdentityDependencies } from '../../../application/identity/identity';
import { type AuthenticatedState, principalOf } from './authenticate';

const accessDenialAggregate: Aggregate<AccessDenialCommand, AccessDenialEvent, null> = { decider: accessDenialDecider, events: accessDenialEvents };

type DeniableContext = Parameters<Middleware<AuthenticatedState>>[0];

/** Records a denial for the caller (best effort: the 403 is answered either way). */
export async function recordDenial(deps: CommandDependencies, ctx: DeniableContext, code: string): Promise<void> {
  const { principal } = ctx.state;
  const context = { ...requestContextOf(ctx), tenant_id: principal.tenant_id, actor: { kind: 'user' as const, id: principal.user_id } };
  await handleCommand(
    deps,
    accessDenialAggregate,
    accessDenialStream(deps.ids.newId()),
    { type: 'RecordAccessDenial', data: { tenant_id: principal.tenant_id, user_id: principal.user_id, method: ctx.method, path: ctx.path, code } },
    context,
  ).catch((error: unknown) => ctx.state.logger.warn({ err: error }, 'could not record an access denial'));
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
export function authenticateUserRecordingDenials(identity: IdentityDependencies): Middleware<AuthenticatedState> {
  return async (ctx, next) => {
    ctx.state.principal = await principalOf(identity, ctx);
    try {
      await next();
    } catch (error) {
      if (error instanceof DomainError && error.kind === 'forbidden') await recordDenial(identity, ctx, error.code);
      throw error;
    }
  };
}
