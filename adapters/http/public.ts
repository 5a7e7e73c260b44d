// Public helpers (spec 4.15), no token: a tenant's branding by slug, and whether a slug is
// free. Slug rules: 3-63 characters of a-z, 0-9 and '-', starting with a letter, not ending
// with '-', no '--', not a reserved word (domain/tenant/slug.ts).

import Router from '@koa/router';
import type { UseCaseDependencies } from '../../application/shared/dependencies';
import { isReservationFree } from '../../application/reservation/reservations';
import { TENANT_SLUG_SCOPE } from '../../application/tenant/tenant-commands';
import { publicTenantBranding } from '../../application/tenant/tenant-queries';
import { invalid } from '../../domain/shared/errors';
import { slugProblem } from '../../domain/tenant/slug';
import type { RequestState } from './middleware/request-context';

function slugParameter(value: string | string[] | undefined): string {
  if (typeof value !== 'string' || value.trim() === '') throw invalid('invalid_request', 'slug: expected one non-empty value', 'slug');
  return value.trim().toLowerCase();
}

export function publicRouter(identity: UseCaseDependencies): Router<RequestState> {
  const router = new Router<RequestState>({ prefix: '/api/v1/public' });
  router.get('/tenant-branding', async (ctx) => {
    const slug = slugParameter(ctx.query.slug);
    const branding = await publicTenantBranding(identity, slug);
    ctx.set('cache-control', 'public, max-age=60');
    ctx.body = branding;
  });
  router.get('/tenant-slug-available', async (ctx) => {
    const slug = slugParameter(ctx.query.slug);
    const problem = slugProblem(slug);
    if (problem) {
      ctx.body = { slug, available: false, reason: problem };
      return;
    }
    const free = await isReservationFree(identity, TENANT_SLUG_SCOPE, slug);
    ctx.body = free ? { slug, available: true } : { slug, available: false, reason: 'taken' };
  });
  return router;
}
