// Claims and releases of unique values (tenant slugs, user emails, connection names).

import { type ReservationEvent, reservationDecider, reservationEvents, reservationStream } from '../../domain/reservation/reservation';
import { type Aggregate, type CommandDependencies, handleCommand } from '../command-handling/handle-command';
import type { RequestContext } from '../shared/request-context';

export const reservationAggregate: Aggregate<Parameters<typeof reservationDecider.decide>[0], ReservationEvent, ReturnType<typeof reservationDecider.initialState>> = {
  decider: reservationDecider,
  events: reservationEvents,
};

/** Claims `value` in `scope` for `ownerId`; a DomainError conflict `<scope>_taken` when held by another. */
export async function claimReservation(deps: CommandDependencies, scope: string, value: string, ownerId: string, context: RequestContext): Promise<void> {
  await handleCommand(deps, reservationAggregate, reservationStream(scope, value), { type: 'ClaimReservation', data: { scope, value, owner_id: ownerId } }, context);
}

export async function releaseReservation(deps: CommandDependencies, scope: string, value: string, ownerId: string, context: RequestContext): Promise<void> {
  await handleCommand(deps, reservationAggregate, reservationStream(scope, value), { type: 'ReleaseReservation', data: { owner_id: ownerId } }, context);
}

/** Whether `value` is free in `scope`, read from the reservation stream itself. */
export async function isReservationFree(deps: Pick<CommandDependencies, 'eventStore'>, scope: string, value: string): Promise<boolean> {
  const events = await deps.eventStore.readStream(reservationStream(scope, value), { direction: 'backwards', maxCount: 1 });
  return events.length === 0 || events[0].type === 'ReservationReleased';
}
