// Connector tools in chat (issue #13 point 3): the example connector (in process, its OTPs
// captured) registered through an SDK connection with auto_register, a scripted
// OpenAI-compatible server as the model. The model calls a connector tool; the connector
// saga invokes it (`tool.invoke` with the conversation, channel, organization and the end
// user's headers, a request_id derived from the call); a `challenge` reaches the user as a
// `tool` event with its prompt; the user's next message is the answer, sent as `tool.resume`
// and never recorded, shown to the model or logged in clear; the result reaches the model and
// the final answer streams. The authentication context the connector returns with it is sent
// back on the conversation's later calls (not asked again), not in another conversation, not
// once the end user cleared their identity, not past its age. A wrong code (`denied`) and an unknown order (`customer_not_found`)
// are clear answers; a disabled connection's tools are neither offered nor callable; the saga
// sends a call once per outcome, repeats one interrupted mid-call once with the same
// request_id, and never a third time.

import { expect } from 'chai';
import type pino from 'pino';
import { type ConnectorServer } from '../../adapters/connector-sdk';
import { createExampleConnector } from '../../adapters/connector-sdk/example/connector';
import { SignedConnectorClient } from '../../adapters/connector-client/connector-client';
import type { DomainRecordedEvent, RecordedOf } from '../../application/ports/domain-event-store';
import { connectorToolCallsSaga } from '../../application/tool-call/connector-tool-calls';
import { authenticationToSend } from '../../application/tool-call/connector-authentication';
import { askLateChallenge } from '../../application/chat/tool-follow-up';
import { silentLogger } from '../../application/ports/logger';
import { CHALLENGE_ANSWER_TEXT, conversationStream } from '../../domain/conversation/conversation';
import { toolCallStream } from '../../domain/tool-call/tool-call';
import { handleCommand } from '../../application/command-handling/handle-command';
import { conversationAggregate } from '../../application/conversation/conversations';
import { userContext } from '../support/context';
import { createLogger } from '../../infrastructure/logging/logger';
import { GuardedOutboundHttp } from '../../infrastructure/outbound/signed-http';
import { RecordingConnectorClient } from '../support/connector-client';
import { type Account, registerOwner } from '../support/identity';
import { OpenAiCompatibleServer, type ReceivedMessage } from '../support/openai-compatible-server';
import { type TestServer, startTestServer } from '../support/server';
import { eventually } from '../support/stores';
import { subscribeTo } from '../support/subscriptions';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = any;

interface Frame {
  event: string;
  data: Json;
}

/** The named Server-Sent Events of a complete body (keep-alive comments left out). */
function framesOf(text: string): Frame[] {
  return text
    .split('\n\n')
    .map((block) => block.split('\n'))
    .filter((lines) => lines.some((line) => line.startsWith('event: ')))
    .map((lines) => ({ event: lines.find((line) => line.startsWith('event: '))!.slice(7), data: JSON.parse(lines.find((line) => line.startsWith('data: '))!.slice(6)) }));
}

const SECRET = 'connector-chat-signing-secret-0123456789';
const END_USER_TOKEN = 'end-user-jwt-Secret-9191';
const END_USER_SESSION = 'end-user-session-Secret-3131';
const BASE = '/api/v1/org/sdk-connections';

