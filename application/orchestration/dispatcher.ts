// The dispatcher and flow runner (issue #14 points 3 and 4): takes the queued orchestration
// events in order (the dispatch queue, dispatch-queue.ts, is its contract), finds the flows of
// the tenant's enabled SDK connections whose trigger matches the event's name (flows.ts reads
// them), runs each step, records every outcome on the event's stream, emits the follow-on
// events, and ends the attempt processed, failed (retried later) or dead-lettered.
//
// Saga `orchestration_dispatcher` (version 1). Its subscription (OrchestrationEventQueued, and
// the events that release a sequence's next event or re-queue one) only wakes the runner; the
// runner's pass reads the queue (the `orchestration_events` read model, after read-your-writes
// to the waking event's position) and each event's stream decides (StartDispatch refuses an
// event another run took). `runDue`, every due pass of the saga runner, wakes it too: delays,
// back-off and sequence gaps fall due with time, and attempts left running by a process that
// died are resumed. Nothing queued is lost: what is due stays due in the read model until an
// attempt is recorded on its stream, whichever process or delivery woke the runner. With
// EventStoreDB the saga runs on its persistent subscription like the others.
//
// Started on receipt (DispatchOnReceipt, orchestration-events.ts): when a slot is free and no
// due event waits for one, an emitted event due at once outside any sequence is appended
// already claimed (its attempt 1 started with the flows `reserveOnReceipt` read), and its
// attempt runs in the reserved slot, with no pass: at a moderate rate nearly every event goes
// this way, one commit and one pass fewer each. Its queuing and its end are then no news to the
// runner (`quietDeliveries`), and its end asks for no pass unless events wait for its slot.
//
// One attempt:
//   1. StartDispatch with the matching flows' keys (`<flow id>@<connection id>`); none: the event
//      is processed at once, in the same append, its attempt recording `flows: []` ("no flow").
//   2. Each flow in turn, each step in turn: parameters mapped from the payload and earlier
//      steps' outputs, called with request_id = stepRequestId(event, attempt, flow, step)
//      through the step executor (a connector tool: tool-call/connector-step.ts; a business
//      tool: callTool with origin flow and the request id as its idempotency key), recorded
//      (RecordSteps: outcome, error, output bounded to OUTPUT_MAX_BYTES) before the next call.
//      A step that fails ends the attempt. A flow that matches but cannot be read records one
//      skipped step with why.
//   3. The flow's `emits`: follow-on events (causedEventAppend: causation_id the event,
//      depth + 1) with an idempotency_key derived from the event, the flow and the emit, so a
//      resumed or retried attempt emits nothing twice; past the depth bound the emit is
//      skipped (`depth_exceeded`). The follow-on's own flows are looked up first: with none (a
//      chain's last event), and no delay or sequence, it is queued, claimed and processed in
//      its first event, as step 1 would do on the next pass. The follow-ons, then the flow's
//      last tool step and its emits recorded as steps after the flow's steps, are appended
//      together (EventStore.appendToStreams: one transaction on the embedded store, the
//      follow-ons first on EventStoreDB), so no step records a follow-on that is not there.
//   4. Processed: the last steps of the last flow, when none failed, are recorded with
//      `ends_attempt` and the attempt ends with them, in one event (OrchestrationEventProcessed
//      carries them; MarkProcessed only when they were recorded before, by an attempt now
//      resumed). Or FailAttempt with the next attempt at
//      base * 2^(n-1), jittered to between half and all of it, capped
//      (ORCHESTRATION_RETRY_BASE_MS, _MAX_MS), n the attempts since the event was last
//      re-queued by a person; once n reaches ORCHESTRATION_MAX_ATTEMPTS, FailAttempt without a
//      time: dead_letter.
//   A flow of one step and one emit so costs two appends and two events to its event (the
//   claim; the end with the step and the emit) and one event to the follow-on.
// Durability: a step is recorded after its call returns (the last tool step of a flow after
// its emits too). A process that dies between the two leaves the attempt `dispatched`; after
// ORCHESTRATION_RESUME_AFTER_MS it is resumed with the same attempt number: recorded steps are
// not called again (their recorded outputs are mapped from), the interrupted step is called
// once more with the same request_id, and emits already made are found by their idempotency
// keys (the follow-on made from the first answer stands). So a crash causes at most one
// repeated call per step, always with the same request_id.

import { type QueuedData, type StepError, type StepOutcome, orchestrationEventStream, stepRequestId, stepsOf } from '../../domain/orchestration-event/orchestration-event';
import { DomainError } from '../../domain/shared/errors';
import { isErasedPayload } from '../../domain/orchestration-event/payloads';
import { type SdkConnectionDocument, SDK_CONNECTIONS, sdkConnectionsProjection } from '../../projections/sdk-connections';
import { BUSINESS_TOOLS, type BusinessToolDocument, businessToolsProjection } from '../../projections/business-tools';
import { type OrchestrationEventDocument, orchestrationEventsProjection } from '../../projections/orchestration-events';
import type { Logger } from '../ports/logger';
import type { OrchestrationMetrics } from '../ports/metrics';
import type { Saga } from '../sagas/saga';
import { deepFreeze } from '../shared/immutable';
import type { RequestContext } from '../shared/request-context';
import { type ConnectorStepDependencies, invokeConnectorTool } from '../tool-call/connector-step';
import { type ToolCallDependencies, callTool } from '../tool-call/tool-calls';
import { type DispatchCandidate, type DispatchedEnvelope, dispatchedEnvelope, dispatcherContext, endAttemptFailed, failAttempt, inFlightDispatches, markProcessed, nextDispatchable, recordSteps, startDispatch } from './dispatch-queue';
import { type Flow, type MappingScope, type ReadFlow, mapParameters, mapValue, readFlow, triggerMatches } from './flows';
import type { StreamCommand } from '../command-handling/handle-command';
import { FLOW_KEY_PREFIX, type DispatchOnReceipt, type OrchestrationDependencies, type ReceiptReservation, causedEventAppend, existingEventOfKey } from './orchestration-events';

