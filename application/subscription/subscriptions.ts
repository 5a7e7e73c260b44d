// Subscriptions: a tenant's paid plan. Activated by a settled checkout (application/checkout
// `settleCheckout`), cancelled by the tenant's owner or admin, and ended by the due pass
// (subscription-periods.ts). The current subscription is answered with the limits that
// apply now (plan and overrides) and what is used of them.

import type { PlanFeatures, PlanInterval, PlanLimits, Quota } from '../../domain/plan/plan';
import {
  type SubscriptionCommand,
  type SubscriptionEvent,
  type SubscriptionState,
  type SubscriptionStatus,
  subscriptionDecider,
  subscriptionEvents,
  subscriptionStream,
} from '../../domain/subscription/subscription';
import { SUBSCRIPTIONS, type SubscriptionDocument } from '../../projections/subscriptions';
import { type Aggregate, type CommandDependencies, type CommandResult, handleCommand } from '../command-handling/handle-command';
import { type EntitlementDependencies, entitlementsOf, nextMonthStart, usageOf } from '../entitlement/entitlements';
import { type Principal, actingContext } from '../session/sessions';
import { type ReadModelDependencies, type ReadYourWritesDependencies, requireApplied } from '../shared/read-models';
import type { RequestContext } from '../shared/request-context';

export const subscriptionAggregate: Aggregate<SubscriptionCommand, SubscriptionEvent, SubscriptionState> = { decider: subscriptionDecider, events: subscriptionEvents };

/** What the tenant's billing page shows: the subscription, and the limits that apply now. */
export interface SubscriptionView {
  /** `none`: never subscribed (the default plan applies); see docs/billing.md for the others. */
  status: SubscriptionStatus;
  /** The plan that applies now: the subscription's while active, canceling or past_due, otherwise the default plan. */
  plan: { id: string; code: string; name: string };
  /** The plan the subscription is (or was) for; null when there never was one. */
  subscribed_plan_id: string | null;
  interval: PlanInterval | null;
  current_period_start: string | null;
  current_period_end: string | null;
  cancel_at_period_end: boolean;
  canceled_at: string | null;
  grace_until: string | null;
  ended_at: string | null;
  /** The plan's limits with the super admin's overrides applied; null: unlimited. */
  limits: PlanLimits;
  overrides: Partial<PlanLimits>;
  features: PlanFeatures;
  usage: Record<Quota, number>;
  /** When the monthly message count starts again. */
  usage_resets_at: string;
}

/** The tenant's subscription with its limits and usage (GET /billing/subscription). */
export async function currentSubscription(deps: EntitlementDependencies, tenantId: string): Promise<SubscriptionView> {
  const [subscription, entitlements, usage] = await Promise.all([
    deps.readStore.collection<SubscriptionDocument>(SUBSCRIPTIONS).get(tenantId),
    entitlementsOf(deps, tenantId),
    usageOf(deps, tenantId),
  ]);
  return {
    status: subscription?.status ?? 'none',
    plan: { id: entitlements.plan.id, code: entitlements.plan.code, name: entitlements.plan.name },
    subscribed_plan_id: subscription?.plan_id ?? null,
    interval: subscription?.interval ?? null,
    current_period_start: subscription?.current_period_start ?? null,
    current_period_end: subscription?.current_period_end ?? null,
    cancel_at_period_end: subscription?.cancel_at_period_end ?? false,
    canceled_at: subscription?.canceled_at ?? null,
    grace_until: subscription?.grace_until ?? null,
    ended_at: subscription?.ended_at ?? null,
    limits: entitlements.limits,
    overrides: entitlements.overrides,
    features: entitlements.features,
    usage,
    usage_resets_at: nextMonthStart(deps.clock.now()),
  };
}

/**
 * Applies a successful payment to the tenant's subscription (started, renewed or switched,
 * docs/billing.md). Once per payment: its event ids derive from the payment id, so a second
 * application (a redelivered event, a racing confirm) appends nothing.
 */
export function activateSubscription(
  deps: CommandDependencies,
  paid: Extract<SubscriptionCommand, { type: 'ActivateSubscription' }>['data'],
  context: RequestContext,
): Promise<CommandResult<SubscriptionEvent>> {
  return handleCommand(deps, subscriptionAggregate, subscriptionStream(paid.tenant_id), { type: 'ActivateSubscription', data: paid }, { ...context, tenant_id: paid.tenant_id }, {
    idempotencyKey: `subscription:activation:${paid.payment_id}`,
  });
}


/**
 * Cancels the caller's subscription: at the end of the paid period (the default: the plan
 * applies until then), or at once (back to the default plan now). 409 `no_subscription`
 * when there is nothing to cancel.
 */
export async function cancelSubscription(
  deps: CommandDependencies & ReadModelDependencies & ReadYourWritesDependencies & EntitlementDependencies,
  principal: Principal,
  input: { at_period_end: boolean },
  context: RequestContext,
): Promise<SubscriptionView> {
  const result = await handleCommand(deps, subscriptionAggregate, subscriptionStream(principal.tenant_id), { type: 'CancelSubscription', data: input }, actingContext(principal, context));
  await requireApplied(deps, result.position, 'the cancellation', () => deps.readStore.collection<SubscriptionDocument>(SUBSCRIPTIONS).get(principal.tenant_id));
  return currentSubscription(deps, principal.tenant_id);
}
