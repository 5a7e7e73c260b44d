// The assistant hands a conversation to a person itself (application/chat/handoff-tool.ts): in a
// widget visitor's conversation of an organization whose plan has handoffs and whose handoff
// webhook is on, the model is offered `hand_off_to_person`; when it calls it, the turn ends with
// the handoff note, the conversation is handed off with the model's reason (the visitor as
// actor, as the widget's button does), the webhook gets it, and the assistant is quiet
// afterwards; the report after an approval may hand off too. Not offered to members in the
// console, nor while the webhook is off. The model is
// a local OpenAI-compatible server with scripted completions.

import { expect } from 'chai';
import { HANDOFF_NOTE, HANDOFF_TOOL_NAME } from '../../application/chat/handoff-tool';
import { conversationStream } from '../../domain/conversation/conversation';
import { type Account, registerOwner } from '../support/identity';
import { OpenAiCompatibleServer } from '../support/openai-compatible-server';
import { type TestServer, startTestServer } from '../support/server';
import { eventually } from '../support/stores';
import { subscribeTo } from '../support/subscriptions';
import { createIntegrationAs, createToolAs } from '../support/tools';
import { type WebhookReceiver, startWebhookReceiver } from '../support/webhook-receiver';
import { type TenantWidget, newVisitorId, visitorAsks, visitorPartyOf, widgetOf } from '../support/widget-visitors';

