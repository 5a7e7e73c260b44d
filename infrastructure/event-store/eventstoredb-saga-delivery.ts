// SagaDelivery on EventStoreDB persistent subscriptions to `$all`. Each saga group is
// one persistent-subscription group, so several platform processes compete for its events.
//
// Mapping choices:
// - The group is created on first subscribe. It starts at the end of `$all` at that
//   moment (a new saga, or a new version of one, does not act on the past), or at its
//   beginning when the saga asks for history; it filters on the server with the saga's
//   filter. A group that already exists is used as it is: its settings are not updated,
//   so a saga whose filter or attempts change should change its group name (name plus
//   version).
// - Consumers are pinned (the server hashes the event's stream to a consumer), so the
//   events of one stream go to one process while it stays connected. Within a process,
//   events of different streams are handled concurrently, at most `concurrency` at once,
//   and the events of one stream one after the other in the order they arrived. Pinning
//   is best effort (a reconnect moves streams), which the sagas' state checks absorb. An
//   event waiting behind its stream's earlier ones spends the same messageTimeout; past
//   it the server sends it again, which queues behind the first copy and changes nothing.
// - Attempt = retryCount + 1. The server's maxRetryCount is set to maxAttempts, so the
//   server never parks before we do.
// - A failed attempt (an unexpected error: expected failures are events the saga records
//   itself) n < maxAttempts is nacked with 'retry' only after backoffMs(n). The event
//   stays in flight meanwhile, and the server redelivers it after the nack. Other events,
//   of its stream too, keep flowing during that wait. At maxAttempts the event is nacked with
//   'park': the server's dead letter (`$persistentsubscription-...-parked`), which an
//   operator can replay.
// - messageTimeout (how long the server waits before it redelivers an unacknowledged
//   event on its own) is HANDLER_BUDGET_MS plus the longest back-off, so that our delayed
//   nack always comes first.
// - Failures are kept in the ReadStore collection `saga_failures` (id
//   `${group}:${event_id}`, the fields of DeliveryFailure) for listFailures. Every
//   success deletes the document, which also covers parked events replayed by an operator.
// - System events and events outside the filter are acknowledged without delivery. Events
//   are decoded and upcast (their personal data opened) by the platform's decoding store,
//   like every other read; one that cannot be decoded is parked at once, naming it.
// - When the subscription drops (server restart, leader change), it is resubscribed with
//   capped exponential back-off, and the group is recreated if it is missing. Events in
//   flight at that moment are redelivered: delivery is at least once.
// - stop() waits for the handlers in progress (and those queued behind them) to finish,
//   so that their acks go out, then unsubscribes. Events waiting for a delayed retry are
//   redelivered by the server.

import {
  ErrorType,
  END,
  EventStoreDBClient,
  PINNED,
  START,
  isCommandError,
  persistentSubscriptionToAllSettingsFromDefaults,
} from '@eventstore/db-client';
import type { PersistentSubscriptionToAll, PersistentSubscriptionToAllResolvedEvent } from '@eventstore/db-client';
import { decodeRecordedEvent } from '../../application/events/decoding-event-store';
import type { DomainRecordedEvent } from '../../application/ports/domain-event-store';
import { filterMatches, type RecordedEvent } from '../../application/ports/event-store';
import type { Collection, Document, ReadStore } from '../../application/ports/read-store';
import type {
  DeliverEvent,
  DeliveryFailure,
  SagaDelivery,
  SagaSubscription,
  SagaSubscriptionOptions,
} from '../../application/ports/saga-delivery';
import { isSystemEvent, serverFilterOf, toRecordedEvent } from './eventstoredb';

const FAILURES = 'saga_failures';
/** Time a handler may take before the server may redeliver its event on its own. */
const HANDLER_BUDGET_MS = 60_000;
/** messageTimeout travels as a signed 32-bit number of milliseconds. */
const MAX_MESSAGE_TIMEOUT_MS = 2_147_483_647;
/** Events the server sends this consumer before it has to acknowledge some, per handler slot. */
const BUFFER_PER_SLOT = 4;
const MIN_BUFFER_SIZE = 10;
const RECONNECT_MIN_MS = 500;
const RECONNECT_MAX_MS = 30_000;
/** Nack reasons are stored with parked events; keep them short. */
const MAX_REASON_LENGTH = 1000;

