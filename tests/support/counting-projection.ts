// A projection whose effect is not idempotent (it counts), so a double-applied event shows.
import type { Projection } from '../../projections/projection';

export interface CounterDocument {
  id: string;
  count: number;
  last_position: number;
  [field: string]: unknown;
}

export function countingProjection(options: { name?: string; version?: number; handles?: readonly string[] | 'all'; failOn?: (type: string) => boolean } = {}): Projection {
  const collection = `${options.name ?? 'counters'}`;
  return {
    name: options.name ?? 'counters',
    version: options.version ?? 1,
    collections: [{ name: collection, indexes: [{ field: 'count' }] }],
    handles: options.handles ?? 'all',
    async apply(event, view) {
      if (options.failOn?.(event.type)) throw new Error(`cannot project ${event.type}`);
      const current = await view.get<CounterDocument>(collection, event.stream);
      view.put(collection, { id: event.stream, count: (current?.count ?? 0) + 1, last_position: event.position });
    },
  };
}
