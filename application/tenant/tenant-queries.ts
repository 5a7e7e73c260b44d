// Tenant queries: the operator's list, the public branding by slug, and the console's settings
// (the widget token only to admins). Each answers a view, never the read model's document.

import { ROLE_RANK } from '../../domain/membership/membership';
import { DomainError, notFound } from '../../domain/shared/errors';
import { normalizeText } from '../../domain/shared/text';
import type { Branding, TenantSettings } from '../../domain/tenant/events';
import { normalizedBranding, tenantNameProblem } from '../../domain/tenant/tenant';
import { TENANTS, type TenantDocument } from '../../projections/tenants';
import type { CommandDependencies } from '../command-handling/handle-command';
import { type Principal, actingContext } from '../session/sessions';
import type { Secrets } from '../ports/identity';
import { type ReadModelDependencies, type ReadYourWritesDependencies, requireApplied } from '../shared/read-models';
import type { RequestContext } from '../shared/request-context';
import { updateTenant } from './tenant-commands';

export interface TenantSummary {
  id: string;
  name: string;
  slug: string;
  status: 'active' | 'suspended' | 'deleted';
  created_at: string;
}

/** What anyone may see of an active tenant, by its slug (spec 4.15). */
export interface PublicTenantBranding {
  slug: string;
  name: string;
  display_name: string;
  primary_color: string | null;
  logo_url: string | null;
  welcome_message: string | null;
}

/** A tenant's settings and branding as one record; the widget token only for admins. */
export type TenantSettingsView = TenantSettings & Branding & { widget_token?: string };

type SettingsReadDependencies = ReadModelDependencies & { secrets: Pick<Secrets, 'open'> };

export const tenantSummary = (tenant: TenantDocument): TenantSummary => ({
  id: tenant.id,
  name: tenant.name,
  slug: tenant.slug,
  status: tenant.status,
  created_at: tenant.created_at,
});

/** Tenants, oldest first. */
export async function listTenants(deps: ReadModelDependencies, options: { limit: number }): Promise<TenantSummary[]> {
  const page = await deps.readStore.collection<TenantDocument>(TENANTS).find({ sort: { field: 'created_at', direction: 'asc' }, limit: options.limit });
  return page.items.map(tenantSummary);
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

/** The branding of the active tenant with this slug; 404 `tenant_not_found` otherwise. */
export async function publicTenantBranding(deps: ReadModelDependencies, slug: string): Promise<PublicTenantBranding> {
  const page = await deps.readStore.collection<TenantDocument>(TENANTS).find({ where: { slug }, limit: 1 });
  const tenant = page.items[0];
  if (!tenant || tenant.status !== 'active') throw notFound('tenant_not_found', `no organization with the slug ${slug}`);
  return brandingOfTenant(tenant);
}

/** What anyone may see of a tenant's branding (its status is the caller's to check). */
export function brandingOfTenant(tenant: TenantDocument): PublicTenantBranding {
  // A name the text rule would refuse falls back to the slug, which is always clean.
  const name = tenantNameProblem(tenant.name) ? tenant.slug : normalizeText(tenant.name);
  return {
    slug: tenant.slug,
    name,
    display_name: servable(tenant.branding, 'display_name') || name,
    primary_color: servable(tenant.branding, 'primary_color'),
    logo_url: servable(tenant.branding, 'logo_url'),
    welcome_message: servable(tenant.branding, 'welcome_message'),
  };
}

/** The caller's tenant's settings and branding; admins also see the widget token. */
export async function tenantSettings(deps: SettingsReadDependencies, principal: Principal): Promise<TenantSettingsView> {
  const tenant = await deps.readStore.collection<TenantDocument>(TENANTS).get(principal.tenant_id);
  if (!tenant) throw notFound('tenant_not_found', 'no such tenant');
  const isAdmin = ROLE_RANK[principal.role] >= ROLE_RANK.admin;
  return {
    ...tenant.settings,
    ...tenant.branding,
    widget_token: isAdmin && tenant.widget_token_sealed ? deps.secrets.open(tenant.widget_token_sealed) : undefined,
  } as TenantSettingsView;
}

/**
 * Changes the settings and branding fields given (each kind one event, none when it has no
 * field), both in one decision: a bad field refuses the whole change, named as given
 * (`primary_color`), and none is half made. Then answers the settings as they now read.
 */
export async function updateTenantSettings(
  deps: CommandDependencies & SettingsReadDependencies & ReadYourWritesDependencies,
  principal: Principal,
  changes: TenantSettings & Branding,
  context: RequestContext,
): Promise<TenantSettingsView> {
  const { display_name, primary_color, logo_url, welcome_message, ...settings } = changes;
  const branding = Object.fromEntries(Object.entries({ display_name, primary_color, logo_url, welcome_message }).filter(([, field]) => field !== undefined)) as Branding;
  const acting = actingContext(principal, context);
  const update = { ...(Object.keys(settings).length ? { settings } : {}), ...(Object.keys(branding).length ? { branding } : {}) };
  const { position } = await updateTenant(deps, principal.tenant_id, update, acting).catch((error: unknown) => {
    throw flatField(error);
  });
  await requireApplied(deps, position, 'the change of the settings', () => deps.readStore.collection<TenantDocument>(TENANTS).get(principal.tenant_id));
  return tenantSettings(deps, principal);
}

/** A refusal of UpdateTenant names `branding.primary_color`; these settings are one flat object. */
function flatField(error: unknown): unknown {
  if (!(error instanceof DomainError) || error.field === undefined) return error;
  const nested = /^(branding|settings)\./;
  return nested.test(error.field) ? new DomainError(error.kind, error.code, error.message.replace(nested, ''), error.field.replace(nested, '')) : error;
}
