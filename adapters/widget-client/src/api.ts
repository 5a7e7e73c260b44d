// The widget HTTP routes (spec 4.4) as the widget calls them: the widget token as Bearer, the
// visitor id and the identity the host page gave in headers. POST /api/v1/widget/chat is the
// fallback when WebSocket cannot be had: asked for Server-Sent Events, its answer streams as
// over the socket; a plain JSON answer is taken too.

import type { Citation, Identity, LeadField, Problem, Rating, StoredMessage, ToolStep, WidgetSettings } from './protocol';

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly field?: string,
  ) {
    super(message);
  }
}

/** What a turn over HTTP streams, in the order it comes. */
export type TurnEvent =
  | { kind: 'delta'; text: string }
  | { kind: 'citation'; citation: Citation }
  | { kind: 'tool'; step: ToolStep }
  | { kind: 'error'; code: string; message: string }
  | { kind: 'done'; conversation_id: string; user_message_id: string; message_id: string | null; paused: boolean };

interface ChatResult {
  conversation_id: string;
  user_message_id: string;
  answer: { message_id: string; text: string; citations: Citation[] } | null;
  paused: boolean;
  tool_steps?: ToolStep[];
}

export interface WidgetApiOptions {
  base: string;
  token: string;
  visitorId(): string;
  identity(): Identity | null;
}

export class WidgetApi {
  constructor(private readonly options: WidgetApiOptions) {}

  settings(): Promise<WidgetSettings> {
    return this.json('GET', '/api/v1/widget/settings');
  }

  /** The visitor's most recently active conversation that is not resolved (a person may be answering there); null for none. */
  async latestConversation(): Promise<string | null> {
    const page: { items: Array<{ id: string; status: string }> } = await this.json('GET', '/api/v1/widget/conversations?limit=10');
    return page.items.find((conversation) => conversation.status !== 'resolved')?.id ?? null;
  }

  /** The last `keep` messages of the visitor's conversation, oldest first (its pages run oldest first). */
  async messages(conversationId: string, keep = 50): Promise<StoredMessage[]> {
    const path = `/api/v1/widget/conversations/${encodeURIComponent(conversationId)}/messages?limit=100`;
    let messages: StoredMessage[] = [];
    let cursor: string | null = null;
    for (let pages = 0; pages < 20; pages += 1) {
      const page: { items: StoredMessage[]; next_cursor: string | null } = await this.json('GET', cursor ? `${path}&cursor=${encodeURIComponent(cursor)}` : path);
      messages = [...messages, ...page.items].slice(-keep);
      cursor = page.next_cursor;
      if (!cursor) break;
    }
    return messages;
  }

  lead(fields: Partial<Record<LeadField, string>> & { conversation_id?: string; page_url?: string }): Promise<{ lead_id: string }> {
    return this.json('POST', '/api/v1/widget/leads', fields);
  }

  feedback(messageId: string, rating: Rating): Promise<unknown> {
    return this.json('POST', `/api/v1/widget/messages/${encodeURIComponent(messageId)}/feedback`, { rating });
  }

  handoff(conversationId: string, reason?: string): Promise<unknown> {
    return this.json('POST', `/api/v1/widget/conversations/${encodeURIComponent(conversationId)}/handoff`, reason ? { reason } : {});
  }

  /** Erases the visitor's own conversation for good (POST /widget/conversations/{id}/erase). */
  eraseConversation(conversationId: string): Promise<unknown> {
    return this.json('POST', `/api/v1/widget/conversations/${encodeURIComponent(conversationId)}/erase`);
  }

  clearIdentity(conversationId: string | null): Promise<unknown> {
    return this.json('POST', '/api/v1/widget/identity/clear', conversationId ? { conversation_id: conversationId } : {});
  }

