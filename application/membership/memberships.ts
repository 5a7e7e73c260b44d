// The membership aggregate (one roster stream per tenant) and a user's memberships as the
// read model lists them.

import { type MembershipCommand, type MembershipEvent, type MembershipState, membershipDecider, membershipEvents } from '../../domain/membership/membership';
import { MEMBERSHIPS, type MembershipDocument } from '../../projections/memberships';
import type { Aggregate } from '../command-handling/handle-command';
import type { ReadModelDependencies } from '../shared/read-models';

export const membershipAggregate: Aggregate<MembershipCommand, MembershipEvent, MembershipState> = { decider: membershipDecider, events: membershipEvents };

export async function activeMemberships(deps: ReadModelDependencies, userId: string): Promise<MembershipDocument[]> {
  const page = await deps.readStore.collection<MembershipDocument>(MEMBERSHIPS).find({ where: { user_id: userId }, sort: { field: 'joined_at', direction: 'asc' }, limit: 1000 });
  return page.items;
}
