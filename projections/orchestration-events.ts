// Read model `orchestration_events`: every orchestration event of every tenant (id: the event
// id) with its envelope, status, every attempt with its steps and error, the sequence gap it
// waited for, who re-queued it, `replay_of` and the replays made of it. Its revision is the
// event stream's (ETag).
//
// It serves the list and get routes (by tenant, status, name, received_at), the range replay
// (`root`: no causation_id and not itself a replay) and the dispatch queue
// (application/orchestration/dispatch-queue.ts): `due_at` is when a queued or failed event is
// due (its not_before, or its next attempt), null in every other status; `single_due_at` and
// `sequence_due_at` are the same time split by whether the event has a sequence_key, so that
// the queue reads each kind along an index of that kind alone (one index of both made every
// pass read past the whole backlog of the other: version 2); `settled_at` is when it reached
// processed, dead_letter or expired, which a sequence's next event waits for.
//
// Payloads and step outputs are sealed in the log under the key of the organization's day the
// event was received (`payload_day`); the steps' outputs are kept in `outputs` (by request id),
// apart from the steps, so that OrchestrationPayloadsErased scrubs a whole day's documents with
// one patch: `payload` reads ERASED_PAYLOAD, `outputs` is emptied, `payload_erased` is true
// (version 3; version 2 kept each output in its step). The error messages, sealed too (a
// connector's words may name whom the payload is about), are kept the same way in
// `error_messages` (by a step's request id, by `attempt:<n>` for an attempt's), each error in
// its step or attempt with its code alone; the same patch empties them (version 4; version 3
// kept each message in its error).

import type { Actor } from '../application/ports/event-store';
import {
  type OrchestrationEventEvent,
  type OrchestrationEventStatus,
  type ReceivedVia,
  type StepError,
  type StepRecordData,
  orchestrationEventEvents,
  stepsOf,
} from '../domain/orchestration-event/orchestration-event';
import { ERASED_PAYLOAD, isErasedPayload, payloadDayOf } from '../domain/orchestration-event/payloads';
import { type OrchestrationPayloadsEvent, orchestrationPayloadsEvents } from '../domain/orchestration-payloads/orchestration-payloads';
import type { EventProjection } from './projection';

/** An error as a document keeps it: its code; its message in the document's `error_messages` (a document of version 3 kept it here). */
export interface StoredStepError {
  code: string;
  message?: string;
}

/** A step as the runner recorded it, and when. */
export interface OrchestrationStepDocument extends Omit<StepRecordData, 'error'> {
  error: StoredStepError | null;
  recorded_at: string;
}

export interface OrchestrationAttemptDocument {
  attempt: number;
  flows: string[];
  started_at: string;
  /** `running` until the attempt ends. */
  outcome: 'running' | 'processed' | 'failed';
  error: StoredStepError | null;
  next_attempt_at: string | null;
  ended_at: string | null;
  steps: OrchestrationStepDocument[];
}

export interface OrchestrationEventDocument {
  id: string;
  tenant_id: string;
  name: string;
  source: string | null;
  payload: Record<string, unknown>;
  /** The day it was received (`YYYY-MM-DD`, UTC): whose key seals its payload and outputs. Absent from documents of version 2. */
  payload_day?: string;
  /** Its payload and outputs were erased (ERASED_PAYLOAD, none). Absent from documents of version 2. */
  payload_erased?: boolean;
  /** Each step's output by its request id (steps record `output: null`); absent from documents of version 2, whose steps hold them. */
  outputs?: Record<string, unknown>;
  /** Error messages by the request id of their step, or `attempt:<n>` (`errorMessageKey`); absent from documents of version 3, whose errors hold them. */
  error_messages?: Record<string, string>;
  version: number;
  correlation_id: string;
  causation_id: string | null;
  idempotency_key: string | null;
  sequence_key: string | null;
  sequence_n: number | null;
  expires_at: string | null;
  ttl_seconds: number | null;
  depth: number;
  delay_seconds: number;
  not_before: string;
  replay_of: string | null;
  received_via: ReceivedVia;
  received_at: string;
  status: OrchestrationEventStatus;
  /** No causation_id and not a replay: what a range replay replays. */
  root: boolean;
  due_at: string | null;
  /** `due_at` of an event without a sequence_key; null for the others. */
  single_due_at: string | null;
  /** `due_at` of an event with a sequence_key; null for the others. */
  sequence_due_at: string | null;
  /** When the running attempt started; null when none runs. */
  attempt_started_at: string | null;
  attempts: OrchestrationAttemptDocument[];
  /** Attempts started since a person last re-queued it: the flow runner's budget counts these. */
  attempts_since_requeue: number;
  sequence_gap: { missing_from: number; missing_to: number; waited_ms: number; recorded_at: string } | null;
  requeues: Array<{ previous_status: 'failed' | 'dead_letter'; requeued_at: string; by: Actor }>;
  replays: string[];
  settled_at: string | null;
  updated_at: string;
  revision: number;
  position: number;
  [field: string]: unknown;
}

