// How sagas receive events: at least once, per consumer group, with failures retried.
// Redelivery is for crashes and unexpected errors: expected failures (a mailer refusing)
// are outcomes the saga records as events on its aggregate, with their own retry schedule.
// Embedded: a checkpointed catch-up subscription plus a durable retry list
// (application/sagas/checkpointed-delivery.ts). EventStoreDB: persistent subscriptions to
// `$all`, whose competing consumers let several platform processes share the work.

import type { DomainEventType } from '../../domain/events';
import type { DomainRecordedEvent } from './domain-event-store';

/** A saga reacts to declared event types, which it receives decoded. */
export interface EventTypeFilter<Type extends DomainEventType = DomainEventType> {
  kind: 'event_type';
  types: readonly Type[];
}

/** Where a consumer group starts when it is first created: the head of `$all`, or its beginning. */
export type SagaStart = 'head' | 'history';

export interface SagaSubscriptionOptions {
  /** Consumer group: one per saga (and version), shared by every process running it. */
  group: string;
  filter: EventTypeFilter;
  /** Used only when the group does not exist yet; an existing group resumes where it was. */
  startFrom: SagaStart;
  /**
   * Events handled at once per process. Events of different streams run side by side; the
   * events of one stream are handled one after the other, in order.
   */
  concurrency: number;
  /** Attempts before an event is dead-lettered (parked). */
  maxAttempts: number;
  /** Delay before attempt n+1 (n starts at 1), in ms. */
  backoffMs(attempt: number): number;
  /**
   * Store the group's checkpoint at most this often (Saga.checkpointEveryMs): for a saga whose
   * handling is safe and cheap to repeat, a restart delivers again what came after it. A
   * checkpoint that records a failure, and the one a stop leaves, are stored at once. Delivery
   * that acknowledges each event (EventStoreDB's persistent subscriptions) has no use for it.
   */
  checkpointEveryMs?: number;
}

export interface DeliveryFailure {
  group: string;
  event_id: string;
  event_type: string;
  position: number;
  attempts: number;
  last_error: string;
  next_attempt_at: string | null;
  status: 'retrying' | 'dead_lettered';
}

/**
 * The saga's handler: resolves when the event is fully handled; throws to have it retried.
 * The event is decoded and upcast (application/events/decoding-event-store.ts); one that
 * cannot be decoded is dead-lettered at once, naming it, since every attempt would fail.
 */
export type DeliverEvent = (event: DomainRecordedEvent, attempt: number) => Promise<void>;

export interface SagaSubscription {
  stop(): Promise<void>;
}

export interface SagaDelivery {
  /**
   * Starts delivering matching events from the group's last acknowledged one. A group that
   * does not exist yet starts where `startFrom` says, fixed before this resolves: every
   * event appended after it is delivered.
   */
  subscribe(options: SagaSubscriptionOptions, deliver: DeliverEvent): Promise<SagaSubscription>;
  /** Failures still retrying or dead-lettered, for operators. */
  listFailures(group?: string): Promise<DeliveryFailure[]>;
}
