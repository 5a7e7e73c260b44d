// The orchestration-event aggregate (spec 2.7, 3, 4.13, 6; issue #14 points 1 and 2): one
// envelope a connector or backend emitted into the tenant's business flows, from the moment it
// is queued to its end. One stream per event, `orchestrationEvent-<id>`.
//
// The envelope's rules (`envelopeProblem`, `resolveEnvelope`) are pure and live here, so the
// routes, the decider and the tests share one statement of them; docs/orchestration-events.md
// lists them with their error codes.
//
// Statuses and their transitions:
//   queued       emitted, ingested, replayed or re-queued; waits until `not_before` (its delay)
//                and, in a sequence, until the events before it are settled.
//                -> dispatched (StartDispatch) | expired (Expire, once `expires_at` passed)
//                | processed (StartDispatch with no flow: the attempt starts and ends at once;
//                or in the emitting append itself, for a follow-on event the flow runner
//                knows no flow matches, due at once and in no sequence)
//   dispatched   an attempt is running: the flow runner records its steps.
//                -> processed (MarkProcessed, or the attempt's last steps recorded with
//                `ends_attempt`) | failed (FailAttempt with a retry time)
//                | dead_letter (FailAttempt without one: the attempts are used up)
//   failed       the last attempt failed; the next one is due at `next_attempt_at`.
//                -> dispatched (StartDispatch once due; processed at once with no flow)
//                | queued (Requeue: the retry route) | expired (Expire, once `expires_at` passed)
//   processed    every flow ran to its end. Final (a replay makes a new event).
//   dead_letter  attempts used up; waits for a person. -> queued (Requeue)
//   expired      its expiry passed before it could be dispatched; never dispatched. Final.
// `processed`, `dead_letter` and `expired` are "settled": the next event of the sequence may go.
// A replay (`RecordReplay`) is allowed in any status: it records the new event's id here; the
// new event is a stream of its own whose `replay_of` names this one.
//
// Payloads and step outputs are personal data of whoever an organization's events are about
// (a customer's order): sealed under a key of the organization and the day the event was
// received, `orchestration:<tenant id>:<YYYY-MM-DD>` (orchestrationPayloadSubject), which the
// retention erases once ORCHESTRATION_PAYLOAD_RETENTION_DAYS have passed since that day
// (domain/orchestration-payloads). An erased payload reads as ERASED_PAYLOAD and an erased
// output as null: such an event is never dispatched, re-queued or replayed again (409
// `payload_erased`; a dispatch due after its erasure dead-letters it).
//
// Time comes in through the decision context; ids through the commands.

import * as t from 'io-ts';
import { type Either, left, right } from 'fp-ts/Either';
import type { Decider } from '../shared/decider';
import { type DomainError, RejectionWithEvents, conflict, invalid, notFound } from '../shared/errors';
import { declareEvent, type EventOf, eventGroup, type GroupEvent } from '../shared/events';
import { ERASED_PAYLOAD, delayPastRetention, isErasedPayload, orchestrationPayloadSubject, payloadDayOf } from './payloads';
import { toStreamName } from '../shared/stream-names';
import { textProblem } from '../shared/text';

// ----------------------------------------------------------------------------- the grammar

/**
 * `<system>.<entity>.<action>`: three or more dot-separated segments, each a lowercase letter
 * then lowercase letters, digits or underscores (`shop.order.created`,
 * `billing.invoice_item.payment_failed`, `crm.contact.address.changed`); at most
 * EVENT_NAME_MAX_LENGTH characters in all.
 */
export const EVENT_NAME_PATTERN = /^[a-z][a-z0-9_]*(\.[a-z][a-z0-9_]*){2,}$/;
export const EVENT_NAME_MAX_LENGTH = 200;
/** Ids the client gives (`correlation_id`, `causation_id`, `idempotency_key`, `sequence_key`): 1 to 200 printable ASCII characters, no space. */
export const CLIENT_ID_PATTERN = /^[\x21-\x7e]{1,200}$/;
/** The refusal of an id the client gave (CLIENT_ID_PATTERN) in `field`: the envelope's and the list filters'. */
export const clientIdRefusal = (field: string): DomainError => invalid('invalid_request', `${field} must be 1 to 200 printable ASCII characters without spaces`, field);
export const SOURCE_MAX_LENGTH = 200;
/** The longest delay and time to live (and the farthest `expires_at`): 30 and 365 days. */
export const MAX_DELAY_SECONDS = 30 * 24 * 3600;
export const MAX_TTL_SECONDS = 365 * 24 * 3600;
export const MAX_VERSION = 2_147_483_647;
const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2})$/i;

export const ORCHESTRATION_EVENT_STATUSES = ['queued', 'dispatched', 'processed', 'failed', 'dead_letter', 'expired'] as const;
export type OrchestrationEventStatus = (typeof ORCHESTRATION_EVENT_STATUSES)[number];
/** Statuses after which the next event of a sequence may be dispatched. */
export const SETTLED_STATUSES: readonly OrchestrationEventStatus[] = ['processed', 'dead_letter', 'expired'];
export const isSettled = (status: OrchestrationEventStatus): boolean => SETTLED_STATUSES.includes(status);