export const ORCHESTRATION_EVENTS = 'orchestration_events';

type Patch = Partial<OrchestrationEventDocument>;

/** When an event is due (null: not waiting), in `due_at` and in the field of its kind. */
function dueFields(sequenceKey: string | null, dueAt: string | null): Pick<OrchestrationEventDocument, 'due_at' | 'single_due_at' | 'sequence_due_at'> {
  return { due_at: dueAt, single_due_at: sequenceKey === null ? dueAt : null, sequence_due_at: sequenceKey === null ? null : dueAt };
}

/** The running attempt's document changed by `change`. */
function withAttempt(doc: OrchestrationEventDocument, attempt: number, change: (current: OrchestrationAttemptDocument) => OrchestrationAttemptDocument): OrchestrationAttemptDocument[] {
  return doc.attempts.map((entry) => (entry.attempt === attempt ? change(entry) : entry));
}

type Received = Extract<OrchestrationEventEvent, { type: 'OrchestrationEventQueued' | 'OrchestrationEventProcessedOnReceipt' }>;

/**
 * The document an event's first event makes, at that event's revision and position: what this
 * projection writes, and what the emit route answers with (the event as stored) without
 * reading it back.
 */
export function receivedDocument(event: Received & { revision: number; position: number }): OrchestrationEventDocument {
  const { event_id: id, received_via, received_at, not_before, ...envelope } = event.data;
  // Processed on receipt: the document the three events it stands for would have built.
  const settled = event.type === 'OrchestrationEventProcessedOnReceipt';
  return {
    id,
    ...envelope,
    payload_day: payloadDayOf(received_at),
    // Received with it erased: a rebuild after its day's erasure.
    payload_erased: isErasedPayload(envelope.payload),
    outputs: {},
    error_messages: {},
    not_before,
    received_via,
    received_at,
    status: settled ? 'processed' : 'queued',
    root: envelope.causation_id === null && envelope.replay_of === null,
    ...dueFields(envelope.sequence_key, settled ? null : not_before),
    attempt_started_at: null,
    attempts: settled ? [{ attempt: 1, flows: [], started_at: received_at, outcome: 'processed', error: null, next_attempt_at: null, ended_at: received_at, steps: [] }] : [],
    attempts_since_requeue: settled ? 1 : 0,
    sequence_gap: null,
    requeues: [],
    replays: [],
    settled_at: settled ? received_at : null,
    updated_at: received_at,
    revision: event.revision,
    position: event.position,
  };
}

type Started = Extract<OrchestrationEventEvent, { type: 'OrchestrationDispatchStarted' }>;

/** What an attempt's start changes in its event's document. */
function attemptStarted(current: OrchestrationEventDocument, { attempt, flows, started_at }: Started['data']): Patch {
  const entry: OrchestrationAttemptDocument = { attempt, flows, started_at, outcome: 'running', error: null, next_attempt_at: null, ended_at: null, steps: [] };
  return { status: 'dispatched', ...dueFields(current.sequence_key, null), attempt_started_at: started_at, attempts: [...current.attempts, entry], attempts_since_requeue: current.attempts_since_requeue + 1 };
}

/**
 * The document of an event whose first attempt started in the append that received it, as of
 * that start: what the emit route answers with in that case.
 */
