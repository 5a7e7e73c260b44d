// Public helpers (spec 4.15), no token: a tenant's branding by slug, and whether a slug is
// free. Slug rules: 3-63 characters of a-z, 0-9 and '-', starting with a letter, not ending
// with '-', no '--', not a reserved word (domain/tenant/slug.ts).

import Router from '@koa/router';
import type { IdentityDependencies } from '../../application/identity/identity';
import { isReservationFree } from '../../application/reservation/reservations';
import { TENANT_SLUG_SCOPE } from '../../application/tenant/tenant-commands';
import { invalid, notFound } from '../../domain/shared/errors';
import { normalizeText } from '../../domain/shared/text';
import type { Branding } from '../../domain/tenant/events';
import { slugProblem } from '../../domain/tenant/slug';
import { normalizedBranding, tenantNameProblem } from '../../domain/tenant/tenant';
import { TENANTS, type TenantDocument } from '../../projections/tenants';
import type { RequestState } from './middleware/request-context';

function slugParameter(value: string | string[] | undefined): string {
  if (typeof value !== 'string' || value.trim() === '') throw invalid('invalid_request', 'slug: expected one non-empty value', 'slug');
  return value.trim().toLowerCase();
}

/**
 * A stored branding value as the public may see it: what the rules of today would refuse
 * (stored before them, or by an older version) is left out, never served.
 */
function servable<K extends keyof Branding>(branding: Branding, field: K): NonNullable<Branding[K]> | null {
  const value = branding[field];
  if (value === undefined || value === null) return null;
  const checked = normalizedBranding({ [field]: value } as Branding);
  return checked._tag === 'Right' ? ((checked.right[field] as NonNullable<Branding[K]> | undefined) ?? null) : null;
}

export function publicRouter(identity: IdentityDependencies): Router<RequestState> {
  const router = new Router<RequestState>({ prefix: '/api/v1/public' });
  router.get('/tenant-branding', async (ctx) => {
    const slug = slugParameter(ctx.query.slug);
    const page = await identity.readStore.collection<TenantDocument>(TENANTS).find({ where: { slug }, limit: 1 });
    const tenant = page.items[0];
    if (!tenant || tenant.status !== 'active') throw notFound('tenant_not_found', `no organization with the slug ${slug}`);
    ctx.set('cache-control', 'public, max-age=60');
    // A name the text rule would refuse falls back to the slug, which is always clean.
    const name = tenantNameProblem(tenant.name) ? tenant.slug : normalizeText(tenant.name);
    ctx.body = {
      slug: tenant.slug,
      name,
      display_name: servable(tenant.branding, 'display_name') || name,
      primary_color: servable(tenant.branding, 'primary_color'),
      logo_url: servable(tenant.branding, 'logo_url'),
      welcome_message: servable(tenant.branding, 'welcome_message'),
    };
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
