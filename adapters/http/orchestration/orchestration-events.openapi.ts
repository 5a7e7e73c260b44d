// OpenAPI description of the orchestration event routes (orchestration/orchestration-events.ts).

import {
  EVENT_NAME_MAX_LENGTH,
  EnvelopeBody,
  MAX_DELAY_SECONDS,
  MAX_TTL_SECONDS,
  ORCHESTRATION_EVENT_STATUSES,
  SOURCE_MAX_LENGTH,
} from '../../../domain/orchestration-event/orchestration-event';
import { LIST_MAX_LIMIT, REPLAY_REASON_MAX_LENGTH } from '../../../application/orchestration/orchestration-events';
import { type ApiArea, type Schema, arrayOf, boolean, dateTime, enumOf, integer, nullable, object, page, ref, schemaOfCodec, string } from '../openapi/describe';
import { PayloadErasureBody, RangeReplayBody, RedriveBody, ReplayBody } from './orchestration-events';

const nullableString = (description: string): Schema => ({ type: ['string', 'null'], description });
const nullableInteger = (description: string): Schema => ({ type: ['integer', 'null'], description });

const FIELD_RULES: Record<string, string> = {
  name: `required; \`<system>.<entity>.<action>\`: three or more dot-separated segments, each a lowercase letter then lowercase letters, digits or underscores, at most ${EVENT_NAME_MAX_LENGTH} characters (\`invalid_event_name\`); names under \`svc.\` are the platform’s own (\`reserved_event_name\`)`,
  source: `who produced it, 1 to ${SOURCE_MAX_LENGTH} characters of single-line text; default null`,
  payload: 'a JSON object; at most ORCHESTRATION_MAX_PAYLOAD_BYTES as JSON (`payload_too_large`); default {}',
  version: 'the version of the payload\'s shape, an integer from 1; default 1',
  correlation_id: "1 to 200 printable ASCII characters without spaces; default: the causing event's correlation when causation_id names one of the organization's events, otherwise the new event's id",
  causation_id: "the event that caused this one (same form); none makes a root event. When it names one of the organization's events, depth is at least that event's depth + 1",
  idempotency_key: 'same form; within the organization, the same key gives back the first event (200) and queues nothing new, however many emits and however far apart',
  sequence_key: 'same form; with sequence_n: the events of one key are dispatched in sequence_n order. Both or neither (`sequence_incomplete`, naming the missing one)',
  sequence_n: 'a whole number from 1 (a sequence starts at 1); a missing number is waited for ORCHESTRATION_SEQUENCE_GAP_WAIT_MS, then the event goes on and the gap is recorded',
  expires_at: `an RFC 3339 date-time, in the future (\`already_expired\`) and at most ${MAX_TTL_SECONDS} s ahead; not with ttl_seconds (\`expiry_conflict\`). Not dispatched after it: the event ends \`expired\``,
  ttl_seconds: `1 to ${MAX_TTL_SECONDS}: expires_at is the time of receipt plus this`,
  depth: 'a whole number from 0, at most ORCHESTRATION_MAX_DEPTH (`depth_exceeded`), so that events causing events cannot loop forever; default 0 (or the cause\'s + 1)',
  delay_seconds: `0 to ${MAX_DELAY_SECONDS}: not dispatched before receipt plus this (\`not_before\`); a delay that reaches the expiry is \`delay_past_expiry\``,
};

/** The emit body as the routes decode it, each field with its rule. */
function envelopeBodySchema(): Schema {
  const schema = schemaOfCodec(EnvelopeBody);
  const properties = schema.properties as Record<string, Schema>;
  for (const [field, rule] of Object.entries(FIELD_RULES)) properties[field] = { ...properties[field], description: rule };
  return { ...schema, description: 'The envelope of spec 2.7. `replay_of` is set by the service on a replay: a body that carries it is 400 `replay_of_reserved`.' };
}

const stepError = nullable(object({ code: string(), message: string('"[erased]" once the payload is erased (the code is kept)') }));
const actor = object({ kind: string('user, admin, system, ...'), id: string() });

