// Tenant use cases: thin functions over the tenant aggregate, shared by HTTP, GraphQL and CLI.

import type { TenantCommand } from '../../domain/tenant/commands';
import { type Branding, type TenantEvent, type TenantSettings, tenantEvents } from '../../domain/tenant/events';
import { type TenantState, tenantDecider, tenantStream } from '../../domain/tenant/tenant';
import { type Aggregate, type CommandDependencies, type CommandResult, type HandleOptions, handleCommand } from '../command-handling/handle-command';
import { type ReservationDependencies, claimReservation, releaseReservation } from '../reservation/reservations';
import type { RequestContext } from '../shared/request-context';

export const tenantAggregate: Aggregate<TenantCommand, TenantEvent, TenantState> = {
  decider: tenantDecider,
  events: tenantEvents,
};

export const TENANT_SLUG_SCOPE = 'tenant_slug';

export interface CreateTenantInput {
  name: string;
  slug: string;
  branding?: Branding;
  settings?: TenantSettings;
}

/**
 * Reserves the slug, then creates the tenant. If creation fails after the claim, the claim
 * is released so that the slug does not stay taken by a tenant that does not exist. With an
 * `idempotencyKey` the tenant's id derives from it, so running it again creates nothing new.
 */
export async function createTenant(
  deps: ReservationDependencies,
  input: CreateTenantInput,
  context: RequestContext,
  options: { idempotencyKey?: string } = {},
): Promise<CommandResult<TenantEvent> & { tenant_id: string }> {
  const key = options.idempotencyKey === undefined ? undefined : `${options.idempotencyKey}:tenant`;
  const tenantId = key === undefined ? deps.ids.newId() : deps.ids.fromKey(key);
  const command: TenantCommand = { type: 'CreateTenant', data: { tenant_id: tenantId, ...input } };
  // Validate before claiming, so a bad request leaves no reservation behind.
  const dryRun = tenantDecider.decide(command, tenantDecider.initialState(), { now: deps.clock.now() });
  if (dryRun._tag === 'Left') throw dryRun.left;
  const scoped = { ...context, tenant_id: tenantId };
  await claimReservation(deps, TENANT_SLUG_SCOPE, input.slug, tenantId, scoped);
  try {
    const result = await handleCommand(deps, tenantAggregate, tenantStream(tenantId), command, scoped, { idempotencyKey: key });
    return { ...result, tenant_id: tenantId };
  } catch (error) {
    await releaseReservation(deps, TENANT_SLUG_SCOPE, input.slug, tenantId, scoped).catch(() => undefined);
    throw error;
  }
}

function onTenant(deps: CommandDependencies, tenantId: string, command: TenantCommand, context: RequestContext, options?: HandleOptions) {
  return handleCommand(deps, tenantAggregate, tenantStream(tenantId), command, context, { tenantId, ...options });
}

export const renameTenant = (deps: CommandDependencies, tenantId: string, name: string, context: RequestContext, options?: HandleOptions) =>
  onTenant(deps, tenantId, { type: 'RenameTenant', data: { name } }, context, options);

export const changeTenantSettings = (deps: CommandDependencies, tenantId: string, changes: TenantSettings, context: RequestContext, options?: HandleOptions) =>
  onTenant(deps, tenantId, { type: 'ChangeTenantSettings', data: { changes } }, context, options);

export const suspendTenant = (deps: CommandDependencies, tenantId: string, reason: string, context: RequestContext, options?: HandleOptions) =>
  onTenant(deps, tenantId, { type: 'SuspendTenant', data: { reason } }, context, options);

export const unsuspendTenant = (deps: CommandDependencies, tenantId: string, context: RequestContext, options?: HandleOptions) =>
  onTenant(deps, tenantId, { type: 'UnsuspendTenant', data: {} }, context, options);

export const rotateWidgetToken = (deps: CommandDependencies, tenantId: string, sealed: { token_hash: string; token_sealed: string }, context: RequestContext, options?: HandleOptions) =>
  onTenant(deps, tenantId, { type: 'RotateWidgetToken', data: sealed }, context, options);

/** The super admin's edit of name, branding and settings, all recorded or none. */
export const updateTenant = (deps: CommandDependencies, tenantId: string, changes: { name?: string; branding?: Branding; settings?: TenantSettings }, context: RequestContext, options?: HandleOptions) =>
  onTenant(deps, tenantId, { type: 'UpdateTenant', data: changes }, context, options);

/** Soft delete: the tenant's data stays and its slug stays reserved; its members lose access. */
export const deleteTenant = (deps: CommandDependencies, tenantId: string, context: RequestContext, options?: HandleOptions) =>
  onTenant(deps, tenantId, { type: 'DeleteTenant', data: {} }, context, options);
