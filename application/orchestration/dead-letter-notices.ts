// Saga `orchestration_dead_letter_notices`: when an organization's event is dead-lettered, the
// platform emits `svc.event.dead_lettered` for it, so a flow of the organization's connectors
// can tell someone (a ticket, a message to a channel) or set things right; only when one of its
// enabled connections advertises a flow on that name (nobody listening: nothing is emitted).
// The notice is an orchestration event like any other (received_via `platform`), caused by the
// dead one (causation_id, its correlation, depth + 1), its payload what a flow needs:
// `{event_id, name, source, attempts, error: {code, message}, dead_lettered_at}` (sealed by
// day like every payload). One notice per dead-lettering (its idempotency key names the event
// and its attempts: a retry that dies again is told again). A notice's own dead-lettering is
// told nobody (no chain of notices), nor is one past the depth bound.

import { DEAD_LETTERED_NOTICE, PLATFORM_EVENT_PREFIX } from '../../domain/orchestration-event/orchestration-event';
import { DomainError } from '../../domain/shared/errors';
import type { Logger } from '../ports/logger';
import type { Saga } from '../sagas/saga';
import { systemContext } from '../shared/request-context';
import { loadDispatch } from './dispatch-queue';
import { matchingFlows } from './dispatcher';
import { type OrchestrationDependencies, queueEnvelope } from './orchestration-events';

export const ORCHESTRATION_DEAD_LETTER_NOTICES = 'orchestration_dead_letter_notices';

export function orchestrationDeadLetterNoticesSaga(deps: OrchestrationDependencies & { logger: Logger }): Saga<'OrchestrationEventDeadLettered'> {
  return {
    name: ORCHESTRATION_DEAD_LETTER_NOTICES,
    version: 1,
    filter: { kind: 'event_type', types: ['OrchestrationEventDeadLettered'] },
    async handle(event) {
      const { event_id, tenant_id, attempts, error, dead_lettered_at } = event.data;
      const dead = await loadDispatch(deps, event_id);
      if (dead === null || dead.event.name.startsWith(PLATFORM_EVENT_PREFIX)) return;
      if (dead.event.depth + 1 > deps.orchestration.maxDepth) return;
      if ((await matchingFlows(deps, tenant_id, DEAD_LETTERED_NOTICE)).length === 0) return;
      const body = {
        name: DEAD_LETTERED_NOTICE,
        source: 'svc',
        payload: { event_id, name: dead.event.name, source: dead.event.source, attempts, error, dead_lettered_at },
        causation_id: event_id,
        idempotency_key: `svc:dead_lettered:${event_id}:${attempts}`,
      };
      try {
        await queueEnvelope(deps, tenant_id, body, 'platform', { ...systemContext(dead.event.correlation_id, ORCHESTRATION_DEAD_LETTER_NOTICES), tenant_id });
      } catch (refused) {
        // An envelope the rules refuse (none should be): told in the log, not retried for ever.
        if (!(refused instanceof DomainError) || refused.kind !== 'invalid') throw refused;
        deps.logger.warn({ event_id, tenant_id, code: refused.code }, 'the dead-letter notice of an orchestration event was refused');
      }
    },
  };
}
