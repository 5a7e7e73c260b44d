// Orchestration events (spec 2.7, 3, 4.13, 6; issue #14 points 1 and 2): emit, ingest, list,
// get, retry, replay of one event and of a range. Owner and admin only (the routes check the
// role); another tenant's event is 404. docs/orchestration-events.md is the reference.
//
// - Emit and ingest check the envelope (domain/orchestration-event: 400 naming the field),
//   then append `OrchestrationEventQueued` to the event's own stream. Ingest is the
//   connector-style entry: the tenant named in its path must be the caller's (403).
// - `idempotency_key`: the event's id is derived from the tenant and the key, so the event's
//   own stream is the reservation of the key (appended with no_stream, the EventStoreDB idiom):
//   any number of emits with one key, at once or years apart, make one event; every one after
//   the first gets that event back (`created` false) and queues nothing.
// - An emit that carries the request's Idempotency-Key (and no `idempotency_key`) derives the
//   event's id from it, so a retried request finds the event it made.
// - Retry re-reads the event's stream and re-queues it: only from failed or dead_letter (409
//   `event_not_retryable` otherwise; 409 `event_expired` past its expiry).
// - Replay re-reads the original's stream, appends a new event whose `replay_of` is the
//   original (`replayEnvelope`), then records the replay's id on the original. The new event
//   comes first: were the process to stop between the two, the replay would exist and name
//   its original, and the view of the original finds it by `replay_of` all the same.
// - Range replay replays the root events (no causation_id, not themselves replays) of the
//   tenant received in [from, to), optionally of one name, oldest first, at most
//   ORCHESTRATION_REPLAY_MAX_PER_REQUEST per request, with a cursor for the rest.

import { isLeft } from 'fp-ts/Either';
import {
  CLIENT_ID_PATTERN,
  clientIdRefusal,
  type Envelope,
  type EnvelopeInput,
  EVENT_NAME_PATTERN,
  type EnvelopeLimits,
  type KnownCause,
  ORCHESTRATION_EVENT_STATUSES,
  type OrchestrationEventCommand,
  type OrchestrationEventEvent,
  type OrchestrationEventState,
  type OrchestrationEventStatus,
  type ReceivedVia,
  type StepError,
  envelopeProblem,
  mayStartOnReceipt,
  orchestrationEventDecider,
  orchestrationEventEvents,
  orchestrationEventStream,
  replayEnvelope,
  reservedNameProblem,
  resolveEnvelope,
} from '../../domain/orchestration-event/orchestration-event';
import { DomainError, forbidden, invalid, notFound } from '../../domain/shared/errors';
import { ERASED_PERSONAL_DATA } from '../../domain/shared/events';
import { textProblem } from '../../domain/shared/text';
import {
  ORCHESTRATION_EVENTS,
  type OrchestrationAttemptDocument,
  type OrchestrationEventDocument,
  type OrchestrationStepDocument,
  type StoredStepError,
  errorMessageKey,
  receivedDocument,
  startedOnReceiptDocument,
} from '../../projections/orchestration-events';
import { type Aggregate, type CommandDependencies, type StreamCommand, handleCommand, loadAggregate, streamCommand } from '../command-handling/handle-command';
import type { Actor } from '../ports/event-store';
import type { RateLimiter } from '../ports/rate-limiter';
import type { Page, Where } from '../ports/read-store';
import { type Principal, actingContext } from '../session/sessions';
import { RateLimitedError } from '../user/abuse-controls';
import { type ReadModelDependencies, type ReadYourWritesDependencies, readBack } from '../shared/read-models';
import type { RequestContext } from '../shared/request-context';
import { type Versioned, type WritePreconditions, expectedRevisionOf, versionOfRevision } from '../shared/versions';
import { forEachConcurrently } from '../sagas/saga';
import { TENANTS, type TenantDocument } from '../../projections/tenants';
import { delayPastRetention, payloadRetentionDaysOf } from '../../domain/orchestration-event/payloads';
import { organizationRetentionOf } from './payload-retention';

/** The shortest retention an organization may set: a shorter delay outlives any. */
const DAY_SECONDS = 24 * 3600;

export const orchestrationEventAggregate: Aggregate<OrchestrationEventCommand, OrchestrationEventEvent, OrchestrationEventState> = {
  decider: orchestrationEventDecider,
  events: orchestrationEventEvents,
};

/** The deployment's bounds (README: ORCHESTRATION_*). */
export interface OrchestrationSettings extends EnvelopeLimits {
  /** How long a sequenced event waits for a missing predecessor before it goes on and the gap is recorded. */
  sequenceGapWaitMs: number;
  /** Root events one range-replay request replays at most; the cursor takes the rest. */
  replayMaxPerRequest: number;
  /** Events one organization may emit and ingest a minute, bursts up to as many at once; past it 429 `rate_limited`. */
  emitsPerMinute: number;
}