/** How an event came in: `POST /org/events`, connector-style ingest, or a replay by the service. */
/** How an event came in: the emit or ingest route, a replay, or a connector's schedule (application/orchestration/schedules.ts). */
/** `platform`: an event the platform emits itself (the notice of a dead letter or an expiry), under its own names. */
export const ReceivedVia = t.keyof({ emit: null, ingest: null, replay: null, schedule: null, platform: null });
export type ReceivedVia = t.TypeOf<typeof ReceivedVia>;

/** The names the platform emits under: nobody else may (an emit, an ingest, a flow's emit or a schedule is 400 `reserved_event_name`). */
export const PLATFORM_EVENT_PREFIX = 'svc.';
/** What the platform emits when an event is dead-lettered, for flows that trigger on it (docs/orchestration-events.md, "Dead-letter notices"). */
export const DEAD_LETTERED_NOTICE = 'svc.event.dead_lettered';
/** What it emits when an event expires before it could be dispatched. */
export const EXPIRED_NOTICE = 'svc.event.expired';

/** Refuses a platform name received any way but from the platform (a replay of the platform's event keeps its name). */
export function reservedNameProblem(name: string, via: ReceivedVia): DomainError | null {
  if (!name.startsWith(PLATFORM_EVENT_PREFIX) || via === 'platform' || via === 'replay') return null;
  return invalid('reserved_event_name', `names under ${PLATFORM_EVENT_PREFIX} are the platform's own events (such as ${DEAD_LETTERED_NOTICE}); choose a name of your own system`, 'name');
}

const optional = <C extends t.Mixed>(codec: C) => t.union([codec, t.null, t.undefined]);

/**
 * The emit body (spec 2.7) as the routes decode it: the types only. The rules beyond the types
 * (grammar, lengths, ranges, pairs, size) are `envelopeProblem`'s, so each refusal names its
 * field with its own code. `null` and absent mean the same for every optional field.
 */
export const EnvelopeBody = t.type(
  {
    name: t.string,
    source: optional(t.string),
    payload: optional(t.UnknownRecord),
    version: optional(t.number),
    correlation_id: optional(t.string),
    causation_id: optional(t.string),
    idempotency_key: optional(t.string),
    sequence_key: optional(t.string),
    sequence_n: optional(t.number),
    expires_at: optional(t.string),
    ttl_seconds: optional(t.number),
    depth: optional(t.number),
    delay_seconds: optional(t.number),
  },
  'OrchestrationEnvelope',
);
export type EnvelopeBody = t.TypeOf<typeof EnvelopeBody>;
/** An envelope as code gives it (the flow runner's follow-on events): absent fields are left out. */
export type EnvelopeInput = Pick<EnvelopeBody, 'name'> & Partial<Omit<EnvelopeBody, 'name'>>;

/** What the envelope's rules depend on besides the body (ORCHESTRATION_MAX_PAYLOAD_BYTES, ORCHESTRATION_MAX_DEPTH). */
export interface EnvelopeLimits {
  maxPayloadBytes: number;
  maxDepth: number;
  /** Days a payload is kept after the day it was received (ORCHESTRATION_PAYLOAD_RETENTION_DAYS); absent or 0: kept until erased otherwise. */
  payloadRetentionDays?: number;
}

const integerIn = (value: number, min: number, max: number): boolean => Number.isSafeInteger(value) && value >= min && value <= max;
const given = <T>(value: T | null | undefined): value is T => value !== null && value !== undefined;

/** The size of a payload as stored: its JSON text in UTF-8 bytes. */
export const payloadBytes = (payload: Record<string, unknown>): number => Buffer.byteLength(JSON.stringify(payload), 'utf8');

/**
 * The first rule the body breaks, as a 400 naming the field, or null. `replay_of` is the
 * service's (set on a replay only): a body that carries it is refused rather than ignored.
 */
