// What a saga is: a name, a version, the events it reacts to, and a handler that calls the
// outside world and records the outcome as new events. Its decisions are a process manager
// (process-manager.ts): the handler reads the aggregate's state, asks the process manager,
// and performs only what it asks for, so a redelivered event has no second side effect.

import type { DomainEventType } from '../../domain/events';
import type { DomainRecordedEvent, RecordedOf } from '../ports/domain-event-store';
import type { Logger } from '../ports/logger';
import type { EventTypeFilter, SagaStart } from '../ports/saga-delivery';

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
  /** A new version is a new consumer group, which starts where `startFrom` says. */
  version: number;
  /** The declared event types it reacts to; it receives them decoded and upcast. */
  filter: EventTypeFilter<Type>;
  /**
   * Where a new consumer group starts: at the head of `$all` (the default: a new saga does
   * not act on the past), or at its beginning when the saga needs history.
   */
  startFrom?: SagaStart;
  /** Throws only for the unexpected (a store down, a bug): infrastructure then redelivers. */
  handle(event: RecordedOf<Type>, context: SagaContext): Promise<void>;
  /**
   * Work that falls due with time (scheduled retries recorded as events), found through a
   * read model; the runner calls it every poll. The aggregate's state decides, so two
   * processes scanning at once do no work twice.
   */
  runDue?(context: { logger: Logger }): Promise<void>;
  /**
   * For a saga whose handling is only a wake (of work kept elsewhere, idempotent): its
   * delivery's checkpoint is stored at most this often instead of after every batch, each a
   * commit of its own at a low rate. A restart delivers again what came after it.
   */
  checkpointEveryMs?: number;
}

/** Any saga, whatever types it reacts to, as the runner holds it: delivery gives it only what its filter lets through. */
export interface AnySaga {
  name: string;
  version: number;
  filter: EventTypeFilter;
  startFrom?: SagaStart;
  handle(event: DomainRecordedEvent, context: SagaContext): Promise<void>;
  runDue?(context: { logger: Logger }): Promise<void>;
  checkpointEveryMs?: number;
}

/** Exponential back-off with a ceiling: 1 s, 2 s, 4 s ... up to 5 min. */
export function exponentialBackoff(baseMs = 1000, maxMs = 5 * 60_000): (attempt: number) => number {
  return (attempt) => Math.min(maxMs, baseMs * 2 ** Math.max(0, attempt - 1));
}

/** Runs `work` over the items with at most `limit` at a time. */
export async function forEachConcurrently<T>(items: readonly T[], limit: number, work: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < items.length) {
      const item = items[next];
      next += 1;
      await work(item);
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(limit, items.length)) }, worker));
}
