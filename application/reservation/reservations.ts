// Claims and releases of unique values (tenant slugs, user emails, team names, pending
// invitations). A reservation's stream is `reservation-<key>`, the key a keyed digest
// (HMAC under the data key) of the scope and the lowercased value: the same value always
// finds the same stream, and neither its name nor its events hold the value itself.

import { type ReservationCommand, type ReservationState, reservationDecider, type ReservationEvent, reservationEvents, reservationStream } from '../../domain/reservation/reservation';
import { type Aggregate, type CommandDependencies, handleCommand } from '../command-handling/handle-command';
import type { Secrets } from '../ports/identity';
import type { RequestContext } from '../shared/request-context';

export const reservationAggregate: Aggregate<ReservationCommand, ReservationEvent, ReservationState> = {
  decider: reservationDecider,
  events: reservationEvents,
};

/** Command handling plus the keyed digest that names reservation streams. */
export interface ReservationDependencies extends CommandDependencies {
  secrets: Pick<Secrets, 'digest'>;
}

/** The key naming the reservation of `value` in `scope` (a keyed digest); values compare case-insensitively (emails, slugs, names). */
export function reservationKey(deps: Pick<ReservationDependencies, 'secrets'>, scope: string, value: string): string {
  return deps.secrets.digest(`reservation\u0000${scope}\u0000${value.toLowerCase()}`);
}

function streamOf(deps: Pick<ReservationDependencies, 'secrets'>, scope: string, value: string): string {
  return reservationStream(reservationKey(deps, scope, value));
}

/** Releases the reservation named by its key (one that knows the key, not the value: an abandoned registration). */
export async function releaseReservationByKey(deps: CommandDependencies, key: string, ownerId: string, context: RequestContext): Promise<void> {
  await handleCommand(deps, reservationAggregate, reservationStream(key), { type: 'ReleaseReservation', data: { owner_id: ownerId } }, context);
}

/** Claims `value` in `scope` for `ownerId`; a DomainError conflict `<scope>_taken` when held by another. */
export async function claimReservation(deps: ReservationDependencies, scope: string, value: string, ownerId: string, context: RequestContext): Promise<void> {
  await handleCommand(deps, reservationAggregate, streamOf(deps, scope, value), { type: 'ClaimReservation', data: { scope, owner_id: ownerId } }, context);
}

export async function releaseReservation(deps: ReservationDependencies, scope: string, value: string, ownerId: string, context: RequestContext): Promise<void> {
  await handleCommand(deps, reservationAggregate, streamOf(deps, scope, value), { type: 'ReleaseReservation', data: { owner_id: ownerId } }, context);
}

/** Who holds `value` in `scope`, read from the reservation stream itself (always current); null when free. */
export async function reservationHolder(deps: Pick<ReservationDependencies, 'eventStore' | 'secrets'>, scope: string, value: string): Promise<string | null> {
  return (await reservationClaim(deps, scope, value))?.owner_id ?? null;
}

/** The current claim on `value` in `scope`: its holder and when it was claimed; null when free. */
export async function reservationClaim(
  deps: Pick<ReservationDependencies, 'eventStore' | 'secrets'>,
  scope: string,
  value: string,
): Promise<{ owner_id: string; claimed_at: string } | null> {
  const [last] = await deps.eventStore.readStream(streamOf(deps, scope, value), { direction: 'backwards', maxCount: 1 });
  return last?.type === 'ReservationClaimed' ? { owner_id: last.data.owner_id, claimed_at: last.metadata.occurred_at } : null;
}

/** Whether `value` is free in `scope`. */
export async function isReservationFree(deps: Pick<ReservationDependencies, 'eventStore' | 'secrets'>, scope: string, value: string): Promise<boolean> {
  return (await reservationHolder(deps, scope, value)) === null;
}