  /** One turn over HTTP; `onEvent` gets its pieces as they stream, ending with `done` or `error`. */
  async chat(body: { message: string; conversation_id: string | null }, onEvent: (event: TurnEvent) => void): Promise<void> {
    const response = await fetch(this.url('/api/v1/widget/chat'), {
      method: 'POST',
      headers: { ...this.headers(), 'content-type': 'application/json', accept: 'text/event-stream, application/json;q=0.9' },
      body: JSON.stringify(body.conversation_id ? body : { message: body.message }),
    });
    if (!response.ok) throw await problemOf(response);
    const type = response.headers.get('content-type') ?? '';
    if (type.startsWith('text/event-stream') && response.body) return readEventStream(response.body, onEvent);
    const result = (await response.json()) as ChatResult;
    for (const step of result.tool_steps ?? []) onEvent({ kind: 'tool', step });
    if (result.answer) {
      onEvent({ kind: 'delta', text: result.answer.text });
      for (const citation of result.answer.citations) onEvent({ kind: 'citation', citation });
    }
    onEvent({ kind: 'done', conversation_id: result.conversation_id, user_message_id: result.user_message_id, message_id: result.answer?.message_id ?? null, paused: result.paused });
  }

  private url(path: string): string {
    return `${this.options.base}${path}`;
  }

  private headers(): Record<string, string> {
    const headers: Record<string, string> = { authorization: `Bearer ${this.options.token}`, 'x-widget-visitor': this.options.visitorId() };
    const identity = this.options.identity();
    if (identity?.user_id) headers['x-widget-user-id'] = identity.user_id;
    if (identity?.user_hash) headers['x-widget-user-hash'] = identity.user_hash;
    if (identity?.token) headers['x-end-user-token'] = identity.token;
    if (identity?.session) headers['x-end-user-session'] = identity.session;
    return headers;
  }

  private async json<T>(method: 'GET' | 'POST', path: string, body?: unknown): Promise<T> {
    const response = await fetch(this.url(path), {
      method,
      headers: body === undefined ? this.headers() : { ...this.headers(), 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    if (!response.ok) throw await problemOf(response);
    if (response.status === 204) return undefined as T;
    return (await response.json()) as T;
  }
}

async function problemOf(response: Response): Promise<ApiError> {
  try {
    const problem = (await response.json()) as Problem;
    return new ApiError(response.status, problem.code, problem.message, problem.field);
  } catch {
    return new ApiError(response.status, 'http_error', `the platform answered ${response.status}`);
  }
}

/** Reads `event:` / `data:` frames; comments (keep-alives) are skipped. */
async function readEventStream(body: ReadableStream<Uint8Array>, onEvent: (event: TurnEvent) => void): Promise<void> {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let buffered = '';
  for (;;) {
    const { value, done } = await reader.read();
    buffered += decoder.decode(value, { stream: !done });
    const frames = buffered.split(/\r?\n\r?\n/);
    buffered = done ? '' : frames.pop()!;
    for (const frame of frames) {
      let name = 'message';
      let data = '';
      for (const line of frame.split(/\r?\n/)) {
        if (line.startsWith('event:')) name = line.slice(6).trim();
        else if (line.startsWith('data:')) data += line.slice(5).trimStart();
      }
      if (data) dispatch(name, JSON.parse(data) as Record<string, unknown>, onEvent);
    }
    if (done) return;
  }
}

function dispatch(name: string, data: Record<string, unknown>, onEvent: (event: TurnEvent) => void): void {
  switch (name) {
    case 'delta':
      return onEvent({ kind: 'delta', text: String(data.text ?? '') });
    case 'citation':
      return onEvent({ kind: 'citation', citation: data as unknown as Citation });
    case 'tool':
      return onEvent({ kind: 'tool', step: data as unknown as ToolStep });
    case 'error':
      return onEvent({ kind: 'error', code: String(data.code ?? 'error'), message: String(data.message ?? '') });
    case 'done':
      return onEvent({
        kind: 'done',
        conversation_id: String(data.conversation_id),
        user_message_id: String(data.user_message_id),
        message_id: typeof data.message_id === 'string' ? data.message_id : null,
        paused: data.paused === true,
      });
  }
}
