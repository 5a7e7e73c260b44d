// The embedded SagaDelivery: a catch-up subscription per consumer group, its checkpoint in
// the read store, and a durable retry list. A failing event is written to `saga_failures`
// in the same commit that moves the checkpoint past it, so it is never lost; the retry loop
// delivers it again with back-off and dead-letters it after the last attempt.
// Retried events may arrive after later ones: sagas must not rely on order across events.
// One process at a time delivers a group: the holder of its lease, stored with the group's
// checkpoint (application/shared/lease.ts); the others stand by.

import type { Clock } from '../ports/clock';
import { type DomainEventStore, type DomainRecordedEvent, EventDecodingError } from '../ports/domain-event-store';
import type { RecordedEvent } from '../ports/event-store';
import { type Logger, silentLogger } from '../ports/logger';
import { LeaseLostError, type ReadStore } from '../ports/read-store';
import { Lease, type LeaseSettings, defaultLeaseSettings } from '../shared/lease';
import type { DeliverEvent, DeliveryFailure, SagaDelivery, SagaSubscription, SagaSubscriptionOptions } from '../ports/saga-delivery';

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
    group.start();
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

class GroupDelivery {
  private stopping = false;
  private checkpoint = 0;
  private storedAt = 0;
  private subscription: { stop(): Promise<void> } | null = null;
  private loops: Promise<void>[] = [];
  private wake: (() => void) | null = null;
  private readonly logger: Logger;
  private readonly lease: Lease;
  private readonly running = new AbortController();

  constructor(
    private readonly deps: { eventStore: DomainEventStore; readStore: ReadStore; clock: Clock; logger?: Logger },
    private readonly options: SagaSubscriptionOptions,
    private readonly deliver: DeliverEvent,
    private readonly timing: { retryPollMs: number; idleCheckpointMs: number; lease: LeaseSettings },
  ) {
    this.logger = (deps.logger ?? silentLogger).child({ saga_group: options.group });
    this.lease = new Lease({ readStore: deps.readStore, clock: deps.clock, logger: this.logger }, stateName(options.group), 1, timing.lease, () => void this.subscription?.stop());
  }

  start(): void {
    this.loops = [this.follow(), this.retry()];
  }

  async stop(): Promise<void> {
    this.stopping = true;
    this.running.abort();
    this.wake?.();
    await this.subscription?.stop();
    await Promise.all(this.loops);
    await this.lease.release();
  }

  private get failures() {
    return this.deps.readStore.collection<FailureDocument>(SAGA_FAILURES);
  }

  private async follow(): Promise<void> {
    while (!this.stopping) {
      if (!(await this.lease.whenHeld(this.running.signal))) return;
      try {
        const state = await this.deps.readStore.getProjectionState(stateName(this.options.group));
        this.checkpoint = state?.checkpoint ?? 0;
        const subscription = this.deps.eventStore.subscribeToAll({ fromPosition: this.checkpoint, filter: this.options.filter });
        this.subscription = subscription;
        if (this.stopping) await subscription.stop();
        for await (const message of subscription) {
          if (message.kind === 'event') await this.handleNew(message.event);
          else if (message.position > this.checkpoint && this.deps.clock.now().getTime() - this.storedAt >= this.timing.idleCheckpointMs) {
            await this.moveCheckpoint(message.position, []);
          }
          if (this.stopping || !this.lease.held) break;
        }
      } catch (error) {
        if (this.stopping) return;
        if (error instanceof EventDecodingError) {
          await this.deadLetterUnreadable(error);
          continue;
        }
        if (error instanceof LeaseLostError) {
          this.lease.lost(error.actual);
          continue;
        }
        this.logger.error({ err: error }, 'saga subscription failed; resubscribing');
        await this.sleep(this.timing.retryPollMs);
      }
    }
  }

  /** An event that cannot be decoded would fail every attempt: dead-letter it at once, naming it, and go on. */
  private async deadLetterUnreadable(error: EventDecodingError): Promise<void> {
    this.logger.error({ err: error }, 'saga cannot read an event; dead-lettered');
    const event = { id: error.eventId, type: error.type, stream: error.stream, revision: error.revision, position: error.position };
    await this.moveCheckpoint(error.position, [this.failureAfter(event, this.options.maxAttempts, error)]);
  }

  private async handleNew(event: DomainRecordedEvent): Promise<void> {
    try {
      await this.deliver(event, 1);
      await this.moveCheckpoint(event.position, []);
    } catch (error) {
      const failure = this.failureAfter(event, 1, error);
      this.logger.warn({ event_id: event.id, event_type: event.type, attempt: 1, next_attempt_at: failure.next_attempt_at, err: error }, 'saga delivery failed');
      await this.moveCheckpoint(event.position, [failure]);
    }
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
      last_error: error instanceof Error ? error.message : String(error),
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
      state: { name: stateName(this.options.group), version: 1, checkpoint: position, status: 'running', error: null, updated_at: now.toISOString() },
      holder: this.lease.holder,
    });
    this.checkpoint = position;
    this.storedAt = now.getTime();
  }

  private async retry(): Promise<void> {
    while (!this.stopping) {
      await this.sleep(this.timing.retryPollMs);
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

  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(done, ms);
      function done(): void {
        clearTimeout(timer);
        resolve();
      }
      this.wake = done;
    });
  }
}