export interface OrchestrationDependencies extends CommandDependencies, ReadModelDependencies, ReadYourWritesDependencies {
  orchestration: OrchestrationSettings;
  /** The running dispatcher, which may start an emitted event's first attempt in the append that receives it; absent: every event waits for a pass of the queue. */
  dispatchOnReceipt?: DispatchOnReceipt;
}

/** What a producer's emit and ingest need besides: the budget of events each organization may send. */
export interface EmitDependencies extends OrchestrationDependencies {
  limiter: RateLimiter;
}

/**
 * A dispatcher that may take an event in the append that receives it (dispatcher.ts). When it
 * has a slot free now and no event waits for one, an emitted event due at once outside any
 * sequence is appended already claimed for its first attempt (EmitOrchestrationEvent's
 * `start`), and the attempt runs in that slot: a pass of the queue would otherwise find it
 * moments later and claim it in an append and a commit of its own. The order and fairness of
 * the queue are kept, since nothing is waiting, and so is durability: the claim is on the
 * event's stream, and an attempt whose process died is resumed as any other.
 */
export interface DispatchOnReceipt {
  /** A slot for the tenant's event `eventId` named `name`, with the flows it would run; null when no slot is free or events wait for one. */
  reserveOnReceipt(tenantId: string, eventId: string, name: string): Promise<ReceiptReservation | null>;
}

export interface ReceiptReservation {
  /** The keys of the flows that match the event's name now (OrchestrationDispatchStarted's `flows`). */
  flows: string[];
  /**
   * The append made the event (its document as of then): `dispatched`, its first attempt runs in
   * the reserved slot; `processed` (no flow matched) or `queued` (its expiry had passed), the
   * slot is free again.
   */
  received(event: OrchestrationEventDocument): void;
  /** The append made nothing (the key's event was there) or was refused: the slot is free again. */
  release(): void;
}

/** The most events one list page holds: a payload may be ORCHESTRATION_MAX_PAYLOAD_BYTES. */
export const LIST_MAX_LIMIT = 100;

// ------------------------------------------------------------------------------------ views

export interface OrchestrationStepView {
  step: number;
  request_id: string;
  outcome: OrchestrationStepDocument['outcome'];
  error: StepError | null;
  output: unknown;
  tool_call_id: string | null;
  recorded_at: string;
}

export interface OrchestrationAttemptView extends Omit<OrchestrationAttemptDocument, 'steps' | 'error'> {
  error: StepError | null;
  /** The steps of this attempt, per flow it ran. */
  flow_runs: Array<{ flow: string; steps: OrchestrationStepView[] }>;
}

/** An orchestration event as owners and admins read it. */
export interface OrchestrationEventView extends Envelope {
  id: string;
  /** Its payload (ERASED_PAYLOAD) and its steps' outputs (null) were erased. */
  payload_erased: boolean;
  not_before: string;
  received_via: ReceivedVia;
  received_at: string;
  status: OrchestrationEventStatus;
  /** When a failed event's next attempt is due; null in every other status. */
  next_attempt_at: string | null;
  attempts: OrchestrationAttemptView[];
  sequence_gap: OrchestrationEventDocument['sequence_gap'];
  requeues: Array<{ previous_status: 'failed' | 'dead_letter'; requeued_at: string; by: Actor }>;
  /** The events replayed from this one, oldest first. */
  replays: string[];
  settled_at: string | null;
  updated_at: string;
}

/** A step's output: kept apart from the steps, by request id (a document of version 2 kept it in the step). */
const outputOf = (doc: OrchestrationEventDocument, step: OrchestrationStepDocument): unknown => (doc.outputs === undefined ? step.output : (doc.outputs[step.request_id] ?? null));

/**
 * An error with its message: kept apart from it, by `errorMessageKey` (a document of version 3
 * kept it in the error); ERASED_PERSONAL_DATA once its day was erased.
 */
function errorOf(doc: OrchestrationEventDocument, stored: StoredStepError | null, key: string): StepError | null {
  if (stored === null) return null;
  if (doc.error_messages === undefined) return { code: stored.code, message: stored.message ?? '' };
  return { code: stored.code, message: doc.error_messages[key] ?? ERASED_PERSONAL_DATA };
}

function flowRunsOf(doc: OrchestrationEventDocument, attempt: OrchestrationAttemptDocument): OrchestrationAttemptView['flow_runs'] {
  const flows = [...attempt.flows, ...attempt.steps.map((step) => step.flow).filter((flow) => !attempt.flows.includes(flow))];
  return [...new Set(flows)].map((flow) => ({
    flow,
    steps: attempt.steps
      .filter((step) => step.flow === flow)
      .map(({ flow: _flow, ...step }) => ({ ...step, error: errorOf(doc, step.error, errorMessageKey(step)), output: outputOf(doc, { flow, ...step }) }))
      .sort((a, b) => a.step - b.step),
  }));
}

