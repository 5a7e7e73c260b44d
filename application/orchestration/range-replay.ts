// Range replays the platform runs by itself (issue #14 point 2, "running as a saga with
// progress"): `POST /api/v1/org/events/replay` with `background: true` records a range replay
// (domain/orchestration-range-replay) and answers 202 at once; the saga
// `orchestration_range_replay` then replays the range page after page, each page recorded
// with where the next one starts, and `GET /api/v1/org/events/replays/{id}` shows the progress.
//
// Saga `orchestration_range_replay` (version 1): on `RangeReplayStarted` and on each
// `RangeReplayPageReplayed` that is the last event of its stream, replays the next page
// (orchestration-events.ts, `replayRangePage`) and records it. A replay's id is derived from
// the range replay and the original, so a redelivered trigger, or a process stopping between
// a page's replays and its record, makes no second replays: the page is replayed again into
// the same ids and recorded once (the aggregate records a page number once). An unexpected
// failure is redelivered by the saga runner; while it fails the range replay stays running,
// at the page it had reached.

import { type RangeReplayCommand, type RangeReplayEvent, type RangeReplayState, rangeReplayDecider, rangeReplayEvents, rangeReplayStream } from '../../domain/orchestration-range-replay/orchestration-range-replay';
import { notFound } from '../../domain/shared/errors';
import { ORCHESTRATION_RANGE_REPLAYS, type RangeReplayDocument } from '../../projections/orchestration-range-replays';
import { type Aggregate, handleCommand, loadAggregate } from '../command-handling/handle-command';
import type { RecordedOf } from '../ports/domain-event-store';
import type { Saga } from '../sagas/saga';
import { type Principal, actingContext } from '../session/sessions';
import { type ReadModelDependencies, readBack } from '../shared/read-models';
import { type RequestContext, systemContext } from '../shared/request-context';
import { type OrchestrationDependencies, type RangeReplayInput, checkRange, replayRangePage } from './orchestration-events';

export const rangeReplayAggregate: Aggregate<RangeReplayCommand, RangeReplayEvent, RangeReplayState> = { decider: rangeReplayDecider, events: rangeReplayEvents };

export const ORCHESTRATION_RANGE_REPLAY = 'orchestration_range_replay';

/** A range replay as owners and admins read it: its range and its progress. */
export interface RangeReplayView {
  id: string;
  status: 'running' | 'finished';
  from: string;
  to: string;
  name: string | null;
  reason: string | null;
  page_size: number;
  /** Pages replayed so far. */
  pages: number;
  /** Events replayed so far. */
  replayed: number;
  /** Where the next page starts: null at the beginning of the range and once finished. */
  next_cursor: string | null;
  started_at: string;
  finished_at: string | null;
  updated_at: string;
}

const viewOf = ({ tenant_id: _tenant, position: _position, ...view }: RangeReplayDocument): RangeReplayView => view;

/** The tenant's range replay, or 404 `range_replay_not_found`. */
export async function getRangeReplay(deps: ReadModelDependencies, tenantId: string, id: string): Promise<RangeReplayView> {
  const doc = await deps.readStore.collection<RangeReplayDocument>(ORCHESTRATION_RANGE_REPLAYS).get(id);
  if (!doc || doc.tenant_id !== tenantId) throw notFound('range_replay_not_found', 'no such range replay');
  return viewOf(doc);
}

/**
 * Records a range replay for the saga to run (the range checked as for a page by hand: 400
 * naming the field). Under the request's Idempotency-Key its id comes from the key.
 */
export async function startRangeReplay(
  deps: OrchestrationDependencies,
  principal: Principal,
  input: RangeReplayInput,
  context: RequestContext,
  options: { idempotencyKey?: string } = {},
): Promise<RangeReplayView> {
  const range = checkRange(deps, input);
  const id = options.idempotencyKey === undefined ? deps.ids.newId() : deps.ids.fromKey(`${options.idempotencyKey}:range-replay`);
  const command: RangeReplayCommand = {
    type: 'StartRangeReplay',
    data: { range_replay_id: id, tenant_id: principal.tenant_id, from: range.from, to: range.to, name: range.name, reason: range.reason, page_size: range.limit, cursor: range.cursor },
  };
  const result = await handleCommand(deps, rangeReplayAggregate, rangeReplayStream(id), command, actingContext(principal, context));
  return readBack(deps, result.position, 'the range replay', () => getRangeReplay(deps, principal.tenant_id, id));
}

export function rangeReplaySaga(deps: OrchestrationDependencies): Saga<'RangeReplayStarted' | 'RangeReplayPageReplayed'> {
  return {
    name: ORCHESTRATION_RANGE_REPLAY,
    version: 1,
    filter: { kind: 'event_type', types: ['RangeReplayStarted', 'RangeReplayPageReplayed'] },
    async handle(event: RecordedOf<'RangeReplayStarted' | 'RangeReplayPageReplayed'>) {
      const { range_replay_id: id, tenant_id } = event.data;
      const { state, revision } = await loadAggregate(deps, rangeReplayAggregate, rangeReplayStream(id));
      // Only the last event drives: an older one redelivered has been acted on.
      if (state.status !== 'running' || event.revision !== revision) return;
      const { job } = state;
      const context = { ...systemContext(event.metadata.correlation_id, ORCHESTRATION_RANGE_REPLAY, event.id), tenant_id };
      const range = { from: job.from, to: job.to, name: job.name, limit: job.page_size, cursor: state.cursor, reason: job.reason };
      const page = await replayRangePage(deps, tenant_id, range, (originalId) => deps.ids.fromKey(`${id}:replay:${originalId}`), context);
      await handleCommand(deps, rangeReplayAggregate, rangeReplayStream(id), { type: 'RecordReplayedPage', data: { tenant_id, page: state.pages + 1, replayed: page.items, next_cursor: page.next_cursor } }, context);
    },
  };
}
