// Super-admin routes (spec 4.16) as far as they exist: login and the email outbox. An admin
// token is its own audience: tenant tokens are 401 here, and admin tokens on tenant routes.

import Router from '@koa/router';
import type { Middleware } from 'koa';
import * as t from 'io-ts';
import { type AdminPrincipal, adminLogin, authenticateAdminToken } from '../../../application/admin/admin-auth';
import { type AbuseLimits, RateLimitedError, guardAttempt } from '../../../application/identity/abuse-controls';
import type { IdentityDependencies } from '../../../application/identity/identity';
import type { RateLimiter } from '../../../application/ports/rate-limiter';
import { DomainError, invalid, notFound } from '../../../domain/shared/errors';
import { EMAILS, EMAIL_STATUSES, type EmailDocument } from '../../../projections/emails';
import { decodeBody } from '../decode';
import { HttpError } from '../errors';
import type { RequestState } from '../middleware/request-context';
import { pageQuery } from '../pagination';
import { bearerToken, requestContextOf } from '../request-context';

interface AdminState extends RequestState {
  admin: AdminPrincipal;
}

export const LoginBody = t.type({ email: t.string, password: t.string }, 'AdminLogin');

const emailView = ({ body_sealed: _sealed, position: _position, ...email }: EmailDocument) => email;

export function adminRouter(identity: IdentityDependencies, abuse: { limiter: RateLimiter; limits: AbuseLimits }): Router<AdminState> {
  const router = new Router<AdminState>({ prefix: '/api/v1/admin' });

  router.post('/auth/login', async (ctx) => {
    const { email, password } = decodeBody(LoginBody, ctx.request.body);
    const context = requestContextOf(ctx);
    try {
      await guardAttempt(abuse.limiter, abuse.limits, 'login', context.ip, `admin:${email}`);
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
    const to = typeof ctx.query.to === 'string' ? ctx.query.to.toLowerCase() : undefined;
    const where = { ...(status ? { status } : {}), ...(to ? { to } : {}) };
    const page = await identity.readStore.collection<EmailDocument>(EMAILS).find({ where, sort: { field: 'queued_at', direction: 'desc' }, ...pageQuery(ctx.query) });
    ctx.body = { items: page.items.map(emailView), next_cursor: page.next_cursor };
  });

  router.get('/emails/:id', requireAdmin, async (ctx) => {
    const email = await identity.readStore.collection<EmailDocument>(EMAILS).get(ctx.params.id);
    if (!email) throw notFound('email_not_found', 'no such email');
    // One email at a time: its body may hold a one-time code, so lists never show bodies.
    ctx.body = { ...emailView(email), text: identity.secrets.open(email.body_sealed) };
  });

  return router;
}