function viewOf(doc: OrchestrationEventDocument, replays: readonly string[] = doc.replays): OrchestrationEventView {
  return {
    id: doc.id,
    name: doc.name,
    source: doc.source,
    payload: doc.payload,
    payload_erased: doc.payload_erased === true,
    version: doc.version,
    correlation_id: doc.correlation_id,
    causation_id: doc.causation_id,
    idempotency_key: doc.idempotency_key,
    sequence_key: doc.sequence_key,
    sequence_n: doc.sequence_n,
    expires_at: doc.expires_at,
    ttl_seconds: doc.ttl_seconds,
    depth: doc.depth,
    delay_seconds: doc.delay_seconds,
    not_before: doc.not_before,
    replay_of: doc.replay_of,
    received_via: doc.received_via,
    received_at: doc.received_at,
    status: doc.status,
    next_attempt_at: doc.status === 'failed' ? doc.due_at : null,
    attempts: doc.attempts.map(({ steps: _steps, ...attempt }, index) => ({ ...attempt, error: errorOf(doc, attempt.error, errorMessageKey(attempt)), flow_runs: flowRunsOf(doc, doc.attempts[index]) })),
    sequence_gap: doc.sequence_gap,
    requeues: doc.requeues,
    replays: [...replays],
    settled_at: doc.settled_at,
    updated_at: doc.updated_at,
  };
}

const eventNotFound = (): DomainError => notFound('orchestration_event_not_found', 'no such orchestration event');
const collection = (deps: ReadModelDependencies) => deps.readStore.collection<OrchestrationEventDocument>(ORCHESTRATION_EVENTS);

// ---------------------------------------------------------------------------------- queries

/** The event with its version, or 404 when it is not the tenant's. */
export async function getOrchestrationEvent(deps: ReadModelDependencies, tenantId: string, eventId: string): Promise<Versioned<OrchestrationEventView>> {
  const doc = await collection(deps).get(eventId);
  if (!doc || doc.tenant_id !== tenantId) throw eventNotFound();
  // The replays recorded on the original, and any whose recording on it did not happen.
  // Along replay_of: by the tenant's index, read in received_at order, it would scan the tenant's history.
  const byReplayOf = await collection(deps).find({ where: { tenant_id: tenantId, replay_of: eventId }, sort: { field: 'received_at', direction: 'asc' }, limit: 1000, index: 'replay_of' });
  const replays = [...new Set([...doc.replays, ...byReplayOf.items.map((replay) => replay.id)])];
  return { value: viewOf(doc, replays), version: versionOfRevision(doc.revision) };
}

export interface OrchestrationEventFilter {
  status?: OrchestrationEventStatus;
  /** An exact name, or a prefix of whole segments ending in `.*` (`shop.order.*`). */
  name?: string;
  /** received_at from (inclusive) ... to (exclusive), ISO 8601. */
  from?: string;
  to?: string;
  /** The events that carry this correlation: one chain, a root and every event it caused unless given another. */
  correlation_id?: string;
}

/** `status` of a list, checked: 400 naming it. */
export function statusFilter(status: unknown): OrchestrationEventStatus | undefined {
  if (status === undefined) return undefined;
  if (typeof status !== 'string' || !(ORCHESTRATION_EVENT_STATUSES as readonly string[]).includes(status)) {
    throw invalid('invalid_status', `status: expected one of ${ORCHESTRATION_EVENT_STATUSES.join(', ')}`, 'status');
  }
  return status as OrchestrationEventStatus;
}

/** `name` of a list or range replay: an event name, or whole leading segments and `.*`; 400 naming it otherwise. */
export function nameFilter(name: unknown): string | undefined {
  if (name === undefined) return undefined;
  const prefix = typeof name === 'string' && name.endsWith('.*') ? name.slice(0, -2) : null;
  const valid = typeof name === 'string' && name.length <= 200 && (EVENT_NAME_PATTERN.test(name) || (prefix !== null && /^[a-z][a-z0-9_]*(\.[a-z][a-z0-9_]*)*$/.test(prefix)));
  if (!valid) throw invalid('invalid_request', 'name: expected an event name (shop.order.created) or leading segments followed by .* (shop.order.*)', 'name');
  return name;
}

/** `correlation_id` of a list: an id as the envelope takes it; 400 naming it otherwise. */
export function correlationFilter(correlationId: unknown): string | undefined {
  if (correlationId === undefined) return undefined;
  if (typeof correlationId !== 'string' || !CLIENT_ID_PATTERN.test(correlationId)) throw clientIdRefusal('correlation_id');
  return correlationId;
}

/** `from` / `to` as ISO 8601 times, from before to; 400 naming the bad one. */
export function timeRange(from: unknown, to: unknown, required = false): { from?: string; to?: string } {
  const range: { from?: string; to?: string } = {};
  for (const [field, value] of [['from', from], ['to', to]] as const) {
    if (value === undefined || value === null) {
      if (required) throw invalid('invalid_request', `${field}: expected an ISO 8601 time`, field);
      continue;
    }
    if (typeof value !== 'string' || Number.isNaN(Date.parse(value))) throw invalid('invalid_request', `${field}: expected an ISO 8601 time`, field);
    range[field] = new Date(value).toISOString();
  }
  if (range.from !== undefined && range.to !== undefined && range.from >= range.to) throw invalid('invalid_request', 'from must be before to', 'to');
  return range;
}

