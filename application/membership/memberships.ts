// The membership aggregate (one roster stream per tenant) and a user's memberships as the
// read model lists them.

import { type MembershipCommand, type MembershipEvent, type MembershipState, membershipDecider, membershipEvents } from '../../domain/membership/membership';
import { MEMBERSHIPS, type MembershipDocument } from '../../projections/memberships';
import type { Aggregate } from '../command-handling/handle-command';
import type { UseCaseDependencies } from '../shared/dependencies';

export const membershipAggregate: Aggregate<MembershipCommand, MembershipEvent, MembershipState> = { decider: membershipDecider, events: membershipEvents };

export async function activeMemberships(deps: UseCaseDependencies, userId: string): Promise<MembershipDocument[]> {
  const page = await deps.readStore.collection<MembershipDocument>(MEMBERSHIPS).find({ where: { user_id: userId }, sort: { field: 'joined_at', direction: 'asc' }, limit: 1000 });
  return page.items;
}
