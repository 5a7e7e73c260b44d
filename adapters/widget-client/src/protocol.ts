// What the widget and the platform say to each other, as the browser sees it: the /ws/chat
// frames (docs/widget.md, "WebSocket protocol (/ws/chat)"), the widget settings and the answers of the
// widget HTTP routes. Written for the browser bundle, which imports nothing of the server.

export interface Citation {
  passage_id: string;
  document_id: string;
  chunk_id: string;
  title: string;
}

/** A tool the assistant runs for the visitor; `challenge` asks them something (`prompt`), answered by their next message. */
export interface ToolStep {
  step_id: string;
  tool_name: string;
  status: 'requested' | 'running' | 'succeeded' | 'failed' | 'awaiting_approval' | 'challenge' | string;
  error?: { code: string; message: string } | null;
  prompt?: string;
}

export interface StoredMessage {
  id: string;
  role: 'user' | 'assistant' | 'agent';
  text: string;
  citations: Citation[];
  created_at: string;
  /** An answer the assistant could not give. */
  failed?: boolean;
  /** The visitor's rating of this answer, once given (one per answer). */
  feedback_rating?: Rating | null;
}

export interface Identity {
  user_id?: string;
  user_hash?: string;
  token?: string;
  session?: string;
}

export type ClientFrame =
  | { type: 'resume'; visitor_id: string; conversation_id: string | null; identity?: Identity }
  | { type: 'message'; text: string; client_message_id?: string }
  | { type: 'typing'; typing: boolean }
  | { type: 'feedback'; message_id: string; rating: Rating; comment?: string }
  | { type: 'ping' };

export type ServerFrame =
  | { type: 'ready'; conversation_id: string | null; messages: StoredMessage[] }
  | { type: 'message'; conversation_id?: string; message: StoredMessage; client_message_id?: string }
  | { type: 'delta'; message_id: string; text: string }
  | { type: 'citation'; message_id: string; citation: Citation }
  | { type: 'tool'; message_id: string; step: ToolStep }
  | { type: 'error'; code: string; message: string; message_id?: string; [detail: string]: unknown }
  | { type: 'done'; conversation_id: string; user_message_id: string; message_id: string | null; paused: boolean }
  | { type: 'pong' }
  | { type: 'ack'; of: string; message_id?: string };

export type Rating = 'up' | 'down';

export type LeadField = 'name' | 'email' | 'phone' | 'company' | 'message';

/** GET /api/v1/widget/settings: the public appearance and features; never the secret or the allowed origins. */
export interface WidgetSettings {
  tenant: { name: string; slug: string; logo_url: string | null };
  assistant_name: string | null;
  title: string;
  welcome_message: string;
  colours?: { primary?: string; background?: string; text?: string };
  primary_color?: string;
  background_color?: string;
  text_color?: string;
  position: 'bottom-right' | 'bottom-left';
  launcher_icon: 'chat' | 'help' | 'sparkle' | string;
  theme: Record<string, string>;
  custom_css: string;
  features: { lead_form: boolean; lead_form_fields: LeadField[]; handoff_button: boolean; feedback: boolean; voice: boolean; visitor_erasure?: boolean };
  identity_verification: 'off' | 'optional' | 'required';
}

/** A refusal of an HTTP route: `{code, message, field?}`. */
export interface Problem {
  code: string;
  message: string;
  field?: string;
}

/** The ends of the WebSocket that are final: another try would be refused the same way. */
export const FINAL_CLOSE_CODES: ReadonlySet<number> = new Set([4401, 4403]);