export function nameCondition(name: string): Where[string] {
  if (!name.endsWith('.*')) return name;
  // Every name under the prefix sorts between `prefix.` and `prefix/` ('/' follows '.').
  const prefix = name.slice(0, -2);
  return { gte: `${prefix}.`, lt: `${prefix}/` };
}

export function receivedCondition(range: { from?: string; to?: string }): Where {
  if (range.from === undefined && range.to === undefined) return {};
  return { received_at: { ...(range.from === undefined ? {} : { gte: range.from }), ...(range.to === undefined ? {} : { lt: range.to }) } };
}

/** The tenant's events, newest first, at most LIST_MAX_LIMIT a page. */
export async function listOrchestrationEvents(deps: ReadModelDependencies, tenantId: string, filter: OrchestrationEventFilter, page: { limit?: number; cursor?: string }): Promise<Page<OrchestrationEventView>> {
  if (page.limit !== undefined && page.limit > LIST_MAX_LIMIT) throw invalid('invalid_limit', `limit must be an integer from 1 to ${LIST_MAX_LIMIT}`, 'limit');
  const where: Where = {
    tenant_id: tenantId,
    ...(filter.status === undefined ? {} : { status: filter.status }),
    ...(filter.name === undefined ? {} : { name: nameCondition(filter.name) }),
    ...(filter.correlation_id === undefined ? {} : { correlation_id: filter.correlation_id }),
    ...receivedCondition(filter),
  };
  const found = await collection(deps).find({ where, sort: { field: 'received_at', direction: 'desc' }, limit: page.limit ?? 50, ...(page.cursor ? { cursor: page.cursor } : {}) });
  return { items: found.items.map((doc) => viewOf(doc)), next_cursor: found.next_cursor };
}

// -------------------------------------------------------------------------------- emitting

/** The depth and correlation of the event `causation_id` names, when it is one of the tenant's. */
async function knownCause(deps: Pick<CommandDependencies, 'eventStore'>, tenantId: string, causationId: string | null | undefined): Promise<KnownCause | null> {
  if (causationId === null || causationId === undefined) return null;
  const { state } = await loadAggregate(deps, orchestrationEventAggregate, orchestrationEventStream(causationId));
  return state.status !== 'absent' && state.event.tenant_id === tenantId ? { depth: state.event.depth, correlation_id: state.event.correlation_id } : null;
}

/** How the idempotency keys of a flow's emits begin (the dispatcher's followOnIdempotencyKey). */
export const FLOW_KEY_PREFIX = 'flow:';

/**
 * The id of the event a key makes within a tenant: the same key always names the same stream.
 * A flow's emit key (`flow:` and an id carrying its cause's millisecond) makes an id carrying
 * that millisecond too, so follow-ons land beside their causes in every index; any other key
 * makes the id it always made.
 */
export const eventIdOfKey = (deps: Pick<CommandDependencies, 'ids'>, tenantId: string, key: string): string =>
  deps.ids.fromKeyAt(`orchestrationEvent\u0000${tenantId}\u0000${key}`, key.startsWith(FLOW_KEY_PREFIX) ? key.slice(FLOW_KEY_PREFIX.length) : '');

/** The id of the tenant's event the key made, when there is one. */
export async function existingEventOfKey(deps: Pick<CommandDependencies, 'ids' | 'eventStore'>, tenantId: string, key: string): Promise<string | null> {
  const eventId = eventIdOfKey(deps, tenantId, key);
  return (await lastPosition(deps, orchestrationEventStream(eventId))) === null ? null : eventId;
}

/** The position of the last event of a stream, to wait for the read models to show it. */
async function lastPosition(deps: Pick<CommandDependencies, 'eventStore'>, stream: string): Promise<number | null> {
  const [last] = await deps.eventStore.readStream(stream, { direction: 'backwards', maxCount: 1 });
  return last?.position ?? null;
}

export interface EmitOutcome {
  /** False when an event with the same idempotency_key (or request) was there already: it is answered, nothing is queued. */
  created: boolean;
  event: Versioned<OrchestrationEventView>;
}

/**
 * Checks and queues one envelope for the tenant. `requestSeed` (the request's Idempotency-Key)
 * names the event when the envelope has no idempotency_key.
 */
