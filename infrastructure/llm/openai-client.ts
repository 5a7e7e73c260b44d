// One way to reach an OpenAI-compatible server (hosted or self-hosted) through the official
// `openai` package, for the chat engine, embeddings and speech alike.

import OpenAI from 'openai';

export interface OpenAiCompatibleOptions {
  baseUrl: string;
  /** Null: the server needs no key, and gets no Authorization header. */
  apiKey: string | null;
  timeoutMs: number;
  /** The package's own retries; 0 where the caller records a failure and the person asks again. */
  maxRetries: number;
  fetch?: typeof fetch;
}

export function openAiCompatibleClient(options: OpenAiCompatibleOptions): OpenAI {
  return new OpenAI({
    baseURL: options.baseUrl,
    // The package insists on a key; a server that needs none gets no Authorization header.
    apiKey: options.apiKey ?? 'not-set',
    defaultHeaders: options.apiKey ? {} : { Authorization: null },
    // Never taken from OPENAI_ORG_ID / OPENAI_PROJECT_ID of the environment.
    organization: null,
    project: null,
    timeout: options.timeoutMs,
    maxRetries: options.maxRetries,
    ...(options.fetch ? { fetch: options.fetch } : {}),
  });
}
