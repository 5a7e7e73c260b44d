// Saga `team_membership_cleanup`: when a member leaves or is removed from a tenant, takes
// them out of every team of that tenant, so a former member keeps no document write flag
// or workspace access through a team.
//
// `teamMembershipCleanup` is the process manager (pure): given the tenant's membership and
// one team's events, what a `MemberRemoved` calls for on that team. The saga lists the
// tenant's teams from the read model and asks it team by team, over the streams (the
// truth), so a redelivered removal changes nothing, and neither does an old one for a
// member who has joined again since.

import { type MembershipEvent, type MembershipState, membershipDecider, membershipEvents, membershipStream } from '../../domain/membership/membership';
import { type TeamCommand, type TeamEvent, type TeamState, teamDecider, teamStream } from '../../domain/team/team';
import { TEAMS, type TeamDocument } from '../../projections/teams';
import { type CommandDependencies, handleCommand, loadAggregate } from '../command-handling/handle-command';
import { membershipAggregate } from '../membership/memberships';
import type { ReadStore } from '../ports/read-store';
import type { ProcessManager } from '../sagas/process-manager';
import type { Saga } from '../sagas/saga';
import { systemContext } from '../shared/request-context';
import { teamAggregate } from './teams';

export const TEAM_MEMBERSHIP_CLEANUP = 'team_membership_cleanup';

export type MemberRemovedEvent = Extract<MembershipEvent, { type: 'MemberRemoved' }>;

export interface TeamCleanupState {
  membership: MembershipState;
  team: TeamState;
}

const isMembershipEvent = (event: MembershipEvent | TeamEvent): event is MembershipEvent => membershipEvents.includes(event);

export const teamMembershipCleanup: ProcessManager<MemberRemovedEvent, MembershipEvent | TeamEvent, TeamCleanupState, TeamCommand> = {
  initialState: () => ({ membership: membershipDecider.initialState(), team: teamDecider.initialState() }),
  evolve(state, event) {
    return isMembershipEvent(event) ? { ...state, membership: membershipDecider.evolve(state.membership, event) } : { ...state, team: teamDecider.evolve(state.team, event) };
  },
  decide(removed, { membership, team }) {
    const { tenant_id, user_id } = removed.data;
    // A member who has joined again since keeps the teams they are in now.
    if (membership.status === 'active' && membership.members[user_id]) return [];
    if (team.status !== 'active' || team.tenant_id !== tenant_id || !team.members.some((member) => member.user_id === user_id)) return [];
    return [{ type: 'SetTeamMembers', data: { tenant_id, members: team.members.filter((member) => member.user_id !== user_id) } }];
  },
};

export function teamMembershipCleanupSaga(deps: CommandDependencies & { readStore: ReadStore }): Saga<'MemberRemoved'> {
  return {
    name: TEAM_MEMBERSHIP_CLEANUP,
    version: 1,
    filter: { kind: 'event_type', types: ['MemberRemoved'] },
    async handle(event, context) {
      const removed: MemberRemovedEvent = { type: event.type, data: event.data };
      const { tenant_id } = removed.data;
      const causation = { ...systemContext(event.metadata.correlation_id, TEAM_MEMBERSHIP_CLEANUP, event.id), tenant_id };
      const { state: membership } = await loadAggregate(deps, membershipAggregate, membershipStream(tenant_id));
      const teams = deps.readStore.collection<TeamDocument>(TEAMS);
      let cursor: string | undefined;
      do {
        const page = await teams.find({ where: { tenant_id }, limit: 200, cursor });
        for (const listed of page.items) {
          const { state: team } = await loadAggregate(deps, teamAggregate, teamStream(listed.id));
          for (const command of teamMembershipCleanup.decide(removed, { membership, team }, { now: deps.clock.now() })) {
            await handleCommand(deps, teamAggregate, teamStream(listed.id), command, causation, { idempotencyKey: `${context.idempotencyKey}:${listed.id}` });
          }
        }
        cursor = page.next_cursor ?? undefined;
      } while (cursor);
    },
  };
}
