// Read models `teams` and `workspace_grants`, built by one projection from the team events.
//
// - `teams`: one document per live team (a deleted team's document is removed), with its
//   members and write flags and the workspaces it is granted; lists by tenant and creation.
// - `workspace_grants`: one document per (workspace, team) grant, with the team's name, so a
//   workspace view finds the teams granted to it with one indexed query (an array field such
//   as `teams.workspace_ids` cannot be indexed). Grants are derived from the team document of
//   the same batch, so both collections share one checkpoint and never disagree.
// Every document stores the position of the last event applied to it; older events are skipped.

import { type TeamEvent, type TeamMember, teamEvents } from '../domain/team/team';
import type { EventProjection, ProjectionView } from './projection';

export interface TeamDocument {
  id: string;
  tenant_id: string;
  name: string;
  description: string | null;
  members: TeamMember[];
  workspace_ids: string[];
  created_at: string;
  updated_at: string;
  position: number;
  /** Revision of the team's stream at the last event applied: the team's version (ETag). */
  revision: number;
  [field: string]: unknown;
}

export interface WorkspaceGrantDocument {
  id: string;
  tenant_id: string;
  workspace_id: string;
  team_id: string;
  team_name: string;
  granted_at: string;
  position: number;
  [field: string]: unknown;
}

export const TEAMS = 'teams';
export const WORKSPACE_GRANTS = 'workspace_grants';
export const workspaceGrantId = (workspaceId: string, teamId: string): string => `${workspaceId}:${teamId}`;

function regrant(view: ProjectionView, team: TeamDocument, workspaceIds: readonly string[], at: string, position: number): void {
  const before = new Set(team.workspace_ids);
  const after = new Set(workspaceIds);
  for (const workspaceId of before) if (!after.has(workspaceId)) view.delete(WORKSPACE_GRANTS, workspaceGrantId(workspaceId, team.id));
  for (const workspaceId of after) {
    if (before.has(workspaceId)) continue;
    const grant: WorkspaceGrantDocument = {
      id: workspaceGrantId(workspaceId, team.id),
      tenant_id: team.tenant_id,
      workspace_id: workspaceId,
      team_id: team.id,
      team_name: team.name,
      granted_at: at,
      position,
    };
    view.put(WORKSPACE_GRANTS, grant);
  }
}

export const teamsProjection: EventProjection<TeamEvent['type']> = {
  name: 'teams',
  version: 2,
  collections: [
    { name: TEAMS, indexes: [{ field: 'tenant_id' }, { field: 'created_at' }] },
    { name: WORKSPACE_GRANTS, indexes: [{ field: 'tenant_id' }, { field: 'workspace_id' }, { field: 'team_id' }] },
  ],
  handles: teamEvents.types,
  async apply(event, view) {
    const { position, revision } = event;
    const at = event.metadata.occurred_at;
    if (event.type === 'TeamCreated') {
      if (await view.get(TEAMS, event.data.team_id)) return;
      const doc: TeamDocument = {
        id: event.data.team_id,
        tenant_id: event.data.tenant_id,
        name: event.data.name,
        description: event.data.description,
        members: [],
        workspace_ids: [],
        created_at: event.data.created_at,
        updated_at: event.data.created_at,
        position,
        revision,
      };
      view.put(TEAMS, doc);
      return;
    }
    const team = await view.get<TeamDocument>(TEAMS, event.data.team_id);
    if (!team || team.position >= position) return;
    switch (event.type) {
      case 'TeamUpdated':
        view.patch(TEAMS, team.id, { name: event.data.name, description: event.data.description, updated_at: at, position, revision });
        if (event.data.name !== team.name) {
          for (const workspaceId of team.workspace_ids) view.patch(WORKSPACE_GRANTS, workspaceGrantId(workspaceId, team.id), { team_name: event.data.name, position });
        }
        return;
      case 'TeamDeleted':
        regrant(view, team, [], at, position);
        view.delete(TEAMS, team.id);
        return;
      case 'TeamMembersSet':
        view.patch(TEAMS, team.id, { members: event.data.members, updated_at: at, position, revision });
        return;
      case 'TeamMemberWriteFlagSet': {
        const members = team.members.map((member) => (member.user_id === event.data.user_id ? { ...member, can_write_documents: event.data.can_write_documents } : member));
        view.patch(TEAMS, team.id, { members, updated_at: at, position, revision });
        return;
      }
      case 'TeamWorkspacesGranted':
        regrant(view, team, event.data.workspace_ids, at, position);
        view.patch(TEAMS, team.id, { workspace_ids: event.data.workspace_ids, updated_at: at, position, revision });
        return;
    }
  },
};