export function envelopeProblem(body: EnvelopeInput & { replay_of?: unknown }, limits: EnvelopeLimits, now: Date): DomainError | null {
  if (body.name.length > EVENT_NAME_MAX_LENGTH || !EVENT_NAME_PATTERN.test(body.name)) {
    return invalid(
      'invalid_event_name',
      `name must be <system>.<entity>.<action>: three or more dot-separated segments of lowercase letters, digits and underscores, each starting with a letter, at most ${EVENT_NAME_MAX_LENGTH} characters (for example shop.order.created)`,
      'name',
    );
  }
  if (given(body.source)) {
    const problem = textProblem('source', body.source, { max: SOURCE_MAX_LENGTH });
    if (problem) return problem;
  }
  if (given(body.payload)) {
    const bytes = payloadBytes(body.payload);
    if (bytes > limits.maxPayloadBytes) return invalid('payload_too_large', `payload is ${bytes} bytes as JSON; at most ${limits.maxPayloadBytes} are accepted`, 'payload');
    if (Object.hasOwn(body.payload, '$erased')) return invalid('invalid_request', 'payload.$erased is the service’s: an erased payload reads as {"$erased": true}', 'payload');
  }
  if (given(body.version) && !integerIn(body.version, 1, MAX_VERSION)) return invalid('invalid_request', `version must be an integer from 1 to ${MAX_VERSION}`, 'version');
  for (const field of ['correlation_id', 'causation_id', 'idempotency_key', 'sequence_key'] as const) {
    const value = body[field];
    if (given(value) && !CLIENT_ID_PATTERN.test(value)) return clientIdRefusal(field);
  }
  if (given(body.sequence_key) !== given(body.sequence_n)) {
    const missing = given(body.sequence_key) ? 'sequence_n' : 'sequence_key';
    return invalid('sequence_incomplete', 'sequence_key and sequence_n go together: send both or neither', missing);
  }
  if (given(body.sequence_n) && !integerIn(body.sequence_n, 1, Number.MAX_SAFE_INTEGER)) {
    return invalid('invalid_request', 'sequence_n must be a whole number from 1 (a sequence starts at 1)', 'sequence_n');
  }
  if (given(body.expires_at) && given(body.ttl_seconds)) return invalid('expiry_conflict', 'send expires_at or ttl_seconds, not both', 'ttl_seconds');
  if (given(body.ttl_seconds) && !integerIn(body.ttl_seconds, 1, MAX_TTL_SECONDS)) {
    return invalid('invalid_request', `ttl_seconds must be a whole number of seconds from 1 to ${MAX_TTL_SECONDS}`, 'ttl_seconds');
  }
  if (given(body.expires_at)) {
    const at = Date.parse(body.expires_at);
    if (!RFC3339.test(body.expires_at) || Number.isNaN(at)) return invalid('invalid_request', 'expires_at must be an RFC 3339 date-time with a time zone (2026-05-01T12:00:00Z)', 'expires_at');
    if (at <= now.getTime()) return invalid('already_expired', 'expires_at has already passed', 'expires_at');
    if (at > now.getTime() + MAX_TTL_SECONDS * 1000) return invalid('invalid_request', `expires_at must be at most ${MAX_TTL_SECONDS} seconds ahead`, 'expires_at');
  }
  if (given(body.delay_seconds) && !integerIn(body.delay_seconds, 0, MAX_DELAY_SECONDS)) {
    return invalid('invalid_request', `delay_seconds must be a whole number of seconds from 0 to ${MAX_DELAY_SECONDS}`, 'delay_seconds');
  }
  const pastRetention = given(body.delay_seconds) ? delayPastRetention(body.delay_seconds, limits.payloadRetentionDays ?? 0) : null;
  if (pastRetention) return pastRetention;
  const delayMs = (body.delay_seconds ?? 0) * 1000;
  const expiresInMs = given(body.expires_at) ? Date.parse(body.expires_at) - now.getTime() : given(body.ttl_seconds) ? body.ttl_seconds * 1000 : null;
  if (expiresInMs !== null && delayMs >= expiresInMs) return invalid('delay_past_expiry', 'the event would expire before its delay is over: it could never be dispatched', 'delay_seconds');
  if (given(body.depth) && !integerIn(body.depth, 0, Number.MAX_SAFE_INTEGER)) return invalid('invalid_request', 'depth must be a whole number from 0', 'depth');
  if (given(body.depth) && body.depth > limits.maxDepth) return depthExceeded(body.depth, limits.maxDepth);
  if (body.replay_of !== undefined) return invalid('replay_of_reserved', 'replay_of is set by the service on a replay (POST /api/v1/org/events/{id}/replay), never by a client', 'replay_of');
  return null;
}

const depthExceeded = (depth: number, max: number): DomainError =>
  invalid('depth_exceeded', `depth ${depth} is past the bound of ${max}: events that cause events stop there, so a loop cannot run forever`, 'depth');

/** The envelope as it is recorded: every default applied (times are the decider's). */
export const Envelope = t.type({
  name: t.string,
  source: t.union([t.string, t.null]),
  payload: t.UnknownRecord,
  version: t.number,
  correlation_id: t.string,
  causation_id: t.union([t.string, t.null]),
  idempotency_key: t.union([t.string, t.null]),
  sequence_key: t.union([t.string, t.null]),
  sequence_n: t.union([t.number, t.null]),
  /** Set when the client gave an absolute expiry; the decider turns `ttl_seconds` into `expires_at` too. */
  expires_at: t.union([t.string, t.null]),
  ttl_seconds: t.union([t.number, t.null]),
  depth: t.number,
  delay_seconds: t.number,
  replay_of: t.union([t.string, t.null]),
});
export type Envelope = t.TypeOf<typeof Envelope>;

/** What is known of the event named by `causation_id`, when it is one of the tenant's. */
export interface KnownCause {
  depth: number;
  correlation_id: string;
}

/**
 * The envelope a checked body stands for, with the defaults of docs/orchestration-events.md:
 * `source` null, `payload` {}, `version` 1, `delay_seconds` 0. When `causation_id` names one
 * of the tenant's events, `depth` is at least its depth + 1 (a producer cannot reset the
 * count of a chain) and `correlation_id` defaults to its correlation; otherwise `depth`
 * defaults to 0 and `correlation_id` to the event's own id. A depth past the bound is refused.
 */