export const ORCHESTRATION_DISPATCHER = 'orchestration_dispatcher';
/** A step's output as recorded (in an event and the read model), at most: larger is recorded as `{truncated: true, bytes}`. */
export const OUTPUT_MAX_BYTES = 16 * 1024;
const ERROR_MESSAGE_MAX = 1000;

/**
 * The read models a pass reads: the queue, the connections' flows, the business tools. A pass
 * waits for these to show what woke it, not for every projection of the platform (the audit
 * log, analytics ...), which would hold every pass back to the slowest of them.
 */
const DISPATCHER_READ_MODELS = [orchestrationEventsProjection.name, sdkConnectionsProjection.name, businessToolsProjection.name];
/** Ended attempts remembered until the read models show them; past this the oldest are forgotten. */
const MAX_ENDED_UNSEEN = 10_000;
/** At most this many more due events read per pass in place of ended attempts the read models may still show due. */
const MAX_ENDED_UNSEEN_READ = 256;
/** How soon the dispatcher looks again whether the read models show its ended attempts, after a wait that timed out. */
const ENDED_WATCH_RETRY_MS = 1000;
/** Deliveries remembered as telling the runner nothing new; past this the oldest are forgotten (a forgotten one costs a pass). */
const MAX_QUIET_DELIVERIES = 10_000;

/** The deployment's dispatch policy (README: ORCHESTRATION_*). */
export interface DispatchSettings {
  maxAttempts: number;
  retryBaseMs: number;
  retryMaxMs: number;
  /** Events dispatched at once (never two of one sequence). */
  concurrency: number;
  /** Events of one tenant dispatched at once: one tenant's backlog, or its slow connector, never holds every slot. */
  tenantConcurrency: number;
  /** An attempt running longer than this is taken for one whose process died, and resumed. */
  resumeAfterMs: number;
}

export interface DispatcherDependencies extends OrchestrationDependencies, ConnectorStepDependencies {
  toolCalls: ToolCallDependencies;
  logger: Logger;
  dispatch: DispatchSettings;
  orchestrationMetrics?: OrchestrationMetrics;
  /** Jitter's randomness (tests fix it). */
  random?: () => number;
}

/** The next attempt's time, or null when the attempts are used up (`used`: attempts since the last re-queue by a person, this one included). */
export function nextAttemptAt(settings: Pick<DispatchSettings, 'maxAttempts' | 'retryBaseMs' | 'retryMaxMs'>, used: number, now: Date, random: () => number = Math.random): Date | null {
  if (used >= settings.maxAttempts) return null;
  const full = Math.min(settings.retryMaxMs, settings.retryBaseMs * 2 ** Math.max(0, used - 1));
  return new Date(now.getTime() + Math.round(full / 2 + (random() * full) / 2));
}

/** An output as recorded: as it is when small enough, otherwise that it was cut. */
export function boundedOutput(output: unknown): unknown {
  if (output === undefined) return null;
  const text = JSON.stringify(output);
  const bytes = Buffer.byteLength(text ?? 'null', 'utf8');
  return bytes <= OUTPUT_MAX_BYTES ? output : { truncated: true, bytes };
}

/**
 * The idempotency_key of a flow's emit: the same for every attempt of the event, so a follow-on
 * is emitted once. It carries the event's millisecond (IdGenerator.fromKeyAt), and so does the
 * follow-on's id made from it (eventIdOfKey): the follow-on lands beside its cause in every index.
 */
export const followOnIdempotencyKey = (deps: Pick<DispatcherDependencies, 'ids'>, eventId: string, flowKey: string, emitIndex: number): string =>
  `${FLOW_KEY_PREFIX}${deps.ids.fromKeyAt(emitKey(eventId, flowKey, emitIndex), eventId)}`;

/** The idempotency_key releases before 2026-11-29 gave a flow's emit: a follow-on of an attempt they began is found by it. */
export const earlierFollowOnIdempotencyKey = (deps: Pick<DispatcherDependencies, 'ids'>, eventId: string, flowKey: string, emitIndex: number): string =>
  `${FLOW_KEY_PREFIX}${deps.ids.fromKey(emitKey(eventId, flowKey, emitIndex))}`;

const emitKey = (eventId: string, flowKey: string, emitIndex: number): string => `orchestration-emit\u0000${eventId}\u0000${flowKey}\u0000${emitIndex}`;

interface RunnableFlow {
  key: string;
  connection_id: string;
  read: ReadFlow;
}

/**
 * Flows as read from the documents that advertised them. A shared read hands out the same
 * frozen document until its connection changes, so each advertised flow is read once, not
 * twice per event.
 */
const readFlows = new WeakMap<object, ReadFlow>();

function readFlowOnce(raw: unknown): ReadFlow {
  if (typeof raw !== 'object' || raw === null || !Object.isFrozen(raw)) return readFlow(raw);
  let read = readFlows.get(raw);
  if (read === undefined) {
    read = deepFreeze(readFlow(raw));
    readFlows.set(raw, read);
  }
  return read;
}

/** The flows of the tenant's enabled connections whose trigger matches `name`, in a stable order. */
export async function matchingFlows(deps: Pick<DispatcherDependencies, 'readStore'>, tenantId: string, name: string): Promise<RunnableFlow[]> {
  const connections = await deps.readStore
    .collection<SdkConnectionDocument>(SDK_CONNECTIONS)
    .find({ where: { tenant_id: tenantId }, sort: { field: 'created_at', direction: 'asc' }, limit: 100, shared: true });
  const flows: RunnableFlow[] = [];
  for (const connection of connections.items) {
    if (!connection.enabled) continue;
    for (const raw of connection.flows) {
      const read = readFlowOnce(raw);
      const id = read.ok ? read.flow.id : read.id;
      if (id === null || !triggerMatches(read.ok ? read.flow.triggers : read.triggers, name)) continue;
      flows.push({ key: `${id}@${connection.id}`, connection_id: connection.id, read });
    }
  }
  return flows;
}

