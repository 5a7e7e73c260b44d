// The event store as the platform reads it: every recorded event decoded (io-ts) and upcast
// to its current shape at one place (application/events/decoding-event-store.ts), so the
// command handler, projections and sagas all see the same, typed events.

import type { DomainEvent, DomainEventType } from '../../domain/events';
import type { EventStore, EventSubscription, ReadAllOptions, ReadStreamOptions, RecordedEvent, SubscribeToAllOptions } from './event-store';

/** A recorded event of the given declared types, its data decoded and upcast: `switch (event.type)` narrows `event.data`. */
export type RecordedOf<Type extends DomainEventType = DomainEventType> = {
  [Key in Type]: RecordedEvent<Key, Extract<DomainEvent, { type: Key }>['data']>;
}[Type];

/** Any declared event as recorded. */
export type DomainRecordedEvent = RecordedOf;

export type DomainSubscriptionMessage =
  | { kind: 'event'; event: DomainRecordedEvent }
  | { kind: 'checkpoint'; position: number }
  | { kind: 'caught_up'; position: number };

export interface DomainEventSubscription extends AsyncIterable<DomainSubscriptionMessage> {
  stop(): Promise<void>;
}

/**
 * Reads that decode every event; an event of an undeclared type, or one that does not match
 * its codec after upcasting, throws EventDecodingError naming it. Appends and the rest pass
 * through to the stored log.
 */
export interface DomainEventStore extends EventStore {
  readStream(stream: string, options?: ReadStreamOptions): Promise<DomainRecordedEvent[]>;
  readAll(options?: ReadAllOptions): Promise<DomainRecordedEvent[]>;
  subscribeToAll(options: SubscribeToAllOptions): DomainEventSubscription;
  /**
   * For readers of the whole log (the audit log): every event exactly as recorded, none
   * decoded, so what they derive (the audit chain hashes the data) does not move when an
   * upcaster is added.
   */
  readAllAsStored(options?: ReadAllOptions): Promise<RecordedEvent[]>;
  /** The same, as a subscription. */
  subscribeToAllAsStored(options: SubscribeToAllOptions): EventSubscription;
  /** A stream exactly as recorded, for a reader that judges what it finds itself (the audit verifier: a checkpoint that does not decode is a finding). */
  readStreamAsStored(stream: string, options?: ReadStreamOptions): Promise<RecordedEvent[]>;
}

export type EventDecodingReason = 'unknown_type' | 'unknown_version' | 'mismatch' | 'unexpected_type';

/** A recorded event that cannot be read as a declared event; names the event and what did not match. */
export class EventDecodingError extends Error {
  readonly code = 'undecodable_event';
  readonly stream: string;
  readonly revision: number;
  readonly position: number;
  readonly eventId: string;
  readonly type: string;

  constructor(
    event: Pick<RecordedEvent, 'id' | 'type' | 'stream' | 'revision' | 'position'>,
    readonly reason: EventDecodingReason,
    readonly detail: string,
  ) {
    super(`event ${event.type} ${event.id} (stream ${event.stream} revision ${event.revision}, position ${event.position}) cannot be read: ${detail}`);
    this.name = 'EventDecodingError';
    this.stream = event.stream;
    this.revision = event.revision;
    this.position = event.position;
    this.eventId = event.id;
    this.type = event.type;
  }
}
