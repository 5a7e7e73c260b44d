// Read model `orchestration_range_replays`: each range replay the platform runs by itself
// (id: the range replay id) with its progress: pages and events replayed so far, where the
// next page starts, whether it is finished.

import { type RangeReplayEvent, rangeReplayEvents } from '../domain/orchestration-range-replay/orchestration-range-replay';
import { documentProjection } from './document-projection';

export interface RangeReplayDocument {
  id: string;
  tenant_id: string;
  status: 'running' | 'finished';
  from: string;
  to: string;
  name: string | null;
  reason: string | null;
  page_size: number;
  pages: number;
  replayed: number;
  next_cursor: string | null;
  started_at: string;
  finished_at: string | null;
  updated_at: string;
  position: number;
  [field: string]: unknown;
}

export const ORCHESTRATION_RANGE_REPLAYS = 'orchestration_range_replays';

export const orchestrationRangeReplaysProjection = documentProjection<RangeReplayEvent['type'], RangeReplayDocument>({
  name: 'orchestration_range_replays',
  version: 1,
  collection: { name: ORCHESTRATION_RANGE_REPLAYS, indexes: [{ field: 'tenant_id' }, { field: 'started_at' }] },
  handles: rangeReplayEvents.types,
  documentId: (event) => event.data.range_replay_id,
  evolve(current, event) {
    if (event.type === 'RangeReplayStarted') {
      if (current) return current;
      const { range_replay_id, tenant_id, from, to, name, reason, page_size, cursor, started_at } = event.data;
      return {
        id: range_replay_id,
        tenant_id,
        status: 'running',
        from,
        to,
        name,
        reason,
        page_size,
        pages: 0,
        replayed: 0,
        next_cursor: cursor,
        started_at,
        finished_at: null,
        updated_at: started_at,
      };
    }
    if (!current) return null;
    switch (event.type) {
      case 'RangeReplayPageReplayed':
        return { ...current, pages: event.data.page, replayed: current.replayed + event.data.replayed.length, next_cursor: event.data.next_cursor, updated_at: event.data.replayed_at };
      case 'RangeReplayFinished':
        return { ...current, status: 'finished', finished_at: event.data.finished_at, updated_at: event.data.finished_at };
    }
  },
});
