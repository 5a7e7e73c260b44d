// Only an active tenant admits its users' tokens, logins and sessions, its widget token and
// its webhooks: a suspended one answers 403 `tenant_suspended`.

import { DomainError, forbidden } from '../../domain/shared/errors';
import { TENANTS, type TenantDocument } from '../../projections/tenants';
import type { ReadModelDependencies } from '../shared/read-models';

export const tenantSuspended = (): DomainError => forbidden('tenant_suspended', 'this organization is suspended; its owner can contact support');

/** Whether a tenant read model admits its members, widget and webhooks: only an active tenant does. */
export const isActiveTenant = (tenant: TenantDocument | null): tenant is TenantDocument => tenant !== null && tenant.status === 'active';

/**
 * The tenant, when it is active; 403 `tenant_suspended` for a suspended (or deleted) one. The
 * one rule for every way into a tenant: its users' tokens, logins and sessions, its widget
 * token and its webhooks, however the suspension happened.
 */
export async function requireActiveTenant(deps: ReadModelDependencies, tenantId: string): Promise<TenantDocument> {
  const tenant = await deps.readStore.collection<TenantDocument>(TENANTS).get(tenantId);
  if (!isActiveTenant(tenant)) throw tenantSuspended();
  return tenant;
}
