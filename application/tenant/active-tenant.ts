// Only an active tenant admits its users' tokens, logins and sessions, its widget token and
// its webhooks: a suspended one answers 403 `tenant_suspended` (until it is unsuspended), a
// deleted one 403 `tenant_deleted` (for good).

import { DomainError, forbidden } from '../../domain/shared/errors';
import { TENANTS, type TenantDocument } from '../../projections/tenants';
import type { ReadModelDependencies } from '../shared/read-models';

export const tenantSuspended = (): DomainError => forbidden('tenant_suspended', 'this organization is suspended; its owner can contact support');
export const tenantDeleted = (): DomainError => forbidden('tenant_deleted', 'this organization has been deleted');

/** Whether a tenant read model admits its members, widget and webhooks: only an active tenant does. */
export const isActiveTenant = (tenant: TenantDocument | null): tenant is TenantDocument => tenant !== null && tenant.status === 'active';

/** Why a tenant that is not active refuses a credential: deleted, or else suspended (an unknown tenant too). */
export const inactiveTenantError = (tenant: TenantDocument | null): DomainError => (tenant?.status === 'deleted' ? tenantDeleted() : tenantSuspended());

/**
 * The tenant, when it is active; 403 `tenant_suspended` for a suspended one, `tenant_deleted`
 * for a deleted one. The one rule for every way into a tenant: its users' tokens, logins and
 * sessions, its widget token and its webhooks, however the suspension happened.
 */
export async function requireActiveTenant(deps: ReadModelDependencies, tenantId: string): Promise<TenantDocument> {
  const tenant = await deps.readStore.collection<TenantDocument>(TENANTS).get(tenantId);
  if (!isActiveTenant(tenant)) throw inactiveTenantError(tenant);
  return tenant;
}
