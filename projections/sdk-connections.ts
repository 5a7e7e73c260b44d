// Read model `sdk_connections`: each SDK connection of a tenant as its owners and admins see it
// (id: the connection id). Never a signing secret, sealed or not: only that there is one, and
// until when a rotated-out secret is still used. The last test and the last sync as recorded,
// with what the connector advertised then (tools, flows, events, schedules, organization
// metadata). Its revision is the connection's version (ETag). A deleted connection leaves the
// read model. `scheduled` (true, or null) marks an enabled connection with schedules: the
// scheduler's query (application/orchestration/schedules.ts).

import type { Actor } from '../application/ports/event-store';
import { type AdvertisedTool, type ConnectionHealth, type DegradedReason, type SdkConnectionEvent, sdkConnectionEvents } from '../domain/sdk-connection/sdk-connection';
import { documentProjection } from './document-projection';

export interface ConnectionTestRecord {
  status: 'healthy' | 'degraded';
  reason: DegradedReason | null;
  detail: string | null;
  latency_ms: number | null;
  protocol_version: string | null;
  sdk_version: string | null;
  deep: { passed: number; total: number } | null;
  tested_at: string;
}

export interface ConnectionSyncRecord {
  via: 'capabilities.list' | 'tools.list';
  sdk_name: string | null;
  sdk_version: string | null;
  synced_at: string;
}

export interface ConnectionSyncFailure {
  reason: DegradedReason;
  detail: string;
  failed_at: string;
}

export interface SdkConnectionDocument {
  id: string;
  tenant_id: string;
  name: string;
  webhook_url: string;
  enabled: boolean;
  /** Until when the secret before the last rotation still signs (null: only the current one). */
  previous_secret_valid_until: string | null;
  status: ConnectionHealth;
  last_test: ConnectionTestRecord | null;
  last_sync: ConnectionSyncRecord | null;
  /** The last sync that failed after the last one that worked (null once one works again). */
  last_sync_failure: ConnectionSyncFailure | null;
  tools: AdvertisedTool[];
  flows: Record<string, unknown>[];
  events: Record<string, unknown>[];
  schedules: Record<string, unknown>[];
  /** True when the connection is enabled and advertised schedules; null otherwise (left out of its index). */
  scheduled: true | null;
  /**
   * Since when each schedule (by id) runs: the sync that brought it as it is now, or the last
   * enabling after that. A sync that advertises it unchanged keeps the time.
   */
  schedules_since: Record<string, string>;
  organization: Record<string, unknown> | null;
  secret_rotated_at: string | null;
  created_at: string;
  updated_at: string;
  updated_by: Actor;
  revision: number;
  position: number;
  [field: string]: unknown;
}

export const SDK_CONNECTIONS = 'sdk_connections';

const scheduledMark = (enabled: boolean, schedules: readonly unknown[]): true | null => (enabled && schedules.length > 0 ? true : null);

/**
 * A document's schedules and their starts. A document of version 1 has neither: the live
 * collection serves those until the rebuild of version 2 is swapped in, and a reader (or the
 * live follower applying an event to one) takes them as none.
 */
export const schedulesOf = (doc: Pick<SdkConnectionDocument, 'schedules' | 'schedules_since'>): { schedules: Record<string, unknown>[]; since: Record<string, string> } => ({
  schedules: doc.schedules ?? [],
  since: doc.schedules_since ?? {},
});

const idOf = (schedule: Record<string, unknown>): string | null => (typeof schedule.id === 'string' ? schedule.id : null);

/** Each schedule's start after a sync: kept for one advertised as it was, the sync's time for one new or changed. */
function sinceSynced(current: Pick<SdkConnectionDocument, 'schedules' | 'schedules_since'>, schedules: readonly Record<string, unknown>[], syncedAt: string): Record<string, string> {
  const previous = schedulesOf(current);
  const since: Record<string, string> = {};
  for (const schedule of schedules) {
    const id = idOf(schedule);
    if (id === null || id in since) continue;
    const before = previous.schedules.find((old) => idOf(old) === id);
    const unchanged = before !== undefined && JSON.stringify(before) === JSON.stringify(schedule);
    since[id] = (unchanged ? previous.since[id] : undefined) ?? syncedAt;
  }
  return since;
}

/** Enabled again: every schedule starts now (what fell while it was disabled is not run). */
const sinceEnabled = (since: Record<string, string>, enabledAt: string): Record<string, string> => Object.fromEntries(Object.keys(since).map((id) => [id, enabledAt]));

export const sdkConnectionsProjection = documentProjection<SdkConnectionEvent['type'], SdkConnectionDocument>({
  name: 'sdk_connections',
  version: 2,
  collection: { name: SDK_CONNECTIONS, indexes: [{ field: 'tenant_id' }, { field: 'created_at' }, { field: 'scheduled', sparse: true }] },
  handles: sdkConnectionEvents.types,
  documentId: (event) => event.data.connection_id,
  evolve(current, event) {
    // A test or a sync moves the version (the stream's revision) but is no change of the
    // configuration: `updated_at` and `updated_by` stay with the last change.
    const revised = { revision: event.revision };
    const stamp = { ...revised, updated_by: event.metadata.actor };
    if (event.type === 'SdkConnectionCreated') {
      const { connection_id, tenant_id, name, webhook_url, enabled, created_at } = event.data;
      return {
        id: connection_id,
        tenant_id,
        name,
        webhook_url,
        enabled,
        previous_secret_valid_until: null,
        status: 'untested',
        last_test: null,
        last_sync: null,
        last_sync_failure: null,
        tools: [],
        flows: [],
        events: [],
        schedules: [],
        scheduled: null,
        schedules_since: {},
        organization: null,
        secret_rotated_at: null,
        created_at,
        updated_at: created_at,
        ...stamp,
      };
    }
    if (event.type === 'SdkConnectionDeleted' || !current) return null;
    switch (event.type) {
      case 'SdkConnectionUpdated':
        return { ...current, name: event.data.name, webhook_url: event.data.webhook_url, updated_at: event.data.updated_at, ...stamp };
      case 'SdkConnectionSecretRotated':
        return { ...current, previous_secret_valid_until: event.data.previous_valid_until, secret_rotated_at: event.data.rotated_at, updated_at: event.data.rotated_at, ...stamp };
      case 'SdkConnectionEnabled':
        return { ...current, enabled: true, scheduled: scheduledMark(true, schedulesOf(current).schedules), schedules_since: sinceEnabled(schedulesOf(current).since, event.data.enabled_at), updated_at: event.data.enabled_at, ...stamp };
      case 'SdkConnectionDisabled':
        return { ...current, enabled: false, scheduled: null, updated_at: event.data.disabled_at, ...stamp };
      case 'SdkConnectionTested': {
        const { status, reason, detail, latency_ms, protocol_version, sdk_version, deep, tested_at } = event.data;
        return { ...current, status, last_test: { status, reason, detail, latency_ms, protocol_version, sdk_version, deep, tested_at }, ...revised };
      }
      case 'SdkConnectionToolsSynced': {
        const { via, tools, flows, events, schedules, organization, sdk_name, sdk_version, synced_at } = event.data;
        return { ...current, tools, flows, events, schedules, scheduled: scheduledMark(current.enabled, schedules), schedules_since: sinceSynced(current, schedules, synced_at), organization, last_sync: { via, sdk_name, sdk_version, synced_at }, last_sync_failure: null, ...revised };
      }
      case 'SdkConnectionSyncFailed': {
        const { reason, detail, failed_at } = event.data;
        return { ...current, last_sync_failure: { reason, detail, failed_at }, ...revised };
      }
    }
  },
});
