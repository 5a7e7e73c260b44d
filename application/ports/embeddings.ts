// The embeddings port: vectors for chunks and questions, from an OpenAI-compatible
// `/embeddings` endpoint when EMBEDDINGS_BASE_URL is set (infrastructure/llm/embeddings.ts).
// Without it the platform searches by BM25 alone.

export interface Embeddings {
  readonly model: string;
  /** One vector per text, in order. */
  embed(texts: readonly string[]): Promise<number[][]>;
}