type StepResult = { outcome: StepOutcome; error: StepError | null; output: unknown; tool_call_id: string | null };

/** A follow-on event a flow emits, prepared: appended with the step that records it. */
interface FollowOn {
  name: string;
  event_id: string;
  command: StreamCommand;
}

const failed = (code: string, message: string): StepResult => ({ outcome: 'failed', error: { code, message: message.slice(0, ERROR_MESSAGE_MAX) }, output: null, tool_call_id: null });

/** Steps of an attempt recorded on its stream, by `<flow key>#<step>`. */
type RecordedSteps = Map<string, { outcome: StepOutcome; error: StepError | null; output: unknown }>;

/** Where an attempt is: the event as received, the steps of the attempt recorded so far, and whether a process that died began it (a resumed attempt). */
interface AttemptSoFar {
  queued: DispatchedEnvelope;
  steps: RecordedSteps;
  resumed: boolean;
}

/** What the stream says of an attempt: the event, the flows it started with, the steps recorded. */
async function attemptOnStream(deps: Pick<DispatcherDependencies, 'eventStore'>, eventId: string, attempt: number) {
  const events = await deps.eventStore.readStream(orchestrationEventStream(eventId));
  let queued: QueuedData | null = null;
  let flows: string[] | null = null;
  let running = false;
  const steps: RecordedSteps = new Map();
  for (const event of events) {
    if (event.type === 'OrchestrationEventQueued' || event.type === 'OrchestrationEventProcessedOnReceipt') queued = event.data;
    if (event.type === 'OrchestrationDispatchStarted' && event.data.attempt === attempt) {
      flows = event.data.flows;
      running = true;
    }
    if (event.type === 'OrchestrationStepRecorded' && event.data.attempt === attempt) steps.set(`${event.data.flow}#${event.data.step}`, event.data);
    if (event.type === 'OrchestrationEventProcessed' && event.data.attempt === attempt) for (const step of stepsOf(event.data)) steps.set(`${step.flow}#${step.step}`, step);
    if ((event.type === 'OrchestrationEventProcessed' || event.type === 'OrchestrationAttemptFailed') && event.data.attempt === attempt) running = false;
  }
  return { queued, flows, running, steps };
}

/** A step's record found the event's payload erased: the stream ended the attempt (dead letter), nothing more of it runs. */
class AttemptEndedByErasure extends Error {
  constructor() {
    super('the attempt ended: the event\'s payload was erased while it ran');
    this.name = 'AttemptEndedByErasure';
  }
}

export class OrchestrationDispatcher implements DispatchOnReceipt {
  private running: Promise<void> | null = null;
  private again = false;
  private waitFor = 0;
  private readonly active = new Set<string>();
  /** Attempts under way, by tenant: a pass fills only the slots and tenant shares they leave. */
  private readonly underWay = new Map<string, number>();
  /** Resolves the loop's wait between passes. */
  private onProgress: (() => void) | null = null;
  /** Set by a wake that may start something at once: the loop's wait ends. */
  private wokenToStart = false;
  /** The last pass found nothing due: any wake may bring something to start. */
  private lastPassIdle = false;
  private readonly random: () => number;
  /** The tenants whose events woke the runner since the other tenants' queue was last read; `anyone`: a wake of no tenant. */
  private wokenBy: Set<string> | 'anyone' = 'anyone';
  /** The tenant whose backlog filled its share when a read of every other tenant's due events found none. */
  private nothingElseDue: string | null = null;
  /**
   * Attempts this process ended that the read models may not show ended yet: event id -> the
   * position of the end. A pass that reads the queue without waiting for the read models (see
   * `loop`) may find them still due there, and passes over them; each is forgotten once the
   * read models have passed its end (watchEnded).
   */
  private readonly endedUnseen = new Map<string, number>();
  private watchingEnded = false;
  /** The last pass's read of the queue was full: more may be due than it took, and the queue has them at once. */
  private backlog = false;
  /** The last pass left due events waiting for a slot or their tenant's share. */
  private leftWaiting = false;
  /**
   * Deliveries that woke the runner so far, and those the last pass that waited for the read
   * models read the queue after: the difference bounds the events queued or released that no
   * pass has read (before the first pass, anything queued before the process started). Wakes
   * of no delivery (the due pass, a retry's timer) bring events that fall due with time, which
   * are not ordered against those that arrive.
   */
  private deliveries = 0;
  private deliveriesRead = Number.NEGATIVE_INFINITY;
  /** Attempts under way that passes started (the others were started on receipt). */
  private passesUnderWay = 0;
  /** `drain` callers waiting for every attempt to end. */
  private idleWaiters: Array<() => void> = [];
  /** Takes events on receipt (reserveOnReceipt): set once the platform runs its sagas. */
  private acceptsOnReceipt = false;
  /**
   * Deliveries of the saga that tell the runner nothing (`<type> <event id>`): the queuing of an
   * event claimed on receipt, the end of an attempt started on receipt (it releases no sequence).
   */
  private readonly quietDeliveries = new Set<string>();
  /** True: passes do nothing (a test sets the stage by hand, as a process would have left it). */
  pause = false;
  /** The platform is closing: no more passes, and nothing is watched. */
  private stopped = false;

  constructor(private readonly deps: DispatcherDependencies) {
    this.random = deps.random ?? Math.random;
  }

  /** Asks for a pass (after the read models show `position`); resolves when the runner is idle again. */
  wake(position?: number | null, tenantId?: string): Promise<void> {
    if (this.stopped) return this.running ?? Promise.resolve();
    if (position !== undefined && position !== null) this.waitFor = Math.max(this.waitFor, position);
    if (tenantId === undefined) this.wokenBy = 'anyone';
    else if (this.wokenBy !== 'anyone') this.wokenBy.add(tenantId);
    if (this.running) {
      this.again = true;
      if (this.wakeStartsPass(tenantId)) {
        this.wokenToStart = true;
        this.progressed();
      }
      return this.running;
    }
    this.running = this.loop().finally(() => {
      this.running = null;
    });
    return this.running;
  }