interface FailureDocument extends Document, DeliveryFailure {}

export interface EventStoreDbSagaDeliveryOptions {
  /** Errors that cannot be thrown to anyone (ack, nack, failure bookkeeping, reconnects). */
  onError?: (error: unknown, context: string) => void;
  /** Reads a delivered event as every other read does: the platform's decoding store, which also opens personal data (`decodeRecordedEvent` alone when absent). */
  decode?: (recorded: RecordedEvent) => DomainRecordedEvent | Promise<DomainRecordedEvent>;
}

export class EventStoreDbSagaDelivery implements SagaDelivery {
  private failuresReady: Promise<void> | null = null;

  constructor(
    private readonly client: EventStoreDBClient,
    private readonly readStore: ReadStore,
    private readonly options: EventStoreDbSagaDeliveryOptions = {},
  ) {}

  async subscribe(options: SagaSubscriptionOptions, deliver: DeliverEvent): Promise<SagaSubscription> {
    if (!Number.isInteger(options.maxAttempts) || options.maxAttempts < 1) {
      throw new RangeError(`saga group ${options.group}: maxAttempts must be a positive integer`);
    }
    if (!Number.isInteger(options.concurrency) || options.concurrency < 1) {
      throw new RangeError(`saga group ${options.group}: concurrency must be a positive integer`);
    }
    await this.ensureFailures();
    await this.ensureGroup(options);
    const subscription = new PersistentSagaSubscription(
      this.client,
      this.readStore.collection<FailureDocument>(FAILURES),
      options,
      deliver,
      (group) => this.ensureGroup(group),
      (error, context) => this.report(error, context),
      this.options.decode ?? decodeRecordedEvent,
    );
    subscription.connect();
    return subscription;
  }

  async listFailures(group?: string): Promise<DeliveryFailure[]> {
    await this.ensureFailures();
    const failures = this.readStore.collection<FailureDocument>(FAILURES);
    const result: DeliveryFailure[] = [];
    let cursor: string | undefined;
    do {
      const page = await failures.find({ ...(group !== undefined ? { where: { group } } : {}), limit: 1000, cursor });
      result.push(...page.items.map(toDeliveryFailure));
      cursor = page.next_cursor ?? undefined;
    } while (cursor);
    return result;
  }

  private ensureFailures(): Promise<void> {
    this.failuresReady ??= this.readStore
      // The embedded delivery's list (checkpointed-delivery.ts): a collection's indexes are whole lists, and one store may have known both.
      .ensureCollection({ name: FAILURES, indexes: [{ field: 'group' }, { field: 'status' }, { field: 'next_attempt_at' }] })
      .catch((error: unknown) => {
        this.failuresReady = null;
        throw error;
      });
    return this.failuresReady;
  }

  /** Creates the persistent subscription group if it is missing. */
  private async ensureGroup(options: SagaSubscriptionOptions): Promise<void> {
    const settings = persistentSubscriptionToAllSettingsFromDefaults({
      startFrom: options.startFrom === 'history' ? START : END,
      consumerStrategyName: PINNED,
      resolveLinkTos: false,
      maxRetryCount: options.maxAttempts,
      messageTimeout: messageTimeoutFor(options),
    });
    try {
      await this.client.createPersistentSubscriptionToAll(options.group, settings, { filter: serverFilterOf(options.filter) });
    } catch (error) {
      if (error instanceof Error && isCommandError(error) && error.type === ErrorType.PERSISTENT_SUBSCRIPTION_EXISTS) return;
      throw error;
    }
  }

  private report(error: unknown, context: string): void {
    this.options.onError?.(error, context);
  }
}

