// Starts every saga on a SagaDelivery (embedded or EventStoreDB persistent subscriptions).

import type { Logger } from '../ports/logger';
import type { SagaDelivery, SagaSubscription } from '../ports/saga-delivery';
import { type AnySaga, exponentialBackoff } from './saga';

export interface SagaRunnerOptions {
  maxAttempts: number;
  backoffMs?: (attempt: number) => number;
}

export class SagaRunner {
  private subscriptions: SagaSubscription[] = [];

  constructor(
    private readonly delivery: SagaDelivery,
    private readonly sagas: readonly AnySaga[],
    private readonly logger: Logger,
    private readonly options: SagaRunnerOptions,
  ) {}

  /** The consumer group of a saga; a new version starts from the beginning of `$all`. */
  static groupOf(saga: Pick<AnySaga, 'name' | 'version'>): string {
    return `${saga.name}-v${saga.version}`;
  }

  async start(): Promise<void> {
    for (const saga of this.sagas) {
      const logger = this.logger.child({ saga: saga.name });
      const subscription = await this.delivery.subscribe(
        {
          group: SagaRunner.groupOf(saga),
          filter: saga.filter,
          maxAttempts: this.options.maxAttempts,
          backoffMs: this.options.backoffMs ?? exponentialBackoff(),
        },
        (event, attempt) => saga.handle(event, { idempotencyKey: `${saga.name}:${event.id}`, attempt, logger }),
      );
      this.subscriptions.push(subscription);
    }
  }

  async stop(): Promise<void> {
    await Promise.all(this.subscriptions.map((subscription) => subscription.stop()));
    this.subscriptions = [];
  }
}