export function resolveEnvelope(body: EnvelopeInput, eventId: string, cause: KnownCause | null, limits: EnvelopeLimits): Either<DomainError, Envelope> {
  const depth = Math.max(body.depth ?? 0, cause ? cause.depth + 1 : 0);
  if (depth > limits.maxDepth) return left(depthExceeded(depth, limits.maxDepth));
  return right({
    name: body.name,
    source: given(body.source) ? body.source.normalize('NFC').trim() : null,
    payload: body.payload ?? {},
    version: body.version ?? 1,
    correlation_id: body.correlation_id ?? cause?.correlation_id ?? eventId,
    causation_id: body.causation_id ?? null,
    idempotency_key: body.idempotency_key ?? null,
    sequence_key: body.sequence_key ?? null,
    sequence_n: body.sequence_n ?? null,
    expires_at: given(body.expires_at) ? new Date(body.expires_at).toISOString() : null,
    ttl_seconds: body.ttl_seconds ?? null,
    depth,
    delay_seconds: body.delay_seconds ?? 0,
    replay_of: null,
  });
}

/**
 * The envelope of a replay of `original`: the same name, source, payload, version,
 * correlation, causation and depth, and `replay_of` the original. No idempotency key (it
 * belongs to the original), no sequence (the sequence has moved on: a replay goes on its own),
 * no delay; the original's time to live again from the replay's time, no absolute expiry.
 */
export function replayEnvelope(original: Envelope, originalId: string): Envelope {
  return {
    ...original,
    idempotency_key: null,
    sequence_key: null,
    sequence_n: null,
    expires_at: null,
    delay_seconds: 0,
    replay_of: originalId,
  };
}

// ------------------------------------------------------------------------------- events

const Identity = { event_id: t.string, tenant_id: t.string };
const StepError = t.type({ code: t.string, message: t.string });
export type StepError = t.TypeOf<typeof StepError>;
export const StepOutcome = t.keyof({ succeeded: null, failed: null, skipped: null });
export type StepOutcome = t.TypeOf<typeof StepOutcome>;

const Received = t.type({
  ...Identity,
  ...Envelope.props,
  /** Not dispatched before this: `received_at` + `delay_seconds`. */
  not_before: t.string,
  received_via: ReceivedVia,
  received_at: t.string,
});
export const OrchestrationEventQueued = declareEvent('OrchestrationEventQueued', Received);
/**
 * An event no flow matches, due at once and in no sequence, whose emitter knew that when it
 * emitted it (the flow runner, for a follow-on): received and processed in this one event,
 * where the dispatcher would have written three (queued, dispatch started with no flow,
 * processed). Its data is the queued event's; its status is `processed` after one attempt
 * with no flow, started and ended at `received_at`.
 */
export const OrchestrationEventProcessedOnReceipt = declareEvent('OrchestrationEventProcessedOnReceipt', Received);
export const OrchestrationDispatchStarted = declareEvent(
  'OrchestrationDispatchStarted',
  t.type({
    ...Identity,
    /** 1 for the first attempt; counts on across re-queues. */
    attempt: t.number,
    /** The flows the runner matched to the event's name (none: the event is processed with nothing to run). */
    flows: t.array(t.string),
    started_at: t.string,
  }),
);
/** One step's outcome as recorded. */
const StepRecord = t.type({
  flow: t.string,
  /** The step's index in its flow, from 0. */
  step: t.number,
  /** What the step's call carried (`stepRequestId`), so a redelivered call is recognisable. */
  request_id: t.string,
  outcome: StepOutcome,
  error: t.union([StepError, t.null]),
  /** What the step gave back (later steps map their parameters from it); null when nothing. */
  output: t.unknown,
  /** The tool-call aggregate's id when the step called a business tool (domain/tool-call). */
  tool_call_id: t.union([t.string, t.null]),
});
/** The day whose key seals an event's payload and step outputs: the day it was received (`YYYY-MM-DD`, UTC). */
const PayloadDay = { payload_day: t.string };
/**
 * The day whose key seals an attempt's error message (a connector's words may name the people
 * the payload is about); absent on events recorded before messages were sealed, and on those
 * that end an attempt because its day was erased (their message is the platform's).
 */
const ErrorDay = { payload_day: t.union([t.string, t.undefined]) };
/** Version 1 had no `payload_day` (nothing of it was sealed): the day it was recorded stands in. */
export const OrchestrationStepRecorded = declareEvent('OrchestrationStepRecorded', t.type({ ...Identity, attempt: t.number, ...StepRecord.props, recorded_at: t.string, ...PayloadDay }), {
  version: 2,
  upcasters: { 1: (v1) => ({ ...v1, payload_day: payloadDayOf(String(v1.recorded_at)) }) },
});
export const OrchestrationAttemptFailed = declareEvent(
  'OrchestrationAttemptFailed',
  t.type({
    ...Identity,
    attempt: t.number,
    error: StepError,
    /** When the next attempt is due; null: none, the event is dead-lettered with this. */
    next_attempt_at: t.union([t.string, t.null]),
    failed_at: t.string,
    ...ErrorDay,
  }),
);
/**
 * The attempt ended with every flow run to its end. `steps`: the attempt's last steps, recorded
 * with its end (a flow's last tool step and its emits, when none failed), where they were two
 * or three OrchestrationStepRecorded events before it; recorded at `processed_at`. Their
 * outputs are `outputs`, in the same order (sealed apart, so an erasure leaves the steps'
 * records whole), each step's `output` null: `stepsOf` puts them back; no `outputs` when there
 * are no steps. Version 1 had no `steps` (its last steps were always events of their own);
 * version 2 kept each output in its step and had no `payload_day`.
 */
