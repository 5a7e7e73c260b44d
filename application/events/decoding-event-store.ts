// The one place where recorded events are read as domain events: every read through this
// store decodes each event with its declaration (domain/events.ts), after upcasting it from
// the schema version it was written with (`metadata.schema_version`, absent = 1). The
// command handler, the projection runner and saga delivery are all given this store, and
// EventStoreDB's persistent-subscription delivery calls `decodeRecordedEvent` itself.
//
// A declared type that does not decode, or a type nobody declared, throws EventDecodingError:
// never a silent skip. Only readers of the whole log (the audit log) get events of unknown
// types, passed through as stored.
//
// Personal data (application/events/personal-data.ts): the fields a type declares personal
// are sealed here on append and opened here on read, before decoding, with the store's vault.
// Reads "as stored" (the audit log's hash chain, the operator's `events read`) see them sealed.

import { domainEvents } from '../../domain/events';
import { deepFreeze } from '../shared/immutable';
import type { PersonalDataVault } from '../ports/personal-data';
import { holdsPersonalData, openPersonalData, sealPersonalData, sealedSubjectsOf } from './personal-data';
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
/**
 * The same for events with personal data, opened: shared again only while the keys of their
 * subjects are kept (one read of the key table per read), so an erasure holds at once.
 */
const openedOnce = new WeakMap<RecordedEvent, DomainRecordedEvent>();

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
  decode: (event: RecordedEvent) => Event | Promise<Event>,
): { stop(): Promise<void>; [Symbol.asyncIterator](): AsyncIterator<{ kind: 'event'; event: Event } | Exclude<SubscriptionMessage, { kind: 'event' }>> } {
  return {
    stop: () => inner.stop(),
    async *[Symbol.asyncIterator]() {
      for await (const message of inner) yield message.kind === 'event' ? { kind: 'event' as const, event: await decode(message.event) } : message;
    },
  };
}

export class DecodingEventStore implements DomainEventStore {
  /** `vault`: where the keys of personal data are; without one, an event holding personal data is neither appended nor read (PersonalDataVaultMissingError). */
  constructor(
    private readonly inner: EventStore,
    private readonly vault: PersonalDataVault | null = null,
  ) {}

  appendToStream(stream: string, events: readonly NewEvent[], options?: { expectedRevision?: ExpectedRevision }): Promise<AppendResult> {
    // Most appends hold no personal data: they go straight through, not a turn later.
    if (!holdsPersonalData(events)) return this.inner.appendToStream(stream, events, options);
    return sealPersonalData(events, this.vault).then((sealed) => this.inner.appendToStream(stream, sealed, options));
  }

  appendToStreams(appends: readonly StreamAppend[]): Promise<AppendResult[]> {
    if (!appends.some((append) => holdsPersonalData(append.events))) return this.inner.appendToStreams(appends);
    return Promise.all(appends.map(async (append) => ({ ...append, events: await sealPersonalData(append.events, this.vault) }))).then((sealed) => this.inner.appendToStreams(sealed));
  }

  async readStream(stream: string, options?: ReadStreamOptions): Promise<DomainRecordedEvent[]> {
    return this.decodeAll(await this.inner.readStream(stream, options));
  }

  async readAll(options?: ReadAllOptions): Promise<DomainRecordedEvent[]> {
    return this.decodeAll(await this.inner.readAll(options));
  }

  subscribeToAll(options: SubscribeToAllOptions): DomainEventSubscription {
    return decodedSubscription(this.inner.subscribeToAll(options), (event) => this.decode(event));
  }

  /** One recorded event decoded, its personal data opened: for readers that get events elsewhere (EventStoreDB's persistent subscriptions). */
  decode(recorded: RecordedEvent): DomainRecordedEvent | Promise<DomainRecordedEvent> {
    const subjects = sealedSubjectsOf(recorded);
    if (subjects.length === 0) return decodeRecordedEvent(recorded);
    return this.openAndDecode([recorded], [subjects]).then(([decoded]) => decoded);
  }

  private decodeAll(recorded: readonly RecordedEvent[]): DomainRecordedEvent[] | Promise<DomainRecordedEvent[]> {
    // The subjects each event's sealed fields need, found once: none for most events.
    const subjects = recorded.map(sealedSubjectsOf);
    if (subjects.every((ofEvent) => ofEvent.length === 0)) return recorded.map(decodeRecordedEvent);
    return this.openAndDecode(recorded, subjects);
  }

  /** Decodes events some of which hold sealed fields: those opened before whose keys are still kept come from openedOnce, the others are opened. */
  private async openAndDecode(recorded: readonly RecordedEvent[], subjects: readonly string[][]): Promise<DomainRecordedEvent[]> {
    const kept = this.vault ? await this.vault.keptAmong([...new Set(subjects.flat())]) : new Set<string>();
    const keptAll = (index: number): boolean => subjects[index].every((subject) => kept.has(subject));
    const decoded = recorded.map((event, index) => (subjects[index].length === 0 ? decodeRecordedEvent(event) : keptAll(index) ? openedOnce.get(event) : undefined));
    const toOpen = recorded.filter((_, index) => decoded[index] === undefined);
    if (toOpen.length === 0) return decoded as DomainRecordedEvent[];
    const opened = await openPersonalData(toOpen, this.vault);
    let next = 0;
    return recorded.map((event, index) => {
      const known = decoded[index];
      if (known) return known;
      const fresh = decodeRecordedEvent(opened[next++]);
      // Opened with every key kept, from a row the store shares: shown again while they stay kept.
      if (!Object.isFrozen(event) || !keptAll(index)) return fresh;
      const shared = deepFreeze(fresh);
      openedOnce.set(event, shared);
      return shared;
    });
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
