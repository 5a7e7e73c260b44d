// The assistant engine port: what answers a question from the retrieved passages. Two
// adapters: an OpenAI-compatible chat-completions model through the official `openai`
// package (LLM_BASE_URL, LLM_API_KEY, LLM_MODEL), streaming; and the embedded extractive
// engine, used when no model is configured, which answers with the best passages themselves
// and says plainly when nothing relevant is known.
//
// Tool calls (Business Tools, connector tools) slot in later as another chunk kind: the model
// asks for a tool (`tool_call`), the platform runs the step and calls `answer` again with the
// result in `history`. Nothing here needs them yet.

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

export interface AssistantRequest {
  /** The tenant's assistant: its name and instructions (tenant settings). */
  assistant: { name: string; instructions: string; language: string };
  /** Earlier turns of the conversation, oldest first (bounded by the caller). */
  history: readonly AssistantTurn[];
  question: string;
  passages: readonly Passage[];
  /** Aborted when the client leaves: the engine stops generating. */
  signal?: AbortSignal;
}

export type AssistantChunk =
  | { kind: 'delta'; text: string }
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
  /** Streams the answer: deltas, then exactly one `done`; throws AssistantEngineError on failure. */
  answer(request: AssistantRequest): AsyncIterable<AssistantChunk>;
}
