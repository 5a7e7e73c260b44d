// A local HTTP server speaking OpenAI's `POST /v1/embeddings` wire format (input as a string
// or a list, `encoding_format` float or base64, the `{object: "list", data: [{object:
// "embedding", index, embedding}], model, usage}` answer and the `{error: {message, type,
// code}}` failure shape), as self-hosted servers (vLLM, Ollama, LocalAI) speak it. Its model
// is small and deterministic: a word's vector is one axis of its concept, synonyms sharing
// a concept, so "money back" lands next to "refund" while sharing no word with it. Every
// request is recorded; failures can be scripted.

import http from 'node:http';
import type { AddressInfo } from 'node:net';

export const TEST_EMBEDDING_DIMENSIONS = 256;

/** Words that mean the same thing to the test model. */
const CONCEPTS: Record<string, string> = {
  refund: 'refund',
  refunds: 'refund',
  refunded: 'refund',
  reimbursement: 'refund',
  reimburse: 'refund',
  money: 'refund',
  repayment: 'refund',
  shipping: 'shipping',
  delivery: 'shipping',
  parcel: 'shipping',
  parcels: 'shipping',
  courier: 'shipping',
  password: 'account',
  login: 'account',
  credentials: 'account',
};

const IGNORED = new Set(['a', 'an', 'the', 'how', 'do', 'i', 'my', 'get', 'back', 'is', 'of', 'to', 'and', 'what', 'can', 'we', 'you', 'your', 'in', 'on', 'for']);

/** The test model: a bag of concepts, each hashed to one axis. */
export function embedText(text: string): number[] {
  const vector = new Array<number>(TEST_EMBEDDING_DIMENSIONS).fill(0);
  for (const word of text.toLowerCase().match(/\p{L}+/gu) ?? []) {
    if (IGNORED.has(word)) continue;
    const concept = CONCEPTS[word] ?? word;
    let hash = 2166136261;
    for (let index = 0; index < concept.length; index += 1) hash = Math.imul(hash ^ concept.charCodeAt(index), 16777619);
    vector[(hash >>> 0) % TEST_EMBEDDING_DIMENSIONS] += 1;
  }
  return vector;
}

export interface RecordedEmbeddingsRequest {
  path: string;
  authorization: string | undefined;
  body: { model?: string; input?: string | string[]; encoding_format?: string };
}

export class LocalEmbeddingsServer {
  readonly requests: RecordedEmbeddingsRequest[] = [];
  /** The next answers to give instead of vectors: `[status, error body]`. */
  readonly failures: Array<[number, { message: string; type: string; code: string | null }]> = [];
  /** While true, every request is answered 503. */
  down = false;
  /** Lists the vectors last to first (their `index` still right), as a server may. */
  reversed = false;
  /** Answers one vector fewer than asked for. */
  shortAnswer = false;

  private constructor(private readonly server: http.Server) {}

  static async start(): Promise<LocalEmbeddingsServer> {
    const server = http.createServer();
    const api = new LocalEmbeddingsServer(server);
    server.on('request', (request, response) => api.handle(request, response));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return api;
  }

  /** The base URL a client is given (`.../v1`). */
  get baseUrl(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/v1`;
  }

  /** Texts embedded so far, over all requests. */
  get texts(): string[] {
    return this.requests.flatMap((request) => (Array.isArray(request.body.input) ? request.body.input : request.body.input ? [request.body.input] : []));
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private handle(request: http.IncomingMessage, response: http.ServerResponse): void {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const send = (status: number, body: unknown): void => {
        response.writeHead(status, { 'content-type': 'application/json' });
        response.end(JSON.stringify(body));
      };
      let body: RecordedEmbeddingsRequest['body'] = {};
      try {
        body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as RecordedEmbeddingsRequest['body'];
      } catch {
        send(400, { error: { message: 'body is not JSON', type: 'invalid_request_error', code: null } });
        return;
      }
      const path = new URL(request.url ?? '/', 'http://local').pathname;
      this.requests.push({ path, authorization: request.headers.authorization, body });
      if (request.method !== 'POST' || path !== '/v1/embeddings') return send(404, { error: { message: `no route ${path}`, type: 'invalid_request_error', code: null } });
      if (this.down) return send(503, { error: { message: 'the model is loading', type: 'server_error', code: 'model_loading' } });
      const failure = this.failures.shift();
      if (failure) return send(failure[0], { error: failure[1] });
      const inputs = typeof body.input === 'string' ? [body.input] : Array.isArray(body.input) ? body.input : null;
      if (!inputs || typeof body.model !== 'string') return send(400, { error: { message: "'input' and 'model' are required", type: 'invalid_request_error', code: null } });
      const base64 = body.encoding_format === 'base64';
      let data = inputs.map((input, index) => {
        const vector = embedText(input);
        return { object: 'embedding', index, embedding: base64 ? Buffer.from(Float32Array.from(vector).buffer).toString('base64') : vector };
      });
      if (this.shortAnswer) data = data.slice(1);
      if (this.reversed) data = data.reverse();
      const tokens = inputs.reduce((sum, input) => sum + input.split(/\s+/).length, 0);
      send(200, { object: 'list', data, model: body.model, usage: { prompt_tokens: tokens, total_tokens: tokens } });
    });
  }
}
