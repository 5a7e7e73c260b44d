// The super admin's view and overrides of one tenant's quotas: the plan's limits, the
// overrides, the limits that apply, and what is used. An override applies at once: the answer
// waits until the entitlement check sees it.

import { type QuotaOverrideCommand, type QuotaOverrideEvent, type QuotaOverrideState, type QuotaOverrides, quotaOverrideDecider, quotaOverrideEvents, quotaOverrideStream } from '../../domain/quota-override/quota-override';
import { notFound } from '../../domain/shared/errors';
import type { PlanLimits, Quota } from '../../domain/plan/plan';
import { TENANTS, type TenantDocument } from '../../projections/tenants';
import { TENANT_QUOTAS, type TenantQuotaDocument } from '../../projections/tenant-quotas';
import { type Aggregate, type CommandDependencies, handleCommand } from '../command-handling/handle-command';
import { type EntitlementDependencies, entitlementsOf, nextMonthStart, usageOf } from '../entitlement/entitlements';
import { type ReadYourWritesDependencies, requireApplied } from '../shared/read-models';
import type { RequestContext } from '../shared/request-context';

export const quotaOverrideAggregate: Aggregate<QuotaOverrideCommand, QuotaOverrideEvent, QuotaOverrideState> = { decider: quotaOverrideDecider, events: quotaOverrideEvents };

export interface TenantQuotasView {
  tenant_id: string;
  plan: { id: string; code: string; name: string };
  /** The plan's limits, before overrides; null: unlimited. */
  plan_limits: PlanLimits;
  /** The quotas the super admin set for this tenant. */
  overrides: QuotaOverrides;
  overrides_reason: string;
  /** What applies: the override where there is one, the plan's limit otherwise. */
  limits: PlanLimits;
  used: Record<Quota, number>;
  /** When the monthly message count starts again. */
  messages_reset_at: string;
}

async function requireTenant(deps: EntitlementDependencies, tenantId: string): Promise<TenantDocument> {
  const tenant = await deps.readStore.collection<TenantDocument>(TENANTS).get(tenantId);
  if (!tenant) throw notFound('tenant_not_found', 'no such tenant');
  return tenant;
}

export async function tenantQuotas(deps: EntitlementDependencies, tenantId: string): Promise<TenantQuotasView> {
  await requireTenant(deps, tenantId);
  const [entitlements, used, quotas] = await Promise.all([
    entitlementsOf(deps, tenantId),
    usageOf(deps, tenantId),
    deps.readStore.collection<TenantQuotaDocument>(TENANT_QUOTAS).get(tenantId),
  ]);
  const { plan } = entitlements;
  return {
    tenant_id: tenantId,
    plan: { id: plan.id, code: plan.code, name: plan.name },
    plan_limits: plan.limits,
    overrides: entitlements.overrides,
    overrides_reason: quotas?.overrides_reason ?? '',
    limits: entitlements.limits,
    used,
    messages_reset_at: nextMonthStart(deps.clock.now()),
  };
}

/** Replaces the tenant's overrides (the admin as actor, in the tenant's audit log) and answers the quotas as they now apply. */
export async function setQuotaOverrides(
  deps: EntitlementDependencies & CommandDependencies & ReadYourWritesDependencies,
  adminId: string,
  tenantId: string,
  input: { overrides: QuotaOverrides; reason: string },
  context: RequestContext,
): Promise<TenantQuotasView> {
  await requireTenant(deps, tenantId);
  const result = await handleCommand(
    deps,
    quotaOverrideAggregate,
    quotaOverrideStream(tenantId),
    { type: 'SetQuotaOverrides', data: { tenant_id: tenantId, ...input } },
    { ...context, tenant_id: tenantId, actor: { kind: 'admin', id: adminId } },
  );
  await requireApplied(deps, result.position, 'the change of the quotas', () => deps.readStore.collection<TenantQuotaDocument>(TENANT_QUOTAS).get(tenantId));
  return tenantQuotas(deps, tenantId);
}
