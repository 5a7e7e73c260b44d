// The alert digest of one organization's hour. The first of its orchestration events to be
// dead-lettered or to expire within a UTC hour is emailed to its owners and admins at once
// (at most one such email per person and hour); that end opens the hour's digest. Once the
// hour is over, the digest is closed: when events of the hour other than the one emailed still
// stand dead-lettered or expired, each of them gets one email that counts those by event name.
// Stream `orchestrationAlertDigest-<tenant id>:<hour>`, `hour` the whole hours since the epoch:
// two events at most, whatever the number of ends.

import * as t from 'io-ts';
import { type Either, right } from 'fp-ts/Either';
import type { Decider } from '../shared/decider';
import type { DomainError } from '../shared/errors';
import { declareEvent, eventGroup, type GroupEvent } from '../shared/events';
import { toStreamName } from '../shared/stream-names';

/** `first_event_id`: the end the hour's alert emails told of. */
export const OrchestrationAlertDigestOpened = declareEvent(
  'OrchestrationAlertDigestOpened',
  t.type({ tenant_id: t.string, hour: t.number, first_event_id: t.string, opened_at: t.string }),
);
/** The hour is over: `standing` of its ends besides the first still stood so, and `recipients` people were emailed them (none when `standing` is 0). */
export const OrchestrationAlertDigestClosed = declareEvent(
  'OrchestrationAlertDigestClosed',
  t.type({ tenant_id: t.string, hour: t.number, standing: t.number, recipients: t.number, closed_at: t.string }),
);

export const orchestrationAlertDigestEvents = eventGroup('orchestrationAlertDigest', [OrchestrationAlertDigestOpened, OrchestrationAlertDigestClosed]);
export type OrchestrationAlertDigestEvent = GroupEvent<typeof orchestrationAlertDigestEvents>;

export type OrchestrationAlertDigestCommand =
  | { type: 'OpenAlertDigest'; data: { tenant_id: string; hour: number; first_event_id: string } }
  | { type: 'CloseAlertDigest'; data: { tenant_id: string; hour: number; standing: number; recipients: number } };

export type OrchestrationAlertDigestState = { status: 'none' } | { status: 'open' | 'closed'; first_event_id: string };

export const HOUR_MS = 3_600_000;
/** The hour (since the epoch, UTC) an instant falls in. */
export const hourOf = (iso: string): number => Math.floor(Date.parse(iso) / HOUR_MS);

export const orchestrationAlertDigestStream = (tenantId: string, hour: number): string => toStreamName(orchestrationAlertDigestEvents.category, `${tenantId}:${hour}`);

export const orchestrationAlertDigestDecider: Decider<OrchestrationAlertDigestCommand, OrchestrationAlertDigestEvent, OrchestrationAlertDigestState> = {
  initialState: () => ({ status: 'none' }),
  evolve(state, event) {
    switch (event.type) {
      case 'OrchestrationAlertDigestOpened':
        return { status: 'open', first_event_id: event.data.first_event_id };
      case 'OrchestrationAlertDigestClosed':
        return state.status === 'none' ? state : { ...state, status: 'closed' };
    }
  },
  decide(command, state, { now }): Either<DomainError, OrchestrationAlertDigestEvent[]> {
    switch (command.type) {
      case 'OpenAlertDigest':
        // The hour's first end opens it; every later one (or a redelivery) finds it open.
        if (state.status !== 'none') return right([]);
        return right([{ type: 'OrchestrationAlertDigestOpened', data: { ...command.data, opened_at: now.toISOString() } }]);
      case 'CloseAlertDigest':
        if (state.status !== 'open') return right([]);
        return right([{ type: 'OrchestrationAlertDigestClosed', data: { ...command.data, closed_at: now.toISOString() } }]);
    }
  },
};
