// The embedded SagaDelivery: a catch-up subscription per consumer group, its checkpoint in
// the read store, and a durable retry list. A new group starts at the head of `$all`
// unless the saga wants history. Events of different streams are handled concurrently (at
// most `concurrency` at once), each stream's in order; the checkpoint only passes an event
// once it and every event before it are done. A failing event (a crash of the handler, an
// unexpected error: expected failures are events the saga records) is written to
// `saga_failures` in the same commit that moves the checkpoint past it, so it is never
// lost; the retry loop delivers it again with back-off and dead-letters it after the last
// attempt. Retried events may arrive after later ones: sagas must not rely on order across
// a failure.
// One process at a time delivers a group: the holder of its lease, stored with the group's
// checkpoint (application/shared/lease.ts); the others stand by.

import type { Clock } from '../ports/clock';
import { type DomainEventStore, type DomainRecordedEvent, EventDecodingError } from '../ports/domain-event-store';
import type { RecordedEvent } from '../ports/event-store';
import { type Logger, silentLogger } from '../ports/logger';
import { CheckpointConflictError, LeaseLostError, type ProjectionState, type ReadStore } from '../ports/read-store';
import { Lease, type LeaseSettings, defaultLeaseSettings, pause } from '../shared/lease';
import type { DeliverEvent, DeliveryFailure, SagaDelivery, SagaSubscription, SagaSubscriptionOptions } from '../ports/saga-delivery';
import { messageOf } from '../../domain/shared/errors';

export const SAGA_FAILURES = 'saga_failures';

interface FailureDocument extends DeliveryFailure {
  id: string;
  stream: string;
  revision: number;
  [field: string]: unknown;
}

const stateName = (group: string): string => `saga:${group}`;

export interface CheckpointedDeliveryOptions {
  /** How often the retry list is looked at. */
  retryPollMs?: number;
  /** How often a checkpoint that moved only past skipped events is stored. */
  idleCheckpointMs?: number;
  /** This process's lease holder id and the lease's time to live. */
  lease?: LeaseSettings;
}

export class CheckpointedSagaDelivery implements SagaDelivery {
  private ready: Promise<void> | null = null;
  private readonly lease: LeaseSettings;

  constructor(
    private readonly deps: { eventStore: DomainEventStore; readStore: ReadStore; clock: Clock; logger?: Logger },
    private readonly options: CheckpointedDeliveryOptions = {},
  ) {
    this.lease = options.lease ?? defaultLeaseSettings();
  }

  private ensureCollection(): Promise<void> {
    this.ready ??= this.deps.readStore.ensureCollection({
      name: SAGA_FAILURES,
      indexes: [{ field: 'group' }, { field: 'status' }, { field: 'next_attempt_at' }],
    });
    return this.ready;
  }

  async subscribe(options: SagaSubscriptionOptions, deliver: DeliverEvent): Promise<SagaSubscription> {
    await this.ensureCollection();
    const group = new GroupDelivery(this.deps, options, deliver, {
      retryPollMs: this.options.retryPollMs ?? 1000,
      idleCheckpointMs: this.options.idleCheckpointMs ?? 5000,
      lease: this.lease,
    });
    await group.start();
    return { stop: () => group.stop() };
  }

  async listFailures(group?: string): Promise<DeliveryFailure[]> {
    await this.ensureCollection();
    const page = await this.deps.readStore
      .collection<FailureDocument>(SAGA_FAILURES)
      .find({ where: group ? { group } : {}, sort: { field: 'next_attempt_at', direction: 'asc' }, limit: 1000 });
    return page.items.map(({ id: _id, stream: _stream, revision: _revision, ...failure }) => failure);
  }

  /** Puts a dead-lettered event back on the retry list (operator action). */
  async retryDeadLetter(group: string, eventId: string): Promise<boolean> {
    await this.ensureCollection();
    const failures = this.deps.readStore.collection<FailureDocument>(SAGA_FAILURES);
    const patched = await failures.patch(`${group}:${eventId}`, { status: 'retrying', next_attempt_at: this.deps.clock.now().toISOString() });
    return patched !== null;
  }
}

/** An event taken from the subscription that the checkpoint has not passed yet. */
interface PendingEvent {
  position: number;
  done: boolean;
  failure: FailureDocument | null;
}

