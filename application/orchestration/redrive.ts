// Redrive: the dead letters (or failed events) of an organization re-queued at once, once the
// cause is fixed, rather than one retry per event (`POST /api/v1/org/events/redrive`,
// `npm run cli -- events orchestration redrive`). A page at a time, oldest first: each event of
// the page is re-queued as its retry would be (OrchestrationEventRequeued, the caller as actor,
// a fresh attempt budget); one that cannot be (it expired, its payload was erased, it changed
// meanwhile) is skipped with its code and stays as it is. `next_cursor` goes on after the page,
// so the skipped ones are not met again; the requeued ones have left the filter anyway.

import { DomainError, invalid } from '../../domain/shared/errors';
import { orchestrationEventStream } from '../../domain/orchestration-event/orchestration-event';
import { ORCHESTRATION_EVENTS, type OrchestrationEventDocument } from '../../projections/orchestration-events';
import { handleCommand } from '../command-handling/handle-command';
import type { Where } from '../ports/read-store';
import { type Principal, actingContext } from '../session/sessions';
import type { RequestContext } from '../shared/request-context';
import { LIST_MAX_LIMIT, type OrchestrationDependencies, nameCondition, nameFilter, orchestrationEventAggregate, receivedCondition, timeRange } from './orchestration-events';

export const REDRIVE_STATUSES = ['dead_letter', 'failed'] as const;
export type RedriveStatus = (typeof REDRIVE_STATUSES)[number];

export interface RedriveInput {
  status?: unknown;
  name?: unknown;
  from?: unknown;
  to?: unknown;
  limit?: unknown;
  cursor?: unknown;
}

export interface RedriveView {
  /** The events re-queued by this page, oldest first. */
  requeued: string[];
  /** The events of the page left as they were, with the reason (`event_expired`, `payload_erased`, `event_not_retryable`). */
  skipped: Array<{ id: string; code: string }>;
  /** Where the next page starts; null after the last. */
  next_cursor: string | null;
}

function checkedInput(input: RedriveInput): { status: RedriveStatus; name?: string; range: { from?: string; to?: string }; limit: number; cursor?: string } {
  const status = input.status ?? 'dead_letter';
  if (typeof status !== 'string' || !(REDRIVE_STATUSES as readonly string[]).includes(status)) {
    throw invalid('invalid_status', `status: expected one of ${REDRIVE_STATUSES.join(', ')} (the events a retry takes)`, 'status');
  }
  const limit = input.limit ?? LIST_MAX_LIMIT;
  if (typeof limit !== 'number' || !Number.isInteger(limit) || limit < 1 || limit > LIST_MAX_LIMIT) {
    throw invalid('invalid_limit', `limit must be an integer from 1 to ${LIST_MAX_LIMIT}`, 'limit');
  }
  if (input.cursor !== undefined && input.cursor !== null && (typeof input.cursor !== 'string' || input.cursor === '')) {
    throw invalid('invalid_cursor', 'cursor must be the next_cursor of a previous page', 'cursor');
  }
  const name = nameFilter(input.name ?? undefined);
  return {
    status: status as RedriveStatus,
    ...(name === undefined ? {} : { name }),
    range: timeRange(input.from ?? undefined, input.to ?? undefined),
    limit,
    ...(typeof input.cursor === 'string' ? { cursor: input.cursor } : {}),
  };
}

/** Re-queues one page of the tenant's events in `status` (dead letters by default), received in [from, to), of `name`. */
export async function redriveOrchestrationEvents(deps: OrchestrationDependencies, tenantId: string, input: RedriveInput, context: RequestContext): Promise<RedriveView> {
  const checked = checkedInput(input);
  const where: Where = {
    tenant_id: tenantId,
    status: checked.status,
    ...(checked.name === undefined ? {} : { name: nameCondition(checked.name) }),
    ...receivedCondition(checked.range),
  };
  const page = await deps.readStore
    .collection<OrchestrationEventDocument>(ORCHESTRATION_EVENTS)
    .find({ where, sort: { field: 'received_at', direction: 'asc' }, limit: checked.limit, ...(checked.cursor === undefined ? {} : { cursor: checked.cursor }) });
  const view: RedriveView = { requeued: [], skipped: [], next_cursor: page.next_cursor };
  let last: number | null = null;
  for (const doc of page.items) {
    try {
      const result = await handleCommand(deps, orchestrationEventAggregate, orchestrationEventStream(doc.id), { type: 'Requeue', data: { tenant_id: tenantId } }, context);
      view.requeued.push(doc.id);
      last = result.position ?? last;
    } catch (error) {
      if (!(error instanceof DomainError) || error.kind !== 'conflict') throw error;
      view.skipped.push({ id: doc.id, code: error.code });
    }
  }
  // The caller's next list shows them queued.
  if (last !== null) await deps.readYourWrites(last);
  return view;
}

/** An owner's or admin's redrive of their organization's events. */
export function redriveAs(deps: OrchestrationDependencies, principal: Principal, input: RedriveInput, context: RequestContext): Promise<RedriveView> {
  return redriveOrchestrationEvents(deps, principal.tenant_id, input, actingContext(principal, context));
}
