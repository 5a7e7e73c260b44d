// The range replay aggregate (issue #14 point 2): a replay of the root orchestration events of
// a time range that the platform runs by itself, page after page, with its progress recorded.
// Stream `orchestrationRangeReplay-<id>`. (A client may also replay a range page by page
// itself: POST /api/v1/org/events/replay without `background`; no aggregate then.)
//
// States:
//   running   pages are being replayed; `cursor` is where the next page starts (null before
//             the first page).
//   finished  the last page had no next one. Final.
// Allowed: running -> running (a page replayed, more to come) | finished (the last page).
// Each page is recorded once: a page number already recorded records nothing (a redelivered
// trigger), a page beyond the next one is refused.

import * as t from 'io-ts';
import { type Either, left, right } from 'fp-ts/Either';
import type { Decider } from '../shared/decider';
import { type DomainError, conflict, notFound } from '../shared/errors';
import { declareEvent, type EventOf, eventGroup, type GroupEvent } from '../shared/events';
import { toStreamName } from '../shared/stream-names';

const Identity = { range_replay_id: t.string, tenant_id: t.string };
const ReplayedEvent = t.type({ replay_of: t.string, id: t.string });

export const RangeReplayStarted = declareEvent(
  'RangeReplayStarted',
  t.type({
    ...Identity,
    /** received_at from (inclusive) ... to (exclusive). */
    from: t.string,
    to: t.string,
    /** An event name or `prefix.*`; null: every name. */
    name: t.union([t.string, t.null]),
    reason: t.union([t.string, t.null]),
    /** Root events replayed per page. */
    page_size: t.number,
    /** Where the first page starts: a client's next_cursor of the same range, or null for its beginning. */
    cursor: t.union([t.string, t.null]),
    started_at: t.string,
  }),
);
export const RangeReplayPageReplayed = declareEvent(
  'RangeReplayPageReplayed',
  t.type({
    ...Identity,
    /** From 1. */
    page: t.number,
    replayed: t.array(ReplayedEvent),
    /** Where the next page starts; null: this was the last. */
    next_cursor: t.union([t.string, t.null]),
    replayed_at: t.string,
  }),
);
export const RangeReplayFinished = declareEvent('RangeReplayFinished', t.type({ ...Identity, pages: t.number, replayed: t.number, finished_at: t.string }));

export const rangeReplayEvents = eventGroup('orchestrationRangeReplay', [RangeReplayStarted, RangeReplayPageReplayed, RangeReplayFinished]);
export type RangeReplayEvent = GroupEvent<typeof rangeReplayEvents>;
type StartedData = EventOf<typeof RangeReplayStarted>['data'];

export const rangeReplayStream = (rangeReplayId: string): string => toStreamName(rangeReplayEvents.category, rangeReplayId);

export type RangeReplayCommand =
  | { type: 'StartRangeReplay'; data: Omit<StartedData, 'started_at'> }
  | { type: 'RecordReplayedPage'; data: { tenant_id: string; page: number; replayed: Array<{ replay_of: string; id: string }>; next_cursor: string | null } };

export type RangeReplayState =
  | { status: 'absent' }
  | { status: 'running' | 'finished'; job: StartedData; pages: number; replayed: number; cursor: string | null };

export const rangeReplayDecider: Decider<RangeReplayCommand, RangeReplayEvent, RangeReplayState> = {
  initialState: () => ({ status: 'absent' }),
  evolve(state, event) {
    switch (event.type) {
      case 'RangeReplayStarted':
        return { status: 'running', job: event.data, pages: 0, replayed: 0, cursor: event.data.cursor };
      case 'RangeReplayPageReplayed':
        return state.status === 'absent' ? state : { ...state, pages: event.data.page, replayed: state.replayed + event.data.replayed.length, cursor: event.data.next_cursor };
      case 'RangeReplayFinished':
        return state.status === 'absent' ? state : { ...state, status: 'finished' };
    }
  },
  decide(command, state, { now }): Either<DomainError, RangeReplayEvent[]> {
    const at = now.toISOString();
    if (command.type === 'StartRangeReplay') {
      // The same id again (a retried request under one Idempotency-Key): the first stands.
      if (state.status !== 'absent') return right([]);
      return right([{ type: 'RangeReplayStarted', data: { ...command.data, started_at: at } }]);
    }
    if (state.status === 'absent' || state.job.tenant_id !== command.data.tenant_id) return left(notFound('range_replay_not_found', 'no such range replay'));
    const { page, replayed, next_cursor } = command.data;
    if (page <= state.pages) return right([]);
    if (state.status === 'finished') return left(conflict('range_replay_finished', 'the range replay is finished'));
    if (page !== state.pages + 1) return left(conflict('range_replay_page_skipped', `page ${page} is not the next one (${state.pages + 1})`));
    const identity = { range_replay_id: state.job.range_replay_id, tenant_id: state.job.tenant_id };
    const recorded: RangeReplayEvent = { type: 'RangeReplayPageReplayed', data: { ...identity, page, replayed, next_cursor, replayed_at: at } };
    if (next_cursor !== null) return right([recorded]);
    return right([recorded, { type: 'RangeReplayFinished', data: { ...identity, pages: page, replayed: state.replayed + replayed.length, finished_at: at } }]);
  },
};