/** Events taken ahead of the checkpoint per handler slot: room for one slow stream's backlog. */
const WINDOW_PER_SLOT = 32;

class GroupDelivery {
  private stopping = false;
  /** The stored checkpoint. */
  private checkpoint = 0;
  /** Passed in memory, stored later (SagaSubscriptionOptions.checkpointEveryMs); at least `checkpoint`. */
  private passed = 0;
  private storedAt = 0;
  private storeTimer: NodeJS.Timeout | null = null;
  /** Highest position of `$all` the subscription has passed, skipped events included. */
  private scanned = 0;
  /** Events taken and not yet behind the checkpoint, in position order. */
  private pending: PendingEvent[] = [];
  /** The last handling queued per stream: the stream's next event starts after it. */
  private readonly lanes = new Map<string, Promise<void>>();
  private running = 0;
  private readonly slotWaiters: Array<() => void> = [];
  private readonly windowWaiters: Array<() => void> = [];
  private committing: Promise<void> = Promise.resolve();
  private subscription: { stop(): Promise<void> } | null = null;
  private loops: Promise<void>[] = [];
  private readonly logger: Logger;
  private readonly concurrency: number;
  private readonly lease: Lease;
  private readonly active = new AbortController();

  constructor(
    private readonly deps: { eventStore: DomainEventStore; readStore: ReadStore; clock: Clock; logger?: Logger },
    private readonly options: SagaSubscriptionOptions,
    private readonly deliver: DeliverEvent,
    private readonly timing: { retryPollMs: number; idleCheckpointMs: number; lease: LeaseSettings },
  ) {
    this.logger = (deps.logger ?? silentLogger).child({ saga_group: options.group });
    this.concurrency = Math.max(1, Math.floor(options.concurrency));
    this.lease = new Lease({ readStore: deps.readStore, clock: deps.clock, logger: this.logger }, stateName(options.group), 1, timing.lease, () => void this.subscription?.stop());
  }

  /** Resolves once the group's starting position is stored: events appended after it are delivered. */
  async start(): Promise<void> {
    await this.startingCheckpoint();
    this.loops = [this.follow(), this.retry()];
  }

  async stop(): Promise<void> {
    this.stopping = true;
    if (this.storeTimer) clearTimeout(this.storeTimer);
    this.active.abort();
    await this.subscription?.stop();
    await Promise.all(this.loops);
    await this.lease.release();
  }

  private get failures() {
    return this.deps.readStore.collection<FailureDocument>(SAGA_FAILURES);
  }

  private async follow(): Promise<void> {
    while (!this.stopping) {
      if (!(await this.lease.whenHeld(this.active.signal))) return;
      let failed = false;
      let unreadable: EventDecodingError | null = null;
      try {
        this.checkpoint = await this.startingCheckpoint();
        this.passed = this.checkpoint;
        this.scanned = this.checkpoint;
        const subscription = this.deps.eventStore.subscribeToAll({ fromPosition: this.checkpoint, filter: this.options.filter });
        this.subscription = subscription;
        if (this.stopping) await subscription.stop();
        for await (const message of subscription) {
          if (message.kind === 'event') {
            await this.admit(message.event);
          } else {
            this.scanned = Math.max(this.scanned, message.position);
            if (this.pending.length === 0 && message.position > this.checkpoint && this.deps.clock.now().getTime() - this.storedAt >= this.timing.idleCheckpointMs) {
              await this.advance();
            }
          }
          if (this.stopping || !this.lease.held) break;
        }
      } catch (error) {
        if (error instanceof EventDecodingError) unreadable = error;
        else if (error instanceof LeaseLostError) this.lease.lost(error.actual);
        else if (!this.stopping) {
          this.logger.error({ err: error }, 'saga subscription failed; resubscribing');
          failed = true;
        }
      }
      // The events in hand finish and are checkpointed before the subscription starts again
      // (or stops), so an event is never handled twice at the same time.
      await this.drain();
      if (unreadable && !this.stopping) await this.deadLetterUnreadable(unreadable).catch((error: unknown) => this.logger.error({ err: error }, 'could not dead-letter an unreadable event'));
      if (failed && !this.stopping) await pause(this.timing.retryPollMs, this.active.signal);
    }
  }

