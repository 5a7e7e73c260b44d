// Saga `orchestration_dead_letter_notices`: when an organization's event is dead-lettered, or
// expires before it could be dispatched, the platform emits `svc.event.dead_lettered` or
// `svc.event.expired` for it, so a flow of the organization's connectors can tell someone (a
// ticket, a message to a channel) or set things right; only when one of its enabled
// connections advertises a flow on that name (nobody listening: nothing is emitted). The
// notice is an orchestration event like any other (received_via `platform`), caused by the
// event it tells of (causation_id, its correlation, depth + 1), its payload what a flow needs
// (`noticeOf`; sealed by day like every payload). One notice per ending (its idempotency key
// names the event, and a dead-lettering's attempts: a retry that dies again is told again). A
// notice's own ending is told nobody (no chain of notices), nor is one at the depth bound.

import { DEAD_LETTERED_NOTICE, EXPIRED_NOTICE, PLATFORM_EVENT_PREFIX } from '../../domain/orchestration-event/orchestration-event';
import { DomainError } from '../../domain/shared/errors';
import type { RecordedOf } from '../ports/domain-event-store';
import type { Logger } from '../ports/logger';
import type { Saga } from '../sagas/saga';
import { systemContext } from '../shared/request-context';
import { loadDispatch } from './dispatch-queue';
import { matchingFlows } from './dispatcher';
import { type OrchestrationDependencies, queueEnvelope } from './orchestration-events';

export const ORCHESTRATION_DEAD_LETTER_NOTICES = 'orchestration_dead_letter_notices';

type Ending = RecordedOf<'OrchestrationEventDeadLettered' | 'OrchestrationEventExpired'>;

/** The notice of an ending: its name, what its payload tells, and the key that emits it once. */
function noticeOf(ending: Ending, told: { name: string; source: string | null }): { name: string; payload: Record<string, unknown>; key: string } {
  const about = { event_id: ending.data.event_id, name: told.name, source: told.source };
  if (ending.type === 'OrchestrationEventDeadLettered') {
    const { event_id, attempts, error, dead_lettered_at } = ending.data;
    return { name: DEAD_LETTERED_NOTICE, payload: { ...about, attempts, error, dead_lettered_at }, key: `svc:dead_lettered:${event_id}:${attempts}` };
  }
  const { event_id, expires_at, expired_at } = ending.data;
  return { name: EXPIRED_NOTICE, payload: { ...about, expires_at, expired_at }, key: `svc:expired:${event_id}` };
}

export function orchestrationDeadLetterNoticesSaga(deps: OrchestrationDependencies & { logger: Logger }): Saga<'OrchestrationEventDeadLettered' | 'OrchestrationEventExpired'> {
  return {
    name: ORCHESTRATION_DEAD_LETTER_NOTICES,
    version: 1,
    filter: { kind: 'event_type', types: ['OrchestrationEventDeadLettered', 'OrchestrationEventExpired'] },
    async handle(ending) {
      const { event_id, tenant_id } = ending.data;
      const ended = await loadDispatch(deps, event_id);
      if (ended === null || ended.event.name.startsWith(PLATFORM_EVENT_PREFIX)) return;
      if (ended.event.depth + 1 > deps.orchestration.maxDepth) return;
      const notice = noticeOf(ending, ended.event);
      if ((await matchingFlows(deps, tenant_id, notice.name)).length === 0) return;
      const body = { name: notice.name, source: 'svc', payload: notice.payload, causation_id: event_id, idempotency_key: notice.key };
      try {
        await queueEnvelope(deps, tenant_id, body, 'platform', { ...systemContext(ended.event.correlation_id, ORCHESTRATION_DEAD_LETTER_NOTICES), tenant_id });
      } catch (refused) {
        // An envelope the rules refuse (none should be): told in the log, not retried for ever.
        if (!(refused instanceof DomainError) || refused.kind !== 'invalid') throw refused;
        deps.logger.warn({ event_id, tenant_id, code: refused.code }, 'the notice of an orchestration event’s end was refused');
      }
    },
  };
}
