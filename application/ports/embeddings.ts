// The embeddings port: vectors for chunks and questions, from an OpenAI-compatible
// `/embeddings` endpoint when EMBEDDINGS_BASE_URL is set (infrastructure/llm/embeddings.ts).
// Without it the platform searches by BM25 alone.

export interface Embeddings {
  readonly model: string;
  /** One vector per text, in order. */
  embed(texts: readonly string[]): Promise<number[][]>;
}

/**
 * The endpoint could not give vectors (down, refused, timed out, answered something
 * unusable). Usually passing: indexing retries with back-off. The message is safe to show
 * a tenant: a status and a code, never the endpoint's text, which may quote the key.
 */
export class EmbeddingsError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'EmbeddingsError';
  }
}
