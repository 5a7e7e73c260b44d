// Tool calls in chat (#12 point 5), end to end: a scripted OpenAI-compatible server (started
// here) plays the model, a tiny "shop API" (started here, bearer-protected) is the tenant's
// own API, reached through the outbound guard relaxed for local addresses; the tools are the
// workspace's business tools over an integration created through the API. The model asks for
// a tool, the tool runs against the shop API, the model gets its answer and the final answer
// streams; an `approval_required` tool waits, runs only after an admin approves it, and the
// assistant's report then appears in the conversation. The embedded engine never calls a tool.

import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type pino from 'pino';
import { expect } from 'chai';
import { CHAT_TOOL_FOLLOW_UP, followUpTurn } from '../../application/chat/tool-follow-up';
import { SagaRunner } from '../../application/sagas/saga-runner';
import { MAX_TOOL_ROUNDS } from '../../application/chat/tool-steps';
import type { DomainRecordedEvent } from '../../application/ports/domain-event-store';
import { setQuotaOverrides } from '../../application/quota-override/quota-overrides';
import { systemContext } from '../../application/shared/request-context';
import type { ToolInput } from '../../application/tool/tools';
import { conversationStream } from '../../domain/conversation/conversation';
import { ERASED_EXCHANGE, toolCallStream } from '../../domain/tool-call/tool-call';
import { ERASED_PERSONAL_DATA } from '../../domain/shared/events';
import { handleCommand } from '../../application/command-handling/handle-command';
import { conversationAggregate } from '../../application/conversation/conversations';
import { runToolCall } from '../../application/tool-call/tool-calls';
import { userContext } from '../support/context';
import { createLogger } from '../../infrastructure/logging/logger';
import { expectEveryEventAudited } from '../support/audit';
import { type Account, joinAs, registerOwner } from '../support/identity';
import { OpenAiCompatibleServer, type ReceivedMessage } from '../support/openai-compatible-server';
import { type TestServer, startTestServer } from '../support/server';
import { eventually } from '../support/stores';

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

interface ShopRequest {
  method: string;
  url: string;
  headers: http.IncomingHttpHeaders;
  body: string;
}

/** The tenant's own API: orders looked up and cancelled, behind a bearer token; every request kept. */
class ShopApi {
  readonly requests: ShopRequest[] = [];
  private constructor(
    private readonly server: http.Server,
    readonly baseUrl: string,
  ) {}

  static async start(token: string): Promise<ShopApi> {
    let shop: ShopApi | null = null;
    const server = http.createServer(async (req, res) => {
      const chunks: Buffer[] = [];
      for await (const chunk of req) chunks.push(chunk as Buffer);
      shop!.requests.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, body: Buffer.concat(chunks).toString('utf8') });
      const answer = (status: number, body: unknown): void => {
        res.writeHead(status, { 'content-type': 'application/json' });
        res.end(JSON.stringify(body));
      };
      if (req.headers.authorization !== `Bearer ${token}`) return answer(401, { error: 'unauthorized' });
      const lookup = /^\/orders\/([^/]+)$/.exec(req.url ?? '');
      if (req.method === 'GET' && lookup) return answer(200, { order: decodeURIComponent(lookup[1]), state: 'shipped', carrier: 'Parcelo' });
      const cancel = /^\/orders\/([^/]+)\/cancel$/.exec(req.url ?? '');
      if (req.method === 'POST' && cancel) return answer(200, { order: decodeURIComponent(cancel[1]), cancelled: true });
      return answer(404, { error: 'no such route' });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    shop = new ShopApi(server, `http://127.0.0.1:${(server.address() as AddressInfo).port}`);
    return shop;
  }

