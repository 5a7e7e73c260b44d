// The SDK connection aggregate (spec 2.1, 3, 4.2; issue #13 point 2): an organization's own
// connector server that the platform calls with signed protocol requests. Stream
// `sdkConnection-<id>`.
//
// - The signing secret only ever enters an event sealed. A rotation keeps the previous secret
//   usable until `previous_valid_until` (the grace period), so a connector still on it keeps
//   answering while it is redeployed with the new one; after that only the new one signs.
// - Health: `untested` until the first test; then `healthy` (a pong within the timeout with
//   our protocol version) or `degraded` with the reason the test recorded. A change of the
//   address or the secret does not change the health: only a test does.
// - A sync stores what the connector advertises (tools, flows, events, schedules, organization
//   metadata) as it was at that moment; what became business tools is the tools' own history.
// - Name uniqueness per tenant is the application's (a reservation); the form of the webhook
//   URL is checked here, whether the platform may call it by the outbound guard.
// - Every command names the caller's tenant: another tenant's connection answers
//   `sdk_connection_not_found` exactly as a missing one does.

import * as t from 'io-ts';
import { type Either, left, right } from 'fp-ts/Either';
import type { Decider } from '../shared/decider';
import { type DomainError, conflict, notFound } from '../shared/errors';
import { declareEvent, type EventOf, eventGroup, type GroupEvent } from '../shared/events';
import { toStreamName } from '../shared/stream-names';
import { endpointUrlProblem } from '../shared/endpoint-url';
import { normalizeText, textProblem } from '../shared/text';

export const CONNECTION_NAME_MAX_LENGTH = 100;

export const CONNECTION_HEALTH = ['untested', 'healthy', 'degraded'] as const;
export const ConnectionHealth = t.keyof({ untested: null, healthy: null, degraded: null });
export type ConnectionHealth = t.TypeOf<typeof ConnectionHealth>;

/** Why a test found the connection degraded (spec 7.2 and the connector client's reasons). */
export const DEGRADED_REASONS = ['unreachable', 'timeout', 'refused_address', 'invalid_signature', 'protocol_mismatch', 'bad_response'] as const;
export const DegradedReason = t.keyof({ unreachable: null, timeout: null, refused_address: null, invalid_signature: null, protocol_mismatch: null, bad_response: null });
export type DegradedReason = t.TypeOf<typeof DegradedReason>;

/** A tool as the connector advertised it (spec 2.4). */
export const AdvertisedTool = t.intersection([t.type({ name: t.string }), t.partial({ description: t.string, auth: t.string, chat: t.boolean, input_schema: t.UnknownRecord })]);
export type AdvertisedTool = t.TypeOf<typeof AdvertisedTool>;

const Identity = { tenant_id: t.string, connection_id: t.string };

export const SdkConnectionCreated = declareEvent(
  'SdkConnectionCreated',
  t.type({ ...Identity, name: t.string, webhook_url: t.string, secret_sealed: t.string, enabled: t.boolean, created_at: t.string }),
);
export const SdkConnectionUpdated = declareEvent(
  'SdkConnectionUpdated',
  t.type({ ...Identity, name: t.string, webhook_url: t.string, previous_name: t.string, updated_at: t.string }),
);
export const SdkConnectionSecretRotated = declareEvent(
  'SdkConnectionSecretRotated',
  t.type({
    ...Identity,
    secret_sealed: t.string,
    /** The secret before, still used until `previous_valid_until`; null when rotated without grace. */
    previous_secret_sealed: t.union([t.string, t.null]),
    previous_valid_until: t.union([t.string, t.null]),
    rotated_at: t.string,
  }),
);
export const SdkConnectionEnabled = declareEvent('SdkConnectionEnabled', t.type({ ...Identity, enabled_at: t.string }));
export const SdkConnectionDisabled = declareEvent('SdkConnectionDisabled', t.type({ ...Identity, disabled_at: t.string }));
export const SdkConnectionTested = declareEvent(
  'SdkConnectionTested',
  t.type({
    ...Identity,
    status: t.keyof({ healthy: null, degraded: null }),
    reason: t.union([DegradedReason, t.null]),
    /** What was wrong, in words (never a secret). */
    detail: t.union([t.string, t.null]),
    latency_ms: t.union([t.number, t.null]),
    protocol_version: t.union([t.string, t.null]),
    sdk_version: t.union([t.string, t.null]),
    /** A deep test ran the doctor's conformance cases: how many passed of how many. */
    deep: t.union([t.type({ passed: t.number, total: t.number }), t.null]),
    tested_at: t.string,
  }),
);
export const SdkConnectionToolsSynced = declareEvent(
  'SdkConnectionToolsSynced',
  t.type({
    ...Identity,
    /** Which request answered: `capabilities.list`, or `tools.list` for a connector that only has the legacy one. */
    via: t.keyof({ 'capabilities.list': null, 'tools.list': null }),
    tools: t.array(AdvertisedTool),
    flows: t.array(t.UnknownRecord),
    events: t.array(t.UnknownRecord),
    /** The schedules advertised, as given: the platform reads and runs them (application/orchestration/schedules.ts). */
    schedules: t.array(t.UnknownRecord),
    organization: t.union([t.UnknownRecord, t.null]),
    sdk_name: t.union([t.string, t.null]),
    sdk_version: t.union([t.string, t.null]),
    synced_at: t.string,
  }),
  // Version 1 kept no schedules: the platform did not run them then.
  { version: 2, upcasters: { 1: (data) => ({ ...data, schedules: [] }) } },
);
/** A sync that got no usable list from the connector: why, so the audit log has every call and its outcome. */
export const SdkConnectionSyncFailed = declareEvent(
  'SdkConnectionSyncFailed',
  t.type({ ...Identity, reason: DegradedReason, detail: t.string, latency_ms: t.union([t.number, t.null]), failed_at: t.string }),
);
export const SdkConnectionDeleted = declareEvent('SdkConnectionDeleted', t.type({ ...Identity, name: t.string, deleted_at: t.string }));

