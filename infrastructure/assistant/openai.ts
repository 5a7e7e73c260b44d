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
// - Tools (OpenAI-compatible tool calling): the request's `tools` are sent as functions (name,
//   description, JSON Schema parameters) and the prompt tells the model it may call them to act
//   and must never invent their results. Streamed tool-call pieces are put together by their
//   `index` (the id and name come once, the arguments in pieces); when the model ends with
//   calls, the round ends with `tool_calls`. The turn's `steps` are sent back as the model's
//   own messages: per step, the assistant message with its call, then the `tool` message with
//   the result (`tool_call_id`). Arguments go back as the model wrote them (the platform checks
//   them), or as `{}` when they were not JSON: the result tells the model what was wrong.

import OpenAI from 'openai';
import { openAiCompatibleClient } from '../llm/openai-client';
import { AssistantEngineError, type AssistantChunk, type AssistantEngine, type AssistantRequest, type Passage, type ToolCallAsk, type ToolStep } from '../../application/ports/assistant-engine';

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

/** Arguments as sent back: what the model wrote, or `{}` when it was not JSON (servers that parse them would refuse the turn; the result says what was wrong). */
function sentArguments(text: string): string {
  try {
    JSON.parse(text);
    return text;
  } catch {
    return '{}';
  }
}

/** A step as the model's own two messages: its call, then the result (paired by the call's id). */
function stepMessages(step: ToolStep): ChatMessage[] {
  return [
    { role: 'assistant', content: null, tool_calls: [{ id: step.call.id, type: 'function', function: { name: step.call.name, arguments: sentArguments(step.call.arguments) } }] },
    { role: 'tool', tool_call_id: step.call.id, content: step.result },
  ];
}

/** A call as it streams in: the id and name once, the arguments in pieces. */
interface CallInPieces {
  id: string | null;
  name: string;
  arguments: string;
}

function passageBlock(passage: Passage): string {
  const heading = passage.heading && passage.heading !== passage.title ? ` — ${passage.heading}` : '';
  return `[${passage.id}] ${passage.title}${heading}\n${passage.text.trim()}`;
}

/** The system prompt of one turn: who the assistant is, how to use and cite the passages, and the tools when there are any. */
export function systemPrompt(request: Pick<AssistantRequest, 'assistant' | 'passages' | 'tools' | 'steps'>): string {
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
  const withTools = (request.tools?.length ?? 0) > 0 || (request.steps?.length ?? 0) > 0;
  if (withTools) {
    lines.push(
      "You may call the tools you are given to look things up or take actions in the organization's systems for the user, when the user asks for what a tool does. What a tool returns is knowledge too: answer from it.",
      'Never invent a tool\'s result and never say an action was done unless its tool returned success. When a call failed, was refused, or awaits approval, say so plainly.',
      '',
    );
  }
  if (request.passages.length === 0) {
    lines.push(withTools ? 'There are no passages for this question: answer from what the tools return, or say plainly that you do not know.' : 'There are no passages for this question: the knowledge base has nothing about it.');
  } else lines.push('Passages:', '', request.passages.map(passageBlock).join('\n\n'));
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
    // A failed turn is recorded and the user asks again; retrying here would only make them wait.
    this.client = openAiCompatibleClient({ baseUrl: options.baseUrl, apiKey: options.apiKey ?? null, timeoutMs: options.timeoutMs, maxRetries: 0, fetch: options.fetch });
  }

  async *answer(request: AssistantRequest): AsyncIterable<AssistantChunk> {
    const messages: ChatMessage[] = [
      { role: 'system', content: systemPrompt(request) },
      ...request.history.map((turn): ChatMessage => ({ role: turn.role, content: turn.text })),
      { role: 'user', content: request.question },
      ...(request.steps ?? []).flatMap(stepMessages),
    ];
    const tools = (request.tools ?? []).map((tool): OpenAI.Chat.Completions.ChatCompletionTool => ({
      type: 'function',
      function: { name: tool.name, description: tool.description, parameters: tool.parameters },
    }));
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
    const calls = new Map<number, CallInPieces>();
    try {
      const stream = await this.client.chat.completions.create(
        { model: this.model, messages, stream: true, stream_options: { include_usage: true }, ...(tools.length > 0 ? { tools } : {}) },
        { signal: controller.signal },
      );
      for await (const chunk of stream) {
        rearm();
        if (chunk.model) model = chunk.model;
        if (chunk.usage) usage = { prompt_tokens: chunk.usage.prompt_tokens, completion_tokens: chunk.usage.completion_tokens };
        const delta = chunk.choices?.[0]?.delta;
        for (const piece of delta?.tool_calls ?? []) {
          const call = calls.get(piece.index) ?? { id: null, name: '', arguments: '' };
          if (piece.id) call.id = piece.id;
          if (piece.function?.name) call.name = piece.function.name;
          if (piece.function?.arguments) call.arguments += piece.function.arguments;
          calls.set(piece.index, call);
        }
        if (delta?.content) {
          text += delta.content;
          yield { kind: 'delta', text: delta.content };
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
    // Some servers end a round of calls with `stop` rather than `tool_calls`: the calls decide.
    if (calls.size > 0) {
      const asked = [...calls.entries()]
        .sort(([a], [b]) => a - b)
        // A server that sends no id still needs one: the result is paired with its call by it.
        .map(([index, call]): ToolCallAsk => ({ id: call.id ?? `call_${index}`, name: call.name, arguments: call.arguments }));
      yield { kind: 'tool_calls', calls: asked, model, usage };
      return;
    }
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
