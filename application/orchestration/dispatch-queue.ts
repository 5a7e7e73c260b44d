// The dispatch queue: what the dispatcher saga and flow runner (issue #14 point 3) use to take
// orchestration events in order and record what happens to them. The queue is the
// `orchestration_events` read model plus each event's own stream: the read model finds what
// is due, the stream decides (a claim another dispatcher already took is refused there).
//
// The dispatcher's loop:
//   1. `nextDispatchable(deps, {limit})`: events that may start an attempt now, oldest due
//      first: queued with `not_before` passed, or failed with their next attempt due; never
//      one whose expiry has passed; in a sequence only its head, and only once every earlier
//      event of the sequence is settled (processed, dead_letter or expired). A head whose
//      predecessor never came (a gap) is returned once it has waited
//      ORCHESTRATION_SEQUENCE_GAP_WAIT_MS, with the gap to record. At most one event per
//      sequence is returned, so starting every candidate at once keeps each sequence in order.
//   2. `startDispatch(deps, candidate, flows)`: claims the candidate for an attempt (records the
//      gap first when there is one). Null when another dispatcher took it or it is no longer
//      due: skip it.
//   3. For each step of each flow: call with `request_id = stepRequestId(event, attempt, flow,
//      step)`, then `recordSteps(...)`. A step already recorded (a resumed attempt) records
//      nothing again; `loadDispatch` gives the recorded outputs a resumed attempt maps from.
//      The output goes into an event and the read model: record it bounded (as tool calls
//      cut their exchanges), never a credential.
//   4. `markProcessed(...)` when every flow ended, or `failAttempt(..., retryAt)` with the next
//      attempt's time (exponential back-off and jitter are the runner's policy), or
//      `failAttempt(..., null)` when the attempts are used up: the event is dead-lettered.
//      `attempts_since_requeue` counts the attempts since a person last re-queued the event,
//      so a retry from dead_letter gets a fresh budget.
//   5. `inFlightDispatches(deps, {startedBefore})`: attempts that have been running for long
//      (their process died): resume them with the same attempt number, so the steps called
//      again carry the same request ids.
// Follow-on events go through `causedEventAppend` (orchestration-events.ts): causation_id and
// depth + 1 are set there. The expiry pass (expiry-pass.ts) ends events whose expiry passed
// while they waited.
//
// The queue reads a read model, which lags the log by moments: an event appears a little after
// it is queued, and a sequence's next event is released a little after its predecessor
// settles; the gap wait is far longer than that lag, so a late projection is never taken for a
// gap. Nothing is lost: what is due stays due until an attempt is recorded on its stream.

import type { OrchestrationEventCommand, OrchestrationEventStatus, QueuedData, SequenceGap, StepError, StepRecordData } from '../../domain/orchestration-event/orchestration-event';
import { orchestrationEventStream } from '../../domain/orchestration-event/orchestration-event';
import { DomainError, RejectionWithEvents } from '../../domain/shared/errors';
import { ORCHESTRATION_EVENTS, type OrchestrationEventDocument, orchestrationEventsProjection } from '../../projections/orchestration-events';
import type { Message } from '../../domain/shared/decider';
import { type CommandDependencies, type CommandResult, type StreamCommand, handleCommand, handleCommands, loadAggregate, streamCommand } from '../command-handling/handle-command';
import type { Where } from '../ports/read-store';
import type { ReadModelDependencies } from '../shared/read-models';
import { type RequestContext, systemContext } from '../shared/request-context';
import { type OrchestrationSettings, orchestrationEventAggregate } from './orchestration-events';

export interface DispatchQueueDependencies extends CommandDependencies, ReadModelDependencies {
  orchestration: Pick<OrchestrationSettings, 'sequenceGapWaitMs'>;
}

