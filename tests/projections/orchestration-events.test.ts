// The orchestration events read model. An event recorded as processed on receipt (one event)
// gets the document the three events it stands for (queued, dispatch started with no flow,
// processed) build, so a reader cannot tell which way the platform recorded it; so do the
// last steps an attempt's end carries. An event started on receipt gets the document its emit
// was answered with.

import { expect } from 'chai';
import { orchestrationEventStream } from '../../domain/orchestration-event/orchestration-event';
import { ORCHESTRATION_EVENTS, type OrchestrationEventDocument, orchestrationEventsProjection, startedOnReceiptDocument } from '../../projections/orchestration-events';
import { getOrchestrationEvent } from '../../application/orchestration/orchestration-events';
import type { ReadModelDependencies } from '../../application/shared/read-models';
import { newEvent } from '../support/events';
import { runningProjections } from '../support/stores';

describe('orchestration events projection', () => {
  const running = runningProjections([orchestrationEventsProjection]);
  const at = '2026-11-28T09:00:00.000Z';
  const received = (eventId: string) => ({
    event_id: eventId,
    tenant_id: 't1',
    name: 'shop.order.prepared',
    source: 'flow:prepare_order',
    payload: { order_id: 'A-1' },
    version: 1,
    correlation_id: 'evt-root',
    causation_id: 'evt-root',
    idempotency_key: 'flow:k',
    sequence_key: null,
    sequence_n: null,
    expires_at: null,
    ttl_seconds: null,
    depth: 1,
    delay_seconds: 0,
    replay_of: null,
    not_before: at,
    received_via: 'emit' as const,
    received_at: at,
  });
  const document = async (id: string): Promise<OrchestrationEventDocument | null> => {
    expect(await running.caughtUp()).to.equal(true);
    return running.stores.readStore.collection<OrchestrationEventDocument>(ORCHESTRATION_EVENTS).get(id);
  };
  const withoutIdentity = ({ id: _id, revision: _revision, position: _position, ...rest }: OrchestrationEventDocument) => rest;

  it('builds from OrchestrationEventProcessedOnReceipt the document of queued, started with no flow, processed', async () => {
    await running.stores.eventStore.appendToStream(orchestrationEventStream('e1'), [
      newEvent('OrchestrationEventQueued', received('e1')),
      newEvent('OrchestrationDispatchStarted', { event_id: 'e1', tenant_id: 't1', attempt: 1, flows: [], started_at: at }),
      newEvent('OrchestrationEventProcessed', { event_id: 'e1', tenant_id: 't1', attempt: 1, processed_at: at }),
    ]);
    await running.stores.eventStore.appendToStream(orchestrationEventStream('e2'), [newEvent('OrchestrationEventProcessedOnReceipt', received('e2'))]);
    const threeEvents = await document('e1');
    const oneEvent = await document('e2');
    expect(oneEvent).to.include({ id: 'e2', status: 'processed', due_at: null, attempt_started_at: null, settled_at: at, attempts_since_requeue: 1 });
    expect(withoutIdentity(oneEvent!)).to.deep.equal(withoutIdentity(threeEvents!));
  });

  it('builds from an event queued and started in one append the document the emit answers with (startedOnReceiptDocument)', async () => {
    const queued = newEvent('OrchestrationEventQueued', received('e3'));
    const started = newEvent('OrchestrationDispatchStarted', { event_id: 'e3', tenant_id: 't1', attempt: 1, flows: ['f@c'], started_at: at });
    const appended = await running.stores.eventStore.appendToStream(orchestrationEventStream('e3'), [queued, started]);
    const built = await document('e3');
    expect(built).to.include({ status: 'dispatched', attempt_started_at: at, due_at: null, single_due_at: null, attempts_since_requeue: 1 });
    const position = appended.position as number;
    const answered = startedOnReceiptDocument(
      { type: 'OrchestrationEventQueued', data: received('e3'), revision: 0, position },
      { type: 'OrchestrationDispatchStarted', data: started.data as { event_id: string; tenant_id: string; attempt: number; flows: string[]; started_at: string }, revision: 1, position },
    );
    expect(answered).to.deep.equal(built);
  });

  it('adds the last steps an attempt ended with, recorded in its end, after the steps recorded before', async () => {
    const step = (index: number, outcome: 'succeeded' | 'skipped') => ({ flow: 'f@c', step: index, request_id: `e1:1:f@c:${index}`, outcome, error: null, output: { n: index }, tool_call_id: null });
    const later = '2026-11-28T09:00:02.000Z';
    const ended = { ...newEvent('OrchestrationEventProcessed', { event_id: 'e1', tenant_id: 't1', attempt: 1, processed_at: later, steps: [step(1, 'succeeded'), step(2, 'skipped')] }) };
    ended.metadata = { ...ended.metadata, schema_version: 2 };
    await running.stores.eventStore.appendToStream(orchestrationEventStream('e1'), [
      newEvent('OrchestrationEventQueued', received('e1')),
      newEvent('OrchestrationDispatchStarted', { event_id: 'e1', tenant_id: 't1', attempt: 1, flows: ['f@c'], started_at: at }),
      newEvent('OrchestrationStepRecorded', { event_id: 'e1', tenant_id: 't1', attempt: 1, ...step(0, 'succeeded'), recorded_at: at }),
      ended,
    ]);
    const doc = (await document('e1'))!;
    const [attempt] = doc.attempts;
    expect(attempt).to.include({ outcome: 'processed', ended_at: later });
    // Each output is kept apart from its step, by request id (a day's erasure empties them at once).
    expect(attempt.steps).to.deep.equal([
      { ...step(0, 'succeeded'), output: null, recorded_at: at },
      { ...step(1, 'succeeded'), output: null, recorded_at: later },
      { ...step(2, 'skipped'), output: null, recorded_at: later },
    ]);
    expect(doc.outputs).to.deep.equal({ 'e1:1:f@c:0': { n: 0 }, 'e1:1:f@c:1': { n: 1 }, 'e1:1:f@c:2': { n: 2 } });
  });

  it("scrubs the payloads and outputs of an organization's day once they are erased, and keeps none recorded after", async () => {
    const nextDay = '2026-11-29T00:00:01.000Z';
    const output = (id: string, index: number, recordedAt = at) => ({ event_id: id, tenant_id: 't1', attempt: 1, flow: 'f@c', step: index, request_id: `${id}:1:f@c:${index}`, outcome: 'succeeded', error: null, output: { n: index }, tool_call_id: null, recorded_at: recordedAt });
    for (const id of ['d1', 'd2']) {
      await running.stores.eventStore.appendToStream(orchestrationEventStream(id), [
        newEvent('OrchestrationEventQueued', received(id)),
        newEvent('OrchestrationDispatchStarted', { event_id: id, tenant_id: 't1', attempt: 1, flows: ['f@c'], started_at: at }),
        newEvent('OrchestrationStepRecorded', output(id, 0)),
      ]);
    }
    // Another organization's event of the same day, and one of the next day: not theirs to scrub.
    await running.stores.eventStore.appendToStream(orchestrationEventStream('other'), [newEvent('OrchestrationEventQueued', { ...received('other'), tenant_id: 't2' })]);
    await running.stores.eventStore.appendToStream(orchestrationEventStream('later'), [newEvent('OrchestrationEventQueued', { ...received('later'), received_at: nextDay, not_before: nextDay })]);
    expect(await document('d1')).to.deep.include({ payload_day: '2026-11-28', payload_erased: false, payload: { order_id: 'A-1' }, outputs: { 'd1:1:f@c:0': { n: 0 } } });

    await running.stores.eventStore.appendToStream('orchestrationPayloads-t1:2026-11-28', [newEvent('OrchestrationPayloadsErased', { tenant_id: 't1', day: '2026-11-28', reason: 'retention', erased_at: nextDay })]);
    for (const id of ['d1', 'd2']) expect(await document(id), id).to.deep.include({ payload: { $erased: true }, payload_erased: true, outputs: {} });
    expect(await document('other')).to.deep.include({ payload: { order_id: 'A-1' }, payload_erased: false });
    expect(await document('later')).to.deep.include({ payload: { order_id: 'A-1' }, payload_erased: false, payload_day: '2026-11-29' });
    // A step recorded after (a late one of an attempt still running) keeps its record, not its output.
    await running.stores.eventStore.appendToStream(orchestrationEventStream('d1'), [newEvent('OrchestrationStepRecorded', output('d1', 1, nextDay))]);
    const d1 = (await document('d1'))!;
    expect(d1.outputs).to.deep.equal({});
    expect(d1.attempts[0].steps.map((recorded) => [recorded.step, recorded.output])).to.deep.equal([
      [0, null],
      [1, null],
    ]);
    // Rebuilt after the erasure, the payload reads erased in the log: so in the document.
    await running.stores.eventStore.appendToStream(orchestrationEventStream('rebuilt'), [newEvent('OrchestrationEventQueued', { ...received('rebuilt'), payload: { $erased: true } })]);
    expect(await document('rebuilt')).to.deep.include({ payload_erased: true });
  });

  it("keeps error messages apart from their errors, empties them with the day's payloads, and keeps those recorded after", async () => {
    const nextDay = '2026-11-29T00:00:01.000Z';
    const refused = { code: 'customer_unknown', message: 'no customer Ana Lima' };
    const failedStep = { event_id: 'f1', tenant_id: 't1', attempt: 1, flow: 'f@c', step: 0, request_id: 'f1:1:f@c:0', outcome: 'failed', error: refused, output: null, tool_call_id: null, recorded_at: at };
    await running.stores.eventStore.appendToStream(orchestrationEventStream('f1'), [
      newEvent('OrchestrationEventQueued', received('f1')),
      newEvent('OrchestrationDispatchStarted', { event_id: 'f1', tenant_id: 't1', attempt: 1, flows: ['f@c'], started_at: at }),
      newEvent('OrchestrationStepRecorded', failedStep),
      newEvent('OrchestrationAttemptFailed', { event_id: 'f1', tenant_id: 't1', attempt: 1, error: refused, next_attempt_at: nextDay, failed_at: at, payload_day: '2026-11-28' }),
    ]);
    const failed = (await document('f1'))!;
    expect(failed.error_messages).to.deep.equal({ 'f1:1:f@c:0': refused.message, 'attempt:1': refused.message });
    expect(failed.attempts[0].error).to.deep.equal({ code: 'customer_unknown' });
    expect(failed.attempts[0].steps[0].error).to.deep.equal({ code: 'customer_unknown' });
    const view = async () => (await getOrchestrationEvent({ readStore: running.stores.readStore }, 't1', 'f1')).value;
    expect((await view()).attempts[0]).to.deep.include({ error: refused });
    expect((await view()).attempts[0].flow_runs[0].steps[0].error).to.deep.equal(refused);

    await running.stores.eventStore.appendToStream('orchestrationPayloads-t1:2026-11-28', [newEvent('OrchestrationPayloadsErased', { tenant_id: 't1', day: '2026-11-28', reason: 'retention', erased_at: nextDay })]);
    expect((await document('f1'))!.error_messages).to.deep.equal({});
    expect((await view()).attempts[0].error).to.deep.equal({ code: 'customer_unknown', message: '[erased]' });
    expect((await view()).attempts[0].flow_runs[0].steps[0].error).to.deep.equal({ code: 'customer_unknown', message: '[erased]' });
    // The platform's own end after the erasure (no day: recorded in clear) keeps its message.
    const erasedError = { code: 'payload_erased', message: 'the payload was erased' };
    await running.stores.eventStore.appendToStream(orchestrationEventStream('f1'), [
      newEvent('OrchestrationDispatchStarted', { event_id: 'f1', tenant_id: 't1', attempt: 2, flows: ['f@c'], started_at: nextDay }),
      newEvent('OrchestrationAttemptFailed', { event_id: 'f1', tenant_id: 't1', attempt: 2, error: erasedError, next_attempt_at: null, failed_at: nextDay }),
    ]);
    expect((await document('f1'))!.error_messages).to.deep.equal({ 'attempt:2': erasedError.message });
    expect((await view()).attempts[1].error).to.deep.equal(erasedError);
  });

  it('reads a document of version 3, whose errors hold their messages', async () => {
    const error = { code: 'connector_failed', message: 'the connector answered 500' };
    const attempt = { attempt: 1, flows: ['f@c'], started_at: at, outcome: 'failed', error, next_attempt_at: null, ended_at: at, steps: [{ flow: 'f@c', step: 0, request_id: 'v3:1:f@c:0', outcome: 'failed', error, output: null, tool_call_id: null, recorded_at: at }] };
    await running.stores.eventStore.appendToStream(orchestrationEventStream('v3'), [newEvent('OrchestrationEventQueued', received('v3'))]);
    const { error_messages: _messages, ...current } = (await document('v3'))!;
    const version3 = { ...current, attempts: [attempt] } as OrchestrationEventDocument;
    const served = { readStore: { collection: () => ({ get: async () => version3, find: async () => ({ items: [] }) }) } } as unknown as ReadModelDependencies;
    const { value } = await getOrchestrationEvent(served, 't1', 'v3');
    expect(value.attempts[0].error).to.deep.equal(error);
    expect(value.attempts[0].flow_runs[0].steps[0].error).to.deep.equal(error);
  });

  it('keeps a waiting event\'s due time in the field of its kind, and neither once it runs or settles', async () => {
    const later = '2026-11-28T09:05:00.000Z';
    const sequenced = { ...received('s1'), sequence_key: 'order-7', sequence_n: 1 };
    await running.stores.eventStore.appendToStream(orchestrationEventStream('e1'), [newEvent('OrchestrationEventQueued', received('e1'))]);
    await running.stores.eventStore.appendToStream(orchestrationEventStream('s1'), [newEvent('OrchestrationEventQueued', { ...sequenced, event_id: 's1' })]);
    expect(await document('e1')).to.include({ due_at: at, single_due_at: at, sequence_due_at: null });
    expect(await document('s1')).to.include({ due_at: at, single_due_at: null, sequence_due_at: at });

    for (const id of ['e1', 's1']) {
      await running.stores.eventStore.appendToStream(orchestrationEventStream(id), [newEvent('OrchestrationDispatchStarted', { event_id: id, tenant_id: 't1', attempt: 1, flows: ['f'], started_at: at })]);
    }
    expect(await document('e1')).to.include({ status: 'dispatched', due_at: null, single_due_at: null, sequence_due_at: null });
    expect(await document('s1')).to.include({ status: 'dispatched', due_at: null, single_due_at: null, sequence_due_at: null });

    const error = { code: 'connector_failed', message: 'the connector answered 500' };
    for (const id of ['e1', 's1']) {
      await running.stores.eventStore.appendToStream(orchestrationEventStream(id), [newEvent('OrchestrationAttemptFailed', { event_id: id, tenant_id: 't1', attempt: 1, error, next_attempt_at: later, failed_at: at })]);
    }
    expect(await document('e1')).to.include({ status: 'failed', due_at: later, single_due_at: later, sequence_due_at: null });
    expect(await document('s1')).to.include({ status: 'failed', due_at: later, single_due_at: null, sequence_due_at: later });
  });
});
