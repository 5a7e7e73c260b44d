// Uniqueness without read-model checks (the EventStoreDB idiom): claiming a value appends
// to the stream `reservation-<scope>-<value>`, which only one claimant can create or re-take.

import * as t from 'io-ts';
import { type Either, left, right } from 'fp-ts/Either';
import { declareEvent, eventGroup, type GroupEvent } from '../shared/events';
import type { Decider } from '../shared/decider';
import { type DomainError, conflict } from '../shared/errors';

export const ReservationClaimed = declareEvent('ReservationClaimed', t.type({ scope: t.string, value: t.string, owner_id: t.string }));
export const ReservationReleased = declareEvent('ReservationReleased', t.type({ scope: t.string, value: t.string, owner_id: t.string }));
export const reservationEvents = eventGroup('reservation', [ReservationClaimed, ReservationReleased]);
export type ReservationEvent = GroupEvent<typeof reservationEvents>;

export type ReservationCommand =
  | { type: 'ClaimReservation'; data: { scope: string; value: string; owner_id: string } }
  | { type: 'ReleaseReservation'; data: { owner_id: string } };

export type ReservationState = { status: 'free' } | { status: 'held'; scope: string; value: string; owner_id: string };

/** Values are compared case-insensitively (emails, slugs). */
export const reservationStream = (scope: string, value: string): string => `reservation-${scope}-${value.toLowerCase()}`;

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
          return state.owner_id === command.data.owner_id ? right([]) : left(conflict(`${command.data.scope}_taken`, `${command.data.value} is already taken`));
        }
        return right([{ type: 'ReservationClaimed', data: { ...command.data, value: command.data.value.toLowerCase() } }]);
      case 'ReleaseReservation':
        if (state.status !== 'held' || state.owner_id !== command.data.owner_id) return right([]);
        return right([{ type: 'ReservationReleased', data: { scope: state.scope, value: state.value, owner_id: state.owner_id } }]);
    }
  },
};