/** An event that may start an attempt now. */
export interface DispatchCandidate {
  event_id: string;
  tenant_id: string;
  name: string;
  /** The attempt `startDispatch` will start (1 for the first). */
  attempt: number;
  /** Attempts started since a person last re-queued it (0 before the first). */
  attempts_since_requeue: number;
  sequence_key: string | null;
  sequence_n: number | null;
  /** When it became due (not_before, or the failed attempt's next attempt time). */
  due_at: string;
  /** When it was queued. */
  received_at: string;
  /** The sequence numbers it waited for in vain; `startDispatch` records them. */
  gap: SequenceGap | null;
  /** What its steps are mapped from, as it was received (an envelope never changes): the attempt need not read its stream for it. */
  envelope: DispatchedEnvelope;
}

/** The parts of a received event an attempt maps its steps from and reports with. */
export type DispatchedEnvelope = Pick<QueuedData, 'name' | 'correlation_id' | 'depth' | 'source' | 'payload' | 'received_at'>;

const WAITING: OrchestrationEventStatus[] = ['queued', 'failed'];
const UNSETTLED: OrchestrationEventStatus[] = ['queued', 'dispatched', 'failed'];
/** Rows one scan reads; a pass reads at most SEQUENCE_SCAN_PAGES of them to find sequences. */
const SCAN_PAGE = 200;
const SEQUENCE_SCAN_PAGES = 5;

const collection = (deps: ReadModelDependencies) => deps.readStore.collection<OrchestrationEventDocument>(ORCHESTRATION_EVENTS);
const hasExpired = (doc: Pick<OrchestrationEventDocument, 'expires_at'>, now: Date): boolean => doc.expires_at !== null && Date.parse(doc.expires_at) <= now.getTime();
const isDue = (doc: OrchestrationEventDocument, now: Date): boolean => WAITING.includes(doc.status) && doc.due_at !== null && Date.parse(doc.due_at) <= now.getTime() && !hasExpired(doc, now);

/** What an attempt maps its steps from, as the event's document has it. */
export const dispatchedEnvelope = (doc: OrchestrationEventDocument): DispatchedEnvelope => ({
  name: doc.name,
  correlation_id: doc.correlation_id,
  depth: doc.depth,
  source: doc.source,
  payload: doc.payload,
  received_at: doc.received_at,
});

function candidateOf(doc: OrchestrationEventDocument, gap: SequenceGap | null): DispatchCandidate {
  return {
    event_id: doc.id,
    tenant_id: doc.tenant_id,
    name: doc.name,
    attempt: doc.attempts.length + 1,
    attempts_since_requeue: doc.attempts_since_requeue,
    sequence_key: doc.sequence_key,
    sequence_n: doc.sequence_n,
    due_at: doc.due_at ?? doc.not_before,
    received_at: doc.received_at,
    gap,
    envelope: dispatchedEnvelope(doc),
  };
}

/**
 * Whether the head of a sequence may go now, and with which gap. `head` is the lowest-numbered
 * event of its sequence that is not settled (an event past its expiry counts as settled: it
 * will never be dispatched).
 */
async function headDecision(deps: DispatchQueueDependencies, head: OrchestrationEventDocument, now: Date): Promise<DispatchCandidate | null> {
  if (!isDue(head, now)) return null;
  const n = head.sequence_n as number;
  // A head that already had an attempt recorded its gap then (or had none): it is not waiting any more.
  if (head.attempts.length > 0 || head.sequence_gap !== null) return candidateOf(head, null);
  const [previous] = (
    await collection(deps).find({ where: { tenant_id: head.tenant_id, sequence_key: head.sequence_key, sequence_n: { lt: n } }, sort: { field: 'sequence_n', direction: 'desc' }, limit: 1, index: 'sequence_key,sequence_n' })
  ).items;
  const expected = (previous?.sequence_n ?? 0) + 1;
  if (n <= expected) return candidateOf(head, null);
  // Waiting since it came, or since its predecessor settled, whichever is later.
  const previousSettled = previous ? (previous.settled_at ?? previous.expires_at ?? previous.received_at) : null;
  const since = Math.max(Date.parse(head.received_at), previousSettled === null ? 0 : Date.parse(previousSettled));
  const waited = now.getTime() - since;
  if (waited < deps.orchestration.sequenceGapWaitMs) return null;
  return candidateOf(head, { missing_from: expected, missing_to: n - 1, waited_ms: waited });
}