/** One consumer of a group; reconnects until stopped. */
class PersistentSagaSubscription implements SagaSubscription {
  private source: PersistentSubscriptionToAll | null = null;
  /** The last handling queued per stream: the stream's next event starts after it. */
  private readonly lanes = new Map<string, Promise<void>>();
  private running = 0;
  private readonly slotWaiters: Array<() => void> = [];
  private readonly retryTimers = new Set<NodeJS.Timeout>();
  private reconnectTimer: NodeJS.Timeout | null = null;
  private reconnectDelay = RECONNECT_MIN_MS;
  private stopped = false;

  constructor(
    private readonly client: EventStoreDBClient,
    private readonly failures: Collection<FailureDocument>,
    private readonly options: SagaSubscriptionOptions,
    private readonly deliver: DeliverEvent,
    private readonly ensureGroup: (options: SagaSubscriptionOptions) => Promise<void>,
    private readonly report: (error: unknown, context: string) => void,
    private readonly decode: (recorded: RecordedEvent) => DomainRecordedEvent | Promise<DomainRecordedEvent>,
  ) {}

  connect(): void {
    if (this.stopped) return;
    const bufferSize = Math.max(MIN_BUFFER_SIZE, this.options.concurrency * BUFFER_PER_SLOT);
    const source = this.client.subscribeToPersistentSubscriptionToAll(this.options.group, { bufferSize });
    this.source = source;
    source.on('confirmation', () => {
      this.reconnectDelay = RECONNECT_MIN_MS;
    });
    source.on('data', (resolved: PersistentSubscriptionToAllResolvedEvent) => {
      const stream = resolved.event?.streamId ?? '';
      const lane = (this.lanes.get(stream) ?? Promise.resolve())
        .then(() => this.inSlot(() => this.handle(source, resolved)))
        .catch((error: unknown) => this.report(error, `saga ${this.options.group}: handling an event`));
      this.lanes.set(stream, lane);
      void lane.then(() => {
        if (this.lanes.get(stream) === lane) this.lanes.delete(stream);
      });
    });
    source.on('error', (error: Error) => this.dropped(source, error));
    source.on('close', () => this.dropped(source, null));
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.reconnectTimer) clearTimeout(this.reconnectTimer);
    this.reconnectTimer = null;
    for (const timer of this.retryTimers) clearTimeout(timer);
    this.retryTimers.clear();
    while (this.lanes.size > 0) await Promise.all([...this.lanes.values()]);
    const source = this.source;
    this.source = null;
    if (source) await source.unsubscribe();
  }

  /** Runs `work` when fewer than `concurrency` handlers are running. */
  private async inSlot(work: () => Promise<void>): Promise<void> {
    while (this.running >= this.options.concurrency) await new Promise<void>((resolve) => this.slotWaiters.push(resolve));
    this.running += 1;
    try {
      await work();
    } finally {
      this.running -= 1;
      this.slotWaiters.shift()?.();
    }
  }

  private async handle(source: PersistentSubscriptionToAll, resolved: PersistentSubscriptionToAllResolvedEvent): Promise<void> {
    // After stop or a reconnect, this connection's events are redelivered anyway.
    if (this.stopped || source !== this.source) return;
    const raw = resolved.event;
    if (!raw || isSystemEvent(raw) || !filterMatches(this.options.filter, { type: raw.type, stream: raw.streamId })) {
      await this.settle(source, 'ack', '', resolved);
      return;
    }
    const attempt = resolved.retryCount + 1;
    let event: DomainRecordedEvent;
    try {
      // Decoded and upcast by the same function as every other read (a bad event throws EventDecodingError).
      event = await this.decode(toRecordedEvent(raw, resolved.commitPosition));
    } catch (error) {
      // An event we cannot even read would fail every attempt: dead-letter it at once.
      const unreadable = { id: raw.id, type: raw.type, position: 0 };
      await this.failed(source, resolved, unreadable, Math.max(attempt, this.options.maxAttempts), error);
      return;
    }
    try {
      await this.deliver(event, attempt);
    } catch (error) {
      await this.failed(source, resolved, event, attempt, error);
      return;
    }
    await this.settle(source, 'ack', '', resolved);
    try {
      await this.failures.delete(failureId(this.options.group, event.id));
    } catch (error) {
      this.report(error, `saga ${this.options.group}: clearing the failure of ${event.id}`);
    }
  }

  private async failed(
    source: PersistentSubscriptionToAll,
    resolved: PersistentSubscriptionToAllResolvedEvent,
    event: Pick<RecordedEvent, 'id' | 'type' | 'position'>,
    attempt: number,
    error: unknown,
  ): Promise<void> {
    const reason = errorMessage(error);
    const deadLetter = attempt >= this.options.maxAttempts;
    const delay = deadLetter ? 0 : Math.max(0, this.options.backoffMs(attempt));
    try {
      await this.failures.put({
        id: failureId(this.options.group, event.id),
        group: this.options.group,
        event_id: event.id,
        event_type: event.type,
        position: event.position,
        attempts: attempt,
        last_error: reason,
        next_attempt_at: deadLetter ? null : new Date(Date.now() + delay).toISOString(),
        status: deadLetter ? 'dead_lettered' : 'retrying',
      });
    } catch (recordError) {
      this.report(recordError, `saga ${this.options.group}: recording the failure of ${event.id}`);
    }
    if (deadLetter) {
      await this.settle(source, 'park', reason, resolved);
      return;
    }
    // The back-off is the time before the nack: the server redelivers right after it.
    const timer = setTimeout(() => {
      this.retryTimers.delete(timer);
      if (this.stopped || source !== this.source) return;
      void this.settle(source, 'retry', reason, resolved);
    }, delay);
    this.retryTimers.add(timer);
  }

  /** Acks or nacks; a failure here only means the server will redeliver. */
  private async settle(
    source: PersistentSubscriptionToAll,
    action: 'ack' | 'retry' | 'park',
    reason: string,
    resolved: PersistentSubscriptionToAllResolvedEvent,
  ): Promise<void> {
    try {
      if (action === 'ack') await source.ack(resolved);
      else await source.nack(action, reason.slice(0, MAX_REASON_LENGTH), resolved);
    } catch (error) {
      this.report(error, `saga ${this.options.group}: ${action}`);
    }
  }

  private dropped(source: PersistentSubscriptionToAll, error: Error | null): void {
    if (this.stopped || source !== this.source) return;
    this.source = null;
    for (const timer of this.retryTimers) clearTimeout(timer);
    this.retryTimers.clear();
    void source.unsubscribe().catch(() => undefined);
    this.report(error ?? new Error('persistent subscription closed by the server'), `saga ${this.options.group}: subscription dropped`);
    this.reconnectLater();
  }

  /** Resubscribes after a capped exponential delay, recreating the group if it went missing. */
  private reconnectLater(): void {
    const delay = this.reconnectDelay;
    this.reconnectDelay = Math.min(RECONNECT_MAX_MS, this.reconnectDelay * 2);
    this.reconnectTimer = setTimeout(() => {
      this.reconnectTimer = null;
      if (this.stopped) return;
      // Creating is idempotent ("already exists" is fine) and covers a deleted group.
      this.ensureGroup(this.options).then(
        () => this.connect(),
        (error: unknown) => {
          this.report(error, `saga ${this.options.group}: ensuring the group before resubscribing`);
          if (!this.stopped) this.reconnectLater();
        },
      );
    }, delay);
  }
}

function messageTimeoutFor(options: SagaSubscriptionOptions): number {
  let longestBackoff = 0;
  for (let attempt = 1; attempt < options.maxAttempts; attempt += 1) {
    longestBackoff = Math.max(longestBackoff, options.backoffMs(attempt));
  }
  return Math.min(MAX_MESSAGE_TIMEOUT_MS, Math.ceil(HANDLER_BUDGET_MS + longestBackoff));
}

function failureId(group: string, eventId: string): string {
  return `${group}:${eventId}`;
}

function toDeliveryFailure(doc: FailureDocument): DeliveryFailure {
  return {
    group: doc.group,
    event_id: doc.event_id,
    event_type: doc.event_type,
    position: doc.position,
    attempts: doc.attempts,
    last_error: doc.last_error,
    next_attempt_at: doc.next_attempt_at,
    status: doc.status,
  };
}

function errorMessage(error: unknown): string {
  if (error instanceof Error) return error.message || error.name;
  return String(error);
}
