// Saga `orchestration_expiry` (version 1): ends `expired` the orchestration events whose
// expiry passed while they waited (queued, or failed with a next attempt due). It acts on time
// alone (`runDue`, every due pass of the saga runner), from a scan of the
// `orchestration_events` read model for what is past its `expires_at`; each event's stream
// decides (`Expire`), so a second pass, or two processes scanning at once, record nothing
// twice. A running attempt is let finish. The dispatch queue never offers an event past its
// expiry, whether or not this pass has come by yet.

import { ORCHESTRATION_EVENTS, type OrchestrationEventDocument } from '../../projections/orchestration-events';
import type { CommandDependencies } from '../command-handling/handle-command';
import type { Logger } from '../ports/logger';
import { type Saga, forEachConcurrently } from '../sagas/saga';
import type { ReadModelDependencies } from '../shared/read-models';
import { dispatcherContext, expireEvent } from './dispatch-queue';

export const ORCHESTRATION_EXPIRY = 'orchestration_expiry';

/** Events one pass ends at most; the next pass takes the rest. */
const DUE_PAGE = 200;

/** Ends every waiting event past its expiry (at most a page of them); the number ended. */
export async function expireDueEvents(deps: CommandDependencies & ReadModelDependencies, options: { concurrency: number; logger?: Logger }): Promise<number> {
  const now = deps.clock.now().toISOString();
  const due = await deps.readStore
    .collection<OrchestrationEventDocument>(ORCHESTRATION_EVENTS)
    .find({ where: { status: { in: ['queued', 'failed'] }, expires_at: { lte: now } }, sort: { field: 'expires_at', direction: 'asc' }, limit: DUE_PAGE, index: 'expires_at' });
  let ended = 0;
  await forEachConcurrently(due.items, options.concurrency, async (doc) => {
    try {
      const position = await expireEvent(deps, { event_id: doc.id, tenant_id: doc.tenant_id }, dispatcherContext(doc.tenant_id, doc.correlation_id));
      if (position !== null) ended += 1;
    } catch (error) {
      // Unchanged: the next pass tries again.
      options.logger?.error({ err: error, event_id: doc.id }, 'orchestration event not expired');
    }
  });
  return ended;
}

export function orchestrationExpirySaga(deps: CommandDependencies & ReadModelDependencies, policy: { concurrency: number }): Saga<'OrchestrationEventExpired'> {
  return {
    name: ORCHESTRATION_EXPIRY,
    version: 1,
    // It acts on time alone (runDue); the subscription is there because every saga has one.
    filter: { kind: 'event_type', types: ['OrchestrationEventExpired'] },
    async handle() {},
    async runDue({ logger }) {
      await expireDueEvents(deps, { concurrency: policy.concurrency, logger });
    },
  };
}