/** The lowest-numbered unsettled event of a sequence, skipping those past their expiry; null when none, or when too many expired ones hide it (the expiry pass clears them). */
async function sequenceHead(deps: DispatchQueueDependencies, tenantId: string, sequenceKey: string, now: Date): Promise<OrchestrationEventDocument | null> {
  const pending = await collection(deps).find({
    where: { tenant_id: tenantId, sequence_key: sequenceKey, status: { in: UNSETTLED } },
    sort: { field: 'sequence_n', direction: 'asc' },
    limit: SCAN_PAGE,
    // The sequence's own events, not the tenant's history.
    index: 'sequence_key,sequence_n',
  });
  return pending.items.find((doc) => doc.status === 'dispatched' || !hasExpired(doc, now)) ?? null;
}

/**
 * Events that may start an attempt now, oldest due first, at most `limit` (default 100);
 * `tenantId` narrows it to one tenant, `exceptTenantId` leaves one out. See the header for the rules.
 */
export async function nextDispatchable(deps: DispatchQueueDependencies, options: { limit?: number; tenantId?: string; exceptTenantId?: string } = {}): Promise<DispatchCandidate[]> {
  const now = deps.clock.now();
  const limit = options.limit ?? 100;
  const tenant: Where = options.tenantId !== undefined ? { tenant_id: options.tenantId } : options.exceptTenantId !== undefined ? { tenant_id: { ne: options.exceptTenantId } } : {};
  const candidates: DispatchCandidate[] = [];
  // Each kind is read along the index of its own due time, which only its waiting events have:
  // by the tenant or status index this would scan the tenant's whole history, or every waiting
  // event, and along one index of both kinds a pass read past the whole backlog of singles to
  // find that no sequence had anything due. A read model built by version 1 has only `due_at`.
  const byKind = await splitsDueTimes(deps);
  const dueWhere = (field: 'single_due_at' | 'sequence_due_at'): { field: string; where: Where } => {
    const dueField = byKind ? field : 'due_at';
    const kind: Where = byKind ? {} : { sequence_key: field === 'single_due_at' ? null : { ne: null } };
    return { field: dueField, where: { ...tenant, ...kind, status: { in: WAITING }, [dueField]: { lte: now.toISOString() } } };
  };

  // Each is a whole document read and parsed, so no more than asked: an expired one among them
  // (rare: the expiry pass ends them) leaves its place empty for this pass.
  const singles = dueWhere('single_due_at');
  const single = await collection(deps).find({ where: singles.where, sort: { field: singles.field, direction: 'asc' }, limit: Math.min(1000, limit), index: singles.field });
  for (const doc of single.items) if (!hasExpired(doc, now)) candidates.push(candidateOf(doc, null));

  // Each sequence with something due, oldest due first; its head decides for the whole sequence.
  const sequenced = dueWhere('sequence_due_at');
  const sequences = new Map<string, { tenant_id: string; sequence_key: string }>();
  let cursor: string | undefined;
  for (let page = 0; page < SEQUENCE_SCAN_PAGES && sequences.size < limit; page += 1) {
    const found = await collection(deps).find({ where: sequenced.where, sort: { field: sequenced.field, direction: 'asc' }, limit: SCAN_PAGE, index: sequenced.field, ...(cursor ? { cursor } : {}) });
    for (const doc of found.items) sequences.set(`${doc.tenant_id}\u0000${doc.sequence_key}`, { tenant_id: doc.tenant_id, sequence_key: doc.sequence_key as string });
    if (found.next_cursor === null) break;
    cursor = found.next_cursor;
  }
  for (const { tenant_id, sequence_key } of sequences.values()) {
    const head = await sequenceHead(deps, tenant_id, sequence_key, now);
    const decided = head === null ? null : await headDecision(deps, head, now);
    if (decided) candidates.push(decided);
  }
  return candidates.sort((a, b) => (a.due_at < b.due_at ? -1 : a.due_at > b.due_at ? 1 : 0)).slice(0, limit);
}

