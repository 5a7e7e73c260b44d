// The execution log of business tools (issue #12 point 4): tool calls as their readers see
// them, from the `tool_calls` read model, newest first, one cursor shape.
//
// - A tool's log (GET /tools/{id}/logs): anyone who may read the tool's workspace; a tool in a
//   workspace the caller may not read, deleted or another tenant's is 404 `tool_not_found`.
// - The calls of the organization (GET /tool-calls, GET /tool-calls/{id}): an owner or admin
//   sees every call of the tenant (the approval queue is `?status=awaiting_approval`); a member
//   sees the calls they made, and any other is 404 to them.
// - Every view holds the request and response as recorded: credentials and the end user's
//   headers redacted, bodies cut (tool-calls.ts).

import { ROLE_RANK } from '../../domain/membership/membership';
import { invalid, notFound } from '../../domain/shared/errors';
import { type RecordedExchange, TOOL_CALL_STATUSES, type ToolCallStatus } from '../../domain/tool-call/tool-call';
import { TOOL_CALLS, type ToolCallDocument } from '../../projections/tool-calls';
import type { CommandDependencies } from '../command-handling/handle-command';
import type { Page, Where } from '../ports/read-store';
import type { Principal } from '../session/sessions';
import type { ReadModelDependencies } from '../shared/read-models';
import { workspaceAccess } from '../workspace/workspace-access';
import { liveTool } from './tool-calls';

export type ToolCallReader = Pick<Principal, 'tenant_id' | 'user_id' | 'role'>;

/** The read model's fields a reader sees as they are stored. */
const SHOWN_AS_STORED = [
  'id',
  'workspace_id',
  'tool_id',
  'tool_name',
  'risk',
  'caller',
  'origin',
  'arguments',
  'status',
  'requested_at',
  'approval',
  'refusal',
  'finished_at',
  'http_status',
  'latency_ms',
  'error',
  'challenge',
] as const satisfies ReadonlyArray<keyof ToolCallDocument>;

/** A tool call as its readers see it: the stored fields, and the exchange as its two halves. */
export type ToolCallView = Pick<ToolCallDocument, (typeof SHOWN_AS_STORED)[number]> & {
  /** When what it carried of people was erased; null when it was not. */
  erased_at: string | null;
  /** As sent, redacted; null when nothing was sent. */
  request: RecordedExchange['request'] | null;
  /** As answered, redacted and cut (`truncated`); null when no answer came. */
  response: NonNullable<RecordedExchange['response']> | null;
};

export const viewOfToolCall = (doc: ToolCallDocument): ToolCallView => ({
  ...(Object.fromEntries(SHOWN_AS_STORED.map((field) => [field, doc[field]])) as Pick<ToolCallDocument, (typeof SHOWN_AS_STORED)[number]>),
  // Calls recorded before #13 have no challenge field, before erasure none erased_at.
  challenge: doc.challenge ?? null,
  erased_at: doc.erased_at ?? null,
  request: doc.exchange?.request ?? null,
  response: doc.exchange?.response ?? null,
});

export const isApprover = (principal: Pick<Principal, 'role'>): boolean => ROLE_RANK[principal.role] >= ROLE_RANK.admin;

const toolCallNotFound = (): ReturnType<typeof notFound> => notFound('tool_call_not_found', 'no such tool call');

/** `?status=`: one of the statuses, or absent (400 `invalid_status` otherwise). */
export function statusFilter(status: unknown): ToolCallStatus | undefined {
  if (status === undefined) return undefined;
  if (typeof status !== 'string' || !(TOOL_CALL_STATUSES as readonly string[]).includes(status)) throw invalid('invalid_status', `status: expected one of ${TOOL_CALL_STATUSES.join(', ')}`, 'status');
  return status as ToolCallStatus;
}

type PageRequest = { limit?: number; cursor?: string };

async function newestFirst(deps: ReadModelDependencies, where: Where, page: PageRequest): Promise<Page<ToolCallView>> {
  const found = await deps.readStore.collection<ToolCallDocument>(TOOL_CALLS).find({ where, sort: { field: 'requested_at', direction: 'desc' }, ...page });
  return { items: found.items.map(viewOfToolCall), next_cursor: found.next_cursor };
}

/** The calls of the organization the caller may see (all for an owner or admin, their own for a member), newest first. */
export async function listToolCalls(deps: ReadModelDependencies, principal: ToolCallReader, filter: { status?: ToolCallStatus; tool_id?: string }, page: PageRequest): Promise<Page<ToolCallView>> {
  const where: Where = { tenant_id: principal.tenant_id };
  if (filter.status !== undefined) where.status = filter.status;
  if (filter.tool_id !== undefined) where.tool_id = filter.tool_id;
  if (!isApprover(principal)) Object.assign(where, { 'caller.kind': 'user', 'caller.id': principal.user_id });
  return newestFirst(deps, where, page);
}

/** One call the caller may see (404 otherwise). */
export async function getToolCall(deps: ReadModelDependencies, principal: ToolCallReader, toolCallId: string): Promise<ToolCallView> {
  const doc = await deps.readStore.collection<ToolCallDocument>(TOOL_CALLS).get(toolCallId);
  if (!doc || doc.tenant_id !== principal.tenant_id) throw toolCallNotFound();
  if (!isApprover(principal) && !(doc.caller.kind === 'user' && doc.caller.id === principal.user_id)) throw toolCallNotFound();
  return viewOfToolCall(doc);
}

/** A tool's calls, newest first, for anyone who may read its workspace (404 `tool_not_found` otherwise). */
export async function toolLogs(
  deps: ReadModelDependencies & Pick<CommandDependencies, 'eventStore'>,
  principal: ToolCallReader,
  toolId: string,
  filter: { status?: ToolCallStatus },
  page: PageRequest,
): Promise<Page<ToolCallView>> {
  const tool = await liveTool(deps, principal.tenant_id, toolId);
  if (!(await workspaceAccess(deps, principal)).readable.has(tool.workspace_id)) throw notFound('tool_not_found', 'no such tool');
  return newestFirst(deps, { tenant_id: principal.tenant_id, tool_id: toolId, ...(filter.status === undefined ? {} : { status: filter.status }) }, page);
}
