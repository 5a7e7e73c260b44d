// The team aggregate (spec 4.11): a named group of a tenant's members, each with a per-member
// document write flag, and the workspaces the team is granted. Stream `team-<id>`.
//
// - The team owns its workspace grants. `TeamWorkspacesGranted` carries the whole set granted
//   after the change (a grant, a revocation or a replacement), so a reader never needs the
//   history to know a team's workspaces. Setting the teams of one workspace is carried out by
//   the application as GrantWorkspace / RevokeWorkspace on each team whose grant changes; both
//   are idempotent (no event when nothing changes), so a retried request appends nothing new.
// - Every command names the caller's tenant: a team of another tenant answers `team_not_found`
//   exactly as a missing one does (never 403).
// - Name uniqueness per tenant is not decided here: it needs a reservation stream, claimed by
//   the application before the team is created or renamed (the EventStoreDB idiom).
// - Whether a user is a member of the tenant and a workspace belongs to it are checks against
//   other aggregates, made by the application before the command.

import * as t from 'io-ts';
import { type Either, left, right } from 'fp-ts/Either';
import { declareEvent, eventGroup, type GroupEvent } from '../shared/events';
import type { Decider } from '../shared/decider';
import { type DomainError, conflict, invalid, notFound } from '../shared/errors';
import { toStreamName } from '../shared/stream-names';
import { type TextRules, normalizeText, textProblem } from '../shared/text';

export const TEAM_NAME_MAX_LENGTH = 100;
export const TEAM_DESCRIPTION_MAX_LENGTH = 500;
export const MAX_TEAM_MEMBERS = 1000;
export const MAX_TEAM_WORKSPACES = 1000;

const TEAM_NAME_RULES: TextRules = { max: TEAM_NAME_MAX_LENGTH };
const TEAM_DESCRIPTION_RULES: TextRules = { min: 0, max: TEAM_DESCRIPTION_MAX_LENGTH, multiline: true };

/**
 * A team name as a request may send it: any string here, so that the text rule of
 * `teamFieldsProblem` (domain/shared/text.ts) answers with what exactly is wrong.
 */
export const TeamName = t.string;
/** A team description as a request may send it; checked like the name. */
export const TeamDescription = t.string;

export const TeamMember = t.type({ user_id: t.string, can_write_documents: t.boolean }, 'TeamMember');
export type TeamMember = t.TypeOf<typeof TeamMember>;

const Description = t.union([t.string, t.null]);

export const TeamCreated = declareEvent('TeamCreated', t.type({ tenant_id: t.string, team_id: t.string, name: t.string, description: Description, created_at: t.string }));
export const TeamUpdated = declareEvent('TeamUpdated', t.type({ tenant_id: t.string, team_id: t.string, name: t.string, description: Description, previous_name: t.string }));
export const TeamDeleted = declareEvent('TeamDeleted', t.type({ tenant_id: t.string, team_id: t.string, name: t.string }));
export const TeamMembersSet = declareEvent('TeamMembersSet', t.type({ tenant_id: t.string, team_id: t.string, members: t.array(TeamMember) }));
export const TeamMemberWriteFlagSet = declareEvent(
  'TeamMemberWriteFlagSet',
  t.type({ tenant_id: t.string, team_id: t.string, user_id: t.string, can_write_documents: t.boolean }),
);
/** The whole set of workspaces the team is granted after the change. */
export const TeamWorkspacesGranted = declareEvent('TeamWorkspacesGranted', t.type({ tenant_id: t.string, team_id: t.string, workspace_ids: t.array(t.string) }));

export const teamEvents = eventGroup('team', [TeamCreated, TeamUpdated, TeamDeleted, TeamMembersSet, TeamMemberWriteFlagSet, TeamWorkspacesGranted]);
export type TeamEvent = GroupEvent<typeof teamEvents>;