/** Read stores whose orchestration events carry single_due_at and sequence_due_at (served version 2 or later): it never goes back. */
const splitDueTimes = new WeakSet<object>();

async function splitsDueTimes(deps: ReadModelDependencies): Promise<boolean> {
  if (splitDueTimes.has(deps.readStore)) return true;
  const served = await deps.readStore.getProjectionState(orchestrationEventsProjection.name);
  // No state yet: a new store, built by this code from the start.
  if (served !== null && served.version < 2) return false;
  splitDueTimes.add(deps.readStore);
  return true;
}

/** Attempts running since before `startedBefore`: the runner resumes them (same attempt, same request ids). */
export async function inFlightDispatches(deps: ReadModelDependencies, options: { startedBefore: Date; limit?: number }): Promise<Array<{ event_id: string; tenant_id: string; attempt: number; started_at: string }>> {
  const found = await collection(deps).find({
    where: { status: 'dispatched', attempt_started_at: { lte: options.startedBefore.toISOString() } },
    sort: { field: 'attempt_started_at', direction: 'asc' },
    limit: options.limit ?? 100,
    // Only running attempts have one.
    index: 'attempt_started_at',
  });
  return found.items.map((doc) => ({ event_id: doc.id, tenant_id: doc.tenant_id, attempt: doc.attempts.length, started_at: doc.attempt_started_at as string }));
}

/** The event as its stream has it (always current): the envelope, status, and the steps of the running attempt. Null when absent. */
export async function loadDispatch(deps: Pick<CommandDependencies, 'eventStore'>, eventId: string) {
  const { state } = await loadAggregate(deps, orchestrationEventAggregate, orchestrationEventStream(eventId));
  return state.status === 'absent' ? null : state;
}

/** The dispatcher acts as the platform, in the event's tenant and correlation. */
export function dispatcherContext(tenantId: string, correlationId: string): RequestContext {
  return { ...systemContext(correlationId, 'orchestration_dispatcher'), tenant_id: tenantId };
}

type EventRef = { event_id: string; tenant_id: string };

const positionOf = async (...args: Parameters<typeof run>): Promise<number | null> => (await run(...args)).position;

async function run(deps: CommandDependencies, ref: EventRef, command: OrchestrationEventCommand, context?: RequestContext) {
  return handleCommand(deps, orchestrationEventAggregate, orchestrationEventStream(ref.event_id), command, context ?? dispatcherContext(ref.tenant_id, ref.event_id));
}

/**
 * Claims `candidate` for its attempt, recording the gap it waited for: the attempt number and
 * the position of the append, or null when the event is no longer dispatchable (another
 * dispatcher took it, it expired, it was re-queued to a later time, its payload was erased and
 * it was dead-lettered as it started): the caller skips it.
 * With no flows the attempt is processed in the same append (`processed`).
 */
export async function startDispatch(
  deps: CommandDependencies,
  candidate: Pick<DispatchCandidate, 'event_id' | 'tenant_id' | 'gap'>,
  flows: string[],
  context?: RequestContext,
): Promise<{ attempt: number; position: number | null; processed: boolean } | null> {
  try {
    const result = await run(deps, candidate, { type: 'StartDispatch', data: { tenant_id: candidate.tenant_id, flows, gap: candidate.gap } }, context);
    const started = result.events.find((event) => event.type === 'OrchestrationDispatchStarted');
    const processed = result.events.some((event) => event.type === 'OrchestrationEventProcessed');
    // Its payload erased, the attempt was dead-lettered as it started: nothing to run.
    if (result.events.some((event) => event.type === 'OrchestrationEventDeadLettered')) return null;
    return started?.type === 'OrchestrationDispatchStarted' ? { attempt: started.data.attempt, position: result.position, processed } : null;
  } catch (error) {
    if (error instanceof DomainError && error.kind === 'conflict') return null;
    throw error;
  }
}