export const OrchestrationEventProcessed = declareEvent(
  'OrchestrationEventProcessed',
  t.type({ ...Identity, attempt: t.number, processed_at: t.string, steps: t.array(StepRecord), outputs: t.union([t.array(t.unknown), t.undefined]), ...PayloadDay }),
  {
    version: 3,
    upcasters: {
      1: (v1) => ({ ...v1, steps: [] }),
      2: (v2) => {
        const steps = v2.steps as Array<Record<string, unknown>>;
        return { ...v2, steps: steps.map((step) => ({ ...step, output: null })), outputs: steps.length === 0 ? undefined : steps.map((step) => step.output ?? null), payload_day: payloadDayOf(String(v2.processed_at)) };
      },
    },
  },
);
export const OrchestrationEventDeadLettered = declareEvent(
  'OrchestrationEventDeadLettered',
  t.type({ ...Identity, attempts: t.number, error: StepError, dead_lettered_at: t.string, ...ErrorDay }),
);
export const OrchestrationEventExpired = declareEvent('OrchestrationEventExpired', t.type({ ...Identity, expires_at: t.string, expired_at: t.string }));
export const OrchestrationEventRequeued = declareEvent(
  'OrchestrationEventRequeued',
  t.type({ ...Identity, previous_status: t.keyof({ failed: null, dead_letter: null }), requeued_at: t.string }),
);
export const OrchestrationEventReplayed = declareEvent(
  'OrchestrationEventReplayed',
  t.type({ ...Identity, replay_id: t.string, reason: t.union([t.string, t.null]), replayed_at: t.string }),
);
export const OrchestrationSequenceGapRecorded = declareEvent(
  'OrchestrationSequenceGapRecorded',
  t.type({
    ...Identity,
    sequence_key: t.string,
    /** The sequence numbers that never came, first and last. */
    missing_from: t.number,
    missing_to: t.number,
    /** How long the event waited for them. */
    waited_ms: t.number,
    recorded_at: t.string,
  }),
);

export const orchestrationEventEvents = eventGroup(
  'orchestrationEvent',
  [
    OrchestrationEventQueued,
    OrchestrationEventProcessedOnReceipt,
    OrchestrationDispatchStarted,
    OrchestrationStepRecorded,
    OrchestrationAttemptFailed,
    OrchestrationEventProcessed,
    OrchestrationEventDeadLettered,
    OrchestrationEventExpired,
    OrchestrationEventRequeued,
    OrchestrationEventReplayed,
    OrchestrationSequenceGapRecorded,
  ],
  {
    // The key of the organization's day the event was received (erased by the retention,
    // domain/orchestration-payloads); none for an attempt's end written after that day's erasure.
    subject(data) {
      const day = typeof data.payload_day === 'string' ? data.payload_day : typeof data.received_at === 'string' ? payloadDayOf(data.received_at) : null;
      return day === null ? null : orchestrationPayloadSubject(String(data.tenant_id), day);
    },
    fields: {},
    json: {
      OrchestrationEventQueued: { payload: ERASED_PAYLOAD },
      OrchestrationEventProcessedOnReceipt: { payload: ERASED_PAYLOAD },
      OrchestrationStepRecorded: { output: null },
      OrchestrationEventProcessed: { outputs: [] },
    },
    // Error messages come from connectors and tools, whose words may name whom the payload is about.
    nested: {
      OrchestrationStepRecorded: ['error.message'],
      OrchestrationAttemptFailed: ['error.message'],
      OrchestrationEventDeadLettered: ['error.message'],
      OrchestrationEventProcessed: ['steps[].error.message'],
    },
  },
);
export type OrchestrationEventEvent = GroupEvent<typeof orchestrationEventEvents>;
export type QueuedData = EventOf<typeof OrchestrationEventQueued>['data'];
type ProcessedData = EventOf<typeof OrchestrationEventProcessed>['data'];

/** The last steps an OrchestrationEventProcessed records, each with its output (null once erased). */
export const stepsOf = (data: Pick<ProcessedData, 'steps' | 'outputs'>): StepRecordData[] => data.steps.map((step, index) => ({ ...step, output: data.outputs?.[index] ?? null }));

/** An attempt's last steps as OrchestrationEventProcessed records them: outputs apart. */
function processedData(identity: { event_id: string; tenant_id: string }, attempt: number, at: string, payloadDay: string, steps: readonly StepRecordData[]): ProcessedData {
  return {
    ...identity,
    attempt,
    processed_at: at,
    steps: steps.map((step) => ({ ...step, output: null })),
    // None without steps: nothing to seal (the common end of an attempt), stored without the field.
    outputs: steps.length === 0 ? undefined : steps.map((step) => step.output ?? null),
    payload_day: payloadDay,
  };
}

