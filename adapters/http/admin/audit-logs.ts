// The platform's audit log for the super admin: the entries of events that belong to no
// tenant (plans, platform settings, admin sign-ins), with the same filters and hash-chain
// check as a tenant's (org/audit-logs.ts).

import Router from '@koa/router';
import { type AuditLogDependencies, PLATFORM_AUDIT_CHAIN, listAuditLog, verifyAuditChain } from '../../../application/audit-log/audit-log';
import type { UseCaseDependencies } from '../../../application/shared/dependencies';
import { filterOf } from '../org/audit-logs';
import { pageQuery } from '../pagination';
import { type AdminState, requireAdmin } from './require-admin';

export function adminAuditLogsRouter(identity: UseCaseDependencies, audit: AuditLogDependencies): Router<AdminState> {
  const router = new Router<AdminState>({ prefix: '/api/v1/admin' });
  const admin = requireAdmin(identity);
  router.get('/audit-logs', admin, async (ctx) => {
    ctx.body = await listAuditLog(audit.readStore, PLATFORM_AUDIT_CHAIN, filterOf(ctx.query), pageQuery(ctx.query));
  });
  router.get('/audit-logs/verify', admin, async (ctx) => {
    ctx.body = await verifyAuditChain(audit, PLATFORM_AUDIT_CHAIN);
  });
  return router;
}
