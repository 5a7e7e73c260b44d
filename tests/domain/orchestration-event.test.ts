import { expect } from 'chai';
import { isLeft, isRight } from 'fp-ts/Either';
import {
  type Envelope,
  type EnvelopeBody,
  type OrchestrationEventCommand,
  type OrchestrationEventEvent,
  DEAD_LETTERED_NOTICE,
  PLATFORM_EVENT_PREFIX,
  envelopeProblem,
  reservedNameProblem,
  orchestrationEventDecider,
  replayEnvelope,
  resolveEnvelope,
  type StepRecordData,
  stepRequestId,
  stepsOf,
} from '../../domain/orchestration-event/orchestration-event';
import { ERASED_PAYLOAD, delayPastRetention, orchestrationPayloadSubject, payloadKeyKeptUntil, payloadRetentionDaysOf } from '../../domain/orchestration-event/payloads';
import { firstDayKept } from '../../application/orchestration/payload-retention';
import { domainEvents } from '../../domain/events';
import { FIXED_NOW, deciderSpec } from '../support/decider-spec';

const LIMITS = { maxPayloadBytes: 1024, maxDepth: 3, payloadRetentionDays: 2 };
const at = (ms: number): Date => new Date(FIXED_NOW.getTime() + ms);
const iso = (ms: number): string => at(ms).toISOString();

