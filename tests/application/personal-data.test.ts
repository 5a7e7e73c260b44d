// Personal data at the decoding store (application/events/personal-data.ts): the fields a type
// declares personal are sealed on append (appendToStream and appendToStreams) and opened on
// every read (a stream, $all, a subscription), so deciders, projections and sagas read them in
// clear; a text of an event written before its type had personal fields reads as it was; an
// erased subject's fields read as ERASED_PERSONAL_DATA; a store without a vault refuses both.

import { expect } from 'chai';
import { DecodingEventStore } from '../../application/events/decoding-event-store';
import { PersonalDataVaultMissingError } from '../../application/events/personal-data';
import type { DomainRecordedEvent } from '../../application/ports/domain-event-store';
import { conversationStream, conversationSubject } from '../../domain/conversation/conversation';
import { orchestrationEventStream } from '../../domain/orchestration-event/orchestration-event';
import { orchestrationPayloadSubject } from '../../domain/orchestration-event/payloads';
import { ERASED_EXCHANGE, type ToolCallEvent, toolCallStream, toolCallSubject } from '../../domain/tool-call/tool-call';
import { ERASED_PERSONAL_DATA } from '../../domain/shared/events';
import { domainEvents } from '../../domain/events';
import { newEvent, testMetadata } from '../support/events';
import { type EmbeddedStores, ManualClock, embeddedStores } from '../support/stores';

const T = 't1';
const AT = '2026-12-02T09:00:00.000Z';
const USER = { kind: 'user' as const, id: 'u1' };
const started = (id: string, title: string) => newEvent('ConversationStarted', { conversation_id: id, tenant_id: T, workspace_id: null, channel: 'console', title, started_by: USER, started_at: AT });
const posted = (id: string, messageId: string, text: string) =>
  newEvent('UserMessagePosted', { conversation_id: id, tenant_id: T, message_id: messageId, text, author: USER, end_user_token_sealed: null, end_user_session_sealed: null, posted_at: AT });
const deleted = (id: string) => newEvent('ConversationDeleted', { conversation_id: id, tenant_id: T, deleted_at: AT });

const textsOf = (events: readonly DomainRecordedEvent[]): string[] =>
  events.flatMap((event) => (event.type === 'ConversationStarted' ? [event.data.title] : event.type === 'UserMessagePosted' ? [event.data.text] : []));

