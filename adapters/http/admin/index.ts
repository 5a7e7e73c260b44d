// Super-admin routes (spec 4.16) as far as they exist: login and the email outbox. An admin
// token is its own audience: tenant tokens are 401 here, and admin tokens on tenant routes.
// Reading one email's body is recorded as an event, and its one-time codes are redacted
// unless the embedded outbox is the mailer (application/admin/outbox.ts).

import Router from '@koa/router';
import type { Middleware } from 'koa';
import * as t from 'io-ts';
import { type AdminPrincipal, adminLogin, authenticateAdminToken } from '../../../application/admin/admin-auth';
import { EMAIL_STATUSES, type OutboxFilter, listOutbox, readOutboxEmail } from '../../../application/admin/outbox';
import { type AbuseLimits, RateLimitedError, guardAttempt } from '../../../application/user/abuse-controls';
import type { UseCaseDependencies } from '../../../application/shared/dependencies';
import type { RateLimiter } from '../../../application/ports/rate-limiter';
import { DomainError, invalid } from '../../../domain/shared/errors';
import { decodeBody } from '../decode';
import { HttpError } from '../errors';
import type { RequestState } from '../middleware/request-context';
import { pageQuery } from '../pagination';
import { bearerToken, requestContextOf } from '../request-context';

interface AdminState extends RequestState {
  admin: AdminPrincipal;
}

export const LoginBody = t.type({ email: t.string, password: t.string }, 'AdminLogin');

export interface AdminOptions {
  limiter: RateLimiter;
  limits: AbuseLimits;
  /** Whether email bodies keep their one-time codes: only while the embedded outbox (the log mailer) is the mailer. */
  showOneTimeCodes: boolean;
}

export function adminRouter(identity: UseCaseDependencies, options: AdminOptions): Router<AdminState> {
  const router = new Router<AdminState>({ prefix: '/api/v1/admin' });

  router.post('/auth/login', async (ctx) => {
    const { email, password } = decodeBody(LoginBody, ctx.request.body);
    const context = requestContextOf(ctx);
    try {
      await guardAttempt(options.limiter, options.limits, 'login', context.ip, `admin:${email}`);
    } catch (error) {
      if (error instanceof RateLimitedError) throw new HttpError(429, 'rate_limited', error.message, { 'retry-after': String(error.retryAfterSeconds) });
      throw error;
    }
    ctx.body = await adminLogin(identity, email, password, context);
  });

  const requireAdmin: Middleware<AdminState> = async (ctx, next) => {
    const token = bearerToken(ctx);
    if (!token) throw new DomainError('unauthorized', 'unauthenticated', 'send Authorization: Bearer <admin token>');
    ctx.state.admin = await authenticateAdminToken(identity, token);
    await next();
  };

  router.get('/emails', requireAdmin, async (ctx) => {
    const status = ctx.query.status;
    if (status !== undefined && (typeof status !== 'string' || !EMAIL_STATUSES.some((known) => known === status))) throw invalid('invalid_request', `status: expected one of ${EMAIL_STATUSES.join(', ')}`, 'status');
    const filter: OutboxFilter = { status: status as OutboxFilter['status'], to: typeof ctx.query.to === 'string' ? ctx.query.to : undefined };
    ctx.body = await listOutbox(identity, filter, pageQuery(ctx.query));
  });

  router.get('/emails/:id', requireAdmin, async (ctx) => {
    // One email at a time: its body may hold a one-time code, so lists never show bodies.
    ctx.body = await readOutboxEmail(identity, ctx.state.admin, ctx.params.id, { showOneTimeCodes: options.showOneTimeCodes }, requestContextOf(ctx));
  });

  return router;
}