  /** An event that cannot be decoded would fail every attempt: dead-letter it at once, naming it, and go on. */
  private async deadLetterUnreadable(error: EventDecodingError): Promise<void> {
    this.logger.error({ err: error }, 'saga cannot read an event; dead-lettered');
    const event = { id: error.eventId, type: error.type, stream: error.stream, revision: error.revision, position: error.position };
    await this.moveCheckpoint(error.position, [this.failureAfter(event, this.options.maxAttempts, error)]);
  }

  /**
   * Where the group resumes. A group seen for the first time starts at the head of `$all`
   * (a new saga, or a new version of one, does not act on the past) unless the saga asked
   * for history; that start is stored at once, so a restart does not move it.
   */
  private async startingCheckpoint(): Promise<number> {
    const name = stateName(this.options.group);
    const stored = await this.deps.readStore.getProjectionState(name);
    if (stored) return stored.checkpoint;
    const start = this.options.startFrom === 'history' ? 0 : await this.deps.eventStore.headPosition();
    try {
      await this.deps.readStore.commitProjection({ projection: name, expectedCheckpoint: 0, operations: [], state: this.stateAt(start, this.deps.clock.now()) });
    } catch (error) {
      if (!(error instanceof CheckpointConflictError)) throw error;
      // Another process created the group first: resume where it starts.
      return (await this.deps.readStore.getProjectionState(name))?.checkpoint ?? start;
    }
    return start;
  }

  /** Queues the event behind its stream's earlier ones; waits while the window is full. */
  private async admit(event: DomainRecordedEvent): Promise<void> {
    while (this.pending.length >= this.concurrency * WINDOW_PER_SLOT) {
      await new Promise<void>((resolve) => this.windowWaiters.push(resolve));
    }
    const entry: PendingEvent = { position: event.position, done: false, failure: null };
    this.pending.push(entry);
    this.scanned = Math.max(this.scanned, event.position);
    const lane = (this.lanes.get(event.stream) ?? Promise.resolve()).then(() => this.handle(event, entry));
    this.lanes.set(event.stream, lane);
    void lane.then(() => {
      if (this.lanes.get(event.stream) === lane) this.lanes.delete(event.stream);
    });
  }

  /** Never rejects: a failure becomes a retry-list entry, stored when the checkpoint passes the event. */
  private async handle(event: DomainRecordedEvent, entry: PendingEvent): Promise<void> {
    while (this.running >= this.concurrency) await new Promise<void>((resolve) => this.slotWaiters.push(resolve));
    this.running += 1;
    try {
      await this.deliver(event, 1);
    } catch (error) {
      entry.failure = this.failureAfter(event, 1, error);
      this.logger.warn({ event_id: event.id, event_type: event.type, attempt: 1, next_attempt_at: entry.failure.next_attempt_at, err: error }, 'saga delivery failed');
    } finally {
      this.running -= 1;
      this.slotWaiters.shift()?.();
    }
    entry.done = true;
    void this.advance();
  }

  /** Waits for every event in hand, stores the checkpoint past them, and forgets what could not be stored. */
  private async drain(): Promise<void> {
    while (this.lanes.size > 0) await Promise.all([...this.lanes.values()]);
    await this.advance(true);
    // A checkpoint that could not be stored leaves these events to the next subscription.
    this.pending = [];
    for (const resume of this.windowWaiters.splice(0)) resume();
  }

  /** Moves the checkpoint as far as the events are done; commits run one at a time. `store`: now, whatever checkpointEveryMs says. */
  private advance(store = false): Promise<void> {
    this.committing = this.committing
      .then(() => this.commitPassed(store))
      .catch((error: unknown) => {
        this.logger.error({ err: error }, 'saga checkpoint could not be stored; resubscribing');
        void this.subscription?.stop();
      });
    return this.committing;
  }

