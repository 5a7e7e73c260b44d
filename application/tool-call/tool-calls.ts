// Tool calls (issue #12 points 3 to 5): a business tool called with arguments, by a person
// testing it, by the assistant in a chat turn, or (#14) by a flow. Each is a tool-call
// aggregate (domain/tool-call): requested, maybe approved or refused, then succeeded or failed.
//
// CONTRACT, being built: the types below are what the chat turn, the routes and the sagas use;
// the bodies are written by the execution work of issue #12 (request building, credentials,
// OAuth2 tokens, redaction, the outbound call, and the saga that runs an approved call).

import type { Caller, ToolCallOrigin } from '../../domain/tool-call/tool-call';
import type { RequestContext } from '../shared/request-context';

/** What a caller asks for. */
export interface ToolCallInput {
  tool_id: string;
  /** Checked against the tool's input_schema: 400 `invalid_arguments` listing every bad field. */
  arguments: unknown;
  caller: Caller;
  origin: ToolCallOrigin;
  /** X-End-User-Token and X-End-User-Session of the chat turn, in clear: forwarded to the API, recorded only sealed. */
  end_user?: { token: string | null; session: string | null };
}

export interface ToolCallOptions {
  /** An owner's or admin's own call (a test): an `approval_required` tool runs at once, the approval recorded as theirs. */
  approvedBy?: Caller;
  /** The call's id derives from it: a retry finds the call it made. */
  idempotencyKey?: string;
}

/** How a call ended, or that it waits. `result` is the API's answer as JSON (its text when it is not JSON), already redacted. */
export type ToolCallOutcome =
  | { status: 'awaiting_approval'; tool_call_id: string }
  | { status: 'refused'; tool_call_id: string; reason: string }
  | { status: 'succeeded'; tool_call_id: string; http_status: number; latency_ms: number; result: unknown }
  | { status: 'failed'; tool_call_id: string; code: string; message: string; http_status: number | null; latency_ms: number; result: unknown };

/** The dependencies are the execution work's to define; the shapes above are fixed. */
export type ToolCallFunction<Deps> = (deps: Deps, tenantId: string, input: ToolCallInput, context: RequestContext, options?: ToolCallOptions) => Promise<ToolCallOutcome>;