describe('connector tools in chat (#13 point 3)', function () {
  this.timeout(60_000);
  const logLines: string[] = [];
  const logger = createLogger('trace', { write: (line: string) => void logLines.push(line) } as pino.DestinationStream);
  const codes: Array<{ order_id: string; code: string }> = [];
  let llm: OpenAiCompatibleServer;
  let listening: ConnectorServer;
  let client: RecordingConnectorClient;
  let server: TestServer;
  let owner: Account;
  let workspaceId: string;
  let connectionId: string;
  const tools: Record<string, string> = {};

  const as = (account: Account, extra: Record<string, string> = {}) => ({ authorization: `Bearer ${account.token}`, ...extra });
  const endUser = { 'x-end-user-token': END_USER_TOKEN, 'x-end-user-session': END_USER_SESSION };
  const askStreamed = (body: Json, headers: Record<string, string> = {}) => server.request('POST', '/api/v1/chat/stream', { headers: as(owner, headers), body });
  const eventsOf = async (stream: string): Promise<DomainRecordedEvent[]> => server.platform.eventStore.readStream(stream);
  const typesOf = (events: DomainRecordedEvent[]): string[] => events.map((event) => event.type);
  const toolResults = (messages: ReceivedMessage[]): Json[] => messages.filter((message) => message.role === 'tool').map((message) => JSON.parse(message.content as string));
  const call = (name: string, args: string, id = `call_${name}`) => ({ id, name, arguments: [args] });

  before(async () => {
    llm = await OpenAiCompatibleServer.start();
    listening = await createExampleConnector({ signingSecrets: [SECRET], otpDelivery: { send: ({ order_id, code }) => void codes.push({ order_id, code }) } }).listen(0, '127.0.0.1');
    const outbound = new GuardedOutboundHttp({ allowInsecureUrls: true, allowPrivateNetworks: true });
    client = new RecordingConnectorClient(new SignedConnectorClient(outbound, { timeoutMs: 5000, maxResponseBytes: 1024 * 1024, clock: { now: () => new Date() } }));
    server = await startTestServer(
      {
        SCRYPT_LOG_N: '12',
        LLM_BASE_URL: llm.baseUrl,
        LLM_MODEL: 'scripted-model',
        LLM_API_KEY: 'sk-local-test',
        // The example connector listens on plain http on 127.0.0.1: allowed here only, as in development.
        OUTBOUND_ALLOW_INSECURE: 'true',
        OUTBOUND_ALLOW_PRIVATE_NETWORKS: 'true',
        CONNECTOR_TIMEOUT_MS: '5000',
      },
      { logger, sagaRetryPollMs: 20, connectorClient: client },
    );
    owner = await registerOwner(server, 'connector-chat-org');
    await subscribeTo(server, owner.tenant_id, 'premium');
    workspaceId = (await server.request('GET', '/api/v1/org/workspaces', { headers: as(owner) })).json.items[0].id;
    const created = await server.request('POST', BASE, { headers: as(owner), body: { name: 'Coffee shop', webhook_url: listening.url.replace(/\/svc$/, ''), signing_secret: SECRET, enabled: true } });
    expect(created.status, created.text).to.equal(201);
    connectionId = created.json.id;
    const synced = await server.request('POST', `${BASE}/${connectionId}/sync-tools`, { headers: as(owner), body: { workspace_id: workspaceId, auto_register: true } });
    expect(synced.status, synced.text).to.equal(200);
    for (const tool of synced.json.registration.created as Array<{ id: string; name: string }>) tools[tool.name] = tool.id;
    expect(Object.keys(tools).sort()).to.deep.equal(['order_status', 'search_products']);
  });
  after(async () => {
    await server.close();
    await listening.close();
    await llm.close();
  });

  it('a challenge reaches the user, their next message resumes the call, the result reaches the model and the final answer streams; the code is never kept in clear', async () => {
    llm.script({ tool_calls: [call('order_status', '{"order_id":"A-1001"}')] });
    const sentBefore = client.sent.length;
    const first = await askStreamed({ message: 'Where is my order A-1001?', workspace_id: workspaceId }, endUser);
    expect(first.status, first.text).to.equal(200);
    const frames = framesOf(first.text);
    expect(frames.map((frame) => frame.event)).to.deep.equal(['tool', 'tool', 'delta', 'done']);
    const challenged = frames[1].data;
    expect(challenged).to.deep.include({ step_id: '0:call_order_status', tool_name: 'order_status', tool_id: tools.order_status, status: 'challenge', error: null, prompt: 'Enter the 6-digit code we sent to ***1234.' });
    expect(frames[2].data.text).to.include('Enter the 6-digit code we sent to ***1234.');
    const { conversation_id: conversationId, user_message_id: questionId } = frames[3].data;
    const toolCallId: string = challenged.tool_call_id;

    // The connector got tool.invoke with the turn's conversation, channel, organization and end user.
    const invoke = client.sent.slice(sentBefore);
    expect(invoke).to.have.length(1);
    expect(invoke[0].request).to.deep.equal({
      type: 'tool.invoke',
      request_id: `${toolCallId}:invoke`,
      organization_id: owner.tenant_id,
      tool: 'order_status',
      conversation_id: conversationId,
      channel: 'console',
      parameters: { order_id: 'A-1001' },
    });
    expect(invoke[0].endUser).to.deep.equal({ token: END_USER_TOKEN, session: END_USER_SESSION });
    const code = codes.find((sent) => sent.order_id === 'A-1001')!.code;

    llm.script({ deltas: ['Order A-1001 has shipped ', 'with DHL.'] });
    const before = llm.requests.length;
    const second = await askStreamed({ message: ` ${code} `, conversation_id: conversationId }, endUser);
    expect(second.status, second.text).to.equal(200);
    const resumedFrames = framesOf(second.text);
    expect(resumedFrames.map((frame) => frame.event)).to.deep.equal(['tool', 'delta', 'delta', 'done']);
    expect(resumedFrames[0].data).to.deep.include({ step_id: '0:call_order_status', tool_call_id: toolCallId, status: 'succeeded', error: null });
    const answerId = resumedFrames[3].data.user_message_id;

    // The connector got tool.resume with the token it gave and the answer.
    const resume = client.sent.slice(sentBefore + 1);
    expect(resume).to.have.length(1);
    expect(resume[0].request).to.deep.include({ type: 'tool.resume', request_id: `${toolCallId}:resume:1`, tool: 'order_status', challenge_response: code.trim(), conversation_id: conversationId });
    const resumeToken = resume[0].request.resume_token as string;

    // The model got the challenged question and the tool's output, never the code.
    const [request] = llm.requests.slice(before);
    expect(request.body.messages.filter((message) => message.role === 'user').map((message) => message.content)).to.deep.equal(['Where is my order A-1001?']);
    expect(toolResults(request.body.messages)).to.deep.equal([
      { status: 'succeeded', http_status: 200, result: { order_id: 'A-1001', status: 'shipped', carrier: 'DHL', tracking_number: 'JD0146000012345', estimated_delivery: '2026-11-25', items: [{ sku: 'EQ-GRD-01', quantity: 1 }], total_cents: 12900 } },
    ]);
    expect(JSON.stringify(request.body)).to.not.match(new RegExp(`(?<![0-9A-Za-z])${code}(?![0-9A-Za-z])`));

    // Each step is an event on the conversation; the answer is recorded masked.
    const conversation = await eventsOf(conversationStream(conversationId));
    expect(typesOf(conversation)).to.deep.equal([
      'ConversationStarted',
      'UserMessagePosted',
      'AssistantToolStepRecorded',
      'AssistantAnswered',
      'UserMessagePosted',
      'AssistantToolStepRecorded',
      'AssistantAnswered',
    ]);
    expect(conversation[2].data).to.deep.include({ reply_to: questionId, status: 'challenge', prompt: 'Enter the 6-digit code we sent to ***1234.' });
    expect(conversation[4].data).to.deep.include({ message_id: answerId, text: CHALLENGE_ANSWER_TEXT, answers_tool_call: toolCallId });
    expect(conversation[5].data).to.deep.include({ reply_to: questionId, step_id: '0:call_order_status', status: 'succeeded' });
    expect(conversation[6].data).to.deep.include({ reply_to: answerId, text: 'Order A-1001 has shipped with DHL.' });
    const toolCall = await eventsOf(toolCallStream(toolCallId));
    expect(typesOf(toolCall)).to.deep.equal(['ToolCallRequested', 'ToolCallDispatched', 'ToolCallChallenged', 'ToolCallResumed', 'ToolCallDispatched', 'ToolCallSucceeded']);
    expect(toolCall[0].data).to.deep.include({ connector: { connection_id: connectionId, tool: 'order_status' } });
    expect(toolCall[1].data).to.deep.include({ request_id: `${toolCallId}:invoke`, attempt: 1 });
    expect(toolCall[4].data).to.deep.include({ request_id: `${toolCallId}:resume:1`, attempt: 1 });
    expect(toolCall[2].metadata.actor).to.deep.equal({ kind: 'system', id: 'connector_tool_calls' });
    expect(toolCall[3].metadata.actor).to.deep.equal({ kind: 'user', id: owner.user_id });
    expect(server.platform.secrets.open((toolCall[3].data as { response_sealed: string }).response_sealed)).to.equal(code.trim());
    expect(server.platform.secrets.open((toolCall[2].data as { resume_token_sealed: string }).resume_token_sealed)).to.equal(resumeToken);

    // Neither the code, the resume token nor the end user's headers are anywhere in clear (the
    // code as a number of its own: six digits may well occur inside an id or a sealed value).
    const theCode = new RegExp(`(?<![0-9A-Za-z])${code}(?![0-9A-Za-z])`);
    const everything = JSON.stringify(await server.platform.storedEvents.readAll({ maxCount: 100_000 }));
    const logs = logLines.join('\n');
    expect(everything).to.not.match(theCode);
    expect(logs).to.not.match(theCode);
    for (const secret of [resumeToken, END_USER_TOKEN, END_USER_SESSION]) {
      expect(everything).to.not.include(secret);
      expect(logs).to.not.include(secret);
    }
    const messages = await server.request('GET', `/api/v1/conversations/${conversationId}/messages?limit=100`, { headers: as(owner) });
    expect(messages.text).to.not.match(theCode);
    expect(messages.json.items.map((message: { text: string }) => message.text)).to.include(CHALLENGE_ANSWER_TEXT);
    const logged = await server.request('GET', `/api/v1/tool-calls/${toolCallId}`, { headers: as(owner) });
    expect(logged.json).to.deep.include({ status: 'succeeded', challenge: null });
    expect(logged.text).to.not.match(theCode);
    expect(logged.text).to.not.include(resumeToken);
  });

  it('sends the authentication context the connector returned back on the conversation\'s later calls: not asked again there, asked in another conversation and once the end user cleared their identity', async () => {
    const orderStatusCalls = () => client.sent.filter((sent) => sent.request.tool === 'order_status');
    // The OTP passed once, in a new conversation.
    llm.script({ tool_calls: [call('order_status', '{"order_id":"A-1001"}', 'call_otp')] });
    const asked = framesOf((await askStreamed({ message: 'Status of A-1001?', workspace_id: workspaceId }, endUser)).text);
    expect(asked[1].data).to.deep.include({ status: 'challenge' });
    const { conversation_id: conversationId } = asked[asked.length - 1].data;
    const code = codes.filter((sent) => sent.order_id === 'A-1001').at(-1)!.code;
    llm.script({ deltas: ['It has shipped.'] });
    const answered = framesOf((await askStreamed({ message: code, conversation_id: conversationId }, endUser)).text);
    expect(answered[0].data).to.deep.include({ status: 'succeeded' });
    const kept = (await server.platform.storedEvents.readAll({ maxCount: 100_000, filter: { kind: 'event_type', types: ['ConnectorAuthenticationKept'] } })).filter(
      (event) => (event.data as { conversation_id: string }).conversation_id === conversationId,
    );
    expect(kept).to.have.length(1);
    const keptData = kept[0].data as Record<string, string>;
    expect(keptData).to.include({ tenant_id: owner.tenant_id, connection_id: connectionId, tool_call_id: asked[1].data.tool_call_id });
    expect(Object.keys(keptData).sort()).to.deep.equal(['connection_id', 'context_sealed', 'conversation_id', 'kept_at', 'tenant_id', 'tool_call_id']);
    expect(JSON.parse(server.platform.secrets.open(keptData.context_sealed))).to.deep.equal({ method: 'otp', order_id: 'A-1001' });

    // Asked again there: the call carries the context and the connector answers at once, no code asked.
    llm.script({ tool_calls: [call('order_status', '{"order_id":"A-1001"}', 'call_again')] }, { deltas: ['Still shipped.'] });
    const sentBefore = orderStatusCalls().length;
    const again = framesOf((await askStreamed({ message: 'And now?', conversation_id: conversationId }, endUser)).text);
    expect(again.map((frame) => frame.event)).to.deep.equal(['tool', 'tool', 'delta', 'done']);
    expect(again[1].data).to.deep.include({ status: 'succeeded', error: null });
    const [sent] = orderStatusCalls().slice(sentBefore);
    expect(sent.request).to.deep.include({ type: 'tool.invoke', conversation_id: conversationId, authentication: { method: 'otp', order_id: 'A-1001' } });
    // The execution log shows the request with the context redacted.
    const logged = await server.request('GET', `/api/v1/tool-calls/${again[1].data.tool_call_id}`, { headers: as(owner) });
    expect(JSON.parse(logged.json.request.body)).to.deep.include({ authentication: '[redacted]' });

    // Another conversation is another user as far as the connector knows: asked for a code.
    llm.script({ tool_calls: [call('order_status', '{"order_id":"A-1001"}', 'call_elsewhere')] });
    const elsewhere = framesOf((await askStreamed({ message: 'Status of A-1001?', workspace_id: workspaceId }, endUser)).text);
    expect(elsewhere[1].data).to.deep.include({ status: 'challenge' });
    expect(orderStatusCalls().at(-1)!.request).to.not.have.property('authentication');
    // A challenge the turn asked itself is not asked again by the follow-up saga (whenever its delivery comes).
    const { conversation_id: elsewhereId, user_message_id: elsewhereQuestion } = elsewhere[elsewhere.length - 1].data;
    const followUpDeps = { ...server.platform.commands, readStore: server.platform.readStore, assistant: server.platform.assistant, logger: silentLogger };
    await askLateChallenge(followUpDeps, owner.tenant_id, elsewhereId, elsewhereQuestion, elsewhere[1].data.tool_call_id, userContext({ tenant_id: owner.tenant_id }));
    expect(typesOf(await eventsOf(conversationStream(elsewhereId)))).to.deep.equal(['ConversationStarted', 'UserMessagePosted', 'AssistantToolStepRecorded', 'AssistantAnswered']);

    // It is sent while it is younger than CONNECTOR_AUTHENTICATION_TTL_SECONDS.
    const subject = { tenantId: owner.tenant_id, conversationId, connectionId };
    const at = (ms: number) => ({ ...server.platform.toolCalls, clock: { now: () => new Date(Date.parse(keptData.kept_at) + ms) } });
    expect(await authenticationToSend(at(3600_000), subject, { ttlSeconds: 3600 })).to.deep.equal({ method: 'otp', order_id: 'A-1001' });
    expect(await authenticationToSend(at(3600_001), subject, { ttlSeconds: 3600 })).to.equal(null);

    // Once the end user cleared their identity in the conversation, the context is not sent again.
    const cleared = await handleCommand(server.platform.commands, conversationAggregate, conversationStream(conversationId), { type: 'ClearEndUserIdentity', data: {} }, userContext({ tenant_id: owner.tenant_id }));
    expect(cleared.events.map((event) => event.type)).to.deep.equal(['EndUserIdentityCleared']);
    llm.script({ tool_calls: [call('order_status', '{"order_id":"A-1001"}', 'call_cleared')] });
    const afterClear = framesOf((await askStreamed({ message: 'One more time?', conversation_id: conversationId })).text);
    expect(afterClear[1].data).to.deep.include({ status: 'challenge' });
    expect(orderStatusCalls().at(-1)!.request).to.not.have.property('authentication');
  });

  it('asks in the conversation a challenge that came after the turn ended (an approved call), and the next message answers it', async () => {
    const risky = await server.request('PATCH', `/api/v1/tools/${tools.order_status}`, { headers: as(owner), body: { risk: 'approval_required' } });
    expect(risky.status, risky.text).to.equal(200);
    try {
      llm.script({ tool_calls: [call('order_status', '{"order_id":"A-1001"}', 'call_approved')] });
      const asked = framesOf((await askStreamed({ message: 'Is A-1001 on its way?', workspace_id: workspaceId }, endUser)).text);
      const waiting = asked.find((frame) => frame.event === 'tool' && frame.data.status === 'awaiting_approval')!.data;
      const { conversation_id: conversationId, user_message_id: questionId } = asked[asked.length - 1].data;
      const sentBefore = client.sent.length;
      const approved = await server.request('POST', `/api/v1/tool-calls/${waiting.tool_call_id}/approve`, { headers: as(owner) });
      expect(approved.status, approved.text).to.equal(200);

      // The connector challenged the approved call: the conversation asks the user, without the model.
      const asking = async () => (await eventsOf(conversationStream(conversationId))).filter((event) => event.type === 'AssistantFollowedUp');
      await eventually(async () => (await asking()).length === 1, 20_000, 'the challenge asked in the conversation');
      const [followUp] = await asking();
      expect(followUp.data).to.deep.include({ reply_to: questionId, tool_call_ids: [waiting.tool_call_id], text: 'To go on, I need a confirmation from you: Enter the 6-digit code we sent to ***1234.', error: null });
      expect(followUp.metadata.actor).to.deep.equal({ kind: 'system', id: 'chat_tool_follow_up' });
      const steps = (await eventsOf(conversationStream(conversationId))).filter((event) => event.type === 'AssistantToolStepRecorded').map((event) => event.data as Json);
      expect(steps.map((step) => step.status)).to.deep.equal(['awaiting_approval', 'challenge']);
      expect(steps[1]).to.deep.include({ tool_call_id: waiting.tool_call_id, prompt: 'Enter the 6-digit code we sent to ***1234.' });
      expect(client.sent.slice(sentBefore).map((sent) => sent.request.type)).to.deep.equal(['tool.invoke']);

      // The user's next message is the answer: the call resumes, and the model reports the turn.
      const code = codes.filter((sent) => sent.order_id === 'A-1001').at(-1)!.code;
      llm.script({ deltas: ['Yes, it has shipped.'] });
      const answered = framesOf((await askStreamed({ message: code, conversation_id: conversationId }, endUser)).text);
      expect(answered.map((frame) => frame.event)).to.deep.equal(['tool', 'delta', 'done']);
      expect(answered[0].data).to.deep.include({ tool_call_id: waiting.tool_call_id, status: 'succeeded' });
      expect(client.sent.slice(sentBefore).map((sent) => sent.request.type)).to.deep.equal(['tool.invoke', 'tool.resume']);
      // The success (a settled outcome) asks nothing more of the follow-up saga: the turn was followed up.
      await new Promise((resolve) => setTimeout(resolve, 200));
      expect(await asking()).to.have.length(1);
    } finally {
      await server.request('PATCH', `/api/v1/tools/${tools.order_status}`, { headers: as(owner), body: { risk: 'write' } });
    }
  });

  it('asks each call of a turn challenged after it ended in turn, and records every outcome on the conversation', async () => {
    const risky = await server.request('PATCH', `/api/v1/tools/${tools.order_status}`, { headers: as(owner), body: { risk: 'approval_required' } });
    expect(risky.status, risky.text).to.equal(200);
    try {
      llm.script({ tool_calls: [call('order_status', '{"order_id":"A-1002"}', 'call_first'), call('order_status', '{"order_id":"A-1003"}', 'call_second')] });
      const asked = framesOf((await askStreamed({ message: 'Where are A-1002 and A-1003?', workspace_id: workspaceId }, endUser)).text);
      const waiting = asked.filter((frame) => frame.event === 'tool' && frame.data.status === 'awaiting_approval').map((frame) => frame.data.tool_call_id as string);
      expect(waiting).to.have.length(2);
      const { conversation_id: conversationId } = asked[asked.length - 1].data;
      const followUps = async () => (await eventsOf(conversationStream(conversationId))).filter((event) => event.type === 'AssistantFollowedUp').map((event) => event.data as Json);
      const stepsOf = async (toolCallId: string) =>
        (await eventsOf(conversationStream(conversationId))).filter((event) => event.type === 'AssistantToolStepRecorded' && (event.data as Json).tool_call_id === toolCallId).map((event) => (event.data as Json).status);

      // Each approved call is challenged: each is asked, in a message of its own.
      for (const [index, toolCallId] of waiting.entries()) {
        expect((await server.request('POST', `/api/v1/tool-calls/${toolCallId}/approve`, { headers: as(owner) })).status).to.equal(200);
        await eventually(async () => (await followUps()).length === index + 1, 20_000, `the challenge of call ${index + 1} asked`);
        expect((await followUps())[index]).to.deep.include({ tool_call_ids: [toolCallId], error: null });
        expect(await stepsOf(toolCallId)).to.deep.equal(['awaiting_approval', 'challenge']);
      }
      const [first, second] = await followUps();
      expect(first.message_id).to.not.equal(second.message_id);

      // The next message answers the first challenge still open, the one after it the second.
      for (const [index, order] of ['A-1002', 'A-1003'].entries()) {
        llm.script({ deltas: [`Here is ${order}.`] });
        const code = codes.filter((sent) => sent.order_id === order).at(-1)!.code;
        const answered = framesOf((await askStreamed({ message: code, conversation_id: conversationId }, endUser)).text);
        expect(answered[0].data).to.deep.include({ tool_call_id: waiting[index], status: 'succeeded' });
        await eventually(async () => (await stepsOf(waiting[index])).at(-1) === 'succeeded', 20_000, `the outcome of call ${index + 1} on the conversation`);
      }
      // The answers' turns reported: the turn itself got no report besides its two questions.
      await new Promise((resolve) => setTimeout(resolve, 200));
      expect(await followUps()).to.have.length(2);
    } finally {
      await server.request('PATCH', `/api/v1/tools/${tools.order_status}`, { headers: as(owner), body: { risk: 'write' } });
    }
  });

  it('a wrong code is `denied`: the model is told, and answers clearly', async () => {
    llm.script({ tool_calls: [call('order_status', '{"order_id":"A-1003"}')] });
    const first = framesOf((await askStreamed({ message: 'And order A-1003?', workspace_id: workspaceId })).text);
    const { conversation_id: conversationId } = first[first.length - 1].data;
    expect(first[1].data.status).to.equal('challenge');
    const code = codes.filter((sent) => sent.order_id === 'A-1003').pop()!.code;
    const wrong = code === '000000' ? '111111' : '000000';

    llm.script({ deltas: ['That code did not match; ask again for a new one.'] });
    const before = llm.requests.length;
    const second = await askStreamed({ message: wrong, conversation_id: conversationId });
    const frames = framesOf(second.text);
    expect(frames.map((frame) => frame.event)).to.deep.equal(['tool', 'delta', 'done']);
    expect(frames[0].data).to.deep.include({ status: 'failed', error: { code: 'denied', message: 'The code does not match. Ask for the order status again to get a new code.' } });
    const [result] = toolResults(llm.requests[before].body.messages);
    expect(result).to.deep.include({ status: 'failed', error: { code: 'denied', message: 'The code does not match. Ask for the order status again to get a new code.' } });
    expect(frames[1].data.text).to.equal('That code did not match; ask again for a new one.');

    // The challenge is closed: the next message is a question again.
    llm.script({ deltas: ['Anything else?'] });
    const third = framesOf((await askStreamed({ message: 'Thanks', conversation_id: conversationId })).text);
    expect(third.map((frame) => frame.event)).to.deep.equal(['delta', 'done']);
    expect(llm.requests[llm.requests.length - 1].body.messages.filter((message) => message.role === 'user').pop()!.content).to.equal('Thanks');
  });

  it('an error of the connector (`customer_not_found`) is a failed step the model relays, never a crash', async () => {
    llm.script({ tool_calls: [call('order_status', '{"order_id":"Z-999"}')] }, { deltas: ['I could not find order Z-999.'] });
    const before = llm.requests.length;
    const frames = framesOf((await askStreamed({ message: 'Order Z-999?', workspace_id: workspaceId })).text);
    expect(frames.map((frame) => frame.event)).to.deep.equal(['tool', 'tool', 'delta', 'done']);
    expect(frames[1].data).to.deep.include({ status: 'failed', error: { code: 'customer_not_found', message: 'No order Z-999 was found' } });
    const [result] = toolResults(llm.requests[before + 1].body.messages);
    expect(result).to.deep.include({ status: 'failed', error: { code: 'customer_not_found', message: 'No order Z-999 was found' } });
  });

  it('a disabled connection’s tools are not offered in chat, and a call of one fails clearly (409 connection_disabled)', async () => {
    const disabled = await server.request('PATCH', `${BASE}/${connectionId}`, { headers: as(owner), body: { enabled: false } });
    expect(disabled.status, disabled.text).to.equal(200);
    try {
      llm.script({ deltas: ['I cannot look that up right now.'] });
      const before = llm.requests.length;
      await askStreamed({ message: 'Search decaf beans', workspace_id: workspaceId });
      expect(llm.requests[before].body.tools ?? []).to.deep.equal([]);
      const sentBefore = client.sent.length;
      const tested = await server.request('POST', `/api/v1/tools/${tools.search_products}/test`, { headers: as(owner), body: { arguments: { query: 'decaf' } } });
      expect(tested.status, tested.text).to.equal(409);
      expect(tested.json.code).to.equal('connection_disabled');
      expect(client.sent.length).to.equal(sentBefore);
    } finally {
      await server.request('PATCH', `${BASE}/${connectionId}`, { headers: as(owner), body: { enabled: true } });
    }
  });

  it('a test of a connector tool runs through the saga and answers its output', async () => {
    const tested = await server.request('POST', `/api/v1/tools/${tools.search_products}/test`, { headers: as(owner), body: { arguments: { query: 'decaf' } } });
    expect(tested.status, tested.text).to.equal(200);
    expect(tested.json.status).to.equal('succeeded');
    expect(tested.json.result.products.map((product: { sku: string }) => product.sku)).to.deep.equal(['CF-DEC-250']);
  });

  describe('the saga', () => {
    const requestedOf = (toolCallId: string, connector = true) => ({
      tenant_id: owner.tenant_id,
      workspace_id: workspaceId,
      tool_call_id: toolCallId,
      tool_id: tools.search_products,
      tool_name: 'search_products',
      risk: 'write',
      arguments: { query: 'grinder' },
      caller: { kind: 'user', id: owner.user_id },
      origin: { kind: 'test' },
      awaiting_approval: false,
      end_user_token_sealed: null,
      end_user_session_sealed: null,
      requested_at: new Date().toISOString(),
      ...(connector ? { connector: { connection_id: connectionId, tool: 'search_products' } } : {}),
    });
    const metadata = () => ({ tenant_id: owner.tenant_id, actor: { kind: 'system' as const, id: 'test' }, request_id: null, correlation_id: 'saga-test', causation_id: null, occurred_at: new Date().toISOString(), ip: null });
    const dispatched = (toolCallId: string, attempt: number) => ({
      id: server.platform.identity.ids.newId(),
      type: 'ToolCallDispatched',
      data: { tenant_id: owner.tenant_id, workspace_id: workspaceId, tool_call_id: toolCallId, tool_id: tools.search_products, request_id: `${toolCallId}:invoke`, attempt, dispatched_at: new Date().toISOString() },
      metadata: metadata(),
    });
    const sentFor = (toolCallId: string) => client.sent.filter((sent) => sent.request.request_id.startsWith(toolCallId));
    const settled = async (toolCallId: string) => typesOf(await eventsOf(toolCallStream(toolCallId))).some((type) => type === 'ToolCallSucceeded' || type === 'ToolCallFailed');

    it('sends a call once: a redelivered request after the outcome sends nothing', async () => {
      const tested = await server.request('POST', `/api/v1/tools/${tools.search_products}/test`, { headers: as(owner), body: { arguments: { query: 'grinder' } } });
      expect(tested.json.status, tested.text).to.equal('succeeded');
      const toolCallId: string = tested.json.id;
      expect(sentFor(toolCallId)).to.have.length(1);
      const [requested] = await eventsOf(toolCallStream(toolCallId));
      const saga = connectorToolCallsSaga({ ...server.platform.toolCalls, connectorClient: client, connectorAuthentication: { ttlSeconds: 3600 } });
      await saga.handle(requested as RecordedOf<'ToolCallRequested'>, { idempotencyKey: 'redelivered', attempt: 2, logger });
      expect(sentFor(toolCallId)).to.have.length(1);
      expect(typesOf(await eventsOf(toolCallStream(toolCallId)))).to.deep.equal(['ToolCallRequested', 'ToolCallDispatched', 'ToolCallSucceeded']);
    });

    it('repeats a call interrupted mid-call once, with the same request_id', async () => {
      // A process recorded the sending and stopped before the answer was recorded.
      const toolCallId = server.platform.identity.ids.newId();
      await server.platform.storedEvents.appendToStream(toolCallStream(toolCallId), [
        { id: server.platform.identity.ids.newId(), type: 'ToolCallRequested', data: requestedOf(toolCallId), metadata: metadata() },
        dispatched(toolCallId, 1),
      ]);
      await eventually(() => settled(toolCallId), 10_000, 'the repeated call');
      const events = await eventsOf(toolCallStream(toolCallId));
      expect(typesOf(events)).to.deep.equal(['ToolCallRequested', 'ToolCallDispatched', 'ToolCallDispatched', 'ToolCallSucceeded']);
      expect(events[2].data).to.deep.include({ request_id: `${toolCallId}:invoke`, attempt: 2 });
      expect(sentFor(toolCallId).map((sent) => sent.request.request_id)).to.deep.equal([`${toolCallId}:invoke`]);
    });

    it('sends nothing for a call erased before it was sent (its conversation erased meanwhile), and fails no delivery', async () => {
      const toolCallId = server.platform.identity.ids.newId();
      const identity = { tenant_id: owner.tenant_id, workspace_id: workspaceId, tool_call_id: toolCallId, tool_id: tools.search_products };
      await server.platform.storedEvents.appendToStream(toolCallStream(toolCallId), [
        { id: server.platform.identity.ids.newId(), type: 'ToolCallRequested', data: requestedOf(toolCallId), metadata: metadata() },
        { id: server.platform.identity.ids.newId(), type: 'ToolCallErased', data: { ...identity, erased_at: new Date().toISOString() }, metadata: metadata() },
      ]);
      const [requested] = await eventsOf(toolCallStream(toolCallId));
      const saga = connectorToolCallsSaga({ ...server.platform.toolCalls, connectorClient: client, connectorAuthentication: { ttlSeconds: 3600 } });
      await saga.handle(requested as RecordedOf<'ToolCallRequested'>, { idempotencyKey: 'erased-before-sent', attempt: 1, logger });
      expect(sentFor(toolCallId)).to.deep.equal([]);
      expect(typesOf(await eventsOf(toolCallStream(toolCallId)))).to.deep.equal(['ToolCallRequested', 'ToolCallErased']);
    });

    it('tells the connector who a WhatsApp sender is (`identity`: their id and number), never recording it in clear', async () => {
      // A WhatsApp conversation as the inbound saga starts one: a digest as the party, the number as its contact.
      const conversationId = server.platform.identity.ids.newId();
      const sender = { kind: 'end_user' as const, id: 'whatsapp:5f0c6e1d2a3b4c5d6e7f8091a2b3c4d5' };
      await handleCommand(
        server.platform.commands,
        conversationAggregate,
        conversationStream(conversationId),
        { type: 'StartConversation', data: { conversation_id: conversationId, tenant_id: owner.tenant_id, workspace_id: workspaceId, channel: 'whatsapp', title: 'Grinders?', started_by: sender, contact: '447700900123' } },
        { ...userContext({ tenant_id: owner.tenant_id }), actor: sender },
      );
      const toolCallId = server.platform.identity.ids.newId();
      const origin = { kind: 'chat', conversation_id: conversationId, reply_to: 'm1', call_id: 'call_1' };
      await server.platform.storedEvents.appendToStream(toolCallStream(toolCallId), [
        { id: server.platform.identity.ids.newId(), type: 'ToolCallRequested', data: { ...requestedOf(toolCallId), caller: sender, origin }, metadata: metadata() },
      ]);
      await eventually(() => settled(toolCallId), 10_000, 'the call');
      const [sent] = sentFor(toolCallId);
      expect(sent.request).to.deep.include({ conversation_id: conversationId, channel: 'whatsapp', identity: { wa_id: '447700900123', phone_number: '+447700900123' } });
      let logged: Json = null;
      await eventually(async () => {
        logged = (await server.request('GET', `/api/v1/tool-calls/${toolCallId}`, { headers: as(owner) })).json;
        return logged?.request !== null && logged?.request !== undefined;
      }, 10_000, 'the call in the execution log');
      expect(JSON.parse(logged.request.body)).to.deep.include({ channel: 'whatsapp', identity: '[redacted]' });
      expect(JSON.stringify(await server.platform.storedEvents.readStream(toolCallStream(toolCallId)))).to.not.include('447700900123');
    });

    it('tells the connector who a widget visitor the host site vouched for is (`identity`: their user id there), not once they signed out', async () => {
      const conversationId = server.platform.identity.ids.newId();
      const visitor = { kind: 'end_user' as const, id: 'verified:0b1c2d3e4f5a6b7c8d9e0f1a2b3c4d5e' };
      const asVisitor = { ...userContext({ tenant_id: owner.tenant_id }), actor: visitor };
      const command = (data: Json) => handleCommand(server.platform.commands, conversationAggregate, conversationStream(conversationId), data as never, asVisitor);
      await command({ type: 'StartConversation', data: { conversation_id: conversationId, tenant_id: owner.tenant_id, workspace_id: workspaceId, channel: 'widget', title: 'Grinders?', started_by: visitor, verified_user_id: 'customer-42' } });
      const post = (messageId: string) =>
        command({ type: 'PostUserMessage', data: { message_id: messageId, text: 'Any grinders?', author: visitor, end_user_token_sealed: server.platform.secrets.seal('host-token'), end_user_session_sealed: null } });
      const callFrom = async (replyTo: string): Promise<Json> => {
        const toolCallId = server.platform.identity.ids.newId();
        const origin = { kind: 'chat', conversation_id: conversationId, reply_to: replyTo, call_id: `call_${replyTo}` };
        await server.platform.storedEvents.appendToStream(toolCallStream(toolCallId), [
          { id: server.platform.identity.ids.newId(), type: 'ToolCallRequested', data: { ...requestedOf(toolCallId), caller: visitor, origin }, metadata: metadata() },
        ]);
        await eventually(() => settled(toolCallId), 10_000, 'the call');
        return sentFor(toolCallId)[0].request;
      };
      await post('m1');
      expect(await callFrom('m1')).to.deep.include({ channel: 'widget', identity: { user_id: 'customer-42', verified: true } });
      // They signed out of the host site: a call of that turn no longer says who they were.
      await command({ type: 'ClearEndUserIdentity', data: {} });
      expect(await callFrom('m1')).to.not.have.property('identity');
      // Signed in again, a new message: said again.
      await post('m2');
      expect(await callFrom('m2')).to.deep.include({ identity: { user_id: 'customer-42', verified: true } });
    });

    it('never sends a third time: a call interrupted twice fails `interrupted`', async () => {
      const toolCallId = server.platform.identity.ids.newId();
      await server.platform.storedEvents.appendToStream(toolCallStream(toolCallId), [
        { id: server.platform.identity.ids.newId(), type: 'ToolCallRequested', data: requestedOf(toolCallId), metadata: metadata() },
        dispatched(toolCallId, 1),
        dispatched(toolCallId, 2),
      ]);
      await eventually(() => settled(toolCallId), 10_000, 'the interrupted call');
      const events = await eventsOf(toolCallStream(toolCallId));
      expect(typesOf(events)).to.deep.equal(['ToolCallRequested', 'ToolCallDispatched', 'ToolCallDispatched', 'ToolCallFailed']);
      expect(events[3].data).to.deep.include({ code: 'interrupted' });
      expect(sentFor(toolCallId)).to.deep.equal([]);
    });
  });
});
