// The assistant engine port: what answers a question from the retrieved passages. Two
// adapters: an OpenAI-compatible chat-completions model through the official `openai`
// package (LLM_BASE_URL, LLM_API_KEY, LLM_MODEL), streaming; and the embedded extractive
// engine, used when no model is configured, which answers with the best passages themselves
// and says plainly when nothing relevant is known.
//
// Tool calls (Business Tools, later connector tools): the request offers `tools`; an engine
// that can call them may end a round with `tool_calls` instead of `done`. The platform then
// runs each call as a step of the conversation and calls `answer` again with the same request
// plus every step of this turn so far (`steps`, oldest first), until the engine answers with
// `done`. The embedded extractive engine never calls tools.

/** A retrieved passage as the engine sees it: `id` is what an answer cites (`[1]`, `[2]` ...). */
export interface Passage {
  id: string;
  document_id: string;
  chunk_id: string;
  title: string;
  heading: string | null;
  text: string;
}

export interface AssistantTurn {
  role: 'user' | 'assistant';
  text: string;
}

/** A tool the model may call: its name, what it does, and the JSON Schema of its arguments. */
export interface ToolSpec {
  name: string;
  description: string;
  parameters: Record<string, unknown>;
}

/** The model asks for a tool: `id` pairs the call with its result; `arguments` is the model's JSON text, unchecked. */
export interface ToolCallAsk {
  id: string;
  name: string;
  arguments: string;
}

/** A call of this turn and what it gave: the JSON text handed back to the model (a result, or an error it can explain). */
export interface ToolStep {
  call: ToolCallAsk;
  result: string;
}

export interface AssistantRequest {
  /** The tenant's assistant: its name and instructions (tenant settings). */
  assistant: { name: string; instructions: string; language: string };
  /** Earlier turns of the conversation, oldest first (bounded by the caller). */
  history: readonly AssistantTurn[];
  question: string;
  passages: readonly Passage[];
  /** Tools the model may call this turn; none or absent: answer without tools. */
  tools?: readonly ToolSpec[];
  /** The tool calls of this turn so far and their results, oldest first. */
  steps?: readonly ToolStep[];
  /** Aborted when the client leaves: the engine stops generating. */
  signal?: AbortSignal;
}

export type AssistantChunk =
  | { kind: 'delta'; text: string }
  /** Ends the round instead of `done`: run these calls, then ask again with their steps. */
  | { kind: 'tool_calls'; calls: readonly ToolCallAsk[]; model: string; usage: { prompt_tokens: number; completion_tokens: number } | null }
  | {
      kind: 'done';
      /** The model that answered (`extractive` for the embedded engine). */
      model: string;
      /** Passage ids the answer cites, in order of first use. */
      cited: readonly string[];
      /** False when the answer says the knowledge base has nothing relevant. */
      answered_from_knowledge: boolean;
      usage: { prompt_tokens: number; completion_tokens: number } | null;
    };

/** The engine could not answer (the model server refused or is unreachable). */
export class AssistantEngineError extends Error {
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
    this.name = 'AssistantEngineError';
  }
}

export interface AssistantEngine {
  /** The model's name, for the record. */
  readonly model: string;
  /** Streams the answer: deltas, then exactly one `done` or `tool_calls`; throws AssistantEngineError on failure. */
  answer(request: AssistantRequest): AsyncIterable<AssistantChunk>;
}