export function startedOnReceiptDocument(received: Received & { revision: number; position: number }, started: Started & { revision: number; position: number }): OrchestrationEventDocument {
  const doc = receivedDocument(received);
  return { ...doc, ...attemptStarted(doc, started.data), updated_at: started.data.started_at, revision: started.revision, position: started.position };
}

/** Steps' outputs added to a document's, by request id (kept out of the steps themselves): none once its payload is erased. */
function withOutputs(current: OrchestrationEventDocument, steps: readonly StepRecordData[]): Patch {
  if (current.payload_erased === true || current.outputs === undefined) return {};
  const given = steps.filter((step) => step.output !== null && step.output !== undefined);
  if (given.length === 0) return {};
  return { outputs: { ...current.outputs, ...Object.fromEntries(given.map((step) => [step.request_id, step.output])) } };
}

/** Where a document keeps an error's message: a step's by its request id, an attempt's as `attempt:<n>`. */
export const errorMessageKey = (of: { request_id: string } | { attempt: number }): string => ('request_id' in of ? of.request_id : `attempt:${of.attempt}`);

/** Error messages added to a document's, apart from their errors (an erasure empties them at once). */
function withErrorMessages(current: OrchestrationEventDocument, errors: ReadonlyArray<{ key: string; error: StepError | null }>): Patch {
  const given = errors.filter((entry): entry is { key: string; error: StepError } => entry.error !== null);
  if (given.length === 0 || current.error_messages === undefined) return {};
  return { error_messages: { ...current.error_messages, ...Object.fromEntries(given.map(({ key, error }) => [key, error.message])) } };
}

/** An error as the document keeps it: its code, its message apart (a document of version 3 kept it here). */
const storedError = (current: OrchestrationEventDocument, error: StepError | null): StoredStepError | null => (error === null || current.error_messages === undefined ? error : { code: error.code });

/** A step as the document keeps it: its output in `outputs` (a document of version 2 kept it here), its error's message in `error_messages`. */
const stepDocument = (current: OrchestrationEventDocument, step: StepRecordData, recordedAt: string): OrchestrationStepDocument => ({
  ...step,
  ...(current.outputs === undefined ? {} : { output: null }),
  error: storedError(current, step.error),
  recorded_at: recordedAt,
});

const stepErrors = (steps: readonly StepRecordData[]) => steps.map((step) => ({ key: errorMessageKey(step), error: step.error }));