export async function queueEnvelope(
  deps: OrchestrationDependencies,
  tenantId: string,
  body: EnvelopeInput & { replay_of?: unknown },
  via: Exclude<ReceivedVia, 'replay'>,
  context: RequestContext,
  requestSeed?: string,
): Promise<EmitOutcome> {
  const queued = await receiveEnvelope(deps, tenantId, await envelopeAppend(deps, tenantId, body, via, context, { requestSeed }), via, context);
  // The caller may read any read model next.
  await deps.readYourWrites(queued.position);
  // A new event is answered as it was stored (the document its first event makes: nothing to
  // read back, and no replays yet); an existing one as the read model has it now.
  if (queued.received) return { created: true, event: { value: viewOf(queued.received), version: versionOfRevision(queued.received.revision) } };
  return { created: queued.created, event: await getOrchestrationEvent(deps, tenantId, queued.event_id) };
}

/** What `receiveEnvelope` did: the event's id, whether this call queued it, and the position to wait for to read it. */
export interface AppendedEnvelope {
  created: boolean;
  event_id: string;
  position: number | null;
  /** The read model's document of the event this call queued, as its first event makes it; absent when it queued nothing. */
  received?: OrchestrationEventDocument;
}

/**
 * What appending an envelope takes: nothing when its idempotency key names an event there
 * already (that event answers), or a command on the new event's stream. Refusals (a bad
 * envelope, a depth past the bound) are thrown here, before anything is appended.
 */
export type EnvelopeAppend = { kind: 'existing'; event_id: string; position: number } | { kind: 'new'; event_id: string; command: StreamCommand; envelope: Envelope };

type EmitCommand = Extract<OrchestrationEventCommand, { type: 'EmitOrchestrationEvent' }>;

/** The command that receives an event on its own stream. */
const emitCommand = (tenantId: string, data: EmitCommand['data'], context: RequestContext): StreamCommand =>
  streamCommand(orchestrationEventAggregate, orchestrationEventStream(data.event_id), { type: 'EmitOrchestrationEvent', data } satisfies EmitCommand, { ...context, tenant_id: tenantId });

async function envelopeAppend(
  deps: OrchestrationDependencies,
  tenantId: string,
  body: EnvelopeInput & { replay_of?: unknown },
  via: Exclude<ReceivedVia, 'replay'>,
  context: RequestContext,
  options: { requestSeed?: string; flows?: string[]; cause?: KnownCause } = {},
): Promise<EnvelopeAppend> {
  const { requestSeed, flows } = options;
  const key = body.idempotency_key ?? null;
  const eventId = key !== null ? eventIdOfKey(deps, tenantId, key) : requestSeed !== undefined ? deps.ids.fromKey(`${requestSeed}:orchestration-event`) : deps.ids.newId();
  const stream = orchestrationEventStream(eventId);
  // A key already used answers its event whatever this body says: a producer retrying the
  // same envelope after its expires_at passed still learns that it was queued.
  if (key !== null && CLIENT_ID_PATTERN.test(key)) {
    const existing = await lastPosition(deps, stream);
    if (existing !== null) return { kind: 'existing', event_id: eventId, position: existing };
  }
  const problem = envelopeProblem(body, deps.orchestration, deps.clock.now()) ?? reservedNameProblem(body.name, via);
  if (problem) throw problem;
  // A delay past a day may outlast the organization's own retention, shorter than the operator's.
  if ((body.delay_seconds ?? 0) > DAY_SECONDS) {
    const tenant = await deps.readStore.collection<TenantDocument>(TENANTS).get(tenantId);
    const pastRetention = delayPastRetention(body.delay_seconds ?? 0, payloadRetentionDaysOf(deps.orchestration.payloadRetentionDays ?? 0, organizationRetentionOf(tenant)));
    if (pastRetention) throw pastRetention;
  }
  const cause = options.cause ?? (await knownCause(deps, tenantId, body.causation_id));
  const resolved = resolveEnvelope(body, eventId, cause, deps.orchestration);
  if (isLeft(resolved)) throw resolved.left;
  const data = { event_id: eventId, tenant_id: tenantId, envelope: resolved.right, received_via: via, ...(flows === undefined ? {} : { flows }) };
  return { kind: 'new', event_id: eventId, command: emitCommand(tenantId, data, context), envelope: resolved.right };
}

/**
 * Appends what `envelopeAppend` prepared for an emit or an ingest: claimed for its first attempt
 * in the same append when the dispatcher has a slot for it (DispatchOnReceipt), queued for a
 * pass otherwise.
 */
async function receiveEnvelope(deps: OrchestrationDependencies, tenantId: string, prepared: EnvelopeAppend, via: Exclude<ReceivedVia, 'replay'>, context: RequestContext): Promise<AppendedEnvelope> {
  const reservation = prepared.kind === 'new' && mayStartOnReceipt(prepared.envelope) && deps.dispatchOnReceipt ? await deps.dispatchOnReceipt.reserveOnReceipt(tenantId, prepared.event_id, prepared.envelope.name) : null;
  if (prepared.kind === 'existing' || reservation === null) return appendPrepared(deps, prepared);
  let appended: AppendedEnvelope;
  try {
    const claimed = emitCommand(tenantId, { event_id: prepared.event_id, tenant_id: tenantId, envelope: prepared.envelope, received_via: via, flows: reservation.flows, start: true }, context);
    appended = await appendPrepared(deps, { ...prepared, command: claimed });
  } catch (error) {
    reservation.release();
    throw error;
  }
  if (appended.received) reservation.received(appended.received);
  else reservation.release();
  return appended;
}

