// What a saga (process manager) is: a name, a version, the events it reacts to, and a handler
// that calls the outside world and records the outcome as new events.

import type { DomainEventType } from '../../domain/events';
import type { DomainRecordedEvent, RecordedOf } from '../ports/domain-event-store';
import type { Logger } from '../ports/logger';
import type { EventTypeFilter } from '../ports/saga-delivery';

export interface SagaContext {
  /**
   * Stable for the triggering event: outbound calls and the commands the handler issues
   * carry it, so a redelivery has no second effect.
   */
  idempotencyKey: string;
  attempt: number;
  logger: Logger;
}

export interface Saga<Type extends DomainEventType = DomainEventType> {
  name: string;
  version: number;
  /** The declared event types it reacts to; it receives them decoded and upcast. */
  filter: EventTypeFilter<Type>;
  handle(event: RecordedOf<Type>, context: SagaContext): Promise<void>;
}

/** Any saga, whatever types it reacts to, as the runner holds it: delivery gives it only what its filter lets through. */
export interface AnySaga {
  name: string;
  version: number;
  filter: EventTypeFilter;
  handle(event: DomainRecordedEvent, context: SagaContext): Promise<void>;
}

/** Exponential back-off with a ceiling: 1 s, 2 s, 4 s ... up to 5 min. */
export function exponentialBackoff(baseMs = 1000, maxMs = 5 * 60_000): (attempt: number) => number {
  return (attempt) => Math.min(maxMs, baseMs * 2 ** Math.max(0, attempt - 1));
}