export const orchestrationEventStream = (eventId: string): string => toStreamName(orchestrationEventEvents.category, eventId);

/** One step's outcome as the flow runner records it. */
export type StepRecordData = t.TypeOf<typeof StepRecord>;

/**
 * The `request_id` a step's call carries: the same for the same event, attempt, flow and step,
 * so a call repeated after a crash (the attempt resumed) is recognisable by the connector, and
 * a new attempt after a recorded failure is a new request.
 */
export const stepRequestId = (eventId: string, attempt: number, flow: string, step: number): string => `${eventId}:${attempt}:${flow}:${step}`;

// ------------------------------------------------------------------------------ commands

/** A gap before a sequenced event, found by the dispatch queue when its wait is over. */
export interface SequenceGap {
  missing_from: number;
  missing_to: number;
  waited_ms: number;
}

export type OrchestrationEventCommand =
  /**
   * `flows`: the flows that match it, when the emitter knows them now (the flow runner, for a
   * follow-on event). With none, and the event due at once outside any sequence, it is
   * received and processed in one event (OrchestrationEventProcessedOnReceipt), the outcome the
   * dispatcher's StartDispatch with no flow would reach moments later: one event instead of
   * three, and no pass of the queue, for a chain's last event.
   * `start`: a dispatcher has a free slot for it now (the emit route asks, dispatcher.ts
   * `reserveOnReceipt`). With flows to run, and the event due at once outside any sequence, its
   * first attempt starts in the same append (OrchestrationEventQueued, then
   * OrchestrationDispatchStarted): the claim a pass of the queue would append moments later,
   * without that pass and its commit.
   */
  | { type: 'EmitOrchestrationEvent'; data: { event_id: string; tenant_id: string; envelope: Envelope; received_via: ReceivedVia; flows?: string[]; start?: boolean } }
  /**
   * Claims the event for an attempt; refused when it is not due (the race of two dispatchers is
   * lost here). With no flow to run the attempt is processed in the same append.
   */
  | { type: 'StartDispatch'; data: { tenant_id: string; flows: string[]; gap: SequenceGap | null } }
  /**
   * One or more steps of the running attempt, recorded in order in one append (a flow's last
   * tool step with the emits that follow it). `ends_attempt`: they are the last of the last
   * flow; unless one failed, the attempt is processed in the same append.
   */
  | { type: 'RecordSteps'; data: { tenant_id: string; attempt: number; steps: StepRecordData[]; ends_attempt?: boolean } }
  /** `retry_at` null: no attempt left, the event is dead-lettered. */
  | { type: 'FailAttempt'; data: { tenant_id: string; attempt: number; error: StepError; retry_at: string | null } }
  | { type: 'MarkProcessed'; data: { tenant_id: string; attempt: number } }
  | { type: 'Expire'; data: { tenant_id: string } }
  /** The retry route: only from failed or dead_letter. */
  | { type: 'Requeue'; data: { tenant_id: string } }
  | { type: 'RecordReplay'; data: { tenant_id: string; replay_id: string; reason: string | null } };

// --------------------------------------------------------------------------------- state

export interface LiveOrchestrationEvent {
  status: OrchestrationEventStatus;
  event: QueuedData;
  /** Attempts started in all. */
  attempts: number;
  /** Attempts started since it was last queued by a person (the runner's budget counts these). */
  attempts_since_requeue: number;
  /** When a queued event (not_before) or a failed one (next attempt) is due; null otherwise. */
  due_at: string | null;
  /** `${flow}#${step}` -> request_id, of the running attempt. */
  steps: Record<string, string>;
  replays: string[];
}

export type OrchestrationEventState = { status: 'absent' } | LiveOrchestrationEvent;

/** Whether an envelope may be settled or started in the append that receives it: due at once (no delay) and in no sequence (its expiry is checked on receipt). */
export const mayStartOnReceipt = (envelope: Pick<Envelope, 'delay_seconds' | 'sequence_key'>): boolean => envelope.delay_seconds === 0 && envelope.sequence_key === null;

const eventNotFound = (): DomainError => notFound('orchestration_event_not_found', 'no such orchestration event');
/**
 * An attempt ended because the event's payload was erased: failed, and dead-lettered, with
 * `payload_erased`. No `payload_day`: its day's key is gone, and the message is the platform's.
 */
function erasedEnd(identity: { event_id: string; tenant_id: string }, attempt: number, at: string): OrchestrationEventEvent[] {
  const error = { code: 'payload_erased', message: 'the payload was erased (its retention passed): the flows cannot run on it' };
  return [
    { type: 'OrchestrationAttemptFailed', data: { ...identity, attempt, error, next_attempt_at: null, failed_at: at, payload_day: undefined } },
    { type: 'OrchestrationEventDeadLettered', data: { ...identity, attempts: attempt, error, dead_lettered_at: at, payload_day: undefined } },
  ];
}

const payloadErased = (): DomainError => conflict('payload_erased', 'the event’s payload was erased (its retention passed): it cannot be run again');
const erasedWhileRunning = (): DomainError => conflict('payload_erased', 'the event’s payload was erased as its attempt ran: its steps are not recorded, and the attempt is dead-lettered');
const stepKey = (flow: string, step: number): string => `${flow}#${step}`;
const plus = (at: Date, seconds: number): string => new Date(at.getTime() + seconds * 1000).toISOString();
const hasPassed = (instant: string | null, now: Date): boolean => instant !== null && Date.parse(instant) <= now.getTime();

