// A projection whose effect is not idempotent (it counts), so a double-applied event shows.
import type { RecordedEvent } from '../../application/ports/event-store';
import type { DomainEventType } from '../../domain/events';
import type { Projection, ProjectionView } from '../../projections/projection';

export interface CounterDocument {
  id: string;
  count: number;
  last_position: number;
  [field: string]: unknown;
}

export function countingProjection(
  options: { name?: string; version?: number; handles?: readonly DomainEventType[] | 'all'; failOn?: (type: string) => boolean } = {},
): Projection {
  const collection = `${options.name ?? 'counters'}`;
  const base = { name: options.name ?? 'counters', version: options.version ?? 1, collections: [{ name: collection, indexes: [{ field: 'count' }] }] };
  const count = async (event: RecordedEvent, view: ProjectionView): Promise<void> => {
    if (options.failOn?.(event.type)) throw new Error(`cannot project ${event.type}`);
    const current = await view.get<CounterDocument>(collection, event.stream);
    view.put(collection, { id: event.stream, count: (current?.count ?? 0) + 1, last_position: event.position });
  };
  const handles = options.handles ?? 'all';
  return handles === 'all' ? { ...base, handles, apply: count } : { ...base, handles, apply: count };
}