  /**
   * The checkpoint passes an event only when it and every event before it are done: it
   * stops just before the lowest unfinished one, so a crash redelivers that event and the
   * ones after it, never skips it.
   */
  private async commitPassed(store: boolean): Promise<void> {
    let passed = 0;
    let position = Math.max(this.checkpoint, this.passed);
    const failures: FailureDocument[] = [];
    while (passed < this.pending.length && this.pending[passed].done) {
      const entry = this.pending[passed];
      position = entry.position;
      if (entry.failure) failures.push(entry.failure);
      passed += 1;
    }
    if (passed === this.pending.length) position = Math.max(position, this.scanned);
    if (position <= this.checkpoint && failures.length === 0) return;
    const wait = (this.options.checkpointEveryMs ?? 0) - (this.deps.clock.now().getTime() - this.storedAt);
    if (!store && !this.stopping && failures.length === 0 && wait > 0) {
      // Passed in memory only: stored with a later batch, by the timer, or by the stop.
      this.passed = position;
      this.storeTimer ??= setTimeout(() => {
        this.storeTimer = null;
        void this.advance(true);
      }, wait);
      this.storeTimer.unref();
    } else {
      await this.moveCheckpoint(Math.max(position, this.checkpoint), failures);
      this.passed = this.checkpoint;
    }
    this.pending.splice(0, passed);
    for (const resume of this.windowWaiters.splice(0)) resume();
  }

  private failureAfter(event: Pick<RecordedEvent, 'id' | 'type' | 'stream' | 'revision' | 'position'>, attempts: number, error: unknown): FailureDocument {
    const deadLettered = attempts >= this.options.maxAttempts;
    const next = new Date(this.deps.clock.now().getTime() + this.options.backoffMs(attempts)).toISOString();
    return {
      id: `${this.options.group}:${event.id}`,
      group: this.options.group,
      event_id: event.id,
      event_type: event.type,
      stream: event.stream,
      revision: event.revision,
      position: event.position,
      attempts,
      last_error: messageOf(error),
      next_attempt_at: deadLettered ? null : next,
      status: deadLettered ? 'dead_lettered' : 'retrying',
    };
  }

  /** Moves the checkpoint and records failures in one commit. */
  private async moveCheckpoint(position: number, failures: FailureDocument[]): Promise<void> {
    const now = this.deps.clock.now();
    await this.deps.readStore.commitProjection({
      projection: stateName(this.options.group),
      expectedCheckpoint: this.checkpoint,
      operations: failures.map((doc) => ({ kind: 'put' as const, collection: SAGA_FAILURES, doc })),
      state: this.stateAt(position, now),
      holder: this.lease.holder,
    });
    this.checkpoint = position;
    this.storedAt = now.getTime();
  }

  private stateAt(checkpoint: number, now: Date): ProjectionState {
    return { name: stateName(this.options.group), version: 1, checkpoint, status: 'running', error: null, updated_at: now.toISOString() };
  }

  private async retry(): Promise<void> {
    while (!this.stopping) {
      await pause(this.timing.retryPollMs, this.active.signal);
      if (this.stopping) return;
      if (!this.lease.held) continue;
      try {
        await this.retryDue();
      } catch (error) {
        this.logger.error({ err: error }, 'saga retry pass failed');
      }
    }
  }

  /** Delivers again every failure whose time has come. */
  async retryDue(): Promise<void> {
    const now = this.deps.clock.now().toISOString();
    const due = await this.failures.find({
      where: { group: this.options.group, status: 'retrying', next_attempt_at: { lte: now } },
      sort: { field: 'next_attempt_at', direction: 'asc' },
      limit: 100,
    });
    for (const failure of due.items) {
      if (this.stopping) return;
      let event: DomainRecordedEvent | undefined;
      try {
        [event] = await this.deps.eventStore.readStream(failure.stream, { fromRevision: failure.revision, maxCount: 1 });
      } catch (error) {
        if (!(error instanceof EventDecodingError)) throw error;
        await this.failures.patch(failure.id, { status: 'dead_lettered', next_attempt_at: null, last_error: error.message });
        continue;
      }
      if (!event || event.id !== failure.event_id) {
        await this.failures.patch(failure.id, { status: 'dead_lettered', next_attempt_at: null, last_error: 'the event is no longer readable' });
        continue;
      }
      const attempt = failure.attempts + 1;
      try {
        await this.deliver(event, attempt);
        await this.failures.delete(failure.id);
      } catch (error) {
        const next = this.failureAfter(event, attempt, error);
        this.logger.warn({ event_id: event.id, attempt, status: next.status, err: error }, 'saga retry failed');
        await this.failures.put(next);
      }
    }
  }
}