describe('the assistant hands a conversation to a person (hand_off_to_person)', function () {
  this.timeout(60_000);
  let llm: OpenAiCompatibleServer;
  let receiver: WebhookReceiver;
  let server: TestServer;
  let owner: Account;
  let widget: TenantWidget;
  const as = (account: Account) => ({ authorization: `Bearer ${account.token}` });
  const offeredTools = (index: number): string[] => (llm.requests[index].body.tools ?? []).map((tool) => tool.function.name);

  before(async () => {
    llm = await OpenAiCompatibleServer.start();
    receiver = await startWebhookReceiver();
    server = await startTestServer({
      SCRYPT_LOG_N: '12',
      ...llm.settings,
      OUTBOUND_ALLOW_INSECURE: 'true',
      OUTBOUND_ALLOW_PRIVATE_NETWORKS: 'true',
    });
    owner = await registerOwner(server, 'assistant-handoff-org');
    await subscribeTo(server, owner.tenant_id, 'growth');
    widget = await widgetOf(server, owner);
    const configured = await server.request('POST', '/api/v1/tenant/handoff', { headers: as(owner), body: { url: `${receiver.url}/hooks/handoff` } });
    expect(configured.status, configured.text).to.equal(200);
  });
  after(async () => {
    await server.close();
    await receiver.close();
    await llm.close();
  });

  it('hands the visitor’s conversation off with the model’s reason when it asks: the note answers, the webhook is told, the assistant is quiet after', async () => {
    const visitorId = newVisitorId();
    const before = llm.requests.length;
    llm.script({ tool_calls: [{ id: 'call_person', name: HANDOFF_TOOL_NAME, arguments: ['{"reason":"Wants a refund above ', 'the limit\\nfor order 88"}'] }] });
    const turn = await visitorAsks(server, widget, visitorId, 'I want my money back, let me talk to someone');
    expect(offeredTools(before)).to.include(HANDOFF_TOOL_NAME);
    expect(turn.answer?.text).to.equal(HANDOFF_NOTE);
    expect(turn.tool_steps).to.deep.equal([]);

    const party = visitorPartyOf(server, visitorId);
    const events = await server.platform.eventStore.readStream(conversationStream(turn.conversation_id));
    // Handed off first, then the answer announcing it: never an answer promising a person who was not asked.
    expect(events.map((event) => event.type)).to.deep.equal(['ConversationStarted', 'UserMessagePosted', 'ConversationStatusChanged', 'AssistantAnswered']);
    expect(events[2].data).to.deep.include({ status: 'handed_off', previous_status: 'open', reason: 'Wants a refund above the limit for order 88' });
    expect(events[2].metadata.actor).to.deep.equal(party);
    const shown = await server.request('GET', `/api/v1/conversations/${turn.conversation_id}`, { headers: as(owner) });
    expect(shown.json).to.deep.include({ status: 'handed_off', assistant_paused: true });

    await eventually(() => receiver.deliveries.some((delivery) => JSON.parse(delivery.body.toString()).conversation.id === turn.conversation_id), 10_000, 'the handoff at the webhook');
    const payload = JSON.parse(receiver.deliveries.find((one) => JSON.parse(one.body.toString()).conversation.id === turn.conversation_id)!.body.toString());
    expect(payload).to.deep.include({ type: 'conversation.handed_off', handed_off_by: party, reason: 'Wants a refund above the limit for order 88' });
    expect(payload.messages.map((message: { role: string; text: string }) => [message.role, message.text])).to.deep.equal([['user', 'I want my money back, let me talk to someone']]);

    const asked = llm.requests.length;
    const paused = await visitorAsks(server, widget, visitorId, 'Hello? Anyone?', turn.conversation_id);
    expect(paused).to.deep.include({ paused: true, answer: null });
    expect(llm.requests.length).to.equal(asked);
  });

  it('is offered, alone, to the report after an approval: the model hands off there, and the report ends with the note', async () => {
    const integrationId = await createIntegrationAs(server, owner, widget.workspace_id, { name: 'Shop', base_url: 'http://127.0.0.1:9/shop', auth: { kind: 'none' } });
    const refundParameters = { type: 'object', properties: { order: { type: 'string' } }, required: ['order'], additionalProperties: false };
    await createToolAs(server, owner, widget.workspace_id, {
      integration_id: integrationId,
      name: 'refund_order',
      description: 'Refunds an order',
      method: 'POST',
      path: '/refunds',
      input_schema: refundParameters,
      chat: true,
      risk: 'approval_required',
    });
    const visitorId = newVisitorId();
    llm.script({ tool_calls: [{ id: 'call_refund', name: 'refund_order', arguments: ['{"order":"88"}'] }] });
    const turn = await visitorAsks(server, widget, visitorId, 'Refund order 88 please');
    expect(turn.tool_steps.map((step) => step.status)).to.deep.equal(['awaiting_approval']);

    const asked = llm.requests.length;
    llm.script({ deltas: ['The refund was refused.'], tool_calls: [{ id: 'call_person', name: HANDOFF_TOOL_NAME, arguments: ['{"reason":"Refund refused, the customer needs a person"}'] }] });
    const refused = await server.request('POST', `/api/v1/tool-calls/${turn.tool_steps[0].tool_call_id}/refuse`, { headers: as(owner), body: { reason: 'above the limit' } });
    expect(refused.status, refused.text).to.equal(200);
    await eventually(async () => (await server.platform.eventStore.readStream(conversationStream(turn.conversation_id))).some((event) => event.type === 'AssistantFollowedUp'), 20_000, 'the report');

    // The report was offered the handoff alone, no business tool.
    expect(offeredTools(asked)).to.deep.equal([HANDOFF_TOOL_NAME]);
    const events = await server.platform.eventStore.readStream(conversationStream(turn.conversation_id));
    const types = events.map((event) => event.type);
    expect(types.slice(-2)).to.deep.equal(['ConversationStatusChanged', 'AssistantFollowedUp']);
    expect(events[events.length - 2].data).to.deep.include({ status: 'handed_off', previous_status: 'open', reason: 'Refund refused, the customer needs a person' });
    expect(events[events.length - 2].metadata.actor).to.deep.equal({ kind: 'system', id: 'chat_tool_follow_up' });
    expect(events[events.length - 1].data).to.deep.include({ text: `The refund was refused.\n\n${HANDOFF_NOTE}`, error: null });
    await eventually(() => receiver.deliveries.some((delivery) => JSON.parse(delivery.body.toString()).conversation.id === turn.conversation_id), 10_000, 'the handoff at the webhook');
  });

  it('is not offered to a member in the console, nor to visitors while the handoff webhook is off', async () => {
    llm.script({ deltas: ['Hello from the console.'] });
    const consoleTurn = await server.request('POST', '/api/v1/chat', { headers: as(owner), body: { message: 'Can a person help me?' } });
    expect(consoleTurn.status, consoleTurn.text).to.equal(200);
    expect(offeredTools(llm.requests.length - 1)).to.not.include(HANDOFF_TOOL_NAME);

    const off = await server.request('POST', '/api/v1/tenant/handoff', { headers: as(owner), body: { url: `${receiver.url}/hooks/handoff`, enabled: false } });
    expect(off.status, off.text).to.equal(200);
    llm.script({ deltas: ['I can help you here.'] });
    const turn = await visitorAsks(server, widget, newVisitorId(), 'Can a person help me?');
    expect(turn.answer?.text).to.equal('I can help you here.');
    expect(offeredTools(llm.requests.length - 1)).to.not.include(HANDOFF_TOOL_NAME);
  });
});
