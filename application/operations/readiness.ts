// Readiness: the stores answer and every projection is running within the allowed lag.

import type { EventStore } from '../ports/event-store';
import type { ReadStore } from '../ports/read-store';

export interface ProjectionHealth {
  name: string;
  status: string;
  lag: number;
  /** Why a failed projection stopped (it names the event it could not read). */
  error?: string | null;
}

export interface ReadinessReport {
  ready: boolean;
  checks: {
    event_store: 'ok' | 'unreachable';
    read_store: 'ok' | 'unreachable';
    projections: Array<ProjectionHealth & { ok: boolean }>;
  };
}

export async function checkReadiness(deps: {
  eventStore: EventStore;
  readStore: ReadStore;
  projectionStatus: () => Promise<ProjectionHealth[]>;
  maxProjectionLag: number;
}): Promise<ReadinessReport> {
  const eventStore = await deps.eventStore.headPosition().then(
    () => 'ok' as const,
    () => 'unreachable' as const,
  );
  const readStore = (await deps.readStore.ping()) ? ('ok' as const) : ('unreachable' as const);
  const projections =
    eventStore === 'ok' && readStore === 'ok'
      ? (await deps.projectionStatus()).map((p) => ({ name: p.name, status: p.status, lag: p.lag, ...(p.error ? { error: p.error } : {}), ok: p.status === 'running' && p.lag <= deps.maxProjectionLag }))
      : [];
  return {
    ready: eventStore === 'ok' && readStore === 'ok' && projections.every((p) => p.ok),
    checks: { event_store: eventStore, read_store: readStore, projections },
  };
}
