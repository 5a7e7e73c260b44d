// Saga `approved_tool_calls` (version 1): runs a tool call that waited for an approval once an
// owner or admin approves it (`ToolCallApproved`), and records its outcome (tool-calls.ts,
// `runToolCall`). A call approved as it was requested (an owner's or admin's own test) is not
// its business: the requester runs it, and its ToolCallRequested says it did not wait.
//
// Exactly one outcome per call: the run checks the call is still ready before sending anything,
// so a redelivered approval of a call that ran sends nothing; and the aggregate refuses a
// second outcome (`tool_call_not_ready`), which counts as done. A process that stops between
// the API's answer and the record leaves the call ready: the redelivery runs it again (at least
// once, as every saga's side effect; ARCHITECTURE.md "Sagas and the connector").
//
// Its events carry the system actor `approved_tool_calls`, caused by the approval.

import type { RecordedOf } from '../ports/domain-event-store';
import type { Saga } from '../sagas/saga';
import { systemContext } from '../shared/request-context';
import { type ToolCallDependencies, runToolCall } from './tool-calls';
import { toolCallStream } from '../../domain/tool-call/tool-call';

export const APPROVED_TOOL_CALLS = 'approved_tool_calls';

/** Whether the saga runs the call an approval is of: only one that waited for it, and not a connector tool's (the connector saga runs those, connector-tool-calls.ts). */
export function waitedForApproval(first: RecordedOf | undefined): boolean {
  return first?.type === 'ToolCallRequested' && first.data.awaiting_approval && first.data.connector === undefined;
}

export function approvedToolCallsSaga(deps: ToolCallDependencies): Saga<'ToolCallApproved'> {
  return {
    name: APPROVED_TOOL_CALLS,
    version: 1,
    filter: { kind: 'event_type', types: ['ToolCallApproved'] },
    async handle(event: RecordedOf<'ToolCallApproved'>) {
      const { tenant_id, tool_call_id } = event.data;
      const [first] = await deps.eventStore.readStream(toolCallStream(tool_call_id), { maxCount: 1 });
      if (!waitedForApproval(first)) return;
      const context = { ...systemContext(event.metadata.correlation_id, APPROVED_TOOL_CALLS, event.id), tenant_id };
      await runToolCall(deps, tenant_id, tool_call_id, context);
    },
  };
}