  /** A delivery of the saga's subscription: wakes the runner, unless the runner knows it tells nothing new. */
  delivered(event: { type: string; position: number; data: { event_id: string; tenant_id: string } }): Promise<void> {
    if (this.quietDeliveries.delete(`${event.type} ${event.data.event_id}`)) return this.running ?? Promise.resolve();
    this.deliveries += 1;
    return this.wake(event.position, event.data.tenant_id);
  }

  /** From now on emitted events may be started on receipt (the platform has started its sagas, this one among them). */
  acceptOnReceipt(): void {
    this.acceptsOnReceipt = true;
  }

  /**
   * DispatchOnReceipt: a slot for an event being emitted, when one is free and no due event may
   * be waiting for one: the last pass took all it found (and read less than a full page), and
   * the slots and the tenant's share have room for this event beside every event the deliveries
   * no pass has read yet may have queued or released. So an event on receipt never takes a slot from one that
   * was waiting for it, nor, after a restart, from what was queued then (nothing starts on
   * receipt before the first pass). Events that fall due with time (a delay, a retry's back-off)
   * are taken by the next due pass, as before. The flows are read as a pass reads them: the
   * connections' read model is current for whatever the emitter was answered before (a sync is
   * answered once the read models show it).
   */
  async reserveOnReceipt(tenantId: string, eventId: string, name: string): Promise<ReceiptReservation | null> {
    const { dispatch } = this.deps;
    if (!this.acceptsOnReceipt || this.stopped || this.pause || this.backlog || this.leftWaiting) return null;
    const unread = this.deliveries - this.deliveriesRead;
    if (this.underWayCount + unread >= dispatch.concurrency || (this.underWay.get(tenantId) ?? 0) + unread >= dispatch.tenantConcurrency) return null;
    this.occupy(tenantId);
    // Its queuing, were it delivered before the append is answered, must not cost a pass either.
    const queued = `OrchestrationEventQueued ${eventId}`;
    this.quiet(queued);
    let settled = false;
    const release = (): void => {
      if (settled) return;
      settled = true;
      this.quietDeliveries.delete(queued);
      this.vacate(tenantId);
    };
    let flows: RunnableFlow[];
    try {
      flows = await matchingFlows(this.deps, tenantId, name);
    } catch (error) {
      release();
      throw error;
    }
    return {
      flows: flows.map((flow) => flow.key),
      received: (event: OrchestrationEventDocument) => {
        if (settled) return;
        if (event.status !== 'dispatched') {
          release();
          // No flow: an attempt, started and ended on receipt, as a pass would count it.
          if (event.status === 'processed') {
            this.deps.orchestrationMetrics?.attemptStarted(name);
            this.processedMetric(name, event.received_at, event.received_at);
          }
          return;
        }
        settled = true;
        this.deps.orchestrationMetrics?.attemptStarted(name);
        // Its end, known before it is appended (the delivery may come first), releases no
        // sequence: an event on receipt is in none. Nor would a later attempt's.
        this.quiet(`OrchestrationEventProcessed ${eventId}`);
        this.runInSlot(tenantId, false, this.exclusively(eventId, () => this.runAttempt(eventId, tenantId, 1, flows, event.received_at, { queued: dispatchedEnvelope(event), steps: new Map(), resumed: false })));
      },
      release,
    };
  }

  private quiet(delivery: string): void {
    this.quietDeliveries.add(delivery);
    if (this.quietDeliveries.size > MAX_QUIET_DELIVERIES) this.quietDeliveries.delete(this.quietDeliveries.values().next().value as string);
  }

  /** Stops for good (the platform closing): the pass under way is the last; attempts under way end on their own. */
  stop(): void {
    this.stopped = true;
    this.endedUnseen.clear();
    this.quietDeliveries.clear();
    for (const resolve of this.idleWaiters.splice(0)) resolve();
  }

  /** Runs passes until nothing is due and no attempt is under way (those started on receipt too): for tests and the bench. */
  async drain(): Promise<void> {
    for (;;) {
      await this.wake();
      if (this.underWayCount === 0 || this.stopped) return;
      // Attempts started on receipt: once they end, a pass takes what they may have queued.
      await new Promise<void>((resolve) => this.idleWaiters.push(resolve));
    }
  }

  /**
   * Passes, overlapping: a pass starts the due events its free slots allow and returns; the
   * next pass reads the queue once half of the attempts under way have ended (a slow connector
   * holds its own slot, not the others'), or one has when the last pass started nothing, or
   * sooner on a wake that may start something (`wakeStartsPass`). Ends when nothing is due or
   * under way.
   */
  private async loop(): Promise<void> {
    // A runner woken from idle waits for what woke it, whatever the queue held last time.
    this.backlog = false;
    for (;;) {
      this.again = false;
      this.wokenToStart = false;
      // The pass must see what woke the runner: events just queued, a sequence's next event made
      // due. With a backlog it need not: the queue already holds more than the slots take, and
      // waiting for the read models to show the latest appends (a projection commit behind, tens
      // of milliseconds under load) left the freed slots idle for most of the time.
      const deliveries = this.deliveries;
      const waited = !this.backlog;
      if (waited) await this.deps.readYourWrites(this.waitFor, DISPATCHER_READ_MODELS);
      if (this.pause || this.stopped) break;
      let started = 0;
      let found = 0;
      try {
        ({ started, found } = await this.pass());
        // Through a backlog the pass need not have seen the latest deliveries' events (see above).
        if (waited) this.deliveriesRead = deliveries;
      } catch (error) {
        this.deps.logger.error({ err: error }, 'orchestration dispatch pass failed');
      }
      // The attempts the runner waits for: those its passes started, or every one while due
      // events wait for a slot (any end frees one). Attempts started on receipt end without a
      // pass when nothing waits: their end brings nothing due (a follow-on wakes it itself).
      const watched = (): number => (this.leftWaiting ? this.underWayCount : this.passesUnderWay);
      if (watched() === 0) {
        if (this.again) continue;
        return;
      }
      this.lastPassIdle = found === 0;
      const until = started > 0 ? Math.floor(watched() / 2) : watched() - 1;
      while (watched() > until && !this.wokenToStart) await this.nextProgress();
    }
    while (this.underWayCount > 0) await this.nextProgress();
  }