export type TeamCommand =
  | { type: 'CreateTeam'; data: { tenant_id: string; team_id: string; name: string; description?: string | null } }
  /** An absent field keeps its value; a null description clears it. */
  | { type: 'UpdateTeam'; data: { tenant_id: string; name?: string; description?: string | null } }
  | { type: 'DeleteTeam'; data: { tenant_id: string } }
  /** Replaces the members; an absent flag keeps a staying member's flag (false for a new one). */
  | { type: 'SetTeamMembers'; data: { tenant_id: string; members: ReadonlyArray<{ user_id: string; can_write_documents?: boolean }> } }
  | { type: 'SetTeamMemberWriteFlag'; data: { tenant_id: string; user_id: string; can_write_documents: boolean } }
  /** Replaces the granted workspaces (PUT /teams/{id}/workspaces). */
  | { type: 'SetGrantedWorkspaces'; data: { tenant_id: string; workspace_ids: readonly string[] } }
  | { type: 'GrantWorkspace'; data: { tenant_id: string; workspace_id: string } }
  | { type: 'RevokeWorkspace'; data: { tenant_id: string; workspace_id: string } };

export type TeamState =
  | { status: 'absent' }
  | {
      status: 'active';
      tenant_id: string;
      team_id: string;
      name: string;
      description: string | null;
      members: readonly TeamMember[];
      workspace_ids: readonly string[];
    }
  | { status: 'deleted'; tenant_id: string; team_id: string; name: string };

type ActiveTeam = Extract<TeamState, { status: 'active' }>;

export const teamStream = (teamId: string): string => toStreamName(teamEvents.category, teamId);

/** The name as stored: NFC, trimmed (domain/shared/text.ts). */
export const normalizeTeamName = (name: string): string => normalizeText(name);

/** Description as stored: NFC, trimmed, and null when empty. */
export const normalizeTeamDescription = (description: string | null | undefined): string | null => {
  const normalized = normalizeText(description ?? '');
  return normalized.length === 0 ? null : normalized;
};

/** The first problem with a name or description, naming the field; null when both are fine. */
export function teamFieldsProblem(fields: { name?: string; description?: string | null }): DomainError | null {
  if (fields.name !== undefined) {
    const problem = textProblem('name', fields.name, TEAM_NAME_RULES);
    if (problem) return problem;
  }
  if (typeof fields.description === 'string') return textProblem('description', fields.description, TEAM_DESCRIPTION_RULES);
  return null;
}

const teamNotFound = (): DomainError => notFound('team_not_found', 'no such team');

/** The caller's own active team, or 404: a deleted team and another tenant's team look missing. */
function teamOf(state: TeamState, tenantId: string): Either<DomainError, ActiveTeam> {
  return state.status === 'active' && state.tenant_id === tenantId ? right(state) : left(teamNotFound());
}

const sameSet = (a: readonly string[], b: readonly string[]): boolean => a.length === b.length && [...a].sort().join('\n') === [...b].sort().join('\n');

const memberKey = (member: TeamMember): string => `${member.user_id}\n${member.can_write_documents}`;

function decideMembers(team: ActiveTeam, requested: ReadonlyArray<{ user_id: string; can_write_documents?: boolean }>): Either<DomainError, TeamEvent[]> {
  if (requested.length > MAX_TEAM_MEMBERS) return left(invalid('invalid_request', `a team has at most ${MAX_TEAM_MEMBERS} members`, 'members'));
  const seen = new Set<string>();
  const members: TeamMember[] = [];
  for (const [index, entry] of requested.entries()) {
    if (seen.has(entry.user_id)) return left(invalid('duplicate_member', `${entry.user_id} is listed twice`, `members.${index}.user_id`));
    seen.add(entry.user_id);
    const current = team.members.find((member) => member.user_id === entry.user_id);
    members.push({ user_id: entry.user_id, can_write_documents: entry.can_write_documents ?? current?.can_write_documents ?? false });
  }
  if (sameSet(members.map(memberKey), team.members.map(memberKey))) return right([]);
  return right([{ type: 'TeamMembersSet', data: { tenant_id: team.tenant_id, team_id: team.team_id, members } }]);
}

