// Read model `orchestration_range_replays`: each range replay the platform runs by itself
// (id: the range replay id) with its progress: pages and events replayed so far, where the
// next page starts, whether it is finished.

import { type RangeReplayEvent, rangeReplayEvents } from '../domain/orchestration-range-replay/orchestration-range-replay';
import type { EventProjection } from './projection';

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

export const orchestrationRangeReplaysProjection: EventProjection<RangeReplayEvent['type']> = {
  name: 'orchestration_range_replays',
  version: 1,
  collections: [{ name: ORCHESTRATION_RANGE_REPLAYS, indexes: [{ field: 'tenant_id' }, { field: 'started_at' }] }],
  handles: rangeReplayEvents.types,
  async apply(event, view) {
    const id = event.data.range_replay_id;
    if (event.type === 'RangeReplayStarted') {
      if (await view.get(ORCHESTRATION_RANGE_REPLAYS, id)) return;
      const { tenant_id, from, to, name, reason, page_size, cursor, started_at } = event.data;
      view.put(ORCHESTRATION_RANGE_REPLAYS, {
        id,
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
        position: event.position,
      } satisfies RangeReplayDocument);
      return;
    }
    const current = await view.get<RangeReplayDocument>(ORCHESTRATION_RANGE_REPLAYS, id);
    if (!current || current.position >= event.position) return;
    switch (event.type) {
      case 'RangeReplayPageReplayed':
        view.patch(ORCHESTRATION_RANGE_REPLAYS, id, {
          pages: event.data.page,
          replayed: current.replayed + event.data.replayed.length,
          next_cursor: event.data.next_cursor,
          updated_at: event.data.replayed_at,
          position: event.position,
        });
        return;
      case 'RangeReplayFinished':
        view.patch(ORCHESTRATION_RANGE_REPLAYS, id, { status: 'finished', finished_at: event.data.finished_at, updated_at: event.data.finished_at, position: event.position });
        return;
    }
  },
};