export const orchestrationEventsProjection: EventProjection<OrchestrationEventEvent['type'] | OrchestrationPayloadsEvent['type']> = {
  name: 'orchestration_events',
  // 2: single_due_at and sequence_due_at. 3: payload_day, payload_erased, outputs apart from the steps. 4: error messages apart too.
  version: 4,
  collections: [
    {
      name: ORCHESTRATION_EVENTS,
      // The lists read a tenant's events newest first (all, by status, by name, by correlation)
      // along the index of their filter; the queue's fields are set only while an event waits or
      // runs, so their sparse indexes hold the few that do and cost a settled event nothing.
      indexes: [
        // `root` last: a range replay reads the range and checks it in the index.
        { field: 'tenant_id', then: ['received_at', 'root'] },
        { field: 'status', then: ['tenant_id', 'received_at'] },
        { field: 'tenant_id', then: ['name', 'received_at'] },
        // A chain: a root and the events it caused share its correlation.
        { field: 'tenant_id', then: ['correlation_id', 'received_at'] },
        { field: 'replay_of', sparse: true },
        { field: 'sequence_key', then: ['sequence_n'], sparse: true },
        { field: 'single_due_at', sparse: true },
        { field: 'sequence_due_at', sparse: true },
        // Read only while a store built by version 1 is served (its documents have neither of the two above).
        { field: 'due_at', sparse: true },
        { field: 'expires_at', sparse: true },
        { field: 'attempt_started_at', sparse: true },
        // An organization's oldest day whose payloads are kept (the retention, an erasure on request), and that day's documents, which its erasure patches.
        { field: 'tenant_id', then: ['payload_erased', 'payload_day'] },
      ],
    },
  ],
  handles: [...orchestrationEventEvents.types, ...orchestrationPayloadsEvents.types],
  async apply(event, view) {
    if (event.type === 'OrchestrationPayloadsErased') {
      const { tenant_id, day } = event.data;
      view.patchWhere(ORCHESTRATION_EVENTS, { tenant_id, payload_erased: false, payload_day: day }, { payload: { ...ERASED_PAYLOAD }, outputs: {}, error_messages: {}, payload_erased: true });
      return;
    }
    const id = event.data.event_id;
    if (event.type === 'OrchestrationEventQueued' || event.type === 'OrchestrationEventProcessedOnReceipt') {
      if (await view.get(ORCHESTRATION_EVENTS, id)) return;
      view.put(ORCHESTRATION_EVENTS, receivedDocument(event));
      return;
    }
    const current = await view.get<OrchestrationEventDocument>(ORCHESTRATION_EVENTS, id);
    if (!current || current.position >= event.position) return;
    const patch = (changes: Patch, at: string): void => view.patch(ORCHESTRATION_EVENTS, id, { ...changes, updated_at: at, revision: event.revision, position: event.position });
    switch (event.type) {
      case 'OrchestrationDispatchStarted':
        patch(attemptStarted(current, event.data), event.data.started_at);
        return;
      case 'OrchestrationStepRecorded': {
        const { attempt, flow, step, request_id, outcome, error, output, tool_call_id, recorded_at } = event.data;
        const data: StepRecordData = { flow, step, request_id, outcome, error, output, tool_call_id };
        const recorded = stepDocument(current, data, recorded_at);
        patch({ attempts: withAttempt(current, attempt, (entry) => ({ ...entry, steps: [...entry.steps, recorded] })), ...withOutputs(current, [data]), ...withErrorMessages(current, stepErrors([data])) }, recorded_at);
        return;
      }
      case 'OrchestrationAttemptFailed': {
        const { attempt, error, next_attempt_at, failed_at } = event.data;
        const attempts = withAttempt(current, attempt, (entry) => ({ ...entry, outcome: 'failed', error: storedError(current, error), next_attempt_at, ended_at: failed_at }));
        patch({ status: 'failed', ...dueFields(current.sequence_key, next_attempt_at), attempt_started_at: null, attempts, ...withErrorMessages(current, [{ key: errorMessageKey({ attempt }), error }]) }, failed_at);
        return;
      }
      case 'OrchestrationEventProcessed': {
        const { attempt, processed_at } = event.data;
        // The attempt's last steps, recorded with its end.
        const steps = stepsOf(event.data);
        const last = steps.map((step) => stepDocument(current, step, processed_at));
        const attempts = withAttempt(current, attempt, (entry) => ({ ...entry, steps: last.length === 0 ? entry.steps : [...entry.steps, ...last], outcome: 'processed', ended_at: processed_at }));
        patch({ status: 'processed', ...dueFields(current.sequence_key, null), attempt_started_at: null, attempts, settled_at: processed_at, ...withOutputs(current, steps), ...withErrorMessages(current, stepErrors(steps)) }, processed_at);
        return;
      }
      case 'OrchestrationEventDeadLettered':
        patch({ status: 'dead_letter', ...dueFields(current.sequence_key, null), attempt_started_at: null, settled_at: event.data.dead_lettered_at }, event.data.dead_lettered_at);
        return;
      case 'OrchestrationEventExpired':
        patch({ status: 'expired', ...dueFields(current.sequence_key, null), settled_at: event.data.expired_at }, event.data.expired_at);
        return;
      case 'OrchestrationEventRequeued': {
        const { previous_status, requeued_at } = event.data;
        patch({ status: 'queued', ...dueFields(current.sequence_key, requeued_at), settled_at: null, attempts_since_requeue: 0, requeues: [...current.requeues, { previous_status, requeued_at, by: event.metadata.actor }] }, requeued_at);
        return;
      }
      case 'OrchestrationEventReplayed':
        patch({ replays: current.replays.includes(event.data.replay_id) ? current.replays : [...current.replays, event.data.replay_id] }, event.data.replayed_at);
        return;
      case 'OrchestrationSequenceGapRecorded': {
        const { missing_from, missing_to, waited_ms, recorded_at } = event.data;
        patch({ sequence_gap: { missing_from, missing_to, waited_ms, recorded_at } }, recorded_at);
        return;
      }
    }
  },
};