  cancellations(): ShopRequest[] {
    return this.requests.filter((request) => request.method === 'POST');
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

const API_TOKEN = 'Shop-Bearer-Secret-0123456789';
const END_USER_TOKEN = 'end-user-jwt-Secret-4242';
const END_USER_SESSION = 'end-user-session-Secret-77';
const ORDER_SCHEMA = { type: 'object', properties: { order_number: { type: 'string', minLength: 1 } }, required: ['order_number'], additionalProperties: false };

describe('tool calls in chat (#12 point 5)', function () {
  this.timeout(60_000);
  const logLines: string[] = [];
  const logger = createLogger('trace', { write: (line: string) => void logLines.push(line) } as pino.DestinationStream);
  let llm: OpenAiCompatibleServer;
  let shop: ShopApi;
  let server: TestServer;
  let owner: Account;
  let admin: Account;
  let member: Account;
  let workspaceId: string;
  /** A workspace without tools, the member may read. */
  let bareWorkspaceId: string;
  const tools: Record<string, string> = {};

  const as = (account: Account, extra: Record<string, string> = {}) => ({ authorization: `Bearer ${account.token}`, ...extra });
  const endUser = { 'x-end-user-token': END_USER_TOKEN, 'x-end-user-session': END_USER_SESSION };
  const ask = (account: Account, body: Json, headers: Record<string, string> = {}) => server.request('POST', '/api/v1/chat', { headers: as(account, headers), body });
  const askStreamed = (account: Account, body: Json, headers: Record<string, string> = {}) => server.request('POST', '/api/v1/chat/stream', { headers: as(account, headers), body });
  const eventsOf = async (stream: string): Promise<DomainRecordedEvent[]> => server.platform.eventStore.readStream(stream);
  const typesOf = (events: DomainRecordedEvent[]): string[] => events.map((event) => event.type);
  const messagesOf = async (conversationId: string): Promise<Json[]> => (await server.request('GET', `/api/v1/conversations/${conversationId}/messages?limit=100`, { headers: as(owner) })).json.items;
  const lastRequest = () => llm.requests[llm.requests.length - 1];
  const toolResults = (messages: ReceivedMessage[]): Json[] => messages.filter((message) => message.role === 'tool').map((message) => JSON.parse(message.content as string));
  const call = (name: string, args: string, id = `call_${name}`) => ({ id, name, arguments: [args] });

  async function addTool(input: Omit<ToolInput, 'integration_id'>, integrationId: string, target: TestServer = server, account: Account = owner, workspace = workspaceId): Promise<string> {
    const created = await target.request('POST', `/api/v1/workspaces/${workspace}/tools`, { headers: as(account), body: { ...input, integration_id: integrationId } });
    expect(created.status, created.text).to.equal(201);
    return created.json.id;
  }

  before(async () => {
    llm = await OpenAiCompatibleServer.start();
    shop = await ShopApi.start(API_TOKEN);
    server = await startTestServer(
      {
        SCRYPT_LOG_N: '12',
        LLM_BASE_URL: llm.baseUrl,
        LLM_MODEL: 'scripted-model',
        LLM_API_KEY: 'sk-local-test',
        // The shop API is plain http on 127.0.0.1: allowed here only, as in development.
        OUTBOUND_ALLOW_INSECURE: 'true',
        OUTBOUND_ALLOW_PRIVATE_NETWORKS: 'true',
      },
      { logger, sagaRetryPollMs: 20 },
    );
    owner = await registerOwner(server, 'chat-tools-org');
    admin = await joinAs(server, await registerOwner(server, 'chat-tools-adm-home', 'chat-tools-adm@example.com'), owner.tenant_id, 'admin');
    member = await joinAs(server, await registerOwner(server, 'chat-tools-mem-home', 'chat-tools-mem@example.com'), owner.tenant_id, 'member');
    await setQuotaOverrides(server.platform.identity, 'test-admin', owner.tenant_id, { overrides: { business_tools: null }, reason: 'test suite' }, systemContext('test'));
    workspaceId = (await server.request('GET', '/api/v1/org/workspaces', { headers: as(owner) })).json.items[0].id;
    const bare = await server.request('POST', '/graphql', { headers: as(owner), body: { query: 'mutation { create_workspace(name: "Bare") { id } }' } });
    bareWorkspaceId = bare.json.data.create_workspace.id;
    const team = await server.request('POST', '/api/v1/org/teams', { headers: as(owner), body: { name: 'Support' } });
    await server.request('PUT', `/api/v1/org/teams/${team.json.id}/members`, { headers: as(owner), body: { members: [{ user_id: member.user_id }] } });
    await server.request('PUT', `/api/v1/org/teams/${team.json.id}/workspaces`, { headers: as(owner), body: { workspace_ids: [workspaceId, bareWorkspaceId] } });

    const integration = await server.request('POST', `/api/v1/workspaces/${workspaceId}/integrations`, {
      headers: as(owner),
      body: { name: 'Shop', base_url: shop.baseUrl, auth: { kind: 'bearer' }, credentials: API_TOKEN },
    });
    expect(integration.status, integration.text).to.equal(201);
    const orderParameter = [{ argument: 'order_number', in: 'path' as const, name: 'order_number' }];
    tools.order_status = await addTool(
      { name: 'order_status', description: "Looks up an order's state by its number", method: 'GET', path: '/orders/{order_number}', parameters: orderParameter, input_schema: ORDER_SCHEMA, chat: true, risk: 'read' },
      integration.json.id,
    );
    tools.cancel_order = await addTool(
      { name: 'cancel_order', description: 'Cancels an order', method: 'POST', path: '/orders/{order_number}/cancel', parameters: orderParameter, input_schema: ORDER_SCHEMA, chat: true, risk: 'approval_required' },
      integration.json.id,
    );
    // Neither is offered in chat: one is not chat-enabled, the other disabled.
    await addTool({ name: 'export_orders', description: 'Exports every order', method: 'GET', path: '/orders/export', chat: false, risk: 'read' }, integration.json.id);
    await addTool({ name: 'refund_order', description: 'Refunds an order', method: 'POST', path: '/orders/{order_number}/refund', parameters: orderParameter, input_schema: ORDER_SCHEMA, chat: true, enabled: false }, integration.json.id);
  });
  after(async () => {
    await server.close();
    await shop.close();
    await llm.close();
  });

  it('offers the workspace’s chat-enabled, enabled tools; the model asks for one, it runs against the API, the model gets its answer, and the final answer streams', async () => {
    llm.script({ tool_calls: [call('order_status', '{"order_number":"A-17"}')], usage: { prompt_tokens: 100, completion_tokens: 10 } }, { deltas: ['Order A-17 has shipped ', 'with Parcelo.'], usage: { prompt_tokens: 150, completion_tokens: 8 } });
    const before = llm.requests.length;
    const response = await askStreamed(member, { message: 'Where is my order A-17?', workspace_id: workspaceId }, endUser);
    expect(response.status, response.text).to.equal(200);
    const frames = framesOf(response.text);
    expect(frames.map((frame) => frame.event)).to.deep.equal(['tool', 'tool', 'delta', 'delta', 'done']);
    const [requested, succeeded] = frames.map((frame) => frame.data);
    expect(requested).to.deep.equal({ step_id: '0:call_order_status', call_id: 'call_order_status', tool_name: 'order_status', tool_id: tools.order_status, tool_call_id: null, status: 'requested', error: null });
    expect(succeeded).to.deep.include({ step_id: '0:call_order_status', tool_name: 'order_status', tool_id: tools.order_status, status: 'succeeded', error: null });
    expect(succeeded.tool_call_id).to.be.a('string');
    const done = frames[4].data;

    // The model was offered exactly the chat tools, by name, with their schemas.
    const [first, second] = llm.requests.slice(before);
    expect(first.body.tools).to.deep.equal([
      { type: 'function', function: { name: 'cancel_order', description: 'Cancels an order', parameters: ORDER_SCHEMA } },
      { type: 'function', function: { name: 'order_status', description: "Looks up an order's state by its number", parameters: ORDER_SCHEMA } },
    ]);
    // The API got the call with the integration's credential and the end user's headers ...
    const lookups = shop.requests.filter((request) => request.url === '/orders/A-17');
    expect(lookups).to.have.length(1);
    expect(lookups[0].headers).to.include({ authorization: `Bearer ${API_TOKEN}`, 'x-end-user-token': END_USER_TOKEN, 'x-end-user-session': END_USER_SESSION });
    // ... and the model got the API's answer, paired with its call.
    expect(second.body.messages.slice(-2)).to.deep.equal([
      { role: 'assistant', content: null, tool_calls: [{ id: 'call_order_status', type: 'function', function: { name: 'order_status', arguments: '{"order_number":"A-17"}' } }] },
      { role: 'tool', tool_call_id: 'call_order_status', content: JSON.stringify({ status: 'succeeded', http_status: 200, result: { order: 'A-17', state: 'shipped', carrier: 'Parcelo' } }) },
    ]);

    const conversation = await eventsOf(conversationStream(done.conversation_id));
    expect(typesOf(conversation)).to.deep.equal(['ConversationStarted', 'UserMessagePosted', 'AssistantToolStepRecorded', 'AssistantAnswered']);
    expect(conversation[2].data).to.deep.include({ reply_to: done.user_message_id, call_id: 'call_order_status', tool_name: 'order_status', tool_call_id: succeeded.tool_call_id, status: 'succeeded', error: null });
    expect(conversation[3].data).to.deep.include({ text: 'Order A-17 has shipped with Parcelo.', usage: { prompt_tokens: 250, completion_tokens: 18 } });
    const toolCall = await eventsOf(toolCallStream(succeeded.tool_call_id));
    expect(typesOf(toolCall)).to.deep.equal(['ToolCallRequested', 'ToolCallSucceeded']);
    expect(toolCall[0].data).to.deep.include({
      tool_id: tools.order_status,
      arguments: { order_number: 'A-17' },
      caller: { kind: 'user', id: member.user_id },
      origin: { kind: 'chat', conversation_id: done.conversation_id, reply_to: done.user_message_id, call_id: 'call_order_status' },
      awaiting_approval: false,
    });
    expect(toolCall[0].metadata.actor).to.deep.equal({ kind: 'user', id: member.user_id });

    // The thread shows the step between the question and the answer.
    const messages = await messagesOf(done.conversation_id);
    expect(messages.map((message) => message.role)).to.deep.equal(['user', 'tool', 'assistant']);
    expect(messages[1]).to.deep.include({ text: '', reply_to: done.user_message_id, error: null });
    expect(messages[1].tool).to.deep.equal({ call_id: 'call_order_status', tool_name: 'order_status', tool_id: tools.order_status, tool_call_id: succeeded.tool_call_id, status: 'succeeded' });
  });

  it('answers POST /chat with the turn’s tool steps', async () => {
    llm.script({ tool_calls: [call('order_status', '{"order_number":"B-2"}', 'call_1')] }, { deltas: ['B-2 has shipped.'] });
    const response = await ask(owner, { message: 'Status of B-2?', workspace_id: workspaceId });
    expect(response.status, response.text).to.equal(200);
    expect(response.json.answer).to.include({ text: 'B-2 has shipped.' });
    expect(response.json.tool_steps).to.have.length(1);
    expect(response.json.tool_steps[0]).to.deep.include({ step_id: '0:call_1', call_id: 'call_1', tool_name: 'order_status', tool_id: tools.order_status, status: 'succeeded', error: null });
    expect(await response.events()).to.deep.equal([
      'ConversationStarted@conversation',
      'UserMessagePosted@conversation',
      'ToolCallRequested@toolCall',
      'ToolCallSucceeded@toolCall',
      'AssistantToolStepRecorded@conversation',
      'AssistantAnswered@conversation',
    ]);
  });

  it('gives a retry with the same Idempotency-Key the first answer and its steps, calling nothing twice', async () => {
    llm.script({ tool_calls: [call('order_status', '{"order_number":"K-9"}')] }, { deltas: ['K-9 has shipped.'] });
    const headers = { 'idempotency-key': 'chat-tools-retry-1' };
    const first = await ask(owner, { message: 'Status of K-9?', workspace_id: workspaceId }, headers);
    const asked = llm.requests.length;
    const second = await ask(owner, { message: 'Status of K-9?', workspace_id: workspaceId }, headers);
    expect(second.status, second.text).to.equal(200);
    expect(second.json).to.deep.equal(first.json);
    expect(first.json.tool_steps).to.have.length(1);
    expect(llm.requests.length).to.equal(asked);
    expect(shop.requests.filter((request) => request.url === '/orders/K-9')).to.have.length(1);
  });

  it('makes no call for a tool that is not offered or arguments that are not JSON, nor for arguments the schema refuses: each is a failed step the model sees', async () => {
    llm.script(
      {
        tool_calls: [
          call('order_status', '{"order_number": A-', 'call_bad_json'),
          call('launch_rocket', '{}', 'call_unknown'),
          call('export_orders', '{}', 'call_not_chat'),
          call('order_status', '{"order": "A-17"}', 'call_bad_args'),
        ],
      },
      { deltas: ['I could not look that up.'] },
    );
    const calledBefore = shop.requests.length;
    const response = await ask(owner, { message: 'Where is my order?', workspace_id: workspaceId });
    expect(response.status, response.text).to.equal(200);
    expect(response.json.tool_steps.map((step: Json) => [step.call_id, step.status, step.error.code, step.tool_call_id])).to.deep.equal([
      ['call_bad_json', 'failed', 'invalid_arguments_json', null],
      ['call_unknown', 'failed', 'unknown_tool', null],
      ['call_not_chat', 'failed', 'unknown_tool', null],
      ['call_bad_args', 'failed', 'invalid_arguments', null],
    ]);
    expect(shop.requests.length).to.equal(calledBefore);
    const results = toolResults(lastRequest().body.messages);
    expect(results.map((result) => [result.status, result.error.code])).to.deep.equal([
      ['failed', 'invalid_arguments_json'],
      ['failed', 'unknown_tool'],
      ['failed', 'unknown_tool'],
      ['failed', 'invalid_arguments'],
    ]);
    expect(results[1].error.message).to.contain('cancel_order, order_status');
    expect(results[3].error.message).to.contain('order_number');
    const events = await response.events();
    expect(events.filter((event) => event.endsWith('@toolCall'))).to.deep.equal([]);
    expect(events.filter((event) => event === 'AssistantToolStepRecorded@conversation')).to.have.length(4);
  });

  it(`asks the model again at most ${MAX_TOOL_ROUNDS} rounds with tools, then once without`, async () => {
    const before = llm.requests.length;
    const calledBefore = shop.requests.length;
    for (let round = 0; round < MAX_TOOL_ROUNDS; round += 1) llm.script({ tool_calls: [call('order_status', `{"order_number":"R-${round}"}`, 'call_0')] });
    llm.script({ deltas: ['Enough lookups.'] });
    const response = await ask(owner, { message: 'Check every order', workspace_id: workspaceId });
    expect(response.status, response.text).to.equal(200);
    const requests = llm.requests.slice(before);
    expect(requests.map((request) => (request.body.tools ?? []).length)).to.deep.equal([...Array<number>(MAX_TOOL_ROUNDS).fill(2), 0]);
    expect(shop.requests.length - calledBefore).to.equal(MAX_TOOL_ROUNDS);
    // A server that numbers its calls afresh each round still gets each step paired with its own call.
    expect(response.json.tool_steps.map((step: Json) => step.step_id)).to.deep.equal(['0:call_0', '1:call_0', '2:call_0', '3:call_0', '4:call_0']);
    expect(new Set(response.json.tool_steps.map((step: Json) => step.tool_call_id)).size).to.equal(MAX_TOOL_ROUNDS);
    expect(response.json.answer.text).to.equal('Enough lookups.');
  });

  it('offers no tools in a conversation without a workspace, nor in a workspace without chat tools', async () => {
    for (const body of [{ message: 'Cancel order A-17' }, { message: 'Cancel order A-17', workspace_id: bareWorkspaceId }]) {
      llm.script({ deltas: ['I cannot do that here.'] });
      const response = await ask(member, body);
      expect(response.status, response.text).to.equal(200);
      expect(response.json.tool_steps).to.deep.equal([]);
      expect(lastRequest().body).to.not.have.property('tools');
      expect(lastRequest().body.messages[0].content).to.not.contain('You may call the tools');
    }
  });

  describe('an approval_required tool', () => {
    let waiting: Json;
    let conversationId: string;
    let userMessageId: string;

    it('waits: the turn streams the step as awaiting approval and ends saying so, and the API receives nothing', async () => {
      const before = llm.requests.length;
      llm.script({ deltas: ['Sure. '], tool_calls: [call('cancel_order', '{"order_number":"A-17"}')] });
      const response = await askStreamed(member, { message: 'Please cancel order A-17', workspace_id: workspaceId }, endUser);
      expect(response.status, response.text).to.equal(200);
      const frames = framesOf(response.text);
      expect(frames.map((frame) => [frame.event, frame.data.status ?? null])).to.deep.equal([
        ['delta', null],
        ['tool', 'requested'],
        ['tool', 'awaiting_approval'],
        ['delta', null],
        ['done', null],
      ]);
      waiting = frames[2].data;
      expect(waiting).to.deep.include({ tool_name: 'cancel_order', tool_id: tools.cancel_order, error: null });
      conversationId = frames[4].data.conversation_id;
      userMessageId = frames[4].data.user_message_id;
      const text = frames.filter((frame) => frame.event === 'delta').map((frame) => frame.data.text).join('');
      expect(text).to.equal('Sure. \n\nThe action “cancel_order” awaits approval by an owner or admin of the organization: it has not run yet. Its result will be reported here once it has.');
      // The turn ended there: the model was asked once, and the API was not called.
      expect(llm.requests.length - before).to.equal(1);
      expect(shop.cancellations()).to.deep.equal([]);
      const toolCall = await eventsOf(toolCallStream(waiting.tool_call_id));
      expect(typesOf(toolCall)).to.deep.equal(['ToolCallRequested']);
      expect(toolCall[0].data).to.deep.include({ awaiting_approval: true, risk: 'approval_required' });
      const messages = await messagesOf(conversationId);
      expect(messages.map((message) => [message.role, message.tool?.status ?? null])).to.deep.equal([
        ['user', null],
        ['tool', 'awaiting_approval'],
        ['assistant', null],
      ]);
      expect(messages[2].text).to.equal(text);
    });

    it('runs only after an admin approves it; the model gets its result and its report is a new message of the conversation', async () => {
      // A member may not approve; the API still has received nothing.
      const denied = await server.request('POST', `/api/v1/tool-calls/${waiting.tool_call_id}/approve`, { headers: as(member) });
      expect(denied.status).to.equal(403);
      expect(shop.cancellations()).to.deep.equal([]);

      llm.script({ deltas: ['Order A-17 is cancelled.'], usage: { prompt_tokens: 80, completion_tokens: 6 } });
      const approved = await server.request('POST', `/api/v1/tool-calls/${waiting.tool_call_id}/approve`, { headers: as(admin) });
      expect(approved.status, approved.text).to.equal(200);
      await eventually(async () => (await messagesOf(conversationId)).length === 4, 20_000, 'the follow-up in the conversation');

      expect(shop.cancellations()).to.have.length(1);
      // Approved later, the call still carries the end user's headers of the turn.
      expect(shop.cancellations()[0]).to.deep.include({ url: '/orders/A-17/cancel' });
      expect(shop.cancellations()[0].headers).to.include({ authorization: `Bearer ${API_TOKEN}`, 'x-end-user-token': END_USER_TOKEN, 'x-end-user-session': END_USER_SESSION });
      // The model got the turn again with the call's result, and no tools.
      const followUp = lastRequest().body;
      expect(followUp).to.not.have.property('tools');
      expect(followUp.messages.filter((message) => message.role === 'user').pop()?.content).to.equal('Please cancel order A-17');
      expect(toolResults(followUp.messages)).to.deep.equal([{ status: 'succeeded', http_status: 200, result: { order: 'A-17', cancelled: true } }]);

      const messages = await messagesOf(conversationId);
      expect(messages.map((message) => [message.role, message.tool?.status ?? null])).to.deep.equal([
        ['user', null],
        ['tool', 'succeeded'],
        ['assistant', null],
        ['assistant', null],
      ]);
      expect(messages[3]).to.deep.include({ text: 'Order A-17 is cancelled.', reply_to: userMessageId, error: null, model: 'scripted-model', usage: { prompt_tokens: 80, completion_tokens: 6 } });
      const conversation = await eventsOf(conversationStream(conversationId));
      expect(typesOf(conversation).slice(-2)).to.deep.equal(['AssistantToolStepRecorded', 'AssistantFollowedUp']);
      expect(conversation[conversation.length - 1].metadata.actor).to.deep.equal({ kind: 'system', id: 'chat_tool_follow_up' });
      expect(conversation[conversation.length - 1].data).to.deep.include({ tool_call_ids: [waiting.tool_call_id] });
    });

    it('follows up once: a redelivered outcome records nothing and asks the model nothing', async () => {
      const before = (await eventsOf(conversationStream(conversationId))).length;
      const asked = llm.requests.length;
      const deps = { ...server.platform.commands, readStore: server.platform.readStore, assistant: server.platform.assistant, logger };
      await followUpTurn(deps, owner.tenant_id, conversationId, userMessageId, waiting.tool_call_id, systemContext('redelivery'));
      expect((await eventsOf(conversationStream(conversationId))).length).to.equal(before);
      expect(llm.requests.length).to.equal(asked);
    });

    it('refused by an admin, it never runs, and the assistant reports the refusal', async () => {
      llm.script({ tool_calls: [call('cancel_order', '{"order_number":"C-3"}')] });
      const turn = await ask(member, { message: 'Cancel C-3 please', workspace_id: workspaceId });
      expect(turn.json.tool_steps).to.have.length(1);
      const step = turn.json.tool_steps[0];
      expect(step.status).to.equal('awaiting_approval');
      llm.script({ deltas: ['The cancellation of C-3 was refused.'] });
      const refused = await server.request('POST', `/api/v1/tool-calls/${step.tool_call_id}/refuse`, { headers: as(owner), body: { reason: 'already shipped' } });
      expect(refused.status, refused.text).to.equal(200);
      await eventually(async () => (await messagesOf(turn.json.conversation_id)).length === 4, 20_000, 'the follow-up after the refusal');
      const messages = await messagesOf(turn.json.conversation_id);
      expect(messages[1].tool.status).to.equal('refused');
      expect(messages[1].error).to.deep.equal({ code: 'refused', message: 'already shipped' });
      expect(messages[3].text).to.equal('The cancellation of C-3 was refused.');
      expect(toolResults(lastRequest().body.messages)).to.deep.equal([{ status: 'refused', reason: 'already shipped' }]);
      expect(shop.requests.filter((request) => request.url.includes('C-3'))).to.deep.equal([]);
    });
  });

  describe('follow-ups that cannot be given', () => {
    const awaitingTurn = async (order: string): Promise<{ conversationId: string; toolCallId: string }> => {
      llm.script({ tool_calls: [call('cancel_order', `{"order_number":"${order}"}`)] });
      const turn = await ask(owner, { message: `Cancel ${order}`, workspace_id: workspaceId });
      expect(turn.json.tool_steps[0]?.status, turn.text).to.equal('awaiting_approval');
      return { conversationId: turn.json.conversation_id, toolCallId: turn.json.tool_steps[0].tool_call_id };
    };

    it('records why, when the model fails to report the outcome', async () => {
      const { conversationId, toolCallId } = await awaitingTurn('D-4');
      llm.script({ status: 500 });
      expect((await server.request('POST', `/api/v1/tool-calls/${toolCallId}/approve`, { headers: as(admin) })).status).to.equal(200);
      await eventually(async () => (await messagesOf(conversationId)).length === 4, 20_000, 'the failed follow-up');
      const messages = await messagesOf(conversationId);
      expect(messages[1].tool.status).to.equal('succeeded');
      expect(messages[3]).to.deep.include({ role: 'assistant', text: '' });
      expect(messages[3].error.code).to.equal('model_error');
      // A failed follow-up is no message of the conversation's count.
      const listed = await server.request('GET', `/api/v1/conversations/${conversationId}`, { headers: as(owner) });
      expect(listed.json.message_count).to.equal(2);
    });

    it('gives none once a person has taken the conversation over, while the step still shows its outcome', async () => {
      const { conversationId, toolCallId } = await awaitingTurn('E-5');
      const handedOff = await server.request('PUT', `/api/v1/conversations/${conversationId}/status`, { headers: as(owner), body: { status: 'handed_off' } });
      expect(handedOff.status, handedOff.text).to.equal(200);
      const asked = llm.requests.length;
      expect((await server.request('POST', `/api/v1/tool-calls/${toolCallId}/approve`, { headers: as(admin) })).status).to.equal(200);
      await eventually(async () => (await messagesOf(conversationId))[1].tool.status === 'succeeded', 20_000, 'the step moved on');
      // The saga is done with the call's outcome once its checkpoint has passed it.
      const settled = (await eventsOf(toolCallStream(toolCallId))).find((event) => event.type === 'ToolCallSucceeded')!;
      const group = `saga:${SagaRunner.groupOf({ name: CHAT_TOOL_FOLLOW_UP, version: 1 })}`;
      await eventually(async () => ((await server.platform.readStore.getProjectionState(group))?.checkpoint ?? 0) >= settled.position, 20_000, 'the follow-up saga past the outcome');
      const events = await eventsOf(conversationStream(conversationId));
      expect(typesOf(events)).to.not.include('AssistantFollowedUp');
      expect(llm.requests.length).to.equal(asked);
    });
  });

  describe('the embedded engine (no model configured)', () => {
    let embedded: TestServer;
    let asker: Account;

    before(async () => {
      embedded = await startTestServer({ SCRYPT_LOG_N: '12' });
      asker = await registerOwner(embedded, 'chat-tools-embedded-org');
      const workspace = (await embedded.request('GET', '/api/v1/org/workspaces', { headers: as(asker) })).json.items[0].id;
      const integration = await embedded.request('POST', `/api/v1/workspaces/${workspace}/integrations`, {
        headers: as(asker),
        body: { name: 'Shop', base_url: 'https://93.184.215.16/api', auth: { kind: 'bearer' }, credentials: API_TOKEN },
      });
      await addTool(
        { name: 'cancel_order', description: 'Cancels an order', method: 'POST', path: '/orders/{order_number}/cancel', parameters: [{ argument: 'order_number', in: 'path', name: 'order_number' }], input_schema: ORDER_SCHEMA },
        integration.json.id,
        embedded,
        asker,
        workspace,
      );
      (asker as Account & { workspace: string }).workspace = workspace;
    });
    after(() => embedded.close());

    it('calls no tool, and says plainly it cannot act without a language model', async () => {
      const workspace = (asker as Account & { workspace: string }).workspace;
      const response = await embedded.request('POST', '/api/v1/chat', { headers: as(asker), body: { message: 'Please cancel my order A-17', workspace_id: workspace } });
      expect(response.status, response.text).to.equal(200);
      expect(response.json.answer.model).to.equal('extractive');
      expect(response.json.answer.text).to.match(/^I cannot take actions or look things up in your systems here: no language model is configured/);
      expect(response.json.tool_steps).to.deep.equal([]);
      expect((await response.events()).filter((event) => event.endsWith('@toolCall'))).to.deep.equal([]);
    });
  });

  describe('erasing the conversation (docs/personal-data.md)', () => {
    it('erases the tool calls of its turns: arguments and exchanges unreadable, a call awaiting approval refused and out of the queue', async () => {
      llm.script({ tool_calls: [call('order_status', '{"order_number":"Z-4242"}', 'call_z')] }, { deltas: ['Z-4242 has shipped.'] });
      const first = await ask(owner, { message: 'Where is my order Z-4242?', workspace_id: workspaceId });
      expect(first.status, first.text).to.equal(200);
      const conversationId = first.json.conversation_id;
      const ranId: string = first.json.tool_steps[0].tool_call_id;
      llm.script({ tool_calls: [call('cancel_order', '{"order_number":"Z-4242"}', 'call_zc')] });
      const second = await ask(owner, { message: 'Then cancel Z-4242', conversation_id: conversationId, workspace_id: workspaceId });
      expect(second.status, second.text).to.equal(200);
      const waitingId: string = second.json.tool_steps[0].tool_call_id;
      expect(second.json.tool_steps[0].status).to.equal('awaiting_approval');
      const stored = JSON.stringify([...(await server.platform.storedEvents.readStream(toolCallStream(ranId))), ...(await server.platform.storedEvents.readStream(toolCallStream(waitingId)))]);
      expect(stored).to.not.include('Z-4242');
      const before = (await server.request('GET', `/api/v1/tool-calls/${ranId}`, { headers: as(owner) })).json;
      expect(before).to.deep.include({ arguments: { order_number: 'Z-4242' }, erased_at: null });

      const erased = await server.request('POST', `/api/v1/conversations/${conversationId}/erase`, { headers: as(owner) });
      expect(erased.status, erased.text).to.equal(200);

      const ran = await eventsOf(toolCallStream(ranId));
      expect(typesOf(ran)).to.deep.equal(['ToolCallRequested', 'ToolCallSucceeded', 'ToolCallErased']);
      expect(ran[0].data).to.deep.include({ arguments: {}, tool_name: 'order_status' });
      expect(ran[1].data).to.deep.include({ status: 200, exchange: ERASED_EXCHANGE });
      const shown = await server.request('GET', `/api/v1/tool-calls/${ranId}`, { headers: as(owner) });
      expect(shown.json).to.deep.include({ status: 'succeeded', arguments: {}, request: null, response: null });
      expect(shown.json.erased_at).to.be.a('string');

      const waited = await eventsOf(toolCallStream(waitingId));
      expect(typesOf(waited)).to.deep.equal(['ToolCallRequested', 'ToolCallRefused', 'ToolCallErased']);
      // The erasing admin, or the saga when it got there first.
      expect(waited[1].data).to.deep.include({ reason: ERASED_PERSONAL_DATA });
      expect([owner.user_id, 'conversation_erasure']).to.include((waited[1].data as Json).refused_by.id);
      const queue = await server.request('GET', '/api/v1/tool-calls?status=awaiting_approval', { headers: as(owner) });
      expect(queue.json.items.map((item: Json) => item.id)).to.not.include(waitingId);
      const approve = await server.request('POST', `/api/v1/tool-calls/${waitingId}/approve`, { headers: as(owner) });
      expect([approve.status, approve.json.code]).to.deep.equal([404, 'tool_call_not_found']);
      expect(shop.cancellations().map((request) => request.url)).to.not.include('/orders/Z-4242/cancel');
    });

    it('runs no call erased before it ran: 404, and the API receives nothing', async () => {
      const toolCallId = server.platform.identity.ids.newId();
      const identity = { tenant_id: owner.tenant_id, workspace_id: workspaceId, tool_call_id: toolCallId, tool_id: tools.order_status };
      const metadata = { tenant_id: owner.tenant_id, actor: { kind: 'system' as const, id: 'test' }, request_id: null, correlation_id: 'erased-ready', causation_id: null, occurred_at: new Date().toISOString(), ip: null };
      const requested = { ...identity, tool_name: 'order_status', risk: 'read', arguments: { order_number: 'X-1' }, caller: { kind: 'user', id: owner.user_id }, origin: { kind: 'test' }, awaiting_approval: false, end_user_token_sealed: null, end_user_session_sealed: null, requested_at: new Date().toISOString() };
      await server.platform.storedEvents.appendToStream(toolCallStream(toolCallId), [
        { id: server.platform.identity.ids.newId(), type: 'ToolCallRequested', data: requested, metadata },
        { id: server.platform.identity.ids.newId(), type: 'ToolCallErased', data: { ...identity, erased_at: new Date().toISOString() }, metadata },
      ]);
      const before = shop.requests.length;
      let error: unknown = null;
      await runToolCall(server.platform.toolCalls, owner.tenant_id, toolCallId, userContext({ tenant_id: owner.tenant_id })).catch((caught: unknown) => (error = caught));
      expect((error as { code?: string } | null)?.code).to.equal('tool_call_not_found');
      expect(shop.requests.length).to.equal(before);
    });

    it('erases a call its turn asked for but never recorded as a step (a process that stopped between the two)', async () => {
      llm.script({ deltas: ['Hello.'] });
      const asked = await ask(owner, { message: 'Hello there', workspace_id: workspaceId });
      expect(asked.status, asked.text).to.equal(200);
      const conversationId: string = asked.json.conversation_id;
      const toolCallId = server.platform.identity.ids.newId();
      const metadata = { tenant_id: owner.tenant_id, actor: { kind: 'user' as const, id: owner.user_id }, request_id: null, correlation_id: 'unrecorded-step', causation_id: null, occurred_at: new Date().toISOString(), ip: null };
      const origin = { kind: 'chat', conversation_id: conversationId, reply_to: asked.json.user_message_id, call_id: 'call_lost' };
      const requested = { tenant_id: owner.tenant_id, workspace_id: workspaceId, tool_call_id: toolCallId, tool_id: tools.order_status, tool_name: 'order_status', risk: 'read', arguments: { order_number: 'L-5150' }, caller: { kind: 'user', id: owner.user_id }, origin, awaiting_approval: true, end_user_token_sealed: null, end_user_session_sealed: null, requested_at: new Date().toISOString() };
      await server.platform.eventStore.appendToStream(toolCallStream(toolCallId), [{ id: server.platform.identity.ids.newId(), type: 'ToolCallRequested', data: requested, metadata }]);
      await eventually(async () => (await server.request('GET', `/api/v1/tool-calls/${toolCallId}`, { headers: as(owner) })).status === 200, 10_000, 'the call in the execution log');

      const erased = await server.request('POST', `/api/v1/conversations/${conversationId}/erase`, { headers: as(owner) });
      expect(erased.status, erased.text).to.equal(200);
      const events = await eventsOf(toolCallStream(toolCallId));
      expect(typesOf(events)).to.deep.equal(['ToolCallRequested', 'ToolCallRefused', 'ToolCallErased']);
      expect(events[0].data).to.deep.include({ arguments: {} });
    });

    it('erases them too when the process that recorded the erasure stopped before (saga conversation_erasure)', async () => {
      llm.script({ tool_calls: [call('order_status', '{"order_number":"Y-77"}', 'call_y')] }, { deltas: ['Y-77 has shipped.'] });
      const asked = await ask(owner, { message: 'Where is Y-77?', workspace_id: workspaceId });
      const toolCallId: string = asked.json.tool_steps[0].tool_call_id;
      await handleCommand(server.platform.commands, conversationAggregate, conversationStream(asked.json.conversation_id), { type: 'EraseConversation', data: {} }, userContext({ tenant_id: owner.tenant_id }));
      await eventually(async () => typesOf(await eventsOf(toolCallStream(toolCallId))).includes('ToolCallErased'), 10_000, 'the tool call erased by the saga');
      await eventually(async () => ((await eventsOf(toolCallStream(toolCallId)))[0].data as Json).arguments.order_number === undefined, 10_000, 'its key deleted');
    });
  });

  describe('after everything above', () => {
    it('keeps the API credential and the end user’s token and session out of every event and log line', async () => {
      const events = await server.platform.storedEvents.readAll({ fromPosition: 0, maxCount: 1_000_000 });
      const stored = JSON.stringify(events);
      for (const secret of [API_TOKEN, END_USER_TOKEN, END_USER_SESSION]) {
        expect(stored, secret).to.not.contain(secret);
        expect(logLines.join('\n'), secret).to.not.contain(secret);
      }
    });

    it('audits every event it recorded, the tool steps and follow-ups among them', async () => {
      const seen = await expectEveryEventAudited(server);
      expect([...seen]).to.include.members(['AssistantToolStepRecorded', 'AssistantFollowedUp', 'ToolCallRequested', 'ToolCallApproved', 'ToolCallRefused', 'ToolCallSucceeded']);
    });
  });
});