export const sdkConnectionEvents = eventGroup('sdkConnection', [
  SdkConnectionCreated,
  SdkConnectionUpdated,
  SdkConnectionSecretRotated,
  SdkConnectionEnabled,
  SdkConnectionDisabled,
  SdkConnectionTested,
  SdkConnectionToolsSynced,
  SdkConnectionSyncFailed,
  SdkConnectionDeleted,
]);
export type SdkConnectionEvent = GroupEvent<typeof sdkConnectionEvents>;

type TestedData = EventOf<typeof SdkConnectionTested>['data'];
type SyncedData = EventOf<typeof SdkConnectionToolsSynced>['data'];
type SyncFailedData = EventOf<typeof SdkConnectionSyncFailed>['data'];

export type SdkConnectionCommand =
  | { type: 'CreateSdkConnection'; data: { tenant_id: string; connection_id: string; name: string; webhook_url: string; secret_sealed: string; enabled: boolean } }
  /** An absent field keeps its value. */
  | { type: 'UpdateSdkConnection'; data: { tenant_id: string; name?: string; webhook_url?: string; enabled?: boolean } }
  /** `grace_until`: the previous secret stays usable until then (null: at once no longer). */
  | { type: 'RotateSdkConnectionSecret'; data: { tenant_id: string; secret_sealed: string; grace_until: string | null } }
  | { type: 'RecordSdkConnectionTest'; data: Omit<TestedData, 'connection_id' | 'tested_at'> }
  | { type: 'RecordSdkConnectionSync'; data: Omit<SyncedData, 'connection_id' | 'synced_at'> }
  | { type: 'RecordSdkConnectionSyncFailure'; data: Omit<SyncFailedData, 'connection_id' | 'failed_at'> }
  | { type: 'DeleteSdkConnection'; data: { tenant_id: string } };

export interface LiveSdkConnection {
  status: 'active';
  tenant_id: string;
  connection_id: string;
  name: string;
  webhook_url: string;
  enabled: boolean;
  secret_sealed: string;
  previous_secret_sealed: string | null;
  previous_valid_until: string | null;
  health: ConnectionHealth;
  tools: AdvertisedTool[];
  flows: Record<string, unknown>[];
}

export type SdkConnectionState = { status: 'absent' } | LiveSdkConnection | { status: 'deleted'; tenant_id: string };

export const sdkConnectionStream = (connectionId: string): string => toStreamName(sdkConnectionEvents.category, connectionId);

const connectionNotFound = (): DomainError => notFound('sdk_connection_not_found', 'no such SDK connection');

/** The first problem with the name or the webhook URL given, naming the field; null when they are fine. */
export function sdkConnectionFieldsProblem(fields: { name?: string; webhook_url?: string }): DomainError | null {
  if (fields.name !== undefined) {
    const problem = textProblem('name', fields.name, { max: CONNECTION_NAME_MAX_LENGTH });
    if (problem) return problem;
  }
  return fields.webhook_url === undefined ? null : endpointUrlProblem(fields.webhook_url, 'webhook_url');
}

/** The secrets a call may be signed with now: the current one, and the previous one while its grace lasts. */
export function usableSecrets(connection: Pick<LiveSdkConnection, 'secret_sealed' | 'previous_secret_sealed' | 'previous_valid_until'>, now: Date): string[] {
  const { secret_sealed, previous_secret_sealed, previous_valid_until } = connection;
  const graceLasts = previous_secret_sealed !== null && previous_valid_until !== null && new Date(previous_valid_until).getTime() > now.getTime();
  return graceLasts ? [secret_sealed, previous_secret_sealed as string] : [secret_sealed];
}

