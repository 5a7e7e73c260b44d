// The one place where recorded events are read as domain events: every read through this
// store decodes each event with its declaration (domain/events.ts), after upcasting it from
// the schema version it was written with (`metadata.schema_version`, absent = 1). The
// command handler, the projection runner and saga delivery are all given this store, and
// EventStoreDB's persistent-subscription delivery calls `decodeRecordedEvent` itself.
//
// A declared type that does not decode, or a type nobody declared, throws EventDecodingError:
// never a silent skip. Only readers of the whole log (the audit log) get events of unknown
// types, passed through as stored.

import { domainEvents } from '../../domain/events';
import { deepFreeze } from '../shared/immutable';
import {
  type DomainEventStore,
  type DomainEventSubscription,
  type DomainRecordedEvent,
  EventDecodingError,
} from '../ports/domain-event-store';
import type {
  AppendResult,
  EventStore,
  EventSubscription,
  ExpectedRevision,
  NewEvent,
  ReadAllOptions,
  ReadStreamOptions,
  RecordedEvent,
  StreamMetadata,
  SubscribeToAllOptions,
  SubscriptionMessage,
  StreamAppend,
} from '../ports/event-store';

/** Decoded events of frozen recorded ones (a store that shares what it read): decoded once, shared frozen. */
const decodedOnce = new WeakMap<RecordedEvent, DomainRecordedEvent>();

/** Decodes and upcasts one recorded event; throws EventDecodingError naming it. */
export function decodeRecordedEvent(recorded: RecordedEvent): DomainRecordedEvent {
  const known = decodedOnce.get(recorded);
  if (known) return known;
  const result = domainEvents.decode(recorded.type, recorded.data, recorded.metadata.schema_version ?? 1);
  if (!result.ok) throw new EventDecodingError(recorded, result.reason, result.message);
  // The decoded `{type, data}` replaces the stored ones; spreading the union keeps them paired.
  const decoded: DomainRecordedEvent = { ...recorded, ...result.event };
  if (!Object.isFrozen(recorded)) return decoded;
  decodedOnce.set(recorded, deepFreeze(decoded));
  return decoded;
}

function decodedSubscription<Event extends RecordedEvent>(
  inner: EventSubscription,
  decode: (event: RecordedEvent) => Event,
): { stop(): Promise<void>; [Symbol.asyncIterator](): AsyncIterator<{ kind: 'event'; event: Event } | Exclude<SubscriptionMessage, { kind: 'event' }>> } {
  return {
    stop: () => inner.stop(),
    async *[Symbol.asyncIterator]() {
      for await (const message of inner) yield message.kind === 'event' ? { kind: 'event' as const, event: decode(message.event) } : message;
    },
  };
}

export class DecodingEventStore implements DomainEventStore {
  constructor(private readonly inner: EventStore) {}

  appendToStream(stream: string, events: readonly NewEvent[], options?: { expectedRevision?: ExpectedRevision }): Promise<AppendResult> {
    return this.inner.appendToStream(stream, events, options);
  }

  appendToStreams(appends: readonly StreamAppend[]): Promise<AppendResult[]> {
    return this.inner.appendToStreams(appends);
  }

  async readStream(stream: string, options?: ReadStreamOptions): Promise<DomainRecordedEvent[]> {
    return (await this.inner.readStream(stream, options)).map(decodeRecordedEvent);
  }

  async readAll(options?: ReadAllOptions): Promise<DomainRecordedEvent[]> {
    return (await this.inner.readAll(options)).map(decodeRecordedEvent);
  }

  subscribeToAll(options: SubscribeToAllOptions): DomainEventSubscription {
    return decodedSubscription(this.inner.subscribeToAll(options), decodeRecordedEvent);
  }

  readStreamAsStored(stream: string, options?: ReadStreamOptions): Promise<RecordedEvent[]> {
    return this.inner.readStream(stream, options);
  }

  readAllAsStored(options?: ReadAllOptions): Promise<RecordedEvent[]> {
    return this.inner.readAll(options);
  }

  subscribeToAllAsStored(options: SubscribeToAllOptions): EventSubscription {
    return this.inner.subscribeToAll(options);
  }

  headPosition(): Promise<number> {
    return this.inner.headPosition();
  }

  streamRevision(stream: string): Promise<number | null> {
    return this.inner.streamRevision(stream);
  }

  deleteStream(stream: string, options?: { expectedRevision?: ExpectedRevision }): Promise<void> {
    return this.inner.deleteStream(stream, options);
  }

  getStreamMetadata(stream: string): Promise<StreamMetadata> {
    return this.inner.getStreamMetadata(stream);
  }

  setStreamMetadata(stream: string, metadata: StreamMetadata): Promise<void> {
    return this.inner.setStreamMetadata(stream, metadata);
  }

  close(): Promise<void> {
    return this.inner.close();
  }
}
