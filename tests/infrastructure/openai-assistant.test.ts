// The OpenAI-compatible engine against a local server speaking the chat-completions streaming
// wire format (tests/support/openai-compatible-server.ts), never against a hosted model.

import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect } from 'chai';
import { AssistantEngineError, type AssistantChunk, type AssistantRequest, type Passage } from '../../application/ports/assistant-engine';
import { OpenAiAssistantEngine, citedPassageIds, systemPrompt } from '../../infrastructure/assistant/openai';
import { OpenAiCompatibleServer } from '../support/openai-compatible-server';

const PASSAGES: Passage[] = [
  { id: '1', document_id: 'doc-refunds', chunk_id: 'doc-refunds:0', title: 'Refund policy', heading: 'Timing', text: 'Refunds are issued within 14 days.' },
  { id: '2', document_id: 'doc-shipping', chunk_id: 'doc-shipping:3', title: 'Shipping', heading: null, text: 'Orders ship within two business days.' },
];

const request = (extra: Partial<AssistantRequest> = {}): AssistantRequest => ({
  assistant: { name: 'Ava', instructions: 'Be brief. Never promise discounts.', language: 'fr' },
  history: [
    { role: 'user', text: 'Hello' },
    { role: 'assistant', text: 'Hi, how can I help?' },
  ],
  question: 'How long do refunds take?',
  passages: PASSAGES,
  ...extra,
});

async function collect(engine: OpenAiAssistantEngine, req: AssistantRequest): Promise<AssistantChunk[]> {
  const chunks: AssistantChunk[] = [];
  for await (const chunk of engine.answer(req)) chunks.push(chunk);
  return chunks;
}

async function failureOf(work: Promise<unknown>): Promise<AssistantEngineError> {
  try {
    await work;
  } catch (error) {
    expect(error).to.be.instanceOf(AssistantEngineError);
    return error as AssistantEngineError;
  }
  throw new Error('expected an AssistantEngineError');
}