  private get underWayCount(): number {
    let count = 0;
    for (const tenantCount of this.underWay.values()) count += tenantCount;
    return count;
  }

  /** Resolves when an attempt ends or a wake may start something. */
  private nextProgress(): Promise<void> {
    return new Promise<void>((resolve) => {
      this.onProgress = resolve;
    });
  }

  private progressed(): void {
    const resolve = this.onProgress;
    this.onProgress = null;
    resolve?.();
  }

  /**
   * Whether a wake ends the wait between passes: with a free slot, when the last pass found
   * nothing to start, or the wake is of no tenant (the due pass, a retry's timer) or of a
   * tenant with nothing under way. A backlog's own events, each waking the runner as it is
   * queued, wait for the half: a pass for each would read the queue for one event at a time.
   */
  private wakeStartsPass(tenantId: string | undefined): boolean {
    if (this.underWayCount >= this.deps.dispatch.concurrency) return false;
    return this.lastPassIdle || tenantId === undefined || !this.underWay.has(tenantId);
  }

  /**
   * One pass: due events (at most one per sequence) and attempts to resume, as many as the free
   * slots take; how many it started, and how many it found (some may wait for their tenant's share).
   */
  private async pass(): Promise<{ started: number; found: number }> {
    const { deps } = this;
    const now = deps.clock.now();
    const free = deps.dispatch.concurrency - this.underWayCount;
    if (free <= 0) {
      // Nothing read: whatever is due waits for the next pass.
      this.leftWaiting = true;
      return { started: 0, found: 0 };
    }
    const resumable = await inFlightDispatches(deps, { startedBefore: new Date(Math.max(now.getTime() - deps.dispatch.resumeAfterMs, 0)), limit: 100 });
    // At most tenantConcurrency of one tenant's events under way (those of earlier passes
    // included): the rest of that tenant's due events wait for a later pass.
    const taken = new Map(this.underWay);
    let waitingForShare = false;
    const withinTenantShare = (item: { event_id: string; tenant_id: string }): boolean => {
      if (this.active.has(item.event_id) || this.endedUnseen.has(item.event_id)) return false;
      const count = taken.get(item.tenant_id) ?? 0;
      if (count >= deps.dispatch.tenantConcurrency) {
        waitingForShare = true;
        return false;
      }
      taken.set(item.tenant_id, count + 1);
      return true;
    };
    const work: Array<{ tenantId: string; run: () => Promise<number | null> }> = resumable
      .filter(withinTenantShare)
      .map((item) => ({ tenantId: item.tenant_id, run: () => this.resume(item) }));
    const take = (candidates: DispatchCandidate[]): void => {
      for (const item of candidates) if (withinTenantShare(item)) work.push({ tenantId: item.tenant_id, run: () => this.dispatch(item) });
    };
    // The free slots' worth of the oldest due events (each a whole document read and parsed),
    // and as many more as there are ended attempts the read models may still show due: those
    // are the oldest, and would otherwise take the places of the events after them.
    const limit = free + Math.min(this.endedUnseen.size, MAX_ENDED_UNSEEN_READ);
    const oldest = await nextDispatchable(deps, { limit });
    take(oldest);
    this.backlog = oldest.length >= limit;
    // One tenant's backlog filled its share and slots are left: the other tenants' oldest due
    // events, which that backlog would otherwise hide from every pass until it is worked off.
    // That read passes over the whole backlog, so it is skipped while it found nothing last time
    // and only that tenant's events woke the runner since (a wake of no tenant, the due pass
    // every second, a retry's timer, lets it run again).
    let othersFound = 0;
    const full = [...taken].filter(([, count]) => count >= deps.dispatch.tenantConcurrency).map(([tenant]) => tenant);
    if (full.length === 1 && work.length < free && oldest.length === limit) {
      const [busy] = full;
      const nothingNew = this.nothingElseDue === busy && this.wokenBy !== 'anyone' && [...this.wokenBy].every((tenant) => tenant === busy);
      if (!nothingNew) {
        this.wokenBy = new Set();
        const others = await nextDispatchable(deps, { limit: free - work.length, exceptTenantId: busy });
        this.nothingElseDue = others.length === 0 ? busy : null;
        othersFound = others.length;
        take(others);
      }
    }
    // The slots and shares as they are now: events started on receipt while this pass read may have taken some.
    let started = 0;
    for (const item of work) {
      if (this.underWayCount >= deps.dispatch.concurrency || (this.underWay.get(item.tenantId) ?? 0) >= deps.dispatch.tenantConcurrency) continue;
      this.occupy(item.tenantId);
      this.passesUnderWay += 1;
      this.runInSlot(item.tenantId, true, item.run());
      started += 1;
    }
    this.leftWaiting = waitingForShare || started < work.length;
    return { started, found: resumable.length + oldest.length + othersFound };
  }

  private occupy(tenantId: string): void {
    this.underWay.set(tenantId, (this.underWay.get(tenantId) ?? 0) + 1);
  }

  private vacate(tenantId: string): void {
    const left = (this.underWay.get(tenantId) ?? 1) - 1;
    if (left === 0) this.underWay.delete(tenantId);
    else this.underWay.set(tenantId, left);
    if (this.underWayCount === 0) for (const resolve of this.idleWaiters.splice(0)) resolve();
    this.progressed();
  }

