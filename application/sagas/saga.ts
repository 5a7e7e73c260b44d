// What a saga is: a name, a version, the events it reacts to, and a handler that calls the
// outside world and records the outcome as new events. Its decisions are a process manager
// (process-manager.ts): the handler reads the aggregate's state, asks the process manager,
// and performs only what it asks for, so a redelivered event has no second side effect.

import type { AllFilter, RecordedEvent } from '../ports/event-store';
import type { Logger } from '../ports/logger';
import type { SagaStart } from '../ports/saga-delivery';

export interface SagaContext {
  /**
   * Stable for the triggering event: outbound calls and the commands the handler issues
   * carry it, so a redelivery has no second effect.
   */
  idempotencyKey: string;
  attempt: number;
  logger: Logger;
}

export interface Saga {
  name: string;
  /** A new version is a new consumer group, which starts where `startFrom` says. */
  version: number;
  filter: AllFilter;
  /**
   * Where a new consumer group starts: at the head of `$all` (the default: a new saga does
   * not act on the past), or at its beginning when the saga needs history.
   */
  startFrom?: SagaStart;
  /** Throws only for the unexpected (a store down, a bug): infrastructure then redelivers. */
  handle(event: RecordedEvent, context: SagaContext): Promise<void>;
  /**
   * Work that falls due with time (scheduled retries recorded as events), found through a
   * read model; the runner calls it every poll. The aggregate's state decides, so two
   * processes scanning at once do no work twice.
   */
  runDue?(context: { logger: Logger }): Promise<void>;
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
