// A local OpenAI-compatible chat-completions server that streams scripted completions in the
// real wire format: `POST .../chat/completions` with `stream: true` is answered as
// text/event-stream, one `data: {...chat.completion.chunk...}` line per piece (the first with
// the assistant role, the last with finish_reason `stop`), the usage in a last chunk with no
// choices when the request asked for it (`stream_options.include_usage`), then `data: [DONE]`.
// Each request takes the next scripted completion; a script can hold the stream before a piece
// until the test lets it go, or answer an error status as OpenAI does. A script may end with
// tool calls instead (finish_reason `tool_calls`), streamed as OpenAI does: per call, a first
// piece with its index, id, type and name, then its arguments in the pieces given.

import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ScriptedCompletion {
  /** The answer's pieces, one chunk each. */
  deltas?: string[];
  usage?: { prompt_tokens: number; completion_tokens: number } | null;
  /** The model the chunks name (default: the requested one). */
  model?: string;
  /** Before the piece at `index` is sent, wait until `until` settles. */
  hold?: { index: number; until: Promise<unknown> };
  /** Answer this status with OpenAI's error body instead of a stream. */
  status?: number;
  /** End with these tool calls: `arguments` in the pieces they stream in; no `id` sends none. */
  tool_calls?: Array<{ id?: string; name: string; arguments: string[] }>;
  /** The finish_reason sent with tool calls (default `tool_calls`; some servers say `stop`). */
  finish_reason?: string;
}

export interface ReceivedMessage {
  role: string;
  content: string | null;
  tool_calls?: Array<{ id: string; type: string; function: { name: string; arguments: string } }>;
  tool_call_id?: string;
}

export interface ReceivedRequest {
  path: string;
  headers: http.IncomingHttpHeaders;
  body: {
    model: string;
    stream?: boolean;
    stream_options?: { include_usage?: boolean };
    messages: ReceivedMessage[];
    tools?: Array<{ type: string; function: { name: string; description: string; parameters: Record<string, unknown> } }>;
  };
}

export class OpenAiCompatibleServer {
  readonly requests: ReceivedRequest[] = [];
  /** Streams whose client left before the last chunk. */
  abandoned = 0;
  private readonly scripts: ScriptedCompletion[] = [];
  private readonly abandonedWaiters: Array<() => void> = [];

  private constructor(
    private readonly server: http.Server,
    /** The base URL, as LLM_BASE_URL takes it. */
    readonly baseUrl: string,
  ) {}

  static async start(): Promise<OpenAiCompatibleServer> {
    let instance: OpenAiCompatibleServer | null = null;
    const server = http.createServer((req, res) => void instance!.handle(req, res));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    instance = new OpenAiCompatibleServer(server, `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`);
    return instance;
  }

  /** The platform's settings that make this server its model (a test server's environment). */
  get settings(): Record<string, string> {
    return { LLM_BASE_URL: this.baseUrl, LLM_MODEL: 'scripted-model', LLM_API_KEY: 'sk-local-test' };
  }

  /** Queues the completions the next requests get, in order. */
  script(...completions: ScriptedCompletion[]): void {
    this.scripts.push(...completions);
  }

  /** Resolves once `count` streams in all were abandoned by their client. */
  async abandonedAtLeast(count: number): Promise<void> {
    while (this.abandoned < count) await new Promise<void>((resolve) => this.abandonedWaiters.push(resolve));
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private async handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as ReceivedRequest['body'];
    this.requests.push({ path: req.url ?? '', headers: req.headers, body });
    const script = this.scripts.shift();
    if (!req.url?.endsWith('/chat/completions') || req.method !== 'POST' || !script) {
      return this.error(res, 404, script ? 'unknown route' : 'no scripted completion left');
    }
    if (script.status) return this.error(res, script.status, 'scripted failure');
    let finished = false;
    res.on('close', () => {
      if (finished) return;
      this.abandoned += 1;
      for (const wake of this.abandonedWaiters.splice(0)) wake();
    });
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    const base = { id: 'chatcmpl-scripted', object: 'chat.completion.chunk', created: Math.floor(Date.now() / 1000), model: script.model ?? body.model, system_fingerprint: null };
    const send = (data: unknown): void => void res.write(`data: ${JSON.stringify(data)}\n\n`);
    send({ ...base, choices: [{ index: 0, delta: { role: 'assistant', content: '' }, logprobs: null, finish_reason: null }] });
    const deltas = script.deltas ?? [];
    for (const [index, text] of deltas.entries()) {
      if (script.hold?.index === index) await script.hold.until;
      if (res.destroyed) return;
      send({ ...base, choices: [{ index: 0, delta: { content: text }, logprobs: null, finish_reason: null }] });
    }
    for (const [index, call] of (script.tool_calls ?? []).entries()) {
      const first = { index, ...(call.id ? { id: call.id } : {}), type: 'function', function: { name: call.name, arguments: '' } };
      send({ ...base, choices: [{ index: 0, delta: { tool_calls: [first] }, logprobs: null, finish_reason: null }] });
      for (const piece of call.arguments) send({ ...base, choices: [{ index: 0, delta: { tool_calls: [{ index, function: { arguments: piece } }] }, logprobs: null, finish_reason: null }] });
    }
    const finish = script.tool_calls?.length ? (script.finish_reason ?? 'tool_calls') : 'stop';
    send({ ...base, choices: [{ index: 0, delta: {}, logprobs: null, finish_reason: finish }] });
    if (body.stream_options?.include_usage && script.usage) {
      const { prompt_tokens, completion_tokens } = script.usage;
      send({ ...base, choices: [], usage: { prompt_tokens, completion_tokens, total_tokens: prompt_tokens + completion_tokens } });
    }
    finished = true;
    res.end('data: [DONE]\n\n');
  }

  private error(res: http.ServerResponse, status: number, message: string): void {
    res.writeHead(status, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ error: { message, type: 'server_error', param: null, code: null } }));
  }
}