  /**
   * Runs one attempt in a slot already occupied. The next pass reads the queue past what it
   * appended; the end of one a pass started asks for that pass (one started on receipt ends with
   * nothing to take: a follow-on it queued wakes the runner itself).
   */
  private runInSlot(tenantId: string, fromPass: boolean, attempt: Promise<number | null>): void {
    void attempt
      .then(
        (position) => {
          if (position) {
            this.waitFor = Math.max(this.waitFor, position);
            if (fromPass) this.again = true;
          }
        },
        (error: unknown) => {
          // The stream is unchanged where the error struck: the attempt is resumed or the event taken again later.
          this.deps.logger.error({ err: error }, 'orchestration event not dispatched');
        },
      )
      .finally(() => {
        if (fromPass) this.passesUnderWay -= 1;
        this.vacate(tenantId);
      });
  }

  private async exclusively(eventId: string, work: () => Promise<number | null>): Promise<number | null> {
    if (this.active.has(eventId)) return null;
    this.active.add(eventId);
    try {
      const position = await work();
      if (position !== null) this.ended(eventId, position);
      return position;
    } finally {
      this.active.delete(eventId);
    }
  }

  private ended(eventId: string, position: number): void {
    if (this.stopped) return;
    this.endedUnseen.delete(eventId);
    this.endedUnseen.set(eventId, position);
    // Read models that stopped following (a long rebuild) must not grow this without end: the
    // oldest go, and a pass that takes one of them again is refused by its stream (startDispatch).
    if (this.endedUnseen.size > MAX_ENDED_UNSEEN) this.endedUnseen.delete(this.endedUnseen.keys().next().value as string);
    this.watchEnded();
  }

  /** Forgets the ended attempts the read models show: one wait at a time, for the latest end. */
  private watchEnded(): void {
    if (this.watchingEnded || this.stopped || this.endedUnseen.size === 0) return;
    this.watchingEnded = true;
    let target = 0;
    for (const position of this.endedUnseen.values()) target = Math.max(target, position);
    void this.deps
      .readYourWrites(target, DISPATCHER_READ_MODELS)
      .catch(() => false)
      .then((reached) => {
        if (reached) {
          for (const [eventId, position] of this.endedUnseen) if (position <= target) this.endedUnseen.delete(eventId);
          this.watchingEnded = false;
          this.watchEnded();
          return;
        }
        // Not in time: look again a little later rather than at once.
        setTimeout(() => {
          this.watchingEnded = false;
          this.watchEnded();
        }, ENDED_WATCH_RETRY_MS).unref();
      });
  }

  /** Starts and runs a new attempt of a due event; the position of its last append. */
  private dispatch(candidate: DispatchCandidate): Promise<number | null> {
    return this.exclusively(candidate.event_id, async () => {
      const flows = await matchingFlows(this.deps, candidate.tenant_id, candidate.name);
      const started = await startDispatch(this.deps, candidate, flows.map((flow) => flow.key));
      if (started === null) return null;
      this.deps.orchestrationMetrics?.attemptStarted(candidate.name);
      if (started.processed) {
        this.processedMetric(candidate.name, candidate.due_at, candidate.received_at);
        return started.position;
      }
      // A new attempt has no step recorded yet, and the envelope came with the candidate.
      return this.runAttempt(candidate.event_id, candidate.tenant_id, started.attempt, flows, candidate.due_at, { queued: candidate.envelope, steps: new Map(), resumed: false });
    });
  }

  /** Resumes an attempt whose process died: the same attempt, the same request ids. */
  private resume(item: { event_id: string; tenant_id: string; attempt: number; started_at: string }): Promise<number | null> {
    return this.exclusively(item.event_id, async () => {
      const onStream = await attemptOnStream(this.deps, item.event_id, item.attempt);
      if (!onStream.running || onStream.queued === null || onStream.flows === null) return null;
      this.deps.logger.warn({ event_id: item.event_id, attempt: item.attempt, started_at: item.started_at }, 'orchestration attempt resumed');
      const current = await matchingFlows(this.deps, item.tenant_id, onStream.queued.name);
      const flows = onStream.flows.map((key) => current.find((flow) => flow.key === key) ?? { key, connection_id: '', read: { ok: false as const, id: null, triggers: [], reason: 'the flow is no longer advertised by an enabled connection' } });
      return this.runAttempt(item.event_id, item.tenant_id, item.attempt, flows, item.started_at, { queued: onStream.queued, steps: onStream.steps, resumed: true });
    });
  }