export const sdkConnectionDecider: Decider<SdkConnectionCommand, SdkConnectionEvent, SdkConnectionState> = {
  initialState: () => ({ status: 'absent' }),

  evolve(state, event) {
    if (event.type === 'SdkConnectionCreated') {
      const { tenant_id, connection_id, name, webhook_url, secret_sealed, enabled } = event.data;
      return { status: 'active', tenant_id, connection_id, name, webhook_url, enabled, secret_sealed, previous_secret_sealed: null, previous_valid_until: null, health: 'untested', tools: [], flows: [] };
    }
    if (event.type === 'SdkConnectionDeleted') return { status: 'deleted', tenant_id: event.data.tenant_id };
    if (state.status !== 'active') return state;
    switch (event.type) {
      case 'SdkConnectionUpdated':
        return { ...state, name: event.data.name, webhook_url: event.data.webhook_url };
      case 'SdkConnectionSecretRotated':
        return { ...state, secret_sealed: event.data.secret_sealed, previous_secret_sealed: event.data.previous_secret_sealed, previous_valid_until: event.data.previous_valid_until };
      case 'SdkConnectionEnabled':
        return { ...state, enabled: true };
      case 'SdkConnectionDisabled':
        return { ...state, enabled: false };
      case 'SdkConnectionTested':
        return { ...state, health: event.data.status };
      case 'SdkConnectionToolsSynced':
        return { ...state, tools: event.data.tools, flows: event.data.flows };
      case 'SdkConnectionSyncFailed':
        // What the last good sync stored stays: a failed one changes nothing but the record.
        return state;
    }
  },

  decide(command, state, { now }): Either<DomainError, SdkConnectionEvent[]> {
    const at = now.toISOString();
    if (command.type === 'CreateSdkConnection') {
      if (state.status !== 'absent') return left(conflict('sdk_connection_exists', 'the SDK connection already exists'));
      const problem = sdkConnectionFieldsProblem(command.data);
      if (problem) return left(problem);
      const { tenant_id, connection_id, name, webhook_url, secret_sealed, enabled } = command.data;
      return right([{ type: 'SdkConnectionCreated', data: { tenant_id, connection_id, name: normalizeText(name), webhook_url, secret_sealed, enabled, created_at: at } }]);
    }
    if (state.status !== 'active' || state.tenant_id !== command.data.tenant_id) return left(connectionNotFound());
    const { tenant_id, connection_id } = state;
    switch (command.type) {
      case 'UpdateSdkConnection': {
        const problem = sdkConnectionFieldsProblem(command.data);
        if (problem) return left(problem);
        const events: SdkConnectionEvent[] = [];
        const name = command.data.name === undefined ? state.name : normalizeText(command.data.name);
        const webhook_url = command.data.webhook_url ?? state.webhook_url;
        if (name !== state.name || webhook_url !== state.webhook_url) {
          events.push({ type: 'SdkConnectionUpdated', data: { tenant_id, connection_id, name, webhook_url, previous_name: state.name, updated_at: at } });
        }
        if (command.data.enabled === true && !state.enabled) events.push({ type: 'SdkConnectionEnabled', data: { tenant_id, connection_id, enabled_at: at } });
        if (command.data.enabled === false && state.enabled) events.push({ type: 'SdkConnectionDisabled', data: { tenant_id, connection_id, disabled_at: at } });
        return right(events);
      }
      case 'RotateSdkConnectionSecret': {
        const graceful = command.data.grace_until !== null && new Date(command.data.grace_until).getTime() > now.getTime();
        return right([
          {
            type: 'SdkConnectionSecretRotated',
            data: {
              tenant_id,
              connection_id,
              secret_sealed: command.data.secret_sealed,
              previous_secret_sealed: graceful ? state.secret_sealed : null,
              previous_valid_until: graceful ? command.data.grace_until : null,
              rotated_at: at,
            },
          },
        ]);
      }
      case 'RecordSdkConnectionTest':
        return right([{ type: 'SdkConnectionTested', data: { ...command.data, connection_id, tested_at: at } }]);
      case 'RecordSdkConnectionSync':
        return right([{ type: 'SdkConnectionToolsSynced', data: { ...command.data, connection_id, synced_at: at } }]);
      case 'RecordSdkConnectionSyncFailure':
        return right([{ type: 'SdkConnectionSyncFailed', data: { ...command.data, connection_id, failed_at: at } }]);
      case 'DeleteSdkConnection':
        return right([{ type: 'SdkConnectionDeleted', data: { tenant_id, connection_id, name: state.name, deleted_at: at } }]);
    }
  },
};
