// GET /api/v1/admin/payments: every organization's payments, successes and failures, newest
// first, for the super admin (spec 4.16), filtered by organization and status.

import Router from '@koa/router';
import { PAYMENT_STATUSES, type PaymentFilter, listPayments } from '../../../application/payment/payments';
import type { UseCaseDependencies } from '../../../application/shared/dependencies';
import { invalid } from '../../../domain/shared/errors';
import { pageQuery } from '../pagination';
import { type AdminState, requireAdmin } from './require-admin';

function paymentFilter(query: Record<string, string | string[] | undefined>): PaymentFilter {
  const { tenant_id, status } = query;
  if (tenant_id !== undefined && (typeof tenant_id !== 'string' || tenant_id.length === 0)) throw invalid('invalid_request', 'tenant_id: expected one organization id', 'tenant_id');
  if (status !== undefined && (typeof status !== 'string' || !PAYMENT_STATUSES.some((known) => known === status))) {
    throw invalid('invalid_request', `status: expected one of ${PAYMENT_STATUSES.join(', ')}`, 'status');
  }
  return { ...(tenant_id !== undefined ? { tenant_id } : {}), ...(status !== undefined ? { status: status as PaymentFilter['status'] } : {}) };
}

export function adminPaymentsRouter(identity: UseCaseDependencies): Router<AdminState> {
  const router = new Router<AdminState>({ prefix: '/api/v1/admin' });
  router.get('/payments', requireAdmin(identity), async (ctx) => {
    ctx.body = await listPayments(identity, paymentFilter(ctx.query), pageQuery(ctx.query));
  });
  return router;
}