describe('personal data sealed and opened at the decoding store', () => {
  let stores: EmbeddedStores;

  beforeEach(() => {
    stores = embeddedStores(new ManualClock());
  });
  afterEach(() => stores.dispose());

  it('stores the declared fields sealed, other fields and types as given, and reads them in clear from a stream, $all and a subscription', async () => {
    const stream = conversationStream('c1');
    await stores.events.appendToStream(stream, [started('c1', 'Parcel for Ana Lima'), posted('c1', 'm1', 'Ana Lima, 5 Rua Augusta')]);
    await stores.events.appendToStreams([{ stream: conversationStream('c2'), events: [started('c2', 'Call Bruno on 555-0101')] }]);
    await stores.events.appendToStream('tenant-t1', [newEvent('TenantCreated', { tenant_id: T, name: 'Acme', slug: 'acme', created_by: 'u1', created_at: AT, branding: {}, settings: {} })]);

    const stored = JSON.stringify(await stores.eventStore.readAll({ maxCount: 100 }));
    for (const text of ['Ana Lima', 'Rua Augusta', 'Bruno', '555-0101']) expect(stored).to.not.include(text);
    const [storedStart] = await stores.eventStore.readStream(stream);
    expect(storedStart.data).to.deep.include({ conversation_id: 'c1', channel: 'console', started_by: USER });
    expect((storedStart.data as { title: unknown }).title).to.have.keys('personal_data', 'subject');
    expect(stored).to.include('"name":"Acme"');

    expect(textsOf(await stores.events.readStream(stream))).to.deep.equal(['Parcel for Ana Lima', 'Ana Lima, 5 Rua Augusta']);
    expect(textsOf(await stores.events.readAll({ maxCount: 100 }))).to.deep.equal(['Parcel for Ana Lima', 'Ana Lima, 5 Rua Augusta', 'Call Bruno on 555-0101']);
    const subscription = stores.events.subscribeToAll({ fromPosition: 0 });
    const seen: DomainRecordedEvent[] = [];
    for await (const message of subscription) {
      if (message.kind === 'event') seen.push(message.event);
      if (message.kind === 'caught_up') break;
    }
    await subscription.stop();
    expect(textsOf(seen)).to.deep.equal(['Parcel for Ana Lima', 'Ana Lima, 5 Rua Augusta', 'Call Bruno on 555-0101']);
  });

  it('reads a text written before its type had personal fields as it was written', async () => {
    await stores.eventStore.appendToStream(conversationStream('old'), [started('old', 'Written in clear'), posted('old', 'm1', 'Also in clear')]);
    expect(textsOf(await stores.events.readStream(conversationStream('old')))).to.deep.equal(['Written in clear', 'Also in clear']);
  });

  it('reads an erased subject\'s fields as erased, its plain fields and other subjects as before, and records nothing more of it', async () => {
    await stores.events.appendToStream(conversationStream('c1'), [started('c1', 'Erase me'), posted('c1', 'm1', 'My passport is X123')]);
    await stores.events.appendToStream(conversationStream('c2'), [started('c2', 'Keep me')]);
    // Read (and shared from then on) before the erasure: what was opened is not shown after it.
    expect(textsOf(await stores.events.readStream(conversationStream('c1')))).to.deep.equal(['Erase me', 'My passport is X123']);
    expect(textsOf(await stores.events.readStream(conversationStream('c1')))).to.deep.equal(['Erase me', 'My passport is X123']);
    await stores.personalData.erase(conversationSubject('c1'));

    const erased = await stores.events.readStream(conversationStream('c1'));
    expect(textsOf(erased)).to.deep.equal([ERASED_PERSONAL_DATA, ERASED_PERSONAL_DATA]);
    expect(erased[1].data).to.deep.include({ conversation_id: 'c1', message_id: 'm1', author: USER });
    expect(textsOf(await stores.events.readStream(conversationStream('c2')))).to.deep.equal(['Keep me']);
    let error: unknown = null;
    await stores.events.appendToStream(conversationStream('c1'), [posted('c1', 'm2', 'One more')]).catch((caught: unknown) => (error = caught));
    expect(String(error)).to.match(/was erased/);
    // An event with no personal field is still recorded.
    await stores.events.appendToStream(conversationStream('c1'), [deleted('c1')]);
    expect(await stores.events.readStream(conversationStream('c1'))).to.have.length(3);
  });

  it('seals a field of any JSON value as JSON, reads it back as it was, and once erased as the value its declaration gives', async () => {
    const identity = { tenant_id: T, workspace_id: 'w1', tool_call_id: 'tc1', tool_id: 'tool-1' };
    const exchange = { request: { method: 'GET', url: 'https://shop.example.com/orders/A-17?email=ana%40example.com', headers: {}, body: null }, response: { status: 200, headers: {}, body: '{"name":"Ana Lima"}', truncated: false } };
    await stores.events.appendToStream(toolCallStream('tc1'), [
      newEvent('ToolCallRequested', {
        ...identity,
        tool_name: 'order_status',
        risk: 'read',
        arguments: { order_number: 'A-17', email: 'ana@example.com', tags: [1, 'two', null] },
        caller: USER,
        origin: { kind: 'test' },
        awaiting_approval: false,
        end_user_token_sealed: null,
        end_user_session_sealed: null,
        requested_at: AT,
      }),
      newEvent('ToolCallSucceeded', { ...identity, status: 200, latency_ms: 5, exchange, finished_at: AT }),
    ]);
    const stored = JSON.stringify(await stores.eventStore.readStream(toolCallStream('tc1')));
    for (const text of ['A-17', 'ana', 'Ana Lima']) expect(stored).to.not.include(text);
    expect(stored).to.include('"json":true');

    const [requested, succeeded] = (await stores.events.readStream(toolCallStream('tc1'))) as unknown as ToolCallEvent[];
    expect(requested.type === 'ToolCallRequested' && requested.data.arguments).to.deep.equal({ order_number: 'A-17', email: 'ana@example.com', tags: [1, 'two', null] });
    expect(succeeded.type === 'ToolCallSucceeded' && succeeded.data.exchange).to.deep.equal(exchange);

    await stores.personalData.erase(toolCallSubject('tc1'));
    const [erasedRequest, erasedSuccess] = (await stores.events.readStream(toolCallStream('tc1'))) as unknown as ToolCallEvent[];
    expect(erasedRequest.type === 'ToolCallRequested' && erasedRequest.data.arguments).to.deep.equal({});
    expect(erasedRequest.data).to.deep.include({ tool_name: 'order_status', tool_call_id: 'tc1' });
    expect(erasedSuccess.type === 'ToolCallSucceeded' && erasedSuccess.data.exchange).to.deep.equal(ERASED_EXCHANGE);
  });

  it('seals texts inside fields where their declared paths lead (an object, each element of an array), the objects around them readable, and reads them erased once erased', async () => {
    const day = '2026-12-02';
    const identity = { event_id: 'e1', tenant_id: T };
    const step = (index: number, error: { code: string; message: string } | null) => ({ flow: 'f', step: index, request_id: `e1:1:f:${index}`, outcome: error ? ('skipped' as const) : ('succeeded' as const), error, output: null, tool_call_id: null });
    const refused = { code: 'customer_unknown', message: 'no customer ana@example.com' };
    await stores.events.appendToStream(orchestrationEventStream('e1'), [
      newEvent('OrchestrationStepRecorded', { ...identity, attempt: 1, ...step(0, refused), recorded_at: AT, payload_day: day }),
      newEvent('OrchestrationStepRecorded', { ...identity, attempt: 1, ...step(1, null), recorded_at: AT, payload_day: day }),
      newEvent('OrchestrationAttemptFailed', { ...identity, attempt: 1, error: refused, next_attempt_at: null, failed_at: AT, payload_day: day }),
      { ...newEvent('OrchestrationEventProcessed', { ...identity, attempt: 2, processed_at: AT, steps: [step(0, null), step(1, { code: 'unsupported_flow', message: 'Bruno’s flow' })], outputs: [null, null], payload_day: day }), metadata: testMetadata({ schema_version: domainEvents.versionOf('OrchestrationEventProcessed') }) },
    ]);
    const stored = await stores.eventStore.readStream(orchestrationEventStream('e1'));
    for (const text of ['ana@example.com', 'Bruno']) expect(JSON.stringify(stored)).to.not.include(text);
    const storedError = (stored[0].data as { error: Record<string, unknown> }).error;
    expect(storedError.code).to.equal('customer_unknown');
    expect(storedError.message).to.have.keys('personal_data', 'subject');
    expect((stored[1].data as { error: unknown }).error).to.equal(null);

    const messagesOf = (events: readonly DomainRecordedEvent[]): unknown[] =>
      events.flatMap((event) => (event.type === 'OrchestrationStepRecorded' || event.type === 'OrchestrationAttemptFailed' ? [event.data.error?.message ?? null] : event.type === 'OrchestrationEventProcessed' ? event.data.steps.map((recorded) => recorded.error?.message ?? null) : []));
    expect(messagesOf(await stores.events.readStream(orchestrationEventStream('e1')))).to.deep.equal(['no customer ana@example.com', null, 'no customer ana@example.com', null, 'Bruno’s flow']);

    await stores.personalData.erase(orchestrationPayloadSubject(T, day));
    const erased = await stores.events.readStream(orchestrationEventStream('e1'));
    expect(messagesOf(erased)).to.deep.equal([ERASED_PERSONAL_DATA, null, ERASED_PERSONAL_DATA, null, ERASED_PERSONAL_DATA]);
    expect(erased[0].type === 'OrchestrationStepRecorded' && erased[0].data.error?.code).to.equal('customer_unknown');
    // The stored rows, shared with every reader, are left as they were.
    expect((stored[0].data as { error: { message: unknown } }).error.message).to.have.keys('personal_data', 'subject');

    // An event naming no day (an attempt's end written after its day was erased) is stored as it is.
    const platformError = { code: 'payload_erased', message: 'the payload was erased' };
    await stores.events.appendToStream(orchestrationEventStream('e2'), [
      newEvent('OrchestrationAttemptFailed', { event_id: 'e2', tenant_id: T, attempt: 1, error: platformError, next_attempt_at: null, failed_at: AT, payload_day: undefined }),
    ]);
    const [storedEnd] = await stores.eventStore.readStream(orchestrationEventStream('e2'));
    expect((storedEnd.data as { error: unknown }).error).to.deep.equal(platformError);
  });

  it('without a vault, refuses to append personal data and to read it sealed, and passes everything else', async () => {
    await stores.events.appendToStream(conversationStream('c1'), [started('c1', 'Sealed')]);
    const noVault = new DecodingEventStore(stores.eventStore);
    let error: unknown = null;
    await noVault.appendToStream(conversationStream('c2'), [started('c2', 'Would be in clear')]).catch((caught: unknown) => (error = caught));
    expect(error).to.be.instanceOf(PersonalDataVaultMissingError);
    expect(await stores.eventStore.readStream(conversationStream('c2'))).to.deep.equal([]);
    error = null;
    await noVault.readStream(conversationStream('c1')).catch((caught: unknown) => (error = caught));
    expect(error).to.be.instanceOf(PersonalDataVaultMissingError);
    await noVault.appendToStream('tenant-t1', [newEvent('TenantCreated', { tenant_id: T, name: 'Acme', slug: 'acme', created_by: 'u1', created_at: AT, branding: {}, settings: {} })]);
    expect(await noVault.readStream('tenant-t1')).to.have.length(1);
  });
});