function workspacesGranted(team: ActiveTeam, workspaceIds: readonly string[]): Either<DomainError, TeamEvent[]> {
  if (workspaceIds.length > MAX_TEAM_WORKSPACES) return left(invalid('invalid_request', `a team is granted at most ${MAX_TEAM_WORKSPACES} workspaces`, 'workspace_ids'));
  if (sameSet(workspaceIds, team.workspace_ids)) return right([]);
  return right([{ type: 'TeamWorkspacesGranted', data: { tenant_id: team.tenant_id, team_id: team.team_id, workspace_ids: [...workspaceIds] } }]);
}

export const teamDecider: Decider<TeamCommand, TeamEvent, TeamState> = {
  initialState: () => ({ status: 'absent' }),

  evolve(state, event) {
    if (event.type === 'TeamCreated') {
      const { tenant_id, team_id, name, description } = event.data;
      return { status: 'active', tenant_id, team_id, name, description, members: [], workspace_ids: [] };
    }
    if (state.status !== 'active') return state;
    switch (event.type) {
      case 'TeamUpdated':
        return { ...state, name: event.data.name, description: event.data.description };
      case 'TeamDeleted':
        return { status: 'deleted', tenant_id: state.tenant_id, team_id: state.team_id, name: state.name };
      case 'TeamMembersSet':
        return { ...state, members: event.data.members };
      case 'TeamMemberWriteFlagSet':
        return {
          ...state,
          members: state.members.map((member) => (member.user_id === event.data.user_id ? { ...member, can_write_documents: event.data.can_write_documents } : member)),
        };
      case 'TeamWorkspacesGranted':
        return { ...state, workspace_ids: event.data.workspace_ids };
    }
  },

  decide(command, state, { now }): Either<DomainError, TeamEvent[]> {
    if (command.type === 'CreateTeam') {
      if (state.status !== 'absent') return left(conflict('team_exists', 'the team already exists'));
      const problem = teamFieldsProblem(command.data);
      if (problem) return left(problem);
      const { tenant_id, team_id, name, description } = command.data;
      return right([
        {
          type: 'TeamCreated',
          data: { tenant_id, team_id, name: normalizeTeamName(name), description: normalizeTeamDescription(description), created_at: now.toISOString() },
        },
      ]);
    }
    // Revoking from a team that no longer exists changes nothing, so it is not an error.
    if (command.type === 'RevokeWorkspace' && state.status === 'deleted' && state.tenant_id === command.data.tenant_id) return right([]);
    const found = teamOf(state, command.data.tenant_id);
    if (found._tag === 'Left') return found;
    const team = found.right;
    const { tenant_id, team_id } = team;
    switch (command.type) {
      case 'UpdateTeam': {
        const problem = teamFieldsProblem(command.data);
        if (problem) return left(problem);
        const name = command.data.name === undefined ? team.name : normalizeTeamName(command.data.name);
        const description = command.data.description === undefined ? team.description : normalizeTeamDescription(command.data.description);
        if (name === team.name && description === team.description) return right([]);
        return right([{ type: 'TeamUpdated', data: { tenant_id, team_id, name, description, previous_name: team.name } }]);
      }
      case 'DeleteTeam':
        return right([{ type: 'TeamDeleted', data: { tenant_id, team_id, name: team.name } }]);
      case 'SetTeamMembers':
        return decideMembers(team, command.data.members);
      case 'SetTeamMemberWriteFlag': {
        const { user_id, can_write_documents } = command.data;
        const member = team.members.find((candidate) => candidate.user_id === user_id);
        if (!member) return left(notFound('team_member_not_found', 'this user is not a member of the team'));
        if (member.can_write_documents === can_write_documents) return right([]);
        return right([{ type: 'TeamMemberWriteFlagSet', data: { tenant_id, team_id, user_id, can_write_documents } }]);
      }
      case 'SetGrantedWorkspaces':
        return workspacesGranted(team, [...new Set(command.data.workspace_ids)]);
      case 'GrantWorkspace':
        return team.workspace_ids.includes(command.data.workspace_id) ? right([]) : workspacesGranted(team, [...team.workspace_ids, command.data.workspace_id]);
      case 'RevokeWorkspace':
        return team.workspace_ids.includes(command.data.workspace_id)
          ? workspacesGranted(
              team,
              team.workspace_ids.filter((id) => id !== command.data.workspace_id),
            )
          : right([]);
    }
  },
};
