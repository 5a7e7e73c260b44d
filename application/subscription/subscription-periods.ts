// Saga `subscription_periods` (version 1): ends what a period's end calls for. Nothing renews
// by itself (the platform keeps no card), so when a period is over its due pass
// - cancels a `canceling` subscription (the tenant returns to the default plan),
// - marks an `active` one `past_due` for BILLING_GRACE_DAYS (the plan still applies; a new
//   checkout renews it),
// - ends a `past_due` one whose grace period is over (reason `unpaid`, back to the default plan).
// It acts on time alone (`runDue`), from a scan of the `subscriptions` read model for what is
// due; the subscription's stream decides (`EndSubscriptionPeriod`), so a second pass, or two
// processes scanning at once, record nothing twice.

import { subscriptionStream } from '../../domain/subscription/subscription';
import { SUBSCRIPTIONS, type SubscriptionDocument } from '../../projections/subscriptions';
import { type CommandDependencies, handleCommand } from '../command-handling/handle-command';
import type { Logger } from '../ports/logger';
import { type Saga, forEachConcurrently } from '../sagas/saga';
import type { ReadModelDependencies } from '../shared/read-models';
import { systemContext } from '../shared/request-context';
import { subscriptionAggregate } from './subscriptions';

export const SUBSCRIPTION_PERIODS = 'subscription_periods';

export interface SubscriptionPeriodPolicy {
  /** BILLING_GRACE_DAYS: how long a period may stay unpaid before the tenant returns to the default plan. */
  graceDays: number;
  concurrency: number;
}

/** Subscriptions one due pass looks at; the next pass takes the rest. */
const DUE_PAGE = 100;

export function subscriptionPeriodsSaga(deps: CommandDependencies & ReadModelDependencies, policy: SubscriptionPeriodPolicy): Saga<'SubscriptionEnded'> {
  async function endPeriod(tenantId: string): Promise<void> {
    const context = { ...systemContext(deps.ids.newId(), SUBSCRIPTION_PERIODS), tenant_id: tenantId };
    await handleCommand(deps, subscriptionAggregate, subscriptionStream(tenantId), { type: 'EndSubscriptionPeriod', data: { grace_days: policy.graceDays } }, context);
  }

  return {
    name: SUBSCRIPTION_PERIODS,
    version: 1,
    // It acts on time alone (runDue); the subscription is there because every saga has one.
    filter: { kind: 'event_type', types: ['SubscriptionEnded'] },
    async handle() {},
    async runDue({ logger }: { logger: Logger }) {
      const now = deps.clock.now().toISOString();
      const due = await deps.readStore
        .collection<SubscriptionDocument>(SUBSCRIPTIONS)
        .find({ where: { status: { in: ['active', 'canceling', 'past_due'] }, next_due_at: { lte: now } }, sort: { field: 'next_due_at', direction: 'asc' }, limit: DUE_PAGE });
      await forEachConcurrently(due.items, policy.concurrency, async (subscription) => {
        try {
          await endPeriod(subscription.tenant_id);
        } catch (error) {
          // Unchanged: the next pass tries again.
          logger.error({ err: error, tenant_id: subscription.tenant_id }, 'due subscription period failed');
        }
      });
    },
  };
}