/** Appends what `envelopeAppend` prepared, on its own; what that did. */
async function appendPrepared(deps: OrchestrationDependencies, prepared: EnvelopeAppend): Promise<AppendedEnvelope> {
  if (prepared.kind === 'existing') return { created: false, event_id: prepared.event_id, position: prepared.position };
  const { aggregate, stream, command, context } = prepared.command;
  const result = await handleCommand(deps, aggregate, stream, command, context);
  const [first, second] = result.events as OrchestrationEventEvent[];
  if (first === undefined) return { created: false, event_id: prepared.event_id, position: await lastPosition(deps, stream) };
  const position = result.position as number;
  // The stream's first event, and with a claim on receipt its attempt's start: the document they make, as the projection will.
  let received: OrchestrationEventDocument | undefined;
  if (first.type === 'OrchestrationEventQueued' && second?.type === 'OrchestrationDispatchStarted') {
    received = startedOnReceiptDocument({ ...first, revision: result.revision - 1, position }, { ...second, revision: result.revision, position });
  } else if (first.type === 'OrchestrationEventQueued' || first.type === 'OrchestrationEventProcessedOnReceipt') {
    received = receivedDocument({ ...first, revision: result.revision, position });
  }
  return { created: true, event_id: prepared.event_id, position: result.position, ...(received ? { received } : {}) };
}

/**
 * One event taken from the organization's budget (emit and ingest share it; a flow's follow-on
 * events do not, as ORCHESTRATION_MAX_DEPTH bounds them): 429 `rate_limited` with the seconds
 * until the next is allowed once it is spent, before anything is read or written. A producer
 * in a loop is stopped at the door instead of filling the queue every organization shares.
 */
async function takeFromEmitBudget(deps: EmitDependencies, tenantId: string): Promise<void> {
  const limit = deps.orchestration.emitsPerMinute;
  const decision = await deps.limiter.consume(`orchestration-emit:${tenantId}`, { limit, windowSeconds: 60 });
  if (!decision.allowed) throw new RateLimitedError(decision.retryAfterSeconds, `the organization sent more than ${limit} events a minute`);
}

/** `POST /api/v1/org/events`: the caller's tenant. */
export async function emitOrchestrationEvent(
  deps: EmitDependencies,
  principal: Principal,
  body: EnvelopeInput & { replay_of?: unknown },
  context: RequestContext,
  options: { idempotencyKey?: string } = {},
): Promise<EmitOutcome> {
  await takeFromEmitBudget(deps, principal.tenant_id);
  return queueEnvelope(deps, principal.tenant_id, body, 'emit', actingContext(principal, context), options.idempotencyKey);
}

/** `POST /api/v1/org/events/ingest/{tenant_id}`: the path's tenant must be the caller's (403 `tenant_mismatch`). */
export async function ingestOrchestrationEvent(
  deps: EmitDependencies,
  principal: Principal,
  pathTenantId: string,
  body: EnvelopeInput & { replay_of?: unknown },
  context: RequestContext,
  options: { idempotencyKey?: string } = {},
): Promise<EmitOutcome> {
  requireOwnTenant(principal, pathTenantId);
  await takeFromEmitBudget(deps, principal.tenant_id);
  return queueEnvelope(deps, principal.tenant_id, body, 'ingest', actingContext(principal, context), options.idempotencyKey);
}

/** 403 `tenant_mismatch` unless the tenant named in the path is the caller's. */
export function requireOwnTenant(principal: Pick<Principal, 'tenant_id'>, pathTenantId: string): void {
  if (pathTenantId !== principal.tenant_id) throw forbidden('tenant_mismatch', "the tenant in the path is not the caller's: events are ingested into one's own organization only");
}

/**
 * For the flow runner (issue #14 point 3): an event that `cause` caused, prepared and not
 * appended (the runner appends it together with the step that records it, before it). Its
 * causation_id is the cause and its depth the cause's + 1 (400 `depth_exceeded` past the
 * bound: the chain stops there); the correlation is the cause's unless the body gives one.
 * The runner has the cause's stream in hand, so the cause is not read again.
 */
export function causedEventAppend(
  deps: OrchestrationDependencies,
  cause: { event_id: string; tenant_id: string } & KnownCause,
  body: Omit<EnvelopeInput, 'causation_id' | 'depth'>,
  context: RequestContext,
  /** The flows that match it now, when the caller knows them: with none it may be processed in the same append. */
  flows?: string[],
): Promise<EnvelopeAppend> {
  return envelopeAppend(deps, cause.tenant_id, { ...body, causation_id: cause.event_id, depth: undefined }, 'emit', context, { flows, cause });
}

// --------------------------------------------------------------------------- retry, replay

