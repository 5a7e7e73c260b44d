// The OpenAI-compatible embeddings adapter against a local server speaking the
// `/v1/embeddings` wire format: what it sends, batching, order, and failures that become
// EmbeddingsError without the server's text.

import { expect } from 'chai';
import { EmbeddingsError } from '../../application/ports/embeddings';
import { OpenAiEmbeddings } from '../../infrastructure/llm/embeddings';
import { LocalEmbeddingsServer, embedText } from '../support/embeddings-server';

describe('OpenAI-compatible embeddings', () => {
  let server: LocalEmbeddingsServer;
  beforeEach(async () => {
    server = await LocalEmbeddingsServer.start();
  });
  afterEach(() => server.close());

  const embeddings = (options: { apiKey?: string | null; batchSize?: number } = {}) =>
    new OpenAiEmbeddings({ baseUrl: server.baseUrl, apiKey: options.apiKey === undefined ? 'sk-test-key' : options.apiKey, model: 'test-embed-1', batchSize: options.batchSize ?? 64, maxRetries: 0 });

  async function failure(work: Promise<unknown>): Promise<EmbeddingsError> {
    try {
      await work;
    } catch (error) {
      expect(error).to.be.instanceOf(EmbeddingsError);
      return error as EmbeddingsError;
    }
    throw new Error('expected an EmbeddingsError');
  }

  it('posts the model and the texts as floats with the key, and answers one vector per text', async () => {
    const vectors = await embeddings().embed(['refund policy', 'shipping times']);
    expect(vectors).to.deep.equal([embedText('refund policy'), embedText('shipping times')]);
    expect(server.requests).to.have.length(1);
    expect(server.requests[0]).to.deep.equal({
      path: '/v1/embeddings',
      authorization: 'Bearer sk-test-key',
      body: { model: 'test-embed-1', input: ['refund policy', 'shipping times'], encoding_format: 'float' },
    });
  });

  it('sends no Authorization header without a key, and ignores OPENAI_* variables', async () => {
    const saved = { key: process.env.OPENAI_API_KEY, base: process.env.OPENAI_BASE_URL };
    process.env.OPENAI_API_KEY = 'sk-from-the-environment';
    process.env.OPENAI_BASE_URL = 'http://127.0.0.1:1/v1';
    try {
      await embeddings({ apiKey: null }).embed(['hello']);
    } finally {
      if (saved.key === undefined) delete process.env.OPENAI_API_KEY;
      else process.env.OPENAI_API_KEY = saved.key;
      if (saved.base === undefined) delete process.env.OPENAI_BASE_URL;
      else process.env.OPENAI_BASE_URL = saved.base;
    }
    expect(server.requests[0].authorization).to.equal(undefined);
  });

  it('embeds in batches of batchSize, in order', async () => {
    const texts = Array.from({ length: 7 }, (_, index) => `text number ${index} word${index}`);
    const vectors = await embeddings({ batchSize: 3 }).embed(texts);
    expect(server.requests.map((request) => (request.body.input as string[]).length)).to.deep.equal([3, 3, 1]);
    expect(vectors).to.deep.equal(texts.map(embedText));
    expect(await embeddings().embed([])).to.deep.equal([]);
  });

  it('puts vectors in the order of the texts whatever order the server lists them in', async () => {
    server.reversed = true;
    expect(await embeddings().embed(['alpha', 'beta', 'gamma'])).to.deep.equal(['alpha', 'beta', 'gamma'].map(embedText));
  });

  it('fails with the status and code, never the server text (which may quote the key)', async () => {
    server.failures.push([401, { message: 'Incorrect API key provided: sk-test-key', type: 'invalid_request_error', code: 'invalid_api_key' }]);
    const refused = await failure(embeddings().embed(['x']));
    expect(refused.message).to.equal('the embeddings endpoint answered 401 (invalid_api_key)');
    server.down = true;
    expect((await failure(embeddings().embed(['x']))).message).to.equal('the embeddings endpoint answered 503 (model_loading)');
  });

  it('fails when the endpoint cannot be reached', async () => {
    const baseUrl = server.baseUrl;
    await server.close();
    const unreachable = new OpenAiEmbeddings({ baseUrl, apiKey: null, model: 'm', batchSize: 8, maxRetries: 0 });
    expect((await failure(unreachable.embed(['x']))).message).to.equal('the embeddings endpoint could not be reached');
    server = await LocalEmbeddingsServer.start();
  });

  it('fails when the answer does not hold one vector per text', async () => {
    server.shortAnswer = true;
    expect((await failure(embeddings().embed(['a', 'b']))).message).to.equal('the embeddings endpoint answered 1 vectors for 2 texts');
  });

  it('refuses a batch size below one', () => {
    expect(() => embeddings({ batchSize: 0 })).to.throw(RangeError);
  });
});
