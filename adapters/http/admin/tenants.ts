// The super admin's tenant routes (spec 4.16) under /api/v1/admin/tenants: list and search,
// create with an invited owner (honours Idempotency-Key), read (ETag), update and delete
// (If-Match), suspend, unsuspend and impersonate. Shapes: docs/super-admin.md.

import Router from '@koa/router';
import type { ParameterizedContext } from 'koa';
import * as t from 'io-ts';
import { impersonateMember } from '../../../application/admin/impersonation';
import {
  MAX_SEARCH_LENGTH,
  TENANT_STATUSES,
  type TenantStatus,
  createTenantWithOwner,
  deleteTenantAsAdmin,
  getTenantForAdmin,
  listTenantsForAdmin,
  suspendTenantAsAdmin,
  unsuspendTenantAsAdmin,
  updateTenantAsAdmin,
} from '../../../application/admin/tenants';
import type { UseCaseDependencies } from '../../../application/shared/dependencies';
import { invalid } from '../../../domain/shared/errors';
import { Branding, TenantSettings } from '../../../domain/tenant/events';
import { decodeBody } from '../decode';
import { answerVersioned, preconditionsOf } from '../entity-tags';
import { type IdempotencyCaller, idempotencySeedOf, idempotentCreation } from '../middleware/idempotency';
import { pageQuery } from '../pagination';
import { adminRequest } from './plans';
import { type AdminState, requireAdmin } from './require-admin';

export const CreateTenantBody = t.type(
  { name: t.string, slug: t.string, owner_email: t.string, owner_name: t.union([t.string, t.undefined]) },
  'CreateTenantBody',
);
export const UpdateTenantBody = t.exact(t.partial({ name: t.string, branding: t.exact(Branding), settings: t.exact(TenantSettings) }), 'UpdateTenantBody');
export const SuspendBody = t.type({ reason: t.string }, 'SuspendTenantBody');
export const ImpersonateBody = t.exact(t.partial({ user_id: t.string }), 'ImpersonateBody');

function statusFilter(value: unknown): TenantStatus | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'string' || !TENANT_STATUSES.some((status) => status === value)) throw invalid('invalid_request', `status: expected one of ${TENANT_STATUSES.join(', ')}`, 'status');
  return value as TenantStatus;
}

function searchText(value: unknown): string | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'string' || value.length > MAX_SEARCH_LENGTH) throw invalid('invalid_request', `q: expected one text of at most ${MAX_SEARCH_LENGTH} characters`, 'q');
  return value;
}

/** An Idempotency-Key of the admin's: unique per admin. */
const adminIdempotencyCaller = (ctx: ParameterizedContext<AdminState>): IdempotencyCaller => ({ scope: ['admin', ctx.state.admin.admin_id], context: adminRequest(ctx) });

export function adminTenantsRouter(identity: UseCaseDependencies): Router<AdminState> {
  const router = new Router<AdminState>({ prefix: '/api/v1/admin' });
  const admin = requireAdmin(identity);

  router.get('/tenants', admin, async (ctx) => {
    const filter = { q: searchText(ctx.query.q), status: statusFilter(ctx.query.status) };
    ctx.body = await listTenantsForAdmin(identity, filter, pageQuery(ctx.query));
  });

  router.post('/tenants', admin, idempotentCreation<AdminState>(identity, adminIdempotencyCaller), async (ctx) => {
    const body = decodeBody(CreateTenantBody, ctx.request.body);
    const created = await createTenantWithOwner(identity, ctx.state.admin, body, adminRequest(ctx), { idempotencyKey: idempotencySeedOf(ctx) });
    ctx.status = 201;
    ctx.set('Location', `/api/v1/admin/tenants/${created.tenant.id}`);
    ctx.body = created;
  });

  router.get('/tenants/:id', admin, async (ctx) => {
    answerVersioned(ctx, await getTenantForAdmin(identity, ctx.params.id));
  });

  router.put('/tenants/:id', admin, async (ctx) => {
    const preconditions = preconditionsOf(ctx);
    const changes = decodeBody(UpdateTenantBody, ctx.request.body);
    answerVersioned(ctx, await updateTenantAsAdmin(identity, ctx.state.admin, ctx.params.id, changes, adminRequest(ctx), preconditions));
  });

  router.delete('/tenants/:id', admin, async (ctx) => {
    await deleteTenantAsAdmin(identity, ctx.state.admin, ctx.params.id, adminRequest(ctx), preconditionsOf(ctx));
    ctx.status = 204;
  });

  router.post('/tenants/:id/suspend', admin, async (ctx) => {
    const { reason } = decodeBody(SuspendBody, ctx.request.body);
    answerVersioned(ctx, await suspendTenantAsAdmin(identity, ctx.state.admin, ctx.params.id, reason, adminRequest(ctx)));
  });

  router.post('/tenants/:id/unsuspend', admin, async (ctx) => {
    answerVersioned(ctx, await unsuspendTenantAsAdmin(identity, ctx.state.admin, ctx.params.id, adminRequest(ctx)));
  });

  router.post('/tenants/:id/impersonate', admin, async (ctx) => {
    const { user_id } = decodeBody(ImpersonateBody, ctx.request.body);
    ctx.body = await impersonateMember(identity, ctx.state.admin, ctx.params.id, user_id, adminRequest(ctx));
  });

  return router;
}