describe('orchestration event: the envelope rules', () => {
  const body = (over: Partial<EnvelopeBody> & { replay_of?: unknown } = {}): EnvelopeBody & { replay_of?: unknown } => ({ name: 'shop.order.created', ...over }) as EnvelopeBody;
  const refusal = (over: Partial<EnvelopeBody> & { replay_of?: unknown }) => {
    const problem = envelopeProblem(body(over), LIMITS, FIXED_NOW);
    return problem === null ? null : { code: problem.code, field: problem.field, kind: problem.kind };
  };

  it('accepts a bare name and a full envelope', () => {
    expect(refusal({})).to.equal(null);
    expect(
      refusal({
        name: 'billing.invoice_item.payment_failed',
        source: 'billing-service',
        payload: { id: 1 },
        version: 2,
        correlation_id: 'corr-1',
        causation_id: 'evt-0',
        idempotency_key: 'key-1',
        sequence_key: 'order-1',
        sequence_n: 1,
        ttl_seconds: 60,
        depth: 3,
        delay_seconds: 59,
      }),
    ).to.equal(null);
    expect(refusal({ name: 'crm.contact.address.changed', expires_at: iso(60_000), source: null, payload: null })).to.equal(null);
  });

  it('publishes the name grammar: three or more lowercase dotted segments, each starting with a letter', () => {
    for (const name of ['shop.order', 'Shop.order.created', 'shop..created', 'shop.order.created.', '1shop.order.created', 'shop.order.cre-ated', 'shop.order._x', '', `a.b.${'c'.repeat(200)}`]) {
      expect(refusal({ name }), name).to.deep.equal({ code: 'invalid_event_name', field: 'name', kind: 'invalid' });
    }
    for (const name of ['a.b.c', 'shop.order.created', 'x1.y_2.z3', 'a.b.c.d.e']) expect(refusal({ name }), name).to.equal(null);
  });

  it('keeps the names under svc. for the platform: received any other way they are refused, naming the name; a replay keeps its name', () => {
    for (const via of ['emit', 'ingest', 'schedule'] as const) {
      const refused = reservedNameProblem(DEAD_LETTERED_NOTICE, via);
      expect(refused && { code: refused.code, field: refused.field }, via).to.deep.equal({ code: 'reserved_event_name', field: 'name' });
    }
    for (const via of ['platform', 'replay'] as const) expect(reservedNameProblem(DEAD_LETTERED_NOTICE, via), via).to.equal(null);
    expect(reservedNameProblem('svcx.order.created', 'emit')).to.equal(null);
    expect(DEAD_LETTERED_NOTICE.startsWith(PLATFORM_EVENT_PREFIX)).to.equal(true);
  });

  it('names the field of every other rule', () => {
    const cases: Array<[Partial<EnvelopeBody> & { replay_of?: unknown }, string, string]> = [
      [{ source: '' }, 'invalid_request', 'source'],
      [{ source: 'svc\u0000' }, 'invalid_request', 'source'],
      [{ payload: { text: 'x'.repeat(1100) } }, 'payload_too_large', 'payload'],
      [{ version: 0 }, 'invalid_request', 'version'],
      [{ version: 1.5 }, 'invalid_request', 'version'],
      [{ correlation_id: 'has space' }, 'invalid_request', 'correlation_id'],
      [{ causation_id: '' }, 'invalid_request', 'causation_id'],
      [{ idempotency_key: 'k'.repeat(201) }, 'invalid_request', 'idempotency_key'],
      [{ sequence_key: 'order-1' }, 'sequence_incomplete', 'sequence_n'],
      [{ sequence_n: 1 }, 'sequence_incomplete', 'sequence_key'],
      [{ sequence_key: 'order-1', sequence_n: 0 }, 'invalid_request', 'sequence_n'],
      [{ expires_at: iso(60_000), ttl_seconds: 60 }, 'expiry_conflict', 'ttl_seconds'],
      [{ ttl_seconds: 0 }, 'invalid_request', 'ttl_seconds'],
      [{ expires_at: 'tomorrow' }, 'invalid_request', 'expires_at'],
      [{ expires_at: '2026-11-23T10:00:00' }, 'invalid_request', 'expires_at'],
      [{ expires_at: iso(0) }, 'already_expired', 'expires_at'],
      [{ delay_seconds: -1 }, 'invalid_request', 'delay_seconds'],
      [{ delay_seconds: 60, ttl_seconds: 60 }, 'delay_past_expiry', 'delay_seconds'],
      [{ depth: -1 }, 'invalid_request', 'depth'],
      [{ depth: 4 }, 'depth_exceeded', 'depth'],
      [{ replay_of: 'evt-1' }, 'replay_of_reserved', 'replay_of'],
      // What an erased payload reads as is the service's; a delay longer than the payload is kept would find it erased.
      [{ payload: { $erased: true } }, 'invalid_request', 'payload'],
      [{ payload: { order: 1, $erased: false } }, 'invalid_request', 'payload'],
      [{ delay_seconds: 2 * 24 * 3600 + 1 }, 'delay_past_retention', 'delay_seconds'],
    ];
    for (const [over, code, field] of cases) expect(refusal(over), JSON.stringify(over)).to.deep.equal({ code, field, kind: 'invalid' });
    // As long as the retention, or any delay when payloads are kept until erased otherwise.
    expect(refusal({ delay_seconds: 2 * 24 * 3600 })).to.equal(null);
    expect(envelopeProblem(body({ delay_seconds: 30 * 24 * 3600 }), { ...LIMITS, payloadRetentionDays: 0 }, FIXED_NOW)).to.equal(null);
    expect(refusal({ payload: { nested: { $erased: true } } })).to.equal(null);
  });

  it('fills the defaults; a known cause gives the depth a floor and the correlation its default', () => {
    const resolved = resolveEnvelope({ name: 'a.b.c' } as EnvelopeBody, 'evt-1', null, LIMITS);
    expect(isRight(resolved) && resolved.right).to.deep.equal({
      name: 'a.b.c',
      source: null,
      payload: {},
      version: 1,
      correlation_id: 'evt-1',
      causation_id: null,
      idempotency_key: null,
      sequence_key: null,
      sequence_n: null,
      expires_at: null,
      ttl_seconds: null,
      depth: 0,
      delay_seconds: 0,
      replay_of: null,
    });
    const caused = resolveEnvelope({ name: 'a.b.c', causation_id: 'evt-0', depth: 0 } as EnvelopeBody, 'evt-1', { depth: 1, correlation_id: 'corr-0' }, LIMITS);
    expect(isRight(caused) && caused.right).to.include({ depth: 2, correlation_id: 'corr-0', causation_id: 'evt-0' });
    const unknownCause = resolveEnvelope({ name: 'a.b.c', causation_id: 'elsewhere-1', depth: 2 } as EnvelopeBody, 'evt-1', null, LIMITS);
    expect(isRight(unknownCause) && unknownCause.right).to.include({ depth: 2, correlation_id: 'evt-1' });
    const tooDeep = resolveEnvelope({ name: 'a.b.c', causation_id: 'evt-0' } as EnvelopeBody, 'evt-1', { depth: 3, correlation_id: 'c' }, LIMITS);
    expect(isLeft(tooDeep) && { code: tooDeep.left.code, field: tooDeep.left.field }).to.deep.equal({ code: 'depth_exceeded', field: 'depth' });
  });

  it('replays keep what the event says and drop what belonged to the original', () => {
    const original: Envelope = {
      name: 'a.b.c',
      source: 'svc',
      payload: { n: 1 },
      version: 2,
      correlation_id: 'corr',
      causation_id: null,
      idempotency_key: 'key',
      sequence_key: 'seq',
      sequence_n: 4,
      expires_at: iso(1000),
      ttl_seconds: null,
      depth: 1,
      delay_seconds: 30,
      replay_of: null,
    };
    expect(replayEnvelope(original, 'evt-1')).to.deep.equal({ ...original, idempotency_key: null, sequence_key: null, sequence_n: null, expires_at: null, delay_seconds: 0, replay_of: 'evt-1' });
  });

  it('derives a step request id from the event, attempt, flow and step', () => {
    expect(stepRequestId('evt-1', 2, 'refunds', 0)).to.equal('evt-1:2:refunds:0');
  });
});

