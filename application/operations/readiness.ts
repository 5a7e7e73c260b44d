// Readiness: the stores answer and every projection is within the allowed lag, run either
// by this process or by another one holding its lease. A process standing by for a
// projection is ready: it serves that read model as its holder keeps it (read-your-writes
// waits for the stored checkpoint), and it takes the projection over if the holder goes.
// It is not ready when the holder recorded a failure, as the holder itself is not.

import type { EventStore } from '../ports/event-store';
import type { ReadStore } from '../ports/read-store';

export interface ProjectionHealth {
  name: string;
  /** `standby` when another process holds the projection's lease. */
  status: string;
  lag: number;
  /** The process holding the lease, if any. */
  holder?: string | null;
  /** Why a failed projection stopped (it names the event it could not read, or the failure its runner recorded). */
  error?: string | null;
}

export interface ReadinessReport {
  ready: boolean;
  checks: {
    event_store: 'ok' | 'unreachable';
    read_store: 'ok' | 'unreachable';
    projections: Array<{ name: string; status: string; lag: number; holder: string | null; ok: boolean }>;
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
      ? (await deps.projectionStatus()).map((p) => ({ name: p.name, status: p.status, lag: p.lag, holder: p.holder ?? null, ...(p.error ? { error: p.error } : {}), ok: healthy(p, deps.maxProjectionLag) }))
      : [];
  return {
    ready: eventStore === 'ok' && readStore === 'ok' && projections.every((p) => p.ok),
    checks: { event_store: eventStore, read_store: readStore, projections },
  };
}

function healthy(projection: ProjectionHealth, maxLag: number): boolean {
  const runs = projection.status === 'running' || (projection.status === 'standby' && !projection.error);
  return runs && projection.lag <= maxLag;
}
