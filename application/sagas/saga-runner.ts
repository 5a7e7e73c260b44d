// Starts every saga on a SagaDelivery (embedded or EventStoreDB persistent subscriptions),
// and runs the due passes of the sagas that schedule work (retries recorded as events).

import type { Logger } from '../ports/logger';
import type { SagaDelivery, SagaSubscription } from '../ports/saga-delivery';
import { type AnySaga, exponentialBackoff } from './saga';

export interface SagaRunnerOptions {
  maxAttempts: number;
  backoffMs?: (attempt: number) => number;
  /** Events handled at once per saga (SAGA_CONCURRENCY); one stream's events stay in order. */
  concurrency?: number;
  /** Pause between due passes; 0 runs none (tests call `runDue`). */
  duePollMs?: number;
}

export const DEFAULT_SAGA_CONCURRENCY = 16;

export class SagaRunner {
  private subscriptions: SagaSubscription[] = [];
  private dueLoop: Promise<void> | null = null;
  private stopping = false;
  private wake: (() => void) | null = null;

  constructor(
    private readonly delivery: SagaDelivery,
    private readonly sagas: readonly AnySaga[],
    private readonly logger: Logger,
    private readonly options: SagaRunnerOptions,
  ) {}

  /**
   * The consumer group of a saga. A new version is a new group, which starts at the head of
   * `$all` unless the saga declares `startFrom: 'history'`.
   */
  static groupOf(saga: Pick<AnySaga, 'name' | 'version'>): string {
    return `${saga.name}-v${saga.version}`;
  }

  async start(): Promise<void> {
    this.stopping = false;
    for (const saga of this.sagas) {
      const logger = this.logger.child({ saga: saga.name });
      const subscription = await this.delivery.subscribe(
        {
          group: SagaRunner.groupOf(saga),
          filter: saga.filter,
          startFrom: saga.startFrom ?? 'head',
          concurrency: this.options.concurrency ?? DEFAULT_SAGA_CONCURRENCY,
          maxAttempts: this.options.maxAttempts,
          backoffMs: this.options.backoffMs ?? exponentialBackoff(),
          ...(saga.checkpointEveryMs !== undefined ? { checkpointEveryMs: saga.checkpointEveryMs } : {}),
        },
        (event, attempt) => saga.handle(event, { idempotencyKey: `${saga.name}:${event.id}`, attempt, logger }),
      );
      this.subscriptions.push(subscription);
    }
    const pollMs = this.options.duePollMs ?? 1000;
    if (pollMs > 0 && this.sagas.some((saga) => saga.runDue)) this.dueLoop = this.pollDue(pollMs);
  }

  /** One due pass of every saga that has one. */
  async runDue(): Promise<void> {
    for (const saga of this.sagas) {
      if (!saga.runDue) continue;
      const logger = this.logger.child({ saga: saga.name });
      try {
        await saga.runDue({ logger });
      } catch (error) {
        logger.error({ err: error }, 'saga due pass failed');
      }
    }
  }

  async stop(): Promise<void> {
    this.stopping = true;
    this.wake?.();
    await this.dueLoop;
    this.dueLoop = null;
    await Promise.all(this.subscriptions.map((subscription) => subscription.stop()));
    this.subscriptions = [];
  }

  private async pollDue(pollMs: number): Promise<void> {
    while (!this.stopping) {
      await new Promise<void>((resolve) => {
        const timer = setTimeout(done, pollMs);
        function done(): void {
          clearTimeout(timer);
          resolve();
        }
        this.wake = done;
      });
      if (this.stopping) return;
      await this.runDue();
    }
  }
}