/** The tenant's event from its stream (always current); 404 otherwise. */
async function loadOwn(deps: Pick<CommandDependencies, 'eventStore'>, tenantId: string, eventId: string): Promise<{ state: Exclude<OrchestrationEventState, { status: 'absent' }>; revision: number }> {
  const { state, revision } = await loadAggregate(deps, orchestrationEventAggregate, orchestrationEventStream(eventId));
  if (state.status === 'absent' || state.event.tenant_id !== tenantId) throw eventNotFound();
  return { state, revision };
}

/** Re-queues a failed or dead-lettered event (409 otherwise); the If-Match version, if given, must be current (412). */
export async function retryOrchestrationEvent(
  deps: OrchestrationDependencies,
  principal: Principal,
  eventId: string,
  context: RequestContext,
  preconditions: WritePreconditions = {},
): Promise<Versioned<OrchestrationEventView>> {
  return requeue(deps, principal.tenant_id, eventId, actingContext(principal, context), preconditions);
}

/** The operator's retry (`npm run cli -- events orchestration retry`): as the route's, the system actor acting. */
export function retryOrchestrationEventAsOperator(deps: OrchestrationDependencies, tenantId: string, eventId: string, context: RequestContext): Promise<Versioned<OrchestrationEventView>> {
  return requeue(deps, tenantId, eventId, { ...context, tenant_id: tenantId });
}

async function requeue(deps: OrchestrationDependencies, tenantId: string, eventId: string, context: RequestContext, preconditions: WritePreconditions = {}): Promise<Versioned<OrchestrationEventView>> {
  const { revision } = await loadOwn(deps, tenantId, eventId);
  const expectedRevision = expectedRevisionOf('orchestration event', preconditions.expectedVersion, revision);
  const result = await handleCommand(deps, orchestrationEventAggregate, orchestrationEventStream(eventId), { type: 'Requeue', data: { tenant_id: tenantId } }, context, { expectedRevision });
  return readBack(deps, result.position, 'the event', () => getOrchestrationEvent(deps, tenantId, eventId));
}

export const REPLAY_REASON_MAX_LENGTH = 500;

function checkedReason(reason: string | null | undefined): string | null {
  if (reason === null || reason === undefined) return null;
  const problem = textProblem('reason', reason, { max: REPLAY_REASON_MAX_LENGTH });
  if (problem) throw problem;
  return reason.normalize('NFC').trim();
}

/** Appends the replay of the tenant's event `originalId` as `replayId`, then records it on the original; the position of the last append. */
async function replayOne(deps: Pick<OrchestrationDependencies, 'eventStore' | 'clock' | 'ids'>, tenantId: string, originalId: string, replayId: string, reason: string | null, context: RequestContext): Promise<number | null> {
  const { state } = await loadOwn(deps, tenantId, originalId);
  const { event_id: _id, tenant_id: _tenant, not_before: _notBefore, received_via: _via, received_at: _at, ...envelope } = state.event;
  const emit: OrchestrationEventCommand = { type: 'EmitOrchestrationEvent', data: { event_id: replayId, tenant_id: tenantId, envelope: replayEnvelope(envelope, originalId), received_via: 'replay' } };
  const emitted = await handleCommand(deps, orchestrationEventAggregate, orchestrationEventStream(replayId), emit, context);
  const record: OrchestrationEventCommand = { type: 'RecordReplay', data: { tenant_id: tenantId, replay_id: replayId, reason } };
  const recorded = await handleCommand(deps, orchestrationEventAggregate, orchestrationEventStream(originalId), record, context);
  return recorded.position ?? emitted.position;
}

/**
 * Replays one event, whatever its status: a new event whose `replay_of` is the original. Under
 * the request's Idempotency-Key the new event's id comes from the key, so a retry makes none.
 */
export async function replayOrchestrationEvent(
  deps: OrchestrationDependencies,
  principal: Principal,
  eventId: string,
  input: { reason?: string | null },
  context: RequestContext,
  options: { idempotencyKey?: string } = {},
): Promise<Versioned<OrchestrationEventView>> {
  return replayAs(deps, principal.tenant_id, eventId, input, actingContext(principal, context), options);
}

/** The operator's replay (`npm run cli -- events orchestration replay`): as the route's, the system actor acting. */
export function replayOrchestrationEventAsOperator(deps: OrchestrationDependencies, tenantId: string, eventId: string, input: { reason?: string | null }, context: RequestContext): Promise<Versioned<OrchestrationEventView>> {
  return replayAs(deps, tenantId, eventId, input, context);
}

async function replayAs(deps: OrchestrationDependencies, tenantId: string, eventId: string, input: { reason?: string | null }, context: RequestContext, options: { idempotencyKey?: string } = {}): Promise<Versioned<OrchestrationEventView>> {
  const reason = checkedReason(input.reason);
  const replayId = options.idempotencyKey === undefined ? deps.ids.newId() : deps.ids.fromKey(`${options.idempotencyKey}:replay:${eventId}`);
  const position = await replayOne(deps, tenantId, eventId, replayId, reason, { ...context, tenant_id: tenantId });
  return readBack(deps, position, 'the event', () => getOrchestrationEvent(deps, tenantId, replayId));
}

