// The assistant engine on an OpenAI-compatible chat-completions server, through the official
// `openai` package: OpenAI itself, or any hosted or self-hosted server that speaks its wire
// format (vLLM, Ollama, llama.cpp, LiteLLM, ...). Used when LLM_BASE_URL and LLM_MODEL are set.
//
// - The system prompt carries the tenant's assistant (name, instructions, language) and the
//   retrieved passages, each with its number, title and heading; the model is told to cite a
//   passage as [n] where it uses it and to say plainly when the passages do not hold the answer.
// - The answer streams (`stream: true`); usage is asked for (`stream_options.include_usage`)
//   and recorded when the server reports it.
// - The citations kept are the [n] markers the model wrote that name a passage it was given,
//   in order of first use; an answer that cites nothing is not "from knowledge".
// - Failures become AssistantEngineError: `model_timeout` (no response, or no chunk, within
//   LLM_TIMEOUT_MS), `model_unreachable`, `model_error` (the server refused: its status is in
//   the message), `cancelled` (the caller aborted: the client left).

import OpenAI from 'openai';
import { AssistantEngineError, type AssistantChunk, type AssistantEngine, type AssistantRequest, type Passage } from '../../application/ports/assistant-engine';

export interface OpenAiAssistantOptions {
  /** LLM_BASE_URL, e.g. `https://api.openai.com/v1` or `http://localhost:11434/v1`. */
  baseUrl: string;
  /** LLM_API_KEY; null for servers that need none (no Authorization header is sent then). */
  apiKey: string | null;
  /** LLM_MODEL. */
  model: string;
  /** LLM_TIMEOUT_MS: the longest wait for the response to start, and then between two chunks. */
  timeoutMs: number;
  /** For tests: another fetch. */
  fetch?: typeof fetch;
}

type ChatMessage = OpenAI.Chat.Completions.ChatCompletionMessageParam;

function passageBlock(passage: Passage): string {
  const heading = passage.heading && passage.heading !== passage.title ? ` — ${passage.heading}` : '';
  return `[${passage.id}] ${passage.title}${heading}\n${passage.text.trim()}`;
}

/** The system prompt of one turn: who the assistant is, how to use and cite the passages. */
export function systemPrompt(request: Pick<AssistantRequest, 'assistant' | 'passages'>): string {
  const { name, instructions, language } = request.assistant;
  const lines = [
    `You are ${name}, an assistant that answers from this organization's knowledge base.`,
    `Answer in the language the user writes in; when unsure, use the language with the code "${language}".`,
  ];
  if (instructions.trim()) lines.push('', "The organization's instructions:", instructions.trim());
  lines.push(
    '',
    'Answer only from the numbered passages below. Right after each statement that uses a passage, cite it by its number in square brackets, like [1] or [2]. Cite only passages you used.',
    'If the passages do not contain the answer, say plainly that the knowledge base has nothing about it. Do not guess and do not use other knowledge.',
    '',
  );
  if (request.passages.length === 0) lines.push('There are no passages for this question: the knowledge base has nothing about it.');
  else lines.push('Passages:', '', request.passages.map(passageBlock).join('\n\n'));
  return lines.join('\n');
}

/** The passage ids the answer cites as [n] (or [n, m]), in order of first use; ids not given are ignored. */
export function citedPassageIds(text: string, passages: readonly Pick<Passage, 'id'>[]): string[] {
  const given = new Set(passages.map((passage) => passage.id));
  const cited: string[] = [];
  for (const [, list] of text.matchAll(/\[(\d+(?:\s*,\s*\d+)*)\]/g)) {
    for (const id of list.split(',').map((part) => String(Number(part.trim())))) {
      if (given.has(id) && !cited.includes(id)) cited.push(id);
    }
  }
  return cited;
}

export class OpenAiAssistantEngine implements AssistantEngine {
  readonly model: string;
  private readonly client: OpenAI;

