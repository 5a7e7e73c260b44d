import type { RangeReplayCommand, RangeReplayEvent } from '../../domain/orchestration-range-replay/orchestration-range-replay';
import { rangeReplayDecider } from '../../domain/orchestration-range-replay/orchestration-range-replay';
import { FIXED_NOW, deciderSpec } from '../support/decider-spec';

describe('range replay (decider)', () => {
  const spec = deciderSpec(rangeReplayDecider);
  const at = FIXED_NOW.toISOString();
  const ids = { range_replay_id: 'rr-1', tenant_id: 't1' };
  const job = { ...ids, from: '2026-11-01T00:00:00.000Z', to: '2026-11-02T00:00:00.000Z', name: 'shop.order.*', reason: null, page_size: 2, cursor: null };
  const start: RangeReplayCommand = { type: 'StartRangeReplay', data: job };
  const started: RangeReplayEvent = { type: 'RangeReplayStarted', data: { ...job, started_at: at } };
  const items = (n: number) => Array.from({ length: n }, (_, index) => ({ replay_of: `e-${index}`, id: `r-${index}` }));
  const record = (page: number, count: number, next: string | null, tenant = 't1'): RangeReplayCommand => ({ type: 'RecordReplayedPage', data: { tenant_id: tenant, page, replayed: items(count), next_cursor: next } });
  const recorded = (page: number, count: number, next: string | null): RangeReplayEvent => ({ type: 'RangeReplayPageReplayed', data: { ...ids, page, replayed: items(count), next_cursor: next, replayed_at: at } });

  it('starts once: the same id again records nothing', () => {
    spec.given([]).when(start).then([started]);
    spec.given([started]).when(start).thenNothingHappened();
  });

  it('records each page once, in order, and finishes with the page that has no next one', () => {
    spec.given([started]).when(record(1, 2, 'c1')).then([recorded(1, 2, 'c1')]);
    spec.given([started, recorded(1, 2, 'c1')]).when(record(1, 2, 'c1')).thenNothingHappened();
    spec.given([started, recorded(1, 2, 'c1')]).when(record(3, 2, null)).thenThrows('conflict', 'range_replay_page_skipped');
    spec
      .given([started, recorded(1, 2, 'c1')])
      .when(record(2, 1, null))
      .then([recorded(2, 1, null), { type: 'RangeReplayFinished', data: { ...ids, pages: 2, replayed: 3, finished_at: at } }]);
    const finished: RangeReplayEvent = { type: 'RangeReplayFinished', data: { ...ids, pages: 1, replayed: 0, finished_at: at } };
    spec.given([started, recorded(1, 0, null), finished]).when(record(2, 1, null)).thenThrows('conflict', 'range_replay_finished');
  });

  it("is another tenant's to no one: 404", () => {
    spec.given([started]).when(record(1, 1, null, 't2')).thenThrows('not_found', 'range_replay_not_found');
    spec.given([]).when(record(1, 1, null)).thenThrows('not_found', 'range_replay_not_found');
  });
});
