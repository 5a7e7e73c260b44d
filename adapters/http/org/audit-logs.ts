// GET /api/v1/org/audit-logs (filters, cursor pages, newest first), /audit-logs/verify (the
// hash chain against the signed checkpoints) and /audit-logs/export (NDJSON: entries oldest
// first, then the checkpoints and the signing key). Admin and Owner.

import { Readable } from 'node:stream';
import Router from '@koa/router';
import { type AuditLogDependencies, type AuditLogFilter, exportAuditLog, listAuditLog, verifyAuditChain } from '../../../application/audit-log/audit-log';
import { invalid } from '../../../domain/shared/errors';
import type { AuthenticatedState } from '../middleware/authenticate';
import { requireRole } from '../middleware/authorize';
import { pageQuery } from '../pagination';

const TEXT_FILTERS = ['actor_id', 'action', 'resource_type', 'resource_id'] as const;

/** The filters of an audit log list, from the query; 400 naming a bad one. */
export function filterOf(query: Record<string, string | string[] | undefined>): AuditLogFilter {
  const filter: AuditLogFilter = {};
  for (const field of TEXT_FILTERS) {
    const value = query[field];
    if (value === undefined) continue;
    if (typeof value !== 'string' || value.length === 0 || value.length > 200) throw invalid('invalid_request', `${field}: expected one non-empty value`, field);
    filter[field] = value;
  }
  for (const field of ['from', 'to'] as const) {
    const value = query[field];
    if (value === undefined) continue;
    if (typeof value !== 'string' || Number.isNaN(Date.parse(value))) throw invalid('invalid_request', `${field}: expected an ISO 8601 time`, field);
    filter[field] = new Date(value).toISOString();
  }
  if (filter.from && filter.to && filter.from > filter.to) throw invalid('invalid_request', 'from must not be after to', 'from');
  return filter;
}

export function orgAuditLogsRouter(audit: AuditLogDependencies): Router<AuthenticatedState> {
  const router = new Router<AuthenticatedState>();
  router.use('/audit-logs', requireRole('admin'));
  router.get('/audit-logs', async (ctx) => {
    ctx.body = await listAuditLog(audit.readStore, ctx.state.principal.tenant_id, filterOf(ctx.query), pageQuery(ctx.query));
  });
  router.get('/audit-logs/verify', async (ctx) => {
    ctx.body = await verifyAuditChain(audit, ctx.state.principal.tenant_id);
  });
  router.get('/audit-logs/export', async (ctx) => {
    const filter = filterOf(ctx.query);
    const records = exportAuditLog(audit, ctx.state.principal.tenant_id, filter);
    ctx.type = 'application/x-ndjson';
    ctx.set('content-disposition', 'attachment; filename="audit-log.ndjson"');
    ctx.body = Readable.from((async function* () {
      for await (const record of records) yield `${JSON.stringify(record)}\n`;
    })());
  });
  return router;
}