describe('orchestration event (decider)', () => {
  const ids = { event_id: 'evt-1', tenant_id: 't1' };
  const envelope: Envelope = {
    name: 'shop.order.created',
    source: null,
    payload: { order: 'o-1' },
    version: 1,
    correlation_id: 'evt-1',
    causation_id: null,
    idempotency_key: null,
    sequence_key: null,
    sequence_n: null,
    expires_at: null,
    ttl_seconds: null,
    depth: 0,
    delay_seconds: 0,
    replay_of: null,
  };
  const spec = (ms = 0) => deciderSpec(orchestrationEventDecider, at(ms));
  const emit = (over: Partial<Envelope> = {}): OrchestrationEventCommand => ({ type: 'EmitOrchestrationEvent', data: { ...ids, envelope: { ...envelope, ...over }, received_via: 'emit' } });
  const queued = (over: Partial<Envelope> & { not_before?: string } = {}): OrchestrationEventEvent => ({
    type: 'OrchestrationEventQueued',
    data: { ...ids, ...envelope, not_before: iso(0), ...over, received_via: 'emit', received_at: iso(0) },
  });
  const start = (gap: { missing_from: number; missing_to: number; waited_ms: number } | null = null): OrchestrationEventCommand => ({ type: 'StartDispatch', data: { tenant_id: 't1', flows: ['refunds'], gap } });
  const started = (attempt: number, ms = 0): OrchestrationEventEvent => ({ type: 'OrchestrationDispatchStarted', data: { ...ids, attempt, flows: ['refunds'], started_at: iso(ms) } });
  const error = { code: 'connector_failed', message: 'the connector answered 500' };
  const fail = (attempt: number, retryAt: string | null): OrchestrationEventCommand => ({ type: 'FailAttempt', data: { tenant_id: 't1', attempt, error, retry_at: retryAt } });
  // Sealed under the key of the day it was received; the steps' outputs apart from their records.
  const day = iso(0).slice(0, 10);
  // The error's message sealed under the same day's key.
  const failed = (attempt: number, next: string | null, ms = 0): OrchestrationEventEvent => ({ type: 'OrchestrationAttemptFailed', data: { ...ids, attempt, error, next_attempt_at: next, failed_at: iso(ms), payload_day: day } });
  const deadLettered = (attempts: number, ms = 0): OrchestrationEventEvent => ({ type: 'OrchestrationEventDeadLettered', data: { ...ids, attempts, error, dead_lettered_at: iso(ms), payload_day: day } });
  const processed = (attempt: number, steps: StepRecordData[] = []): OrchestrationEventEvent => ({
    type: 'OrchestrationEventProcessed',
    data: { ...ids, attempt, processed_at: iso(0), steps: steps.map((recorded) => ({ ...recorded, output: null })), outputs: steps.length === 0 ? undefined : steps.map((recorded) => recorded.output), payload_day: day },
  });
  const stepData = (requestId: string, over: Partial<StepRecordData> = {}): StepRecordData => ({ flow: 'refunds', step: 0, request_id: requestId, outcome: 'succeeded', error: null, output: { refund: 'r-1' }, tool_call_id: null, ...over });
  const step = (attempt: number, requestId = stepRequestId('evt-1', attempt, 'refunds', 0)): OrchestrationEventCommand => ({ type: 'RecordSteps', data: { tenant_id: 't1', attempt, steps: [stepData(requestId)] } });
  const requeue: OrchestrationEventCommand = { type: 'Requeue', data: { tenant_id: 't1' } };
  const expire: OrchestrationEventCommand = { type: 'Expire', data: { tenant_id: 't1' } };

  it('queues an emitted event with its times; the same id again records nothing; another tenant cannot take the id', () => {
    spec().given([]).when(emit()).then([queued()]);
    spec().given([]).when(emit({ delay_seconds: 30, ttl_seconds: 60 })).then([queued({ delay_seconds: 30, ttl_seconds: 60, not_before: iso(30_000), expires_at: iso(60_000) })]);
    spec().given([]).when(emit({ expires_at: iso(5000) })).then([queued({ expires_at: iso(5000) })]);
    spec().given([queued()]).when(emit({ payload: { other: true } })).thenNothingHappened();
    spec()
      .given([queued()])
      .when({ type: 'EmitOrchestrationEvent', data: { event_id: 'evt-1', tenant_id: 't2', envelope, received_via: 'emit' } })
      .thenThrows('conflict', 'orchestration_event_exists');
  });

  it('records as received and processed, in one event, an event the emitter knows no flow matches, when it is due at once and in no sequence', () => {
    const knowing = (flows: string[] | undefined, over: Partial<Envelope> = {}): OrchestrationEventCommand => ({ type: 'EmitOrchestrationEvent', data: { ...ids, envelope: { ...envelope, ...over }, received_via: 'emit', flows } });
    const processedOnReceipt: OrchestrationEventEvent = { type: 'OrchestrationEventProcessedOnReceipt', data: queued().data as Extract<OrchestrationEventEvent, { type: 'OrchestrationEventQueued' }>['data'] };
    spec().given([]).when(knowing([])).then([processedOnReceipt]);
    // Settled: the same id again records nothing, a retry is refused as for any processed event, a replay is recorded.
    spec().given([processedOnReceipt]).when(knowing([])).thenNothingHappened();
    spec().given([processedOnReceipt]).when(requeue).thenThrows('conflict', 'event_not_retryable');
    spec().given([processedOnReceipt]).when(start()).thenThrows('conflict', 'event_not_dispatchable');
    // A flow to run, flows unknown, a delay, a sequence: the dispatcher takes it as any other.
    spec().given([]).when(knowing(['refunds'])).then([queued()]);
    spec().given([]).when(knowing(undefined)).then([queued()]);
    spec().given([]).when(knowing([], { delay_seconds: 30 })).then([queued({ delay_seconds: 30, not_before: iso(30_000) })]);
    spec().given([]).when(knowing([], { sequence_key: 'order-1', sequence_n: 1 })).then([queued({ sequence_key: 'order-1', sequence_n: 1 })]);
    // Expired on arrival: left for the expiry pass, never dispatched.
    spec().given([]).when(knowing([], { expires_at: iso(0) })).then([queued({ expires_at: iso(0) })]);
    spec().given([queued()]).when(knowing([])).thenNothingHappened();
  });

  it('starts the first attempt in the append that queues it when a dispatcher has a slot for it, the event is due at once and in no sequence, and a flow matches', () => {
    const claimed = (flows: string[] | undefined, over: Partial<Envelope> = {}): OrchestrationEventCommand => ({
      type: 'EmitOrchestrationEvent',
      data: { ...ids, envelope: { ...envelope, ...over }, received_via: 'emit', ...(flows === undefined ? {} : { flows }), start: true },
    });
    spec().given([]).when(claimed(['refunds'])).then([queued(), started(1)]);
    // Running: the same id again records nothing; the attempt goes on as one a pass started.
    spec().given([queued(), started(1)]).when(claimed(['refunds'])).thenNothingHappened();
    spec().given([queued(), started(1)]).when(step(1)).then([{ type: 'OrchestrationStepRecorded', data: { ...ids, attempt: 1, ...stepData(stepRequestId('evt-1', 1, 'refunds', 0)), recorded_at: iso(0), payload_day: day } }]);
    spec().given([queued(), started(1)]).when(start()).thenThrows('conflict', 'event_not_dispatchable');
    // No flow: processed on receipt, as without a slot.
    spec().given([]).when(claimed([])).then([{ type: 'OrchestrationEventProcessedOnReceipt', data: queued().data as Extract<OrchestrationEventEvent, { type: 'OrchestrationEventQueued' }>['data'] }]);
    // Flows unknown, a delay, a sequence, expired on arrival: queued for the dispatcher's passes.
    spec().given([]).when(claimed(undefined)).then([queued()]);
    spec().given([]).when(claimed(['refunds'], { delay_seconds: 30 })).then([queued({ delay_seconds: 30, not_before: iso(30_000) })]);
    spec().given([]).when(claimed(['refunds'], { sequence_key: 'order-1', sequence_n: 1 })).then([queued({ sequence_key: 'order-1', sequence_n: 1 })]);
    spec().given([]).when(claimed(['refunds'], { expires_at: iso(0) })).then([queued({ expires_at: iso(0) })]);
  });

  it('starts an attempt only when due, not past its expiry, and records the gap it waited for first', () => {
    spec().given([queued()]).when(start()).then([started(1)]);
    spec(29_999).given([queued({ not_before: iso(30_000) })]).when(start()).thenThrows('conflict', 'event_not_due');
    spec(30_000).given([queued({ not_before: iso(30_000) })]).when(start()).then([started(1, 30_000)]);
    spec(5000).given([queued({ expires_at: iso(5000) })]).when(start()).thenThrows('conflict', 'event_expired');
    spec().given([queued(), started(1)]).when(start()).thenThrows('conflict', 'event_not_dispatchable');
    const sequenced = queued({ sequence_key: 'order-1', sequence_n: 3 });
    spec(60_000)
      .given([sequenced])
      .when(start({ missing_from: 1, missing_to: 2, waited_ms: 60_000 }))
      .then([
        { type: 'OrchestrationSequenceGapRecorded', data: { ...ids, sequence_key: 'order-1', missing_from: 1, missing_to: 2, waited_ms: 60_000, recorded_at: iso(60_000) } },
        started(1, 60_000),
      ]);
  });

  it('records each step of the running attempt once; a step again with its request id records nothing', () => {
    const recorded: OrchestrationEventEvent = {
      type: 'OrchestrationStepRecorded',
      data: { ...ids, attempt: 1, flow: 'refunds', step: 0, request_id: 'evt-1:1:refunds:0', outcome: 'succeeded', error: null, output: { refund: 'r-1' }, tool_call_id: null, recorded_at: iso(0), payload_day: day },
    };
    spec().given([queued(), started(1)]).when(step(1)).then([recorded]);
    spec().given([queued(), started(1), recorded]).when(step(1)).thenNothingHappened();
    spec().given([queued(), started(1), recorded]).when(step(1, 'another')).thenThrows('conflict', 'step_already_recorded');
    spec().given([queued(), started(1)]).when(step(2)).thenThrows('conflict', 'attempt_mismatch');
    spec().given([queued()]).when(step(1)).thenThrows('conflict', 'dispatch_not_running');
  });

  it('processes an attempt with no flow as it starts, in the same append', () => {
    const none: OrchestrationEventCommand = { type: 'StartDispatch', data: { tenant_id: 't1', flows: [], gap: null } };
    spec()
      .given([queued()])
      .when(none)
      .then([{ type: 'OrchestrationDispatchStarted', data: { ...ids, attempt: 1, flows: [], started_at: iso(0) } }, processed(1)]);
    spec().given([queued(), started(1), failed(1, iso(0))]).when(none).then([{ type: 'OrchestrationDispatchStarted', data: { ...ids, attempt: 2, flows: [], started_at: iso(0) } }, processed(2)]);
  });

  it("ends the attempt processed with its last step, recorded in that one event, when the runner says so, unless that step failed", () => {
    const last = (outcome: 'succeeded' | 'skipped' | 'failed'): OrchestrationEventCommand => ({
      type: 'RecordSteps',
      data: { tenant_id: 't1', attempt: 1, steps: [stepData('evt-1:1:refunds:0', { outcome })], ends_attempt: true },
    });
    const recorded = (outcome: 'succeeded' | 'skipped' | 'failed'): OrchestrationEventEvent => ({
      type: 'OrchestrationStepRecorded',
      data: { ...ids, attempt: 1, flow: 'refunds', step: 0, request_id: 'evt-1:1:refunds:0', outcome, error: null, output: { refund: 'r-1' }, tool_call_id: null, recorded_at: iso(0), payload_day: day },
    });
    spec().given([queued(), started(1)]).when(last('succeeded')).then([processed(1, [stepData('evt-1:1:refunds:0')])]);
    spec().given([queued(), started(1)]).when(last('skipped')).then([processed(1, [stepData('evt-1:1:refunds:0', { outcome: 'skipped' })])]);
    spec().given([queued(), started(1)]).when(last('failed')).then([recorded('failed')]);
    // Already recorded (a resumed attempt): nothing again; the runner then marks it processed itself.
    spec().given([queued(), started(1), recorded('succeeded')]).when(last('succeeded')).thenNothingHappened();
    // Recorded with the end: the attempt is over, a step of it again is refused.
    spec().given([queued(), started(1), processed(1, [stepData('evt-1:1:refunds:0')])]).when(last('succeeded')).thenThrows('conflict', 'dispatch_not_running');
  });

  it("records a flow's last tool step with the emits after it in one append, in order, with the attempt's end unless one failed", () => {
    const emitStep = stepData('evt-1:1:refunds:1', { step: 1, output: { emitted: 'shop.refund.sent', event_id: 'evt-2' } });
    const group = (steps: StepRecordData[], endsAttempt = true): OrchestrationEventCommand => ({ type: 'RecordSteps', data: { tenant_id: 't1', attempt: 1, steps, ends_attempt: endsAttempt } });
    const recordedOf = (data: StepRecordData): OrchestrationEventEvent => ({ type: 'OrchestrationStepRecorded', data: { ...ids, attempt: 1, ...data, recorded_at: iso(0), payload_day: day } });
    const toolStep = stepData('evt-1:1:refunds:0');
    spec().given([queued(), started(1)]).when(group([toolStep, emitStep])).then([processed(1, [toolStep, emitStep])]);
    spec().given([queued(), started(1)]).when(group([toolStep, emitStep], false)).then([recordedOf(toolStep), recordedOf(emitStep)]);
    // A skipped emit (past the depth bound) still ends it; a failed step does not.
    spec().given([queued(), started(1)]).when(group([toolStep, { ...emitStep, outcome: 'skipped' }])).then([processed(1, [toolStep, { ...emitStep, outcome: 'skipped' }])]);
    spec().given([queued(), started(1)]).when(group([{ ...toolStep, outcome: 'failed' }, emitStep])).then([recordedOf({ ...toolStep, outcome: 'failed' }), recordedOf(emitStep)]);
    // Recorded one by one before (a stream from an older runner, resumed): only what is missing, with the end.
    spec().given([queued(), started(1), recordedOf(toolStep)]).when(group([toolStep, emitStep])).then([processed(1, [emitStep])]);
    spec().given([queued(), started(1), recordedOf(toolStep), recordedOf(emitStep)]).when(group([toolStep, emitStep])).thenNothingHappened();
    spec().given([queued(), started(1), recordedOf(toolStep)]).when(group([{ ...toolStep, request_id: 'another' }, emitStep])).thenThrows('conflict', 'step_already_recorded');
    spec().given([queued(), started(1)]).when(group([toolStep, toolStep])).thenThrows('invalid', 'step_repeated');
    spec().given([queued(), started(1)]).when(group([])).thenThrows('invalid', 'no_steps');
    spec().given([queued()]).when(group([toolStep, emitStep])).thenThrows('conflict', 'dispatch_not_running');
  });

  it('fails an attempt with a retry time, then starts the next one once due; without one it dead-letters', () => {
    spec().given([queued(), started(1)]).when(fail(1, iso(2000))).then([failed(1, iso(2000))]);
    spec(1999).given([queued(), started(1), failed(1, iso(2000))]).when(start()).thenThrows('conflict', 'event_not_due');
    spec(2000).given([queued(), started(1), failed(1, iso(2000))]).when(start()).then([started(2, 2000)]);
    spec().given([queued(), started(1), failed(1, iso(2000)), started(2)]).when(fail(2, null)).then([failed(2, null), deadLettered(2)]);
    spec().given([queued(), started(1)]).when(fail(2, null)).thenThrows('conflict', 'attempt_mismatch');
  });

  it('marks the running attempt processed, once', () => {
    spec().given([queued(), started(1)]).when({ type: 'MarkProcessed', data: { tenant_id: 't1', attempt: 1 } }).then([processed(1)]);
    spec().given([queued(), started(1), processed(1)]).when({ type: 'MarkProcessed', data: { tenant_id: 't1', attempt: 1 } }).thenThrows('conflict', 'dispatch_not_running');
  });

  it('retries only a failed or dead-lettered event, not past its expiry', () => {
    const requeued: OrchestrationEventEvent = { type: 'OrchestrationEventRequeued', data: { ...ids, previous_status: 'dead_letter', requeued_at: iso(0) } };
    spec().given([queued(), started(1), failed(1, null), deadLettered(1)]).when(requeue).then([requeued]);
    spec().given([queued(), started(1), failed(1, iso(9000))]).when(requeue).then([{ ...requeued, data: { ...requeued.data, previous_status: 'failed' } } as OrchestrationEventEvent]);
    // Re-queued, it is due at once, with a fresh budget.
    spec().given([queued(), started(1), failed(1, null), deadLettered(1), requeued]).when(start()).then([started(2)]);
    for (const history of [[queued()], [queued(), started(1)], [queued(), started(1), processed(1)]]) {
      spec().given(history).when(requeue).thenThrows('conflict', 'event_not_retryable');
    }
    spec(5000).given([queued({ expires_at: iso(5000) }), started(1), failed(1, null), deadLettered(1)]).when(requeue).thenThrows('conflict', 'event_expired');
  });

  it('expires a waiting event once its expiry passed; a running or settled one is left as it is', () => {
    const expired: OrchestrationEventEvent = { type: 'OrchestrationEventExpired', data: { ...ids, expires_at: iso(5000), expired_at: iso(5000) } };
    spec(5000).given([queued({ expires_at: iso(5000) })]).when(expire).then([expired]);
    spec(4999).given([queued({ expires_at: iso(5000) })]).when(expire).thenThrows('conflict', 'event_not_expired');
    spec(5000).given([queued({ expires_at: iso(5000) }), expired]).when(expire).thenNothingHappened();
    spec(5000).given([queued({ expires_at: iso(5000) }), started(1)]).when(expire).thenNothingHappened();
    spec(6000).given([queued({ expires_at: iso(5000) }), started(1), failed(1, iso(9000))]).when(expire).then([{ ...expired, data: { ...expired.data, expired_at: iso(6000) } } as OrchestrationEventEvent]);
    spec().given([queued()]).when(expire).thenThrows('conflict', 'event_not_expired');
  });

  describe('once its payload is erased (its day\'s key, by the retention)', () => {
    const erasedQueued = (over: Partial<Envelope> & { not_before?: string } = {}) => queued({ payload: { ...ERASED_PAYLOAD }, ...over });
    const erasedError = { code: 'payload_erased', message: 'the payload was erased (its retention passed): the flows cannot run on it' };
    // No day: written after its key was erased, they hold nothing of it to seal.
    const erasedEnd = (attempt: number): OrchestrationEventEvent[] => [
      { type: 'OrchestrationAttemptFailed', data: { ...ids, attempt, error: erasedError, next_attempt_at: null, failed_at: iso(0), payload_day: undefined } },
      { type: 'OrchestrationEventDeadLettered', data: { ...ids, attempts: attempt, error: erasedError, dead_lettered_at: iso(0), payload_day: undefined } },
    ];

    it('dead-letters it at its next start instead of running its flows on nothing', () => {
      spec()
        .given([erasedQueued()])
        .when(start())
        .then([
          started(1),
          ...erasedEnd(1),
        ]);
      spec()
        .given([erasedQueued(), started(1), failed(1, iso(0))])
        .when(start())
        .then([
          started(2),
          ...erasedEnd(2),
        ]);
    });

    it('refuses the steps of an attempt running as it was erased, recording its end, failed and dead-lettered, and no output', () => {
      // A refusal that records events: what the steps' append carried besides (their follow-ons) is not appended.
      spec().given([erasedQueued(), started(1)]).when(step(1)).thenRejectsWithEvents('conflict', 'payload_erased', erasedEnd(1));
    });

    it('ends an attempt failing as it was erased the same way: its error is no longer sealed, and no retry could run', () => {
      spec().given([erasedQueued(), started(1)]).when(fail(1, iso(60_000))).then(erasedEnd(1));
      spec().given([erasedQueued(), started(1)]).when(fail(1, null)).then(erasedEnd(1));
    });

    it('refuses to re-queue or replay it (409 payload_erased), and a replay made of it', () => {
      spec().given([erasedQueued(), started(1), failed(1, null), deadLettered(1)]).when(requeue).thenThrows('conflict', 'payload_erased');
      spec().given([erasedQueued(), started(1), processed(1)]).when({ type: 'RecordReplay', data: { tenant_id: 't1', replay_id: 'evt-2', reason: null } }).thenThrows('conflict', 'payload_erased');
      spec().given([]).when(emit({ payload: { ...ERASED_PAYLOAD }, replay_of: 'evt-0' })).thenThrows('conflict', 'payload_erased');
      // A payload that only looks alike is not erased.
      spec().given([queued({ payload: { $erased: true, order: 1 } }), started(1), failed(1, null), deadLettered(1)]).when(requeue).then([{ type: 'OrchestrationEventRequeued', data: { ...ids, previous_status: 'dead_letter', requeued_at: iso(0) } }]);
    });
  });

  it('seals the payload and the step outputs under the key of the organization and the day the event was received', () => {
    const subjectOf = (type: string, data: Record<string, unknown>) => domainEvents.personalFieldsOf(type)?.subject(data);
    expect(subjectOf('OrchestrationEventQueued', queued().data)).to.equal(orchestrationPayloadSubject('t1', day));
    expect(subjectOf('OrchestrationStepRecorded', { ...ids, recorded_at: '2026-12-24T00:00:01.000Z', payload_day: '2026-12-23' })).to.equal('orchestration:t1:2026-12-23');
    expect(domainEvents.personalFieldsOf('OrchestrationEventQueued')?.json).to.deep.equal({ payload: ERASED_PAYLOAD });
    expect(domainEvents.personalFieldsOf('OrchestrationStepRecorded')?.json).to.deep.equal({ output: null });
    expect(domainEvents.personalFieldsOf('OrchestrationEventProcessed')?.json).to.deep.equal({ outputs: [] });
    expect(domainEvents.personalFieldsOf('OrchestrationDispatchStarted')).to.equal(undefined);
    // Error messages too (a connector's words), the codes left readable; an attempt's end naming no day seals nothing.
    expect(domainEvents.personalFieldsOf('OrchestrationStepRecorded')?.nested).to.deep.equal(['error.message']);
    expect(domainEvents.personalFieldsOf('OrchestrationAttemptFailed')?.nested).to.deep.equal(['error.message']);
    expect(domainEvents.personalFieldsOf('OrchestrationEventDeadLettered')?.nested).to.deep.equal(['error.message']);
    expect(domainEvents.personalFieldsOf('OrchestrationEventProcessed')?.nested).to.deep.equal(['steps[].error.message']);
    expect(subjectOf('OrchestrationAttemptFailed', failed(1, null).data)).to.equal(orchestrationPayloadSubject('t1', day));
    expect(subjectOf('OrchestrationAttemptFailed', { ...ids, failed_at: iso(0) })).to.equal(null);
  });

  it('lets a reader keep a day\'s key in memory until two days after the day began, and the retention never erases it sooner', () => {
    expect(payloadKeyKeptUntil('orchestration:t1:2026-12-01')?.toISOString()).to.equal('2026-12-03T00:00:00.000Z');
    expect(payloadKeyKeptUntil('orchestration:t:with:colons:2026-02-28')?.toISOString()).to.equal('2026-03-02T00:00:00.000Z');
    for (const other of ['conversation:c1', 'orchestration:t1:2026-02-30', 'orchestration:t1:2026-13-01', 'orchestration:t1:today']) expect(payloadKeyKeptUntil(other), other).to.equal(null);
    // The shortest retention (1 day), at every hour of four days: a day is erased only once its key may be.
    for (let hour = 0; hour < 96; hour += 1) {
      const now = new Date(Date.parse('2026-12-01T00:00:00.000Z') + hour * 3600_000 + 1);
      const kept = firstDayKept(now, 1);
      const lastErased = new Date(Date.parse(`${kept}T00:00:00.000Z`) - 24 * 3600_000).toISOString().slice(0, 10);
      expect(payloadKeyKeptUntil(`orchestration:t1:${lastErased}`)!.getTime(), now.toISOString()).to.be.at.most(now.getTime());
    }
  });

  it("keeps an organization's payloads its own number of days within the operator's, and refuses a delay that would outlast them", () => {
    expect(payloadRetentionDaysOf(30, undefined)).to.equal(30);
    expect(payloadRetentionDaysOf(30, 7)).to.equal(7);
    expect(payloadRetentionDaysOf(30, 90)).to.equal(30);
    expect(payloadRetentionDaysOf(0, 90)).to.equal(90);
    expect(payloadRetentionDaysOf(0, undefined)).to.equal(0);
    expect(delayPastRetention(7 * 24 * 3600, 7)).to.equal(null);
    expect(delayPastRetention(7 * 24 * 3600 + 1, 7)?.code).to.equal('delay_past_retention');
    expect(delayPastRetention(365 * 24 * 3600, 0)).to.equal(null);
  });

  it('reads steps recorded before their outputs were sealed apart: the day they were recorded stands in for the payload day', () => {
    const v1Step = { ...ids, attempt: 1, ...stepData('r-0'), recorded_at: '2026-11-20T23:59:59.000Z' };
    const step = domainEvents.decode('OrchestrationStepRecorded', v1Step, 1);
    expect(step.ok && step.event.data).to.deep.include({ payload_day: '2026-11-20', output: { refund: 'r-1' } });
    const v2Processed = { ...ids, attempt: 1, processed_at: '2026-11-21T08:00:00.000Z', steps: [stepData('r-0'), stepData('r-1', { step: 1, output: null })] };
    const decoded = domainEvents.decode('OrchestrationEventProcessed', v2Processed, 2);
    if (!decoded.ok || decoded.event.type !== 'OrchestrationEventProcessed') throw new Error('not decoded');
    expect(decoded.event.data).to.deep.include({ payload_day: '2026-11-21', outputs: [{ refund: 'r-1' }, null] });
    expect(decoded.event.data.steps.map((recorded) => recorded.output)).to.deep.equal([null, null]);
    expect(stepsOf(decoded.event.data)).to.deep.equal([stepData('r-0'), stepData('r-1', { step: 1, output: null })]);
    const v1Processed = domainEvents.decode('OrchestrationEventProcessed', { ...ids, attempt: 1, processed_at: '2026-11-21T08:00:00.000Z' }, 1);
    expect(v1Processed.ok && v1Processed.event.data).to.deep.include({ steps: [], outputs: undefined });
  });

  it('records each replay once, in any status; another tenant or no event is 404', () => {
    const record = (replayId: string): OrchestrationEventCommand => ({ type: 'RecordReplay', data: { tenant_id: 't1', replay_id: replayId, reason: null } });
    const replayed: OrchestrationEventEvent = { type: 'OrchestrationEventReplayed', data: { ...ids, replay_id: 'evt-2', reason: null, replayed_at: iso(0) } };
    spec().given([queued(), started(1), processed(1)]).when(record('evt-2')).then([replayed]);
    spec().given([queued(), replayed]).when(record('evt-2')).thenNothingHappened();
    spec().given([]).when(record('evt-2')).thenThrows('not_found', 'orchestration_event_not_found');
    spec().given([queued()]).when({ type: 'Requeue', data: { tenant_id: 't2' } }).thenThrows('not_found', 'orchestration_event_not_found');
  });
});