  constructor(private readonly options: OpenAiAssistantOptions) {
    this.model = options.model;
    this.client = new OpenAI({
      baseURL: options.baseUrl,
      // The package insists on a key; a server that needs none gets no Authorization header.
      apiKey: options.apiKey ?? 'not-set',
      defaultHeaders: options.apiKey ? {} : { Authorization: null },
      organization: null,
      project: null,
      timeout: options.timeoutMs,
      // A failed turn is recorded and the user asks again; retrying here would only make them wait.
      maxRetries: 0,
      ...(options.fetch ? { fetch: options.fetch } : {}),
    });
  }

  async *answer(request: AssistantRequest): AsyncIterable<AssistantChunk> {
    const messages: ChatMessage[] = [
      { role: 'system', content: systemPrompt(request) },
      ...request.history.map((turn): ChatMessage => ({ role: turn.role, content: turn.text })),
      { role: 'user', content: request.question },
    ];
    // One controller for the caller's abort and our idle timeout; the package's own timeout only
    // covers the wait for the response to start.
    const controller = new AbortController();
    let timedOut = false;
    let idle: NodeJS.Timeout | undefined;
    const rearm = (): void => {
      clearTimeout(idle);
      idle = setTimeout(() => {
        timedOut = true;
        controller.abort();
      }, this.options.timeoutMs);
    };
    const cancel = (): void => controller.abort();
    if (request.signal?.aborted) throw new AssistantEngineError('cancelled', 'the answer was cancelled');
    request.signal?.addEventListener('abort', cancel, { once: true });
    rearm();
    let text = '';
    let model = this.model;
    let usage: { prompt_tokens: number; completion_tokens: number } | null = null;
    try {
      const stream = await this.client.chat.completions.create(
        { model: this.model, messages, stream: true, stream_options: { include_usage: true } },
        { signal: controller.signal },
      );
      for await (const chunk of stream) {
        rearm();
        if (chunk.model) model = chunk.model;
        if (chunk.usage) usage = { prompt_tokens: chunk.usage.prompt_tokens, completion_tokens: chunk.usage.completion_tokens };
        const delta = chunk.choices?.[0]?.delta?.content;
        if (delta) {
          text += delta;
          yield { kind: 'delta', text: delta };
        }
      }
    } catch (error) {
      throw this.failure(error, { timedOut, cancelled: request.signal?.aborted === true });
    } finally {
      clearTimeout(idle);
      request.signal?.removeEventListener('abort', cancel);
    }
    // The package ends an aborted stream quietly, as if it were complete: it was not.
    if (controller.signal.aborted) throw this.failure(new Error('aborted'), { timedOut, cancelled: request.signal?.aborted === true });
    const cited = citedPassageIds(text, request.passages);
    yield { kind: 'done', model, cited, answered_from_knowledge: cited.length > 0, usage };
  }

  /** What went wrong, in the port's terms; the server's own message is kept short and never includes our key. */
  private failure(error: unknown, how: { timedOut: boolean; cancelled: boolean }): AssistantEngineError {
    if (error instanceof AssistantEngineError) return error;
    if (how.cancelled) return new AssistantEngineError('cancelled', 'the answer was cancelled');
    if (how.timedOut || error instanceof OpenAI.APIConnectionTimeoutError) {
      return new AssistantEngineError('model_timeout', `the model server did not answer within ${this.options.timeoutMs} ms`);
    }
    if (error instanceof OpenAI.APIError && typeof error.status === 'number') {
      return new AssistantEngineError('model_error', `the model server answered ${error.status}: ${String(error.message).slice(0, 300)}`);
    }
    if (error instanceof OpenAI.APIConnectionError || error instanceof OpenAI.APIUserAbortError) {
      return new AssistantEngineError('model_unreachable', 'the model server could not be reached');
    }
    return new AssistantEngineError('model_error', `the model server's answer could not be read: ${error instanceof Error ? error.message.slice(0, 300) : String(error)}`);
  }
}