export interface RangeReplayInput {
  from: string;
  to: string;
  name?: string;
  /** Root events this request replays, 1 to ORCHESTRATION_REPLAY_MAX_PER_REQUEST (the default). */
  limit?: number;
  /** The `next_cursor` of the previous answer, with the same from, to and name. */
  cursor?: string;
  reason?: string | null;
}

/** One replayed event: the original and its replay. */
export interface ReplayedEvent {
  replay_of: string;
  id: string;
}

/** Replays run at once within one request. */
const RANGE_REPLAY_CONCURRENCY = 8;

/** A range as checked: [from, to) on received_at, a name filter, the page size. */
export interface CheckedRange {
  from: string;
  to: string;
  name: string | null;
  limit: number;
  cursor: string | null;
  reason: string | null;
}

/** The range of a range replay, checked: 400 naming the field. */
export function checkRange(deps: Pick<OrchestrationDependencies, 'orchestration'>, input: RangeReplayInput): CheckedRange {
  const range = timeRange(input.from, input.to, true);
  const name = nameFilter(input.name ?? undefined);
  const max = deps.orchestration.replayMaxPerRequest;
  if (input.limit !== undefined && !(Number.isSafeInteger(input.limit) && input.limit >= 1 && input.limit <= max)) throw invalid('invalid_limit', `limit must be an integer from 1 to ${max}`, 'limit');
  if (input.cursor !== undefined && (typeof input.cursor !== 'string' || input.cursor.length === 0)) throw invalid('invalid_cursor', 'cursor must be the next_cursor of a previous answer', 'cursor');
  return { from: range.from as string, to: range.to as string, name: name ?? null, limit: input.limit ?? max, cursor: input.cursor ?? null, reason: checkedReason(input.reason) };
}

/**
 * Replays one page of the tenant's root events of `range`, oldest first, each as the id
 * `replayIdOf` gives it (derived from a key, a retried page makes no second replays). The
 * replays made, where the next page starts (null: the range is done), and the position of
 * the last append.
 */
export async function replayRangePage(
  deps: Pick<OrchestrationDependencies, 'eventStore' | 'clock' | 'ids' | 'readStore'>,
  tenantId: string,
  range: CheckedRange,
  replayIdOf: (originalId: string) => string,
  context: RequestContext,
): Promise<{ items: ReplayedEvent[]; next_cursor: string | null; position: number | null }> {
  const where: Where = { tenant_id: tenantId, root: true, ...(range.name === null ? {} : { name: nameCondition(range.name) }), ...receivedCondition(range) };
  const found = await collection(deps).find({ where, sort: { field: 'received_at', direction: 'asc' }, limit: range.limit, ...(range.cursor ? { cursor: range.cursor } : {}) });
  // An event whose payload was erased has nothing left to replay: skipped, as one erased meanwhile is.
  const candidates: ReplayedEvent[] = found.items.filter((doc) => doc.payload_erased !== true).map((doc) => ({ replay_of: doc.id, id: replayIdOf(doc.id) }));
  const erased = new Set<string>();
  let last = 0;
  await forEachConcurrently(candidates, RANGE_REPLAY_CONCURRENCY, async (item) => {
    try {
      const position = await replayOne(deps, tenantId, item.replay_of, item.id, range.reason, context);
      last = Math.max(last, position ?? 0);
    } catch (error) {
      if (!(error instanceof DomainError && error.code === 'payload_erased')) throw error;
      erased.add(item.replay_of);
    }
  });
  const items = candidates.filter((item) => !erased.has(item.replay_of));
  return { items, next_cursor: found.next_cursor, position: last === 0 ? null : last };
}

/**
 * Replays the tenant's root events received in [from, to) (of `name` when given), oldest
 * first, one bounded page per request: `next_cursor` continues with the next page, null when
 * the range is done. Events received while the range is replayed are included when they fall
 * in it; the replays themselves never are (they are not root events).
 */
export async function replayOrchestrationRange(
  deps: OrchestrationDependencies,
  principal: Principal,
  input: RangeReplayInput,
  context: RequestContext,
  options: { idempotencyKey?: string } = {},
): Promise<Page<ReplayedEvent>> {
  const range = checkRange(deps, input);
  const key = options.idempotencyKey;
  const replayIdOf = (originalId: string): string => (key === undefined ? deps.ids.newId() : deps.ids.fromKey(`${key}:replay:${originalId}`));
  const page = await replayRangePage(deps, principal.tenant_id, range, replayIdOf, { ...actingContext(principal, context), tenant_id: principal.tenant_id });
  await deps.readYourWrites(page.position);
  return { items: page.items, next_cursor: page.next_cursor };
}

