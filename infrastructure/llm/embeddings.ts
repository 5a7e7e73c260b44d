// The Embeddings port on any OpenAI-compatible `/embeddings` endpoint (OpenAI, Azure-style
// gateways, vLLM, Ollama, LocalAI, text-embeddings-inference ...), through the official
// `openai` package: EMBEDDINGS_BASE_URL, EMBEDDINGS_API_KEY, EMBEDDINGS_MODEL.
//
// - Vectors are asked for as floats (`encoding_format: "float"`): the package would ask for
//   base64 by default, which not every compatible server speaks.
// - Texts go in batches of `batchSize` per request, one request after the other, and come
//   back in the order given whatever order the server lists them in.
// - Nothing of the environment leaks in: the base URL, key, organization and project are
//   the ones given, never OPENAI_* variables. Without a key no Authorization header is sent
//   (a local server needs none).
// - Every failure becomes an EmbeddingsError naming the status and code only: the server's
//   own message can quote the key, and the message reaches events a tenant reads.

import type OpenAI from 'openai';
import { APIConnectionError, APIConnectionTimeoutError, APIError } from 'openai';
import { openAiCompatibleClient } from './openai-client';
import { type Embeddings, EmbeddingsError } from '../../application/ports/embeddings';

export interface OpenAiEmbeddingsOptions {
  /** The API's base, e.g. `https://api.openai.com/v1` or `http://localhost:11434/v1`. */
  baseUrl: string;
  /** Null: no Authorization header. */
  apiKey: string | null;
  model: string;
  /** Texts per request (EMBEDDINGS_BATCH_SIZE). */
  batchSize: number;
  /** Per request; the package's default is ten minutes. */
  timeoutMs?: number;
  /** Retries of a failed request by the package itself (it backs off between them). */
  maxRetries?: number;
}

export const DEFAULT_EMBEDDINGS_TIMEOUT_MS = 30_000;

export class OpenAiEmbeddings implements Embeddings {
  readonly model: string;
  private readonly client: OpenAI;
  private readonly batchSize: number;

  constructor(options: OpenAiEmbeddingsOptions) {
    if (!Number.isInteger(options.batchSize) || options.batchSize < 1) throw new RangeError(`batchSize must be a positive integer, got ${options.batchSize}`);
    this.model = options.model;
    this.batchSize = options.batchSize;
    this.client = openAiCompatibleClient({ baseUrl: options.baseUrl, apiKey: options.apiKey, timeoutMs: options.timeoutMs ?? DEFAULT_EMBEDDINGS_TIMEOUT_MS, maxRetries: options.maxRetries ?? 2 });
  }

  async embed(texts: readonly string[]): Promise<number[][]> {
    const vectors: number[][] = [];
    for (let start = 0; start < texts.length; start += this.batchSize) {
      vectors.push(...(await this.embedBatch(texts.slice(start, start + this.batchSize))));
    }
    return vectors;
  }

  private async embedBatch(texts: readonly string[]): Promise<number[][]> {
    let response: OpenAI.Embeddings.CreateEmbeddingResponse;
    try {
      response = await this.client.embeddings.create({ model: this.model, input: [...texts], encoding_format: 'float' });
    } catch (error) {
      throw new EmbeddingsError(describeFailure(error));
    }
    const data = Array.isArray(response?.data) ? response.data : [];
    if (data.length !== texts.length) throw new EmbeddingsError(`the embeddings endpoint answered ${data.length} vectors for ${texts.length} texts`);
    const byIndex = new Array<number[] | undefined>(texts.length);
    for (const item of data) {
      const { index, embedding } = item;
      if (!Number.isInteger(index) || index < 0 || index >= texts.length || byIndex[index]) throw new EmbeddingsError('the embeddings endpoint answered vectors with missing or repeated indexes');
      if (!Array.isArray(embedding) || embedding.length === 0 || !embedding.every((value) => typeof value === 'number' && Number.isFinite(value))) {
        throw new EmbeddingsError('the embeddings endpoint answered a vector that is not a list of numbers');
      }
      byIndex[index] = embedding;
    }
    const vectors = byIndex as number[][];
    if (vectors.some((vector) => vector.length !== vectors[0].length)) throw new EmbeddingsError('the embeddings endpoint answered vectors of different lengths');
    return vectors;
  }
}

/** A failure in words safe to record: status and code, never the server's text. */
function describeFailure(error: unknown): string {
  if (error instanceof APIConnectionTimeoutError) return 'the embeddings endpoint did not answer in time';
  if (error instanceof APIConnectionError) return 'the embeddings endpoint could not be reached';
  if (error instanceof APIError) {
    const code = typeof error.code === 'string' && /^[\w.-]{1,64}$/.test(error.code) ? ` (${error.code})` : '';
    return `the embeddings endpoint answered ${error.status ?? 'an error'}${code}`;
  }
  return 'the embeddings endpoint answered something unreadable';
}