// Each command below answers the position of its append (null when it appended nothing), for
// a caller that reads the read model next (read-your-writes).

/**
 * Records steps of the running attempt in one append, in order. `endsAttempt`: they are the
 * attempt's last, and unless one failed the attempt ends processed in the same append (a
 * flow's last tool step, its emits and the end: one write where there were two). A step
 * recorded already with the same request id records nothing again. `processed` is false when
 * every step was recorded already (a resumed attempt): the caller marks it processed.
 * `deadLettered`: the event's payload was erased while the attempt ran; the steps were not
 * recorded, nor the commands before them, the attempt ended, and the caller runs nothing more of it.
 */
export async function recordSteps(
  deps: CommandDependencies,
  ref: EventRef,
  attempt: number,
  steps: StepRecordData[],
  endsAttempt: boolean,
  context?: RequestContext,
  /**
   * Commands appended with the steps, before them (the follow-on events the steps record): all
   * or none on the embedded store, those first on EventStoreDB. Their results, in order.
   */
  before: readonly StreamCommand[] = [],
): Promise<{ position: number | null; processed: boolean; deadLettered: boolean; before: Array<CommandResult<Message>> }> {
  const command: OrchestrationEventCommand = { type: 'RecordSteps', data: { tenant_id: ref.tenant_id, attempt, steps, ends_attempt: endsAttempt } };
  const acting = context ?? dispatcherContext(ref.tenant_id, ref.event_id);
  const stream = orchestrationEventStream(ref.event_id);
  try {
    const results = await handleCommands(deps, [...before, streamCommand(orchestrationEventAggregate, stream, command, acting)]);
    const result = results[results.length - 1];
    return { position: result.position, processed: result.events.some((event) => event.type === 'OrchestrationEventProcessed'), deadLettered: false, before: results.slice(0, -1) };
  } catch (error) {
    // The attempt ended as the steps came to be recorded: its payload was erased meanwhile (its end alone appended).
    if (error instanceof RejectionWithEvents && error.code === 'payload_erased') return { position: null, processed: false, deadLettered: true, before: [] };
    throw error;
  }
}

/** Ends the running attempt as failed: retried at `retryAt`, or dead-lettered when it is null. */
export async function failAttempt(deps: CommandDependencies, ref: EventRef, attempt: number, error: StepError, retryAt: Date | null, context?: RequestContext): Promise<number | null> {
  return (await endAttemptFailed(deps, ref, attempt, error, retryAt, context)).position;
}

/**
 * failAttempt, telling whether the event was dead-lettered: also with a `retryAt` when its
 * payload was erased meanwhile (nothing can run again).
 */
export async function endAttemptFailed(
  deps: CommandDependencies,
  ref: EventRef,
  attempt: number,
  error: StepError,
  retryAt: Date | null,
  context?: RequestContext,
): Promise<{ position: number | null; deadLettered: boolean }> {
  const result = await run(deps, ref, { type: 'FailAttempt', data: { tenant_id: ref.tenant_id, attempt, error, retry_at: retryAt === null ? null : retryAt.toISOString() } }, context);
  return { position: result.position, deadLettered: result.events.some((event) => event.type === 'OrchestrationEventDeadLettered') };
}

/** Ends the running attempt: every flow ran to its end. */
export async function markProcessed(deps: CommandDependencies, ref: EventRef, attempt: number, context?: RequestContext): Promise<number | null> {
  return positionOf(deps, ref, { type: 'MarkProcessed', data: { tenant_id: ref.tenant_id, attempt } }, context);
}

/** Ends a queued or failed event whose expiry has passed (nothing for one running or settled). */
export async function expireEvent(deps: CommandDependencies, ref: EventRef, context?: RequestContext): Promise<number | null> {
  return positionOf(deps, ref, { type: 'Expire', data: { tenant_id: ref.tenant_id } }, context);
}