const orchestrationEvent = object({
  id: string(),
  name: string(),
  source: nullableString('who produced it'),
  payload: { type: 'object', description: 'as emitted; `{"$erased": true}` once erased (its retention passed, the operator\'s ORCHESTRATION_PAYLOAD_RETENTION_DAYS or the organization\'s own, or erased on request: docs/orchestration-events.md, "Payload retention")' },
  payload_erased: boolean('its payload, its steps\' outputs and its error messages were erased: it can no longer be re-queued or replayed'),
  version: integer(),
  correlation_id: string(),
  causation_id: nullableString('null for a root event'),
  idempotency_key: nullableString('as emitted'),
  sequence_key: nullableString('as emitted'),
  sequence_n: nullableInteger('as emitted'),
  expires_at: { ...nullable(dateTime()), description: 'the absolute expiry (ttl_seconds turned into a time on receipt); null: never' },
  ttl_seconds: nullableInteger('as emitted'),
  depth: integer('0 for an event nothing of the organization caused'),
  delay_seconds: integer(),
  not_before: dateTime('not dispatched before: received_at + delay_seconds'),
  replay_of: nullableString('the event this one replays; set by the service only'),
  received_via: enumOf(['emit', 'ingest', 'replay', 'schedule', 'platform'], '`platform`: emitted by the platform itself under `svc.` (the notice of a dead letter or an expiry: `svc.event.dead_lettered`, `svc.event.expired`)'),
  received_at: dateTime(),
  status: enumOf(ORCHESTRATION_EVENT_STATUSES, 'docs/orchestration-events.md lists each status and its transitions'),
  next_attempt_at: { ...nullable(dateTime()), description: 'when a failed event is attempted again; null in every other status' },
  attempts: arrayOf(
    object({
      attempt: integer('from 1, counting on across retries'),
      flows: arrayOf(string(), 'the flows the runner matched to the name'),
      started_at: dateTime(),
      outcome: enumOf(['running', 'processed', 'failed']),
      error: stepError,
      next_attempt_at: nullable(dateTime()),
      ended_at: nullable(dateTime()),
      flow_runs: arrayOf(
        object({
          flow: string(),
          steps: arrayOf(
            object({
              step: integer('its index in the flow, from 0'),
              request_id: string("what the step's call carried"),
              outcome: enumOf(['succeeded', 'failed', 'skipped']),
              error: stepError,
              output: { description: 'what the step gave back; null when nothing, and once the payload is erased' },
              tool_call_id: nullableString('the business tool call, when the step called one'),
              recorded_at: dateTime(),
            }),
          ),
        }),
      ),
    }),
    'every attempt with its error and the steps of each flow it ran',
  ),
  sequence_gap: nullable(
    object(
      { missing_from: integer(), missing_to: integer(), waited_ms: integer(), recorded_at: dateTime() },
      'the sequence numbers this event waited for in vain before it went on',
    ),
  ),
  requeues: arrayOf(object({ previous_status: enumOf(['failed', 'dead_letter']), requeued_at: dateTime(), by: actor }), 'every retry'),
  replays: arrayOf(string(), 'the ids of the events replayed from this one, oldest first'),
  settled_at: { ...nullable(dateTime()), description: 'when it became processed, dead_letter or expired' },
  updated_at: dateTime(),
});

/** The answer to an emit whose idempotency_key the organization already used. */
const REPEATED_KEY = {
  description: 'the event an earlier emit with the same idempotency_key made; nothing new was queued',
  json: ref('OrchestrationEvent'),
  headers: {
    ETag: { description: "the event's version", schema: { type: 'string' } },
    'Idempotent-Replayed': { description: '`true` when this is the stored answer to an earlier request with the same Idempotency-Key', schema: { type: 'string', enum: ['true'] } },
  },
};

const rangeReplay = object({
  id: string(),
  status: enumOf(['running', 'finished']),
  from: dateTime(),
  to: dateTime(),
  name: nullableString('an event name or prefix.*; null: every name'),
  reason: nullableString('recorded on each original'),
  page_size: integer('root events replayed per page'),
  pages: integer('pages replayed so far'),
  replayed: integer('events replayed so far'),
  next_cursor: nullableString('where the next page starts; null at the beginning of the range and once finished'),
  started_at: dateTime(),
  finished_at: nullable(dateTime()),
  updated_at: dateTime(),
});

const ID_NOT_FOUND = 'Another organization\'s event, or none, is 404 `orchestration_event_not_found`.';