  /** Runs an attempt's flows from where `onStream` says it is. */
  private async runAttempt(eventId: string, tenantId: string, attempt: number, flows: RunnableFlow[], dueAt: string, onStream: AttemptSoFar): Promise<number | null> {
    const { deps } = this;
    const queued = onStream.queued;
    const ref = { event_id: eventId, tenant_id: tenantId };
    const context = dispatcherContext(tenantId, queued.correlation_id);
    if (isErasedPayload(queued.payload)) {
      // An attempt its process left running while the day's payloads were erased: nothing to run the flows on.
      const position = await failAttempt(deps, ref, attempt, { code: 'payload_erased', message: 'the payload was erased (its retention passed): the flows cannot run on it' }, null, context);
      deps.orchestrationMetrics?.attemptFailed(queued.name, true);
      return position;
    }
    let last: number | null = null;
    let processed = false;
    // Steps of one flow in one append, after the follow-ons they record; the attempt's last,
    // when none failed, end it in the same append.
    const record = async (flow: string, steps: Array<{ step: number; result: StepResult }>, endsAttempt: boolean, followOns: FollowOn[] = []): Promise<void> => {
      const recorded = steps.map(({ step, result }) => ({ flow, step, request_id: stepRequestId(eventId, attempt, flow, step), ...result, output: boundedOutput(result.output) }));
      const ended = await recordSteps(deps, ref, attempt, recorded, endsAttempt, context, followOns.map((followOn) => followOn.command));
      last = ended.position ?? last;
      if (ended.deadLettered) throw new AttemptEndedByErasure();
      processed = processed || ended.processed;
      for (const [index, result] of ended.before.entries()) {
        // Processed on receipt: no flow matched it, so no pass of the queue takes it.
        if (!result.events.some((event) => event.type === 'OrchestrationEventProcessedOnReceipt')) continue;
        deps.orchestrationMetrics?.attemptStarted(followOns[index].name);
        const at = deps.clock.now().toISOString();
        this.processedMetric(followOns[index].name, at, at);
      }
    };

    let failure: StepError | null = null;
    try {
      for (const [index, flow] of flows.entries()) {
        const lastFlow = index === flows.length - 1;
        if (!flow.read.ok) {
          if (!onStream.steps.has(`${flow.key}#0`)) await record(flow.key, [{ step: 0, result: { outcome: 'skipped', error: { code: 'unsupported_flow', message: flow.read.reason }, output: null, tool_call_id: null } }], lastFlow);
          continue;
        }
        failure = await this.runFlow(eventId, tenantId, attempt, flow.key, flow.connection_id, flow.read.flow, onStream, (steps, endsFlow, followOns) => record(flow.key, steps, lastFlow && endsFlow, followOns), context);
        if (failure) break;
      }
    } catch (error) {
      if (!(error instanceof AttemptEndedByErasure)) throw error;
      // Its stream dead-lettered it (payload_erased): no further step is called.
      deps.orchestrationMetrics?.attemptFailed(queued.name, true);
      return last;
    }

    const now = deps.clock.now();
    if (failure === null) {
      const position = processed ? null : await markProcessed(deps, ref, attempt, context);
      this.processedMetric(queued.name, dueAt, queued.received_at, now);
      return position ?? last;
    }
    const state = await loadAttempts(deps, eventId);
    const retryAt = nextAttemptAt(deps.dispatch, state, now, this.random);
    // Dead-lettered with attempts left too when its payload was erased as the attempt ran.
    const { position, deadLettered } = await endAttemptFailed(deps, ref, attempt, failure, retryAt, context);
    deps.orchestrationMetrics?.attemptFailed(queued.name, deadLettered);
    deps.logger.info({ event_id: eventId, attempt, code: failure.code, next_attempt_at: deadLettered ? null : (retryAt?.toISOString() ?? null) }, deadLettered ? 'orchestration event dead-lettered' : 'orchestration attempt failed');
    if (retryAt !== null && !deadLettered) {
      // A timer besides the due passes, so a short back-off is not rounded up to the poll.
      const wait = retryAt.getTime() - now.getTime();
      if (wait < 60_000) setTimeout(() => void this.wake(), wait + 5).unref();
    }
    return position ?? last;
  }

  private processedMetric(name: string, dueAt: string, receivedAt: string, now: Date = this.deps.clock.now()): void {
    this.deps.orchestrationMetrics?.processed(name, Math.max(0, now.getTime() - Date.parse(dueAt)) / 1000, Math.max(0, now.getTime() - Date.parse(receivedAt)) / 1000);
  }

  /**
   * Runs one flow's steps and emits; the error that ended it, or null. `record`'s `endsFlow`
   * marks the flow's last step among those recorded. Each tool step is recorded before the next
   * call; the flow's last tool step waits for the emits after it and is recorded with them, in
   * one append: a crash before it calls that step once more with the same request_id, and the
   * emits again find their events by their idempotency keys (the follow-ons made from the
   * first answer stand).
   */
  private async runFlow(
    eventId: string,
    tenantId: string,
    attempt: number,
    key: string,
    connectionId: string,
    flow: Flow,
    { queued, steps: recorded, resumed }: AttemptSoFar,
    record: (steps: Array<{ step: number; result: StepResult }>, endsFlow: boolean, followOns?: FollowOn[]) => Promise<void>,
    context: RequestContext,
  ): Promise<StepError | null> {
    const { deps } = this;
    const lastIndex = flow.steps.length + flow.emits.length - 1;
    const scope: MappingScope = { event: { id: eventId, name: queued.name, correlation_id: queued.correlation_id, source: queued.source }, payload: queued.payload, steps: [] };
    const held: Array<{ step: number; result: StepResult }> = [];
    for (const [index, step] of flow.steps.entries()) {
      const already = recorded.get(`${key}#${index}`);
      if (already) {
        if (already.outcome === 'failed') return already.error ?? { code: 'step_failed', message: 'a step failed' };
        scope.steps.push({ output: already.output });
        continue;
      }
      const parameters = mapParameters(step.parameters, scope);
      const requestId = stepRequestId(eventId, attempt, key, index);
      const result =
        step.kind === 'connector_tool'
          ? await this.connectorStep(tenantId, connectionId, step.tool, parameters, requestId)
          : await this.businessToolStep(tenantId, step.tool, parameters, requestId, { event_id: eventId, flow: key, step: index }, context);
      if (result.outcome !== 'failed' && index === flow.steps.length - 1 && flow.emits.length > 0) held.push({ step: index, result });
      else await record([{ step: index, result }], index === lastIndex);
      if (result.outcome === 'failed') return result.error;
      scope.steps.push({ output: result.output });
    }
    const followOns: FollowOn[] = [];
    for (const [offset, emit] of flow.emits.entries()) {
      const index = flow.steps.length + offset;
      if (recorded.has(`${key}#${index}`)) continue;
      // A resumed attempt may have emitted it, unrecorded, under the key an earlier release derived
      // (on EventStoreDB the follow-on is appended before the steps that record it).
      const earlier = resumed ? await existingEventOfKey(deps, tenantId, earlierFollowOnIdempotencyKey(deps, eventId, key, offset)) : null;
      if (earlier !== null) {
        held.push({ step: index, result: { outcome: 'succeeded', error: null, output: { emitted: emit.name, event_id: earlier }, tool_call_id: null } });
        continue;
      }
      const idempotencyKey = followOnIdempotencyKey(deps, eventId, key, offset);
      try {
        // Its flows, known here: with none it is processed in the emitting append (no pass of the queue for it).
        const followOnFlows = (await matchingFlows(deps, tenantId, emit.name)).map((matching) => matching.key);
        const cause = { event_id: eventId, tenant_id: tenantId, depth: queued.depth, correlation_id: queued.correlation_id };
        const prepared = await causedEventAppend(deps, cause, { name: emit.name, source: `flow:${flow.id}`, payload: mapValue(emit.payload, scope) as Record<string, unknown>, idempotency_key: idempotencyKey }, context, followOnFlows);
        // Appended with the steps that record it, before them; one a crash left behind stands.
        if (prepared.kind === 'new') followOns.push({ name: emit.name, event_id: prepared.event_id, command: prepared.command });
        held.push({ step: index, result: { outcome: 'succeeded', error: null, output: { emitted: emit.name, event_id: prepared.event_id }, tool_call_id: null } });
      } catch (error) {
        if (!(error instanceof DomainError) || error.kind !== 'invalid') throw error;
        // Past the depth bound (or a mapped payload the envelope refuses): the chain stops here, the flow does not fail for it.
        held.push({ step: index, result: { outcome: 'skipped', error: { code: error.code, message: error.message.slice(0, ERROR_MESSAGE_MAX) }, output: { emitted: emit.name }, tool_call_id: null } });
      }
    }
    // What is held runs to the flow's end: a resumed attempt holds nothing when that was recorded.
    if (held.length > 0) await record(held, true, followOns);
    return null;
  }