describe('OpenAI-compatible assistant engine', () => {
  let server: OpenAiCompatibleServer;
  const engine = (options: Partial<ConstructorParameters<typeof OpenAiAssistantEngine>[0]> = {}) =>
    new OpenAiAssistantEngine({ baseUrl: server.baseUrl, apiKey: 'sk-test-key', model: 'scripted-model', timeoutMs: 5000, ...options });

  beforeEach(async () => {
    server = await OpenAiCompatibleServer.start();
  });
  afterEach(() => server.close());

  it('streams the answer, keeps the citations the model used and the usage the server reported', async () => {
    server.script({ deltas: ['Refunds take ', 'up to 14 days [1]', '. See also [7] and [1, 2].'], usage: { prompt_tokens: 321, completion_tokens: 17 }, model: 'scripted-model-2024' });
    const chunks = await collect(engine(), request());
    expect(chunks).to.deep.equal([
      { kind: 'delta', text: 'Refunds take ' },
      { kind: 'delta', text: 'up to 14 days [1]' },
      { kind: 'delta', text: '. See also [7] and [1, 2].' },
      { kind: 'done', model: 'scripted-model-2024', cited: ['1', '2'], answered_from_knowledge: true, usage: { prompt_tokens: 321, completion_tokens: 17 } },
    ]);
  });

  it('sends the prompt: the assistant, its instructions and language, the numbered passages, the history, the question', async () => {
    server.script({ deltas: ['ok'] });
    await collect(engine(), request());
    const [received] = server.requests;
    expect(received.path).to.equal('/v1/chat/completions');
    expect(received.headers.authorization).to.equal('Bearer sk-test-key');
    expect(received.body).to.deep.include({ model: 'scripted-model', stream: true, stream_options: { include_usage: true } });
    const [system, ...rest] = received.body.messages;
    expect(system.role).to.equal('system');
    expect(system.content).to.equal(systemPrompt(request()));
    expect(system.content).to.contain('You are Ava');
    expect(system.content).to.contain('Be brief. Never promise discounts.');
    expect(system.content).to.contain('"fr"');
    expect(system.content).to.contain('[1] Refund policy — Timing\nRefunds are issued within 14 days.');
    expect(system.content).to.contain('[2] Shipping\nOrders ship within two business days.');
    expect(system.content).to.match(/cite it by its number in square brackets, like \[1\]/);
    expect(system.content).to.match(/If the passages do not contain the answer, say plainly that the knowledge base has nothing about it/);
    expect(rest).to.deep.equal([
      { role: 'user', content: 'Hello' },
      { role: 'assistant', content: 'Hi, how can I help?' },
      { role: 'user', content: 'How long do refunds take?' },
    ]);
  });

  it('tells the model when there are no passages; an answer without citations is not from knowledge; no usage when none is reported', async () => {
    server.script({ deltas: ['The knowledge base has nothing about this.'], usage: null });
    const chunks = await collect(engine({ apiKey: null }), request({ passages: [] }));
    expect(chunks[chunks.length - 1]).to.deep.equal({ kind: 'done', model: 'scripted-model', cited: [], answered_from_knowledge: false, usage: null });
    expect(server.requests[0].body.messages[0].content).to.contain('There are no passages for this question');
    // A server that needs no key gets no Authorization header.
    expect(server.requests[0].headers).to.not.have.property('authorization');
  });

  describe('tool calling', () => {
    const ORDER_STATUS = {
      name: 'order_status',
      description: "Looks up an order's status by its number",
      parameters: { type: 'object', properties: { order_number: { type: 'string' } }, required: ['order_number'] },
    };
    const CANCEL = { name: 'cancel_order', description: 'Cancels an order', parameters: { type: 'object', properties: { order_number: { type: 'string' } } } };

    it('offers the tools as functions and tells the model it may act and must not invent results', async () => {
      server.script({ deltas: ['ok'] });
      await collect(engine(), request({ tools: [ORDER_STATUS, CANCEL] }));
      const [received] = server.requests;
      expect(received.body.tools).to.deep.equal([
        { type: 'function', function: ORDER_STATUS },
        { type: 'function', function: CANCEL },
      ]);
      const system = received.body.messages[0].content;
      expect(system).to.equal(systemPrompt(request({ tools: [ORDER_STATUS, CANCEL] })));
      expect(system).to.match(/You may call the tools you are given to look things up or take actions/);
      expect(system).to.match(/Never invent a tool's result/);
    });

    it('sends no tools and says nothing of them when none is offered', async () => {
      server.script({ deltas: ['ok'] });
      await collect(engine(), request({ tools: [] }));
      expect(server.requests[0].body).to.not.have.property('tools');
      expect(server.requests[0].body.messages[0].content).to.not.match(/tool/i);
    });

    it('puts streamed calls together by index (id and name once, arguments in pieces) and ends the round with them', async () => {
      server.script({
        deltas: ['Let me check. '],
        tool_calls: [
          { id: 'call_a', name: 'order_status', arguments: ['{"order_', 'number": ', '"A-17"}'] },
          { id: 'call_b', name: 'cancel_order', arguments: ['{"order_number":"B-2"}'] },
        ],
        usage: { prompt_tokens: 50, completion_tokens: 9 },
      });
      const chunks = await collect(engine(), request({ tools: [ORDER_STATUS, CANCEL] }));
      expect(chunks).to.deep.equal([
        { kind: 'delta', text: 'Let me check. ' },
        {
          kind: 'tool_calls',
          calls: [
            { id: 'call_a', name: 'order_status', arguments: '{"order_number": "A-17"}' },
            { id: 'call_b', name: 'cancel_order', arguments: '{"order_number":"B-2"}' },
          ],
          model: 'scripted-model',
          usage: { prompt_tokens: 50, completion_tokens: 9 },
        },
      ]);
    });

    it('takes calls ended with `stop` as calls too, and gives a call without an id one', async () => {
      server.script({ tool_calls: [{ name: 'order_status', arguments: ['{}'] }], finish_reason: 'stop' });
      const chunks = await collect(engine(), request({ tools: [ORDER_STATUS] }));
      expect(chunks).to.deep.equal([{ kind: 'tool_calls', calls: [{ id: 'call_0', name: 'order_status', arguments: '{}' }], model: 'scripted-model', usage: null }]);
    });

    it('sends the steps back: per step the assistant message with its call, then the tool message with the result', async () => {
      server.script({ deltas: ['Order A-17 has shipped.'] });
      const steps = [
        { call: { id: 'call_a', name: 'order_status', arguments: '{"order_number":"A-17"}' }, result: '{"status":"succeeded","http_status":200,"result":{"state":"shipped"}}' },
        { call: { id: 'call_b', name: 'cancel_order', arguments: '{"order_number": B-2' }, result: '{"status":"failed","error":{"code":"invalid_arguments_json"}}' },
      ];
      const chunks = await collect(engine(), request({ tools: [ORDER_STATUS, CANCEL], steps }));
      expect(chunks[chunks.length - 1]).to.include({ kind: 'done' });
      const [, ...rest] = server.requests[0].body.messages;
      expect(rest).to.deep.equal([
        { role: 'user', content: 'Hello' },
        { role: 'assistant', content: 'Hi, how can I help?' },
        { role: 'user', content: 'How long do refunds take?' },
        { role: 'assistant', content: null, tool_calls: [{ id: 'call_a', type: 'function', function: { name: 'order_status', arguments: '{"order_number":"A-17"}' } }] },
        { role: 'tool', tool_call_id: 'call_a', content: steps[0].result },
        // Arguments that are not JSON go back as {}: servers that parse them would refuse the turn.
        { role: 'assistant', content: null, tool_calls: [{ id: 'call_b', type: 'function', function: { name: 'cancel_order', arguments: '{}' } }] },
        { role: 'tool', tool_call_id: 'call_b', content: steps[1].result },
      ]);
    });

    it('sends the steps without tools when none is offered any more, and says the tool rules still', async () => {
      server.script({ deltas: ['Done.'] });
      const steps = [{ call: { id: 'call_a', name: 'order_status', arguments: '{}' }, result: '{"status":"succeeded"}' }];
      await collect(engine(), request({ steps }));
      expect(server.requests[0].body).to.not.have.property('tools');
      expect(server.requests[0].body.messages[0].content).to.match(/Never invent a tool's result/);
      expect(server.requests[0].body.messages.map((message) => message.role).slice(-2)).to.deep.equal(['assistant', 'tool']);
    });
  });

  it('reads [n] markers: only passages given, each once, in order of first use', () => {
    expect(citedPassageIds('a [2] b [1] c [2] d [3] e [01] f [2,1]', PASSAGES)).to.deep.equal(['2', '1']);
    expect(citedPassageIds('no citations', PASSAGES)).to.deep.equal([]);
  });

  it('reports a refusal of the server as model_error with its status, never the key', async () => {
    server.script({ status: 500 });
    const failure = await failureOf(collect(engine(), request()));
    expect(failure.code).to.equal('model_error');
    expect(failure.message).to.contain('500');
    expect(failure.message).to.not.contain('sk-test-key');
  });

  it('reports a server that cannot be reached as model_unreachable', async () => {
    const closed = http.createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    const failure = await failureOf(collect(engine({ baseUrl: `http://127.0.0.1:${port}/v1` }), request()));
    expect(failure.code).to.equal('model_unreachable');
  });

  it('times out a stream that stops sending, as model_timeout, and closes it', async () => {
    server.script({ deltas: ['Refunds ', 'never come'], hold: { index: 1, until: new Promise(() => undefined) } });
    const chunks: AssistantChunk[] = [];
    const failure = await failureOf(
      (async () => {
        for await (const chunk of engine({ timeoutMs: 200 }).answer(request())) chunks.push(chunk);
      })(),
    );
    expect(failure.code).to.equal('model_timeout');
    expect(chunks).to.deep.equal([{ kind: 'delta', text: 'Refunds ' }]);
    await server.abandonedAtLeast(1);
  });

  it('stops and closes the stream when the caller aborts', async () => {
    let release!: () => void;
    server.script({ deltas: ['Refunds ', 'take 14 days'], hold: { index: 1, until: new Promise<void>((resolve) => (release = resolve)) } });
    const controller = new AbortController();
    const chunks: AssistantChunk[] = [];
    const failure = await failureOf(
      (async () => {
        for await (const chunk of engine().answer(request({ signal: controller.signal }))) {
          chunks.push(chunk);
          controller.abort();
        }
      })(),
    );
    expect(failure.code).to.equal('cancelled');
    expect(chunks).to.deep.equal([{ kind: 'delta', text: 'Refunds ' }]);
    await server.abandonedAtLeast(1);
    release();
  });
});
