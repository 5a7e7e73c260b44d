// What a saga (process manager) is: a name, a version, the events it reacts to, and a handler
// that calls the outside world and records the outcome as new events.

import type { AllFilter, RecordedEvent } from '../ports/event-store';
import type { Logger } from '../ports/logger';

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
  version: number;
  filter: AllFilter;
  handle(event: RecordedEvent, context: SagaContext): Promise<void>;
}

/** Exponential back-off with a ceiling: 1 s, 2 s, 4 s ... up to 5 min. */
export function exponentialBackoff(baseMs = 1000, maxMs = 5 * 60_000): (attempt: number) => number {
  return (attempt) => Math.min(maxMs, baseMs * 2 ** Math.max(0, attempt - 1));
}
