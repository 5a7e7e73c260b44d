// Read model `tool_calls`: every call of a business tool (a test, a chat step, a flow step) as
// its execution log shows it (id: the tool call id): who called it with what, whether it
// waited for an approval and who gave or refused it, how it ended, and the HTTP exchange as
// recorded, already redacted and cut by the application (the events never hold a secret).
// The end user's sealed token and session stay in the stream: the log has no use for them.
// Listed newest first per tool (GET /tools/{id}/logs), and per tenant, status and caller
// (GET /tool-calls). A connector call's challenge shows its prompt while it is open (the resume
// token and the user's answer stay sealed in the stream).

import type { Caller, RecordedExchange, ToolCallEvent, ToolCallOrigin, ToolCallStatus } from '../domain/tool-call/tool-call';
import { toolCallEvents } from '../domain/tool-call/tool-call';
import { ERASED_PERSONAL_DATA } from '../domain/shared/events';
import type { RiskTier } from '../domain/tool/tool';
import { documentProjection } from './document-projection';

export interface ToolCallDocument {
  id: string;
  tenant_id: string;
  workspace_id: string;
  tool_id: string;
  tool_name: string;
  risk: RiskTier;
  caller: Caller;
  origin: ToolCallOrigin;
  arguments: Record<string, unknown>;
  status: ToolCallStatus;
  requested_at: string;
  approval: { by: Caller; at: string } | null;
  refusal: { by: Caller; reason: string; at: string } | null;
  /** When the outcome was recorded; null before. */
  finished_at: string | null;
  /** The API's HTTP status; null before an outcome, or when no answer came. */
  http_status: number | null;
  latency_ms: number | null;
  /** Why a failed call failed. */
  error: { code: string; message: string } | null;
  exchange: RecordedExchange | null;
  /** A connector call's open challenge: what the user is asked (#13); null otherwise. */
  challenge: { prompt: string; at: string } | null;
  /** When its personal data was erased; null (or absent, in a document of before) otherwise. */
  erased_at?: string | null;
  position: number;
  [field: string]: unknown;
}

export const TOOL_CALLS = 'tool_calls';

export const toolCallsProjection = documentProjection<ToolCallEvent['type'], ToolCallDocument>({
  name: 'tool_calls',
  version: 1,
  collection: {
    name: TOOL_CALLS,
    // origin.conversation_id: the calls a conversation's erasure erases, also one whose step was never recorded.
    indexes: [{ field: 'tenant_id' }, { field: 'tool_id' }, { field: 'status' }, { field: 'caller.kind' }, { field: 'caller.id' }, { field: 'requested_at' }, { field: 'origin.conversation_id', sparse: true }],
  },
  handles: toolCallEvents.types,
  documentId: (event) => event.data.tool_call_id,
  evolve(current, event) {
    if (event.type === 'ToolCallRequested') {
      if (current) return current;
      const { tool_call_id, tenant_id, workspace_id, tool_id, tool_name, risk, caller, origin, awaiting_approval, requested_at } = event.data;
      return {
        id: tool_call_id,
        tenant_id,
        workspace_id,
        tool_id,
        tool_name,
        risk,
        caller,
        origin,
        arguments: event.data.arguments,
        status: awaiting_approval ? 'awaiting_approval' : 'ready',
        requested_at,
        approval: null,
        refusal: null,
        finished_at: null,
        http_status: null,
        latency_ms: null,
        error: null,
        exchange: null,
        challenge: null,
      };
    }
    if (!current) return null;
    switch (event.type) {
      case 'ToolCallApproved':
        return { ...current, status: 'ready', approval: { by: event.data.approved_by, at: event.data.approved_at } };
      case 'ToolCallRefused':
        return { ...current, status: 'refused', refusal: { by: event.data.refused_by, reason: event.data.reason, at: event.data.refused_at } };
      case 'ToolCallSucceeded': {
        const { status, latency_ms, exchange, finished_at } = event.data;
        return { ...current, status: 'succeeded', http_status: status, latency_ms, exchange, finished_at, challenge: null };
      }
      case 'ToolCallFailed': {
        const { code, message, status, latency_ms, exchange, finished_at } = event.data;
        return { ...current, status: 'failed', http_status: status, latency_ms, exchange, finished_at, error: { code, message }, challenge: null };
      }
      case 'ToolCallDispatched':
        // Its position moves on: the document says which events it has seen.
        return { ...current };
      case 'ToolCallChallenged':
        return { ...current, status: 'challenged', challenge: { prompt: event.data.prompt, at: event.data.challenged_at } };
      case 'ToolCallResumed':
        return { ...current, status: 'ready', challenge: null };
      case 'ToolCallErased':
        // What it carried of people goes (as a rebuild reads it: the fields' erased values);
        // what happened to it (status, times, latency) stays.
        return {
          ...current,
          arguments: {},
          exchange: null,
          error: current.error ? { code: current.error.code, message: ERASED_PERSONAL_DATA } : null,
          challenge: current.challenge ? { ...current.challenge, prompt: ERASED_PERSONAL_DATA } : null,
          refusal: current.refusal ? { ...current.refusal, reason: ERASED_PERSONAL_DATA } : null,
          erased_at: event.data.erased_at,
        };
    }
  },
});
