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
import type { RiskTier } from '../domain/tool/tool';
import type { EventProjection } from './projection';

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
  position: number;
  [field: string]: unknown;
}

export const TOOL_CALLS = 'tool_calls';

export const toolCallsProjection: EventProjection<ToolCallEvent['type']> = {
  name: 'tool_calls',
  version: 1,
  collections: [
    {
      name: TOOL_CALLS,
      indexes: [{ field: 'tenant_id' }, { field: 'tool_id' }, { field: 'status' }, { field: 'caller.kind' }, { field: 'caller.id' }, { field: 'requested_at' }],
    },
  ],
  handles: toolCallEvents.types,
  async apply(event, view) {
    const id = event.data.tool_call_id;
    if (event.type === 'ToolCallRequested') {
      if (await view.get(TOOL_CALLS, id)) return;
      const { tenant_id, workspace_id, tool_id, tool_name, risk, caller, origin, awaiting_approval, requested_at } = event.data;
      view.put(TOOL_CALLS, {
        id,
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
        position: event.position,
      } satisfies ToolCallDocument);
      return;
    }
    const current = await view.get<ToolCallDocument>(TOOL_CALLS, id);
    if (!current || current.position >= event.position) return;
    switch (event.type) {
      case 'ToolCallApproved':
        view.patch(TOOL_CALLS, id, { status: 'ready', approval: { by: event.data.approved_by, at: event.data.approved_at }, position: event.position });
        return;
      case 'ToolCallRefused':
        view.patch(TOOL_CALLS, id, { status: 'refused', refusal: { by: event.data.refused_by, reason: event.data.reason, at: event.data.refused_at }, position: event.position });
        return;
      case 'ToolCallSucceeded': {
        const { status, latency_ms, exchange, finished_at } = event.data;
        view.patch(TOOL_CALLS, id, { status: 'succeeded', http_status: status, latency_ms, exchange, finished_at, challenge: null, position: event.position });
        return;
      }
      case 'ToolCallFailed': {
        const { code, message, status, latency_ms, exchange, finished_at } = event.data;
        view.patch(TOOL_CALLS, id, { status: 'failed', http_status: status, latency_ms, exchange, finished_at, error: { code, message }, challenge: null, position: event.position });
        return;
      }
      case 'ToolCallDispatched':
        view.patch(TOOL_CALLS, id, { position: event.position });
        return;
      case 'ToolCallChallenged':
        view.patch(TOOL_CALLS, id, { status: 'challenged', challenge: { prompt: event.data.prompt, at: event.data.challenged_at }, position: event.position });
        return;
      case 'ToolCallResumed':
        view.patch(TOOL_CALLS, id, { status: 'ready', challenge: null, position: event.position });
        return;
    }
  },
};
