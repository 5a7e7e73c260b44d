// Uniqueness without read-model checks (the EventStoreDB idiom): claiming a value appends
// to the stream `reservation-<key>`, which only one claimant can create or re-take. The key
// is a keyed digest of the scope and the normalised value, computed by the application
// (application/reservation/reservations.ts), so no email or other value is in a stream name
// or an event: erasing a person never needs an immutable name changed.

import * as t from 'io-ts';
import { type Either, left, right } from 'fp-ts/Either';
import { declareEvent, eventGroup, type GroupEvent } from '../shared/events';
import type { Decider } from '../shared/decider';
import { type DomainError, conflict } from '../shared/errors';
import { toStreamName } from '../shared/stream-names';

export const ReservationClaimed = declareEvent('ReservationClaimed', t.type({ scope: t.string, owner_id: t.string }));
export const ReservationReleased = declareEvent('ReservationReleased', t.type({ scope: t.string, owner_id: t.string }));
export const reservationEvents = eventGroup('reservation', [ReservationClaimed, ReservationReleased]);
export type ReservationEvent = GroupEvent<typeof reservationEvents>;

export type ReservationCommand =
  | { type: 'ClaimReservation'; data: { scope: string; owner_id: string } }
  | { type: 'ReleaseReservation'; data: { owner_id: string } };

export type ReservationState = { status: 'free' } | { status: 'held'; scope: string; owner_id: string };

/** The stream of the reservation whose key (a keyed digest of scope and value) is given. */
export const reservationStream = (key: string): string => toStreamName(reservationEvents.category, key);

export const reservationDecider: Decider<ReservationCommand, ReservationEvent, ReservationState> = {
  initialState: () => ({ status: 'free' }),
  evolve(_state, event) {
    switch (event.type) {
      case 'ReservationClaimed':
        return { status: 'held', ...event.data };
      case 'ReservationReleased':
        return { status: 'free' };
    }
  },
  decide(command, state): Either<DomainError, ReservationEvent[]> {
    switch (command.type) {
      case 'ClaimReservation':
        if (state.status === 'held') {
          return state.owner_id === command.data.owner_id
            ? right([])
            : left(conflict(`${command.data.scope}_taken`, `this ${command.data.scope.replace(/_/g, ' ')} is already taken`));
        }
        return right([{ type: 'ReservationClaimed', data: command.data }]);
      case 'ReleaseReservation':
        if (state.status !== 'held' || state.owner_id !== command.data.owner_id) return right([]);
        return right([{ type: 'ReservationReleased', data: { scope: state.scope, owner_id: state.owner_id } }]);
    }
  },
};
