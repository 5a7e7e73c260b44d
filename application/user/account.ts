// The caller's own account as the console shows it (GraphQL `me`): the user, the tenant of the
// session and the current role.

import { notFound } from '../../domain/shared/errors';
import { TENANTS, type TenantDocument } from '../../projections/tenants';
import { USERS, type UserDocument } from '../../projections/users';
import type { Principal } from '../session/sessions';
import type { ReadModelDependencies } from '../shared/read-models';
import { type TenantSummary, tenantSummary } from '../tenant/tenant-queries';
import type { Role } from '../../domain/membership/membership';

export interface UserSummary {
  id: string;
  email: string;
  name: string;
  email_verified: boolean;
}

export interface AccountView {
  user: UserSummary;
  tenant: TenantSummary;
  role: Role;
}

/** The caller's user and tenant; 404 `not_found` when either is gone. */
export async function currentAccount(deps: ReadModelDependencies, principal: Principal): Promise<AccountView> {
  const [user, tenant] = await Promise.all([
    deps.readStore.collection<UserDocument>(USERS).get(principal.user_id),
    deps.readStore.collection<TenantDocument>(TENANTS).get(principal.tenant_id),
  ]);
  if (!user || !tenant) throw notFound('not_found', 'your account is not available');
  return { user: { id: user.id, email: user.email, name: user.name, email_verified: user.email_verified }, tenant: tenantSummary(tenant), role: principal.role };
}
