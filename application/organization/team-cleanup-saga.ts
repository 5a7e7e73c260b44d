// Saga `team_membership_cleanup`: when a member leaves or is removed from a tenant, takes
// them out of every team of that tenant, so a former member keeps no document write flag
// or workspace access through a team. Each team is checked on its own stream (the truth),
// and the commands carry the triggering event's idempotency key.

import { teamStream } from '../../domain/team/team';
import { TEAMS, type TeamDocument } from '../../projections/teams';
import { type CommandDependencies, handleCommand, loadAggregate } from '../command-handling/handle-command';
import type { ReadStore } from '../ports/read-store';
import type { Saga } from '../sagas/saga';
import { systemContext } from '../shared/request-context';
import { teamAggregate } from './teams';

export function teamMembershipCleanupSaga(deps: CommandDependencies & { readStore: ReadStore }): Saga<'MemberRemoved'> {
  return {
    name: 'team_membership_cleanup',
    version: 1,
    filter: { kind: 'event_type', types: ['MemberRemoved'] },
    async handle(event, context) {
      const { tenant_id, user_id } = event.data;
      const causation = { ...systemContext(event.metadata.correlation_id, 'team_membership_cleanup', event.id), tenant_id };
      const teams = deps.readStore.collection<TeamDocument>(TEAMS);
      let cursor: string | undefined;
      do {
        const page = await teams.find({ where: { tenant_id }, limit: 200, cursor });
        for (const listed of page.items) {
          const { state } = await loadAggregate(deps, teamAggregate, teamStream(listed.id));
          if (state.status !== 'active' || !state.members.some((member) => member.user_id === user_id)) continue;
          await handleCommand(
            deps,
            teamAggregate,
            teamStream(listed.id),
            { type: 'SetTeamMembers', data: { tenant_id, members: state.members.filter((member) => member.user_id !== user_id) } },
            causation,
            { idempotencyKey: `${context.idempotencyKey}:${listed.id}` },
          );
        }
        cursor = page.next_cursor ?? undefined;
      } while (cursor);
    },
  };
}