function live(state: OrchestrationEventState, patch: Partial<LiveOrchestrationEvent>): OrchestrationEventState {
  return state.status === 'absent' ? state : { ...state, ...patch };
}

export const orchestrationEventDecider: Decider<OrchestrationEventCommand, OrchestrationEventEvent, OrchestrationEventState> = {
  initialState: () => ({ status: 'absent' }),

  evolve(state, event) {
    switch (event.type) {
      case 'OrchestrationEventQueued':
        return { status: 'queued', event: event.data, attempts: 0, attempts_since_requeue: 0, due_at: event.data.not_before, steps: {}, replays: [] };
      case 'OrchestrationEventProcessedOnReceipt':
        return { status: 'processed', event: event.data, attempts: 1, attempts_since_requeue: 1, due_at: null, steps: {}, replays: [] };
      case 'OrchestrationDispatchStarted':
        return state.status === 'absent'
          ? state
          : { ...state, status: 'dispatched', attempts: event.data.attempt, attempts_since_requeue: state.attempts_since_requeue + 1, due_at: null, steps: {} };
      case 'OrchestrationStepRecorded':
        return state.status === 'absent' ? state : { ...state, steps: { ...state.steps, [stepKey(event.data.flow, event.data.step)]: event.data.request_id } };
      case 'OrchestrationAttemptFailed':
        // Without a next attempt, the dead-lettering that follows in the same append settles it.
        return live(state, { status: 'failed', due_at: event.data.next_attempt_at });
      case 'OrchestrationEventProcessed':
        return live(state, { status: 'processed', due_at: null });
      case 'OrchestrationEventDeadLettered':
        return live(state, { status: 'dead_letter', due_at: null });
      case 'OrchestrationEventExpired':
        return live(state, { status: 'expired', due_at: null });
      case 'OrchestrationEventRequeued':
        return live(state, { status: 'queued', due_at: event.data.requeued_at, attempts_since_requeue: 0 });
      case 'OrchestrationEventReplayed':
        return state.status === 'absent' ? state : { ...state, replays: [...state.replays, event.data.replay_id] };
      case 'OrchestrationSequenceGapRecorded':
        return state;
    }
  },

  decide(command, state, { now }): Either<DomainError, OrchestrationEventEvent[]> {
    const at = now.toISOString();
    if (command.type === 'EmitOrchestrationEvent') {
      const { event_id, tenant_id, envelope, received_via } = command.data;
      // The same id again (an idempotency key repeated, a retried request): the first event stands.
      if (state.status !== 'absent') return state.event.tenant_id === tenant_id ? right([]) : left(conflict('orchestration_event_exists', 'an event with this id exists'));
      // A replay of an event whose payload was erased: there is nothing to replay.
      if (isErasedPayload(envelope.payload)) return left(payloadErased());
      const expires_at = envelope.expires_at ?? (envelope.ttl_seconds === null ? null : plus(now, envelope.ttl_seconds));
      const data = { event_id, tenant_id, ...envelope, expires_at, not_before: plus(now, envelope.delay_seconds), received_via, received_at: at };
      const { flows, start } = command.data;
      const dueAtOnce = mayStartOnReceipt(envelope) && !hasPassed(expires_at, now);
      if (dueAtOnce && flows?.length === 0) return right([{ type: 'OrchestrationEventProcessedOnReceipt', data }]);
      const queued: OrchestrationEventEvent = { type: 'OrchestrationEventQueued', data };
      if (!dueAtOnce || start !== true || flows === undefined) return right([queued]);
      return right([queued, { type: 'OrchestrationDispatchStarted', data: { event_id, tenant_id, attempt: 1, flows, started_at: at } }]);
    }
    if (state.status === 'absent' || state.event.tenant_id !== command.data.tenant_id) return left(eventNotFound());
    const identity = { event_id: state.event.event_id, tenant_id: state.event.tenant_id };
    const payloadDay = payloadDayOf(state.event.received_at);
    const expired = hasPassed(state.event.expires_at, now);
    const erased = isErasedPayload(state.event.payload);
    const requireAttempt = (attempt: number): DomainError | null => {
      if (state.status !== 'dispatched') return conflict('dispatch_not_running', `the event is ${state.status}: no attempt is running`);
      if (attempt !== state.attempts) return conflict('attempt_mismatch', `attempt ${attempt} is not the running one (${state.attempts})`);
      return null;
    };
    switch (command.type) {
      case 'StartDispatch': {
        if (state.status !== 'queued' && state.status !== 'failed') return left(conflict('event_not_dispatchable', `the event is ${state.status}`));
        if (expired) return left(conflict('event_expired', 'the event expired before it could be dispatched'));
        if (state.due_at === null || !hasPassed(state.due_at, now)) return left(conflict('event_not_due', `the event is not due before ${state.due_at ?? 'a retry'}`));
        const gap = command.data.gap;
        const attempt = state.attempts + 1;
        const started: OrchestrationEventEvent[] = [{ type: 'OrchestrationDispatchStarted', data: { ...identity, attempt, flows: command.data.flows, started_at: at } }];
        // Due after its payload's retention (a long delay, a late retry): nothing to run the flows on.
        if (erased) started.push(...erasedEnd(identity, attempt, at));
        else if (command.data.flows.length === 0) started.push({ type: 'OrchestrationEventProcessed', data: processedData(identity, attempt, at, payloadDay, []) });
        if (gap === null || state.event.sequence_key === null) return right(started);
        return right([{ type: 'OrchestrationSequenceGapRecorded', data: { ...identity, sequence_key: state.event.sequence_key, ...gap, recorded_at: at } }, ...started]);
      }
      case 'RecordSteps': {
        const { attempt, steps, ends_attempt } = command.data;
        if (steps.length === 0) return left(invalid('no_steps', 'at least one step is recorded'));
        const running = state.status === 'dispatched' && attempt === state.attempts;
        const recordedNow: StepRecordData[] = [];
        const seen = new Set<string>();
        for (const { flow, step, request_id, outcome, error, output, tool_call_id } of steps) {
          const key = stepKey(flow, step);
          if (seen.has(key)) return left(invalid('step_repeated', `step ${step} of ${flow} is given twice`));
          seen.add(key);
          const recorded = running ? state.steps[key] : undefined;
          // A step recorded again after a crash, with its own request id: already there.
          if (recorded !== undefined) {
            if (recorded !== request_id) return left(conflict('step_already_recorded', `step ${step} of ${flow} is recorded with another request_id`));
            continue;
          }
          const problem = requireAttempt(attempt);
          if (problem) return left(problem);
          recordedNow.push({ flow, step, request_id, outcome, error, output: output ?? null, tool_call_id });
        }
        // Every step there already (a resumed attempt): nothing again; the runner marks the attempt processed itself.
        if (recordedNow.length === 0) return right([]);
        // Its payload erased while the attempt ran (its day's retention passed meanwhile): the
        // outputs could not be kept, and nothing recorded with them (the follow-ons they emit) is.
        if (erased) return left(new RejectionWithEvents(erasedEnd(identity, attempt, at), erasedWhileRunning()));
        // The attempt's last steps, none failed: recorded with its end, in that one event.
        if (ends_attempt === true && !steps.some((step) => step.outcome === 'failed')) return right([{ type: 'OrchestrationEventProcessed', data: processedData(identity, attempt, at, payloadDay, recordedNow) }]);
        return right(recordedNow.map((data): OrchestrationEventEvent => ({ type: 'OrchestrationStepRecorded', data: { ...identity, attempt, ...data, recorded_at: at, payload_day: payloadDay } })));
      }
      case 'FailAttempt': {
        const problem = requireAttempt(command.data.attempt);
        if (problem) return left(problem);
        const { attempt, error, retry_at } = command.data;
        // Its day erased as the attempt ran: its error can no longer be sealed, and nothing can run again.
        if (erased) return right(erasedEnd(identity, attempt, at));
        const failed: OrchestrationEventEvent = { type: 'OrchestrationAttemptFailed', data: { ...identity, attempt, error, next_attempt_at: retry_at, failed_at: at, payload_day: payloadDay } };
        if (retry_at !== null) return right([failed]);
        return right([failed, { type: 'OrchestrationEventDeadLettered', data: { ...identity, attempts: state.attempts, error, dead_lettered_at: at, payload_day: payloadDay } }]);
      }
      case 'MarkProcessed': {
        const problem = requireAttempt(command.data.attempt);
        if (problem) return left(problem);
        return right([{ type: 'OrchestrationEventProcessed', data: processedData(identity, command.data.attempt, at, payloadDay, []) }]);
      }
      case 'Expire': {
        if (state.status === 'expired') return right([]);
        // A running attempt is let finish; a settled event has nothing left to expire.
        if (state.status !== 'queued' && state.status !== 'failed') return right([]);
        if (!expired || state.event.expires_at === null) return left(conflict('event_not_expired', `the event does not expire before ${state.event.expires_at ?? 'ever'}`));
        return right([{ type: 'OrchestrationEventExpired', data: { ...identity, expires_at: state.event.expires_at, expired_at: at } }]);
      }
      case 'Requeue': {
        if (state.status !== 'failed' && state.status !== 'dead_letter') {
          return left(conflict('event_not_retryable', `only a failed or dead-lettered event is retried; this one is ${state.status}`));
        }
        if (expired) return left(conflict('event_expired', 'the event has expired: it would never be dispatched. Replay it instead (a replay has no absolute expiry)'));
        if (erased) return left(payloadErased());
        return right([{ type: 'OrchestrationEventRequeued', data: { ...identity, previous_status: state.status, requeued_at: at } }]);
      }
      case 'RecordReplay': {
        if (state.replays.includes(command.data.replay_id)) return right([]);
        if (erased) return left(payloadErased());
        return right([{ type: 'OrchestrationEventReplayed', data: { ...identity, replay_id: command.data.replay_id, reason: command.data.reason, replayed_at: at } }]);
      }
    }
  },
};