  private async connectorStep(tenantId: string, connectionId: string, tool: string, parameters: Record<string, unknown>, requestId: string): Promise<StepResult> {
    const step = await invokeConnectorTool(this.deps, { tenantId, connectionId, tool, parameters, requestId });
    switch (step.kind) {
      case 'result':
        return { outcome: 'succeeded', error: null, output: step.output, tool_call_id: null };
      case 'challenge':
        // Nobody is there to answer a challenge in a flow.
        return failed('challenge_unsupported', 'the connector answered with a challenge; a flow step cannot answer one');
      case 'failed':
        return failed(step.code, step.message);
    }
  }

  private async businessToolStep(tenantId: string, tool: string, parameters: Record<string, unknown>, requestId: string, origin: { event_id: string; flow: string; step: number }, context: RequestContext): Promise<StepResult> {
    const tools = this.deps.readStore.collection<BusinessToolDocument>(BUSINESS_TOOLS);
    const byId = await tools.get(tool);
    const found = byId && byId.tenant_id === tenantId ? [byId] : (await tools.find({ where: { tenant_id: tenantId }, sort: { field: 'created_at', direction: 'asc' }, limit: 1000 })).items.filter((candidate) => candidate.name === tool);
    if (found.length === 0) return failed('tool_not_found', `no business tool ${tool} in this organization`);
    if (found.length > 1) return failed('tool_ambiguous', `several business tools are called ${tool}: name it by id`);
    try {
      const outcome = await callTool(
        this.deps.toolCalls,
        tenantId,
        { tool_id: found[0].id, arguments: parameters, caller: { kind: 'system', id: ORCHESTRATION_DISPATCHER }, origin: { kind: 'flow', ...origin } },
        context,
        { idempotencyKey: requestId },
      );
      switch (outcome.status) {
        case 'succeeded':
          return { outcome: 'succeeded', error: null, output: outcome.result, tool_call_id: outcome.tool_call_id };
        case 'failed':
          return { ...failed(outcome.code, outcome.message), tool_call_id: outcome.tool_call_id };
        case 'awaiting_approval':
          return { ...failed('awaiting_approval', 'the tool needs an approval; the next attempt finds the same call'), tool_call_id: outcome.tool_call_id };
        case 'refused':
          return { ...failed('refused', outcome.reason), tool_call_id: outcome.tool_call_id };
        case 'challenge':
          return { ...failed('challenge_unsupported', 'the tool answered with a challenge; a flow step cannot answer one'), tool_call_id: outcome.tool_call_id };
        case 'running':
          return { ...failed('still_running', 'the tool call had no outcome yet; the next attempt finds the same call'), tool_call_id: outcome.tool_call_id };
      }
    } catch (error) {
      if (error instanceof DomainError) return failed(error.code, error.message);
      throw error;
    }
  }
}

/** Attempts since the event was last re-queued by a person, the running one included. */
async function loadAttempts(deps: Pick<DispatcherDependencies, 'eventStore'>, eventId: string): Promise<number> {
  const events = await deps.eventStore.readStream(orchestrationEventStream(eventId));
  let count = 0;
  for (const event of events) {
    if (event.type === 'OrchestrationDispatchStarted' || event.type === 'OrchestrationEventProcessedOnReceipt') count += 1;
    if (event.type === 'OrchestrationEventRequeued') count = 0;
  }
  return count;
}

type WakingType = 'OrchestrationEventQueued' | 'OrchestrationEventProcessed' | 'OrchestrationEventDeadLettered' | 'OrchestrationEventExpired' | 'OrchestrationEventRequeued';

export function orchestrationDispatcherSaga(dispatcher: OrchestrationDispatcher, logger: Logger): Saga<WakingType> {
  return {
    name: ORCHESTRATION_DISPATCHER,
    version: 1,
    filter: { kind: 'event_type', types: ['OrchestrationEventQueued', 'OrchestrationEventProcessed', 'OrchestrationEventDeadLettered', 'OrchestrationEventExpired', 'OrchestrationEventRequeued'] },
    // Waking is all it does: the queue in the read model is the work, so nothing waits on the
    // delivery, and a wake delivered again after a restart costs one pass. Its checkpoint is
    // stored once a second, not in a commit of its own after each event (at a low rate, 1.5
    // of the 4.2 commits an order cost).
    checkpointEveryMs: 1000,
    async handle(event) {
      dispatcher.delivered(event).catch((error: unknown) => logger.error({ err: error }, 'orchestration dispatcher failed'));
    },
    async runDue() {
      dispatcher.wake().catch((error: unknown) => logger.error({ err: error }, 'orchestration dispatcher failed'));
    },
  };
}