export const orchestrationEventsApi: ApiArea = {
  tag: 'orchestration events',
  description:
    'Namespaced envelopes that connectors and backends emit into the business flows (spec 2.7, 4.13, 6): queued, dispatched in order into the flow runner, retried, dead-lettered, replayed. Owner and admin only. docs/orchestration-events.md.',
  schemas: { OrchestrationEvent: orchestrationEvent, RangeReplay: rangeReplay },
  routes: {
    '/api/v1/org/events': {
      get: {
        summary: "List the organization's orchestration events",
        description: 'Newest first by received_at.',
        access: 'user',
        role: 'admin',
        query: [
          { name: 'status', description: `one of ${ORCHESTRATION_EVENT_STATUSES.join(', ')}; anything else is 400 \`invalid_status\``, schema: enumOf(ORCHESTRATION_EVENT_STATUSES) },
          { name: 'name', description: 'an event name, or leading segments followed by `.*` (`shop.order.*`) for every name under them', schema: string() },
          { name: 'correlation_id', description: 'the events of one chain: a root (whose correlation is its own id unless it was given one) and every event it caused; 1 to 200 printable ASCII characters without spaces, anything else is 400 `invalid_request`', schema: { type: 'string', minLength: 1, maxLength: 200 } },
          { name: 'from', description: 'received at or after this ISO 8601 time', schema: dateTime() },
          { name: 'to', description: 'received before this ISO 8601 time; from must be before to', schema: dateTime() },
          { name: 'limit', description: `events per page, 1 to ${LIST_MAX_LIMIT} (default 50); anything else is 400 \`invalid_limit\``, schema: { type: 'integer', minimum: 1, maximum: LIST_MAX_LIMIT, default: 50 } },
          { name: 'cursor', description: 'the `next_cursor` of the previous page, with the same filters; a foreign one is 400 `invalid_cursor`', schema: { type: 'string', minLength: 1 } },
        ],
        success: { status: 200, description: 'a page of events', json: page(ref('OrchestrationEvent')) },
      },
      post: {
        idempotent: true,
        versioned: 'read',
        summary: 'Emit an orchestration event',
        description:
          'Checks the envelope (400 naming the field, with the code of its rule) and queues the event for the flow runner; when a dispatch slot is free and nothing waits for one, an event due at once outside any sequence is started in the same append (answered `dispatched`, or `processed` when no flow matches it). With an `idempotency_key` already used in the organization: 200 with the first event, nothing queued. The organization may send ORCHESTRATION_EMITS_PER_MINUTE events a minute, emit and ingest together (bursts up to as many): past it 429 `rate_limited` with Retry-After, nothing queued.',
        access: 'user',
        role: 'admin',
        body: { json: envelopeBodySchema() },
        success: { status: 201, description: 'the event as stored: queued, or started on receipt', json: ref('OrchestrationEvent'), headers: { Location: { description: 'the path of the new event', schema: { type: 'string' } } } },
        otherAnswers: { '200': REPEATED_KEY },
        errors: [429],
      },
    },
    '/api/v1/org/events/ingest/{tenant_id}': {
      post: {
        idempotent: true,
        versioned: 'read',
        summary: 'Ingest an orchestration event (connector-style)',
        description:
          "The same envelope and answers as emitting, for producers that address the organization by id. The tenant in the path must be the caller's: 403 `tenant_mismatch` otherwise. Ingest and emit share the organization's budget of events a minute (429 `rate_limited` past it).",
        access: 'user',
        role: 'admin',
        body: { json: envelopeBodySchema() },
        success: { status: 201, description: 'the event as stored: queued, or started on receipt', json: ref('OrchestrationEvent'), headers: { Location: { description: 'the path of the new event', schema: { type: 'string' } } } },
        otherAnswers: { '200': REPEATED_KEY },
        errors: [429],
      },
    },
    '/api/v1/org/events/replay': {
      post: {
        idempotent: true,
        summary: 'Replay the root events of a time range',
        description: `Replays the root events (no causation_id, not themselves replays) received in [from, to), of \`name\` when given (an event name or \`prefix.*\`), oldest first: each gets a new event whose replay_of is it. At most \`limit\` (1 to ORCHESTRATION_REPLAY_MAX_PER_REQUEST, the default) per request; \`next_cursor\` replays the next ones when sent back with the same from, to and name, and is null when the range is done. \`reason\` (up to ${REPLAY_REASON_MAX_LENGTH} characters) is recorded on each original. With \`background: true\` the platform replays the whole range by itself, page after page (\`limit\` each, from \`cursor\` when given): 202 at once with the range replay, whose progress GET /api/v1/org/events/replays/{id} shows.`,
        access: 'user',
        role: 'admin',
        body: { json: schemaOfCodec(RangeReplayBody) },
        success: { status: 200, description: 'the replays made by this request', json: page(object({ replay_of: string('the original'), id: string('its replay') })) },
        otherAnswers: {
          '202': {
            description: 'with background: the range replay, recorded; the platform runs it',
            json: ref('RangeReplay'),
            headers: {
              Location: { description: "the path of the range replay's progress", schema: { type: 'string' } },
              'Idempotent-Replayed': { description: '`true` when this is the stored answer to an earlier request with the same Idempotency-Key', schema: { type: 'string', enum: ['true'] } },
            },
          },
        },
      },
    },
    '/api/v1/org/events/payloads/erase': {
      post: {
        summary: 'Erase the payloads of the days before a date',
        description:
          'Erases, now, the payloads, step outputs and error messages of the organization\'s events received before `before` (`YYYY-MM-DD`, UTC), as the retention (ORCHESTRATION_PAYLOAD_RETENTION_DAYS) does once it has passed: each day\'s key is deleted, its payloads read `{"$erased": true}`, its outputs null and its error messages `"[erased]"` everywhere, in the log too, and its events can no longer be retried or replayed. For a customer\'s request to be forgotten: payloads are kept by day, not by person (docs/orchestration-events.md, "Payload retention"). `before` is yesterday at the latest (400 `invalid_request` naming `before` otherwise): the payloads of today and yesterday are in use. Each day erased is an `OrchestrationPayloadsErased` of the audit log. Cannot be undone; asking again erases nothing more. 503 `read_model_rebuilding` while an upgrade rebuilds the events\' read model.',
        access: 'user',
        role: 'admin',
        body: { json: schemaOfCodec(PayloadErasureBody) },
        success: { status: 200, description: 'what this request erased', json: object({ erased_days: arrayOf(string('YYYY-MM-DD'), 'the days erased by this request, oldest first (at most 400: ask again for the rest); none when every one was erased before') }) },
        errors: [503],
      },
    },
    '/api/v1/org/events/redrive': {
      post: {
        summary: 'Re-queue the dead letters (or failed events), a page at a time',
        description:
          'Once the cause is fixed, re-queues the organization\'s events in `status` (`dead_letter` by default, or `failed`), received in [`from`, `to`) and of `name` (a name or `prefix.*`) when given, oldest first, at most `limit` (1 to 100, default 100) a request: each as its retry would be (`OrchestrationEventRequeued`, a fresh attempt budget, due at once). One that cannot be (it expired: `event_expired`; its payload was erased: `payload_erased`; it changed meanwhile: `event_not_retryable`) is skipped with its code and left as it is. Send `next_cursor` back as `cursor` for the next page (null after the last); the skipped ones are not met again. 400 `invalid_status`, `invalid_request` (`name`, `from`, `to`), `invalid_limit` or `invalid_cursor` naming the field.',
        access: 'user',
        role: 'admin',
        body: { json: schemaOfCodec(RedriveBody) },
        success: {
          status: 200,
          description: 'what this page did',
          json: object({
            requeued: arrayOf(string('event id'), 'the events re-queued, oldest first'),
            skipped: arrayOf(object({ id: string('event id'), code: enumOf(['event_expired', 'payload_erased', 'event_not_retryable'], 'why it was left as it is') }), 'the events of the page left as they were'),
            next_cursor: nullableString('the cursor of the next page; null after the last'),
          }),
        },
        errors: [400],
      },
    },
    '/api/v1/org/events/replays/{id}': {
      get: {
        summary: 'The progress of a range replay run in the background',
        description: "Pages and events replayed so far, and whether it is finished. Another organization's, or none, is 404 `range_replay_not_found`.",
        access: 'user',
        role: 'admin',
        success: { status: 200, description: 'the range replay', json: ref('RangeReplay') },
        errors: [404],
      },
    },
    '/api/v1/org/events/{id}': {
      get: {
        summary: 'An orchestration event',
        description: `The envelope, status, every attempt with its error and flow runs, replay_of and the replays of this event. ${ID_NOT_FOUND}`,
        access: 'user',
        role: 'admin',
        versioned: 'read',
        success: { status: 200, description: 'the event', json: ref('OrchestrationEvent') },
        errors: [404],
      },
    },
    '/api/v1/org/events/{id}/retry': {
      post: {
        summary: 'Retry a failed or dead-lettered event',
        description: `Re-reads the event's stream and queues it again, due at once, with a fresh budget of attempts. Only from failed or dead_letter: 409 \`event_not_retryable\` otherwise, 409 \`event_expired\` once its expiry has passed (replay it instead), 409 \`payload_erased\` once its payload is erased. ${ID_NOT_FOUND}`,
        access: 'user',
        role: 'admin',
        versioned: 'conditional',
        success: { status: 200, description: 'the event, queued again', json: ref('OrchestrationEvent') },
        errors: [404, 409],
      },
    },
    '/api/v1/org/events/{id}/replay': {
      post: {
        idempotent: true,
        versioned: 'read',
        summary: 'Replay one event as a new envelope',
        description: `In any status. Re-reads the original's stream and queues a new event with its name, source, payload, version, correlation, causation and depth, and replay_of the original (no idempotency key, no sequence, no delay; a ttl_seconds runs again from now, an absolute expiry is dropped); the original lists it in \`replays\`. \`reason\` (up to ${REPLAY_REASON_MAX_LENGTH} characters) is recorded on the original. 409 \`payload_erased\` once the original's payload is erased. ${ID_NOT_FOUND}`,
        access: 'user',
        role: 'admin',
        body: { json: schemaOfCodec(ReplayBody) },
        success: { status: 201, description: 'the new event', json: ref('OrchestrationEvent'), headers: { Location: { description: 'the path of the new event', schema: { type: 'string' } } } },
        errors: [404, 409],
      },
    },
  },
};
