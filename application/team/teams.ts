// Teams and workspace grants (spec 4.11): use cases over the team aggregate, and the queries
// of teams and of workspaces with the teams granted to them.
//
// - Team names are unique per tenant, case-insensitively, through the reservation stream
//   `team_name` / `<tenant_id>:<lowercased name>`, claimed before the team is created or
//   renamed (and released if that fails); a rename and a deletion release the old name.
// - Members and workspaces named in a request are checked against the write models (the
//   tenant's membership roster, each workspace's stream) before anything is appended, so a
//   bad request is a 400 naming the field and leaves nothing behind.
// - The team owns its grants: setting the teams of a workspace is a GrantWorkspace or
//   RevokeWorkspace on each team whose grant changes, each idempotent.
// - Another tenant's team or workspace is 404 (never 403). Writes wait for read-your-writes.
// - A team's version (its ETag) is its stream's revision; a write given the version the client
//   saw (If-Match) appends only at that revision (412 otherwise). A workspace's version also
//   covers the grants that name it, which live on the teams' streams (see setWorkspaceTeams).
// - A team created under an idempotency key takes its id and event ids from the key.

import { createHash } from 'node:crypto';
import { membershipStream } from '../../domain/membership/membership';
import { DomainError, invalid, notFound } from '../../domain/shared/errors';
import { type TeamCommand, type TeamEvent, type TeamMember, teamEvents, type TeamState, normalizeTeamName, teamDecider, teamFieldsProblem, teamStream } from '../../domain/team/team';
import { workspaceStream } from '../../domain/workspace/workspace';
import { TEAMS, type TeamDocument, WORKSPACE_GRANTS, type WorkspaceGrantDocument } from '../../projections/teams';
import { WORKSPACES, type WorkspaceDocument } from '../../projections/workspaces';
import { type Aggregate, type CommandResult, type HandleOptions, handleCommand, loadAggregate } from '../command-handling/handle-command';
import { type ReadModelDependencies, type ReadYourWritesDependencies, type Written, readBack, readBackChange } from '../shared/read-models';
import { type Principal, actingContext } from '../session/sessions';
import { membershipAggregate } from '../membership/memberships';
import { workspaceAggregate } from '../workspace/workspaces';
import { MAX_PAGE_SIZE, type Page } from '../ports/read-store';
import { type ReservationDependencies, claimReservation, releaseReservation } from '../reservation/reservations';
import type { RequestContext } from '../shared/request-context';
import { type Versioned, type WritePreconditions, expectedRevisionOf, versionMismatch, versionOfRevision } from '../shared/versions';

/** Team commands with their name reservations, and the read models of teams, grants and workspaces. */
export type TeamDependencies = ReservationDependencies & ReadModelDependencies & ReadYourWritesDependencies;

export const teamAggregate: Aggregate<TeamCommand, TeamEvent, TeamState> = { decider: teamDecider, events: teamEvents };

export const TEAM_NAME_SCOPE = 'team_name';

/** The reserved value of a team name: unique per tenant, case-insensitively. */
const teamNameKey = (tenantId: string, name: string): string => `${tenantId}:${normalizeTeamName(name).toLowerCase()}`;

export interface TeamView {
  id: string;
  name: string;
  description: string | null;
  members: TeamMember[];
  workspace_ids: string[];
  created_at: string;
  updated_at: string;
}

export interface WorkspaceView {
  id: string;
  name: string;
  is_default: boolean;
  created_at: string;
  /** The teams granted this workspace, by name. */
  teams: Array<{ id: string; name: string }>;
}

const teamView = (team: TeamDocument): TeamView => ({
  id: team.id,
  name: team.name,
  description: team.description,
  members: team.members,
  workspace_ids: team.workspace_ids,
  created_at: team.created_at,
  updated_at: team.updated_at,
});

const teamNotFound = (): DomainError => notFound('team_not_found', 'no such team');
const workspaceNotFound = (): DomainError => notFound('workspace_not_found', 'no such workspace');

// ---------------------------------------------------------------------------------- queries

export async function listTeams(deps: TeamDependencies, tenantId: string, page: { limit?: number; cursor?: string }): Promise<Page<TeamView>> {
  const found = await deps.readStore.collection<TeamDocument>(TEAMS).find({ where: { tenant_id: tenantId }, sort: { field: 'created_at', direction: 'asc' }, ...page });
  return { items: found.items.map(teamView), next_cursor: found.next_cursor };
}

/** The team of the caller's tenant with its version, or 404. */
export async function getTeam(deps: TeamDependencies, tenantId: string, teamId: string): Promise<Versioned<TeamView>> {
  const team = await deps.readStore.collection<TeamDocument>(TEAMS).get(teamId);
  if (!team || team.tenant_id !== tenantId) throw teamNotFound();
  return { value: teamView(team), version: versionOfRevision(team.revision) };
}

/** Every grant of the given workspaces (all pages). */
async function grantsOf(deps: TeamDependencies, tenantId: string, workspaceIds: readonly string[]): Promise<WorkspaceGrantDocument[]> {
  if (workspaceIds.length === 0) return [];
  const grants: WorkspaceGrantDocument[] = [];
  let cursor: string | undefined;
  do {
    const page = await deps.readStore
      .collection<WorkspaceGrantDocument>(WORKSPACE_GRANTS)
      .find({ where: { tenant_id: tenantId, workspace_id: { in: [...workspaceIds] } }, limit: MAX_PAGE_SIZE, cursor });
    grants.push(...page.items);
    cursor = page.next_cursor ?? undefined;
  } while (cursor);
  return grants;
}

/**
 * A workspace's version: its stream's revision, then a digest of the grants that name it
 * (each grant's team and last position), so granting, revoking or renaming a granted team
 * changes it too.
 */
function workspaceVersion(workspace: WorkspaceDocument, grants: readonly WorkspaceGrantDocument[]): string {
  const parts = grants.map((grant) => `${grant.team_id}@${grant.position}`).sort();
  return `${workspace.revision}-${createHash('sha256').update(parts.join(',')).digest('hex').slice(0, 16)}`;
}

async function workspaceViews(deps: TeamDependencies, tenantId: string, workspaces: readonly WorkspaceDocument[]): Promise<Array<Versioned<WorkspaceView>>> {
  const grants = await grantsOf(
    deps,
    tenantId,
    workspaces.map((workspace) => workspace.id),
  );
  return workspaces.map((workspace) => {
    const granted = grants.filter((grant) => grant.workspace_id === workspace.id);
    const value: WorkspaceView = {
      id: workspace.id,
      name: workspace.name,
      is_default: workspace.is_default,
      created_at: workspace.created_at,
      teams: granted.map((grant) => ({ id: grant.team_id, name: grant.team_name })).sort((a, b) => a.name.localeCompare(b.name) || a.id.localeCompare(b.id)),
    };
    return { value, version: workspaceVersion(workspace, granted) };
  });
}

export async function listWorkspaces(deps: TeamDependencies, tenantId: string, page: { limit?: number; cursor?: string }): Promise<Page<WorkspaceView>> {
  const found = await deps.readStore.collection<WorkspaceDocument>(WORKSPACES).find({ where: { tenant_id: tenantId }, sort: { field: 'created_at', direction: 'asc' }, ...page });
  return { items: (await workspaceViews(deps, tenantId, found.items)).map((view) => view.value), next_cursor: found.next_cursor };
}

/** The workspace of the caller's tenant with its teams and its version, or 404. */
export async function getWorkspace(deps: TeamDependencies, tenantId: string, workspaceId: string): Promise<Versioned<WorkspaceView>> {
  const workspace = await deps.readStore.collection<WorkspaceDocument>(WORKSPACES).get(workspaceId);
  if (!workspace || workspace.tenant_id !== tenantId) throw workspaceNotFound();
  const [view] = await workspaceViews(deps, tenantId, [workspace]);
  return view;
}

// ------------------------------------------------------------------------------- write checks

/**
 * The caller's live team from the write model (404 otherwise), and the revision the write
 * must append at when the client named the version it saw (412 when it moved on since).
 */
async function loadTeam(
  deps: TeamDependencies,
  tenantId: string,
  teamId: string,
  preconditions: WritePreconditions = {},
): Promise<{ team: Extract<TeamState, { status: 'active' }>; options: HandleOptions }> {
  const { state, revision } = await loadAggregate(deps, teamAggregate, teamStream(teamId));
  if (state.status !== 'active' || state.tenant_id !== tenantId) throw teamNotFound();
  return { team: state, options: { expectedRevision: expectedRevisionOf('team', preconditions.expectedVersion, revision) } };
}

async function isTenantWorkspace(deps: TeamDependencies, tenantId: string, workspaceId: string): Promise<boolean> {
  const { state } = await loadAggregate(deps, workspaceAggregate, workspaceStream(workspaceId));
  return state.status === 'active' && state.tenant_id === tenantId;
}

async function onTeam(
  deps: TeamDependencies,
  principal: Principal,
  teamId: string,
  command: TeamCommand,
  context: RequestContext,
  options: HandleOptions = {},
): Promise<CommandResult<TeamEvent>> {
  return handleCommand(deps, teamAggregate, teamStream(teamId), command, actingContext(principal, context), options);
}

async function answered(deps: TeamDependencies, principal: Principal, teamId: string, written: Written | null): Promise<Versioned<TeamView>> {
  return readBackChange(deps, written, 'the change of the team', () => getTeam(deps, principal.tenant_id, teamId));
}

// -------------------------------------------------------------------------------- use cases

export interface TeamInput {
  name: string;
  description?: string | null;
}

/**
 * Creates a team with a name unique in the tenant (409 `team_name_taken`). Under an
 * idempotency key the team's id and events come from the key, so running it again (a retry
 * that took over a crashed request) finds the team it made instead of making another.
 */
export async function createTeam(
  deps: TeamDependencies,
  principal: Principal,
  input: TeamInput,
  context: RequestContext,
  options: { idempotencyKey?: string } = {},
): Promise<Versioned<TeamView>> {
  const problem = teamFieldsProblem(input);
  if (problem) throw problem;
  const key = options.idempotencyKey === undefined ? undefined : `${options.idempotencyKey}:team`;
  const teamId = key === undefined ? deps.ids.newId() : deps.ids.fromKey(key);
  const acting = actingContext(principal, context);
  const nameKey = teamNameKey(principal.tenant_id, input.name);
  await claimReservation(deps, TEAM_NAME_SCOPE, nameKey, teamId, acting);
  let result: CommandResult<TeamEvent>;
  try {
    result = await onTeam(deps, principal, teamId, { type: 'CreateTeam', data: { tenant_id: principal.tenant_id, team_id: teamId, ...input } }, context, { idempotencyKey: key });
  } catch (error) {
    await releaseReservation(deps, TEAM_NAME_SCOPE, nameKey, teamId, acting).catch(() => undefined);
    throw error;
  }
  return answered(deps, principal, teamId, result);
}

/** Renames and/or redescribes a team; a new name is claimed first and the old one released after. */
export async function updateTeam(
  deps: TeamDependencies,
  principal: Principal,
  teamId: string,
  changes: Partial<TeamInput>,
  context: RequestContext,
  preconditions: WritePreconditions = {},
): Promise<Versioned<TeamView>> {
  const problem = teamFieldsProblem(changes);
  if (problem) throw problem;
  const { team, options } = await loadTeam(deps, principal.tenant_id, teamId, preconditions);
  const acting = actingContext(principal, context);
  const newKey = changes.name === undefined ? null : teamNameKey(principal.tenant_id, changes.name);
  const claimed = newKey !== null && newKey !== teamNameKey(principal.tenant_id, team.name);
  if (claimed) await claimReservation(deps, TEAM_NAME_SCOPE, newKey, teamId, acting);
  let result: CommandResult<TeamEvent>;
  try {
    result = await onTeam(deps, principal, teamId, { type: 'UpdateTeam', data: { tenant_id: principal.tenant_id, ...changes } }, context, options);
  } catch (error) {
    if (claimed) await releaseReservation(deps, TEAM_NAME_SCOPE, newKey, teamId, acting).catch(() => undefined);
    throw error;
  }
  // The previous name comes from the event, so a rename that raced another one frees the right name.
  for (const event of result.events) {
    if (event.type !== 'TeamUpdated') continue;
    const previousKey = teamNameKey(principal.tenant_id, event.data.previous_name);
    if (previousKey !== teamNameKey(principal.tenant_id, event.data.name)) await releaseReservation(deps, TEAM_NAME_SCOPE, previousKey, teamId, acting);
  }
  return answered(deps, principal, teamId, result);
}

/** Deletes a team, which releases its name and its workspace grants. */
export async function deleteTeam(deps: TeamDependencies, principal: Principal, teamId: string, context: RequestContext, preconditions: WritePreconditions = {}): Promise<void> {
  const options = preconditions.expectedVersion === undefined ? {} : (await loadTeam(deps, principal.tenant_id, teamId, preconditions)).options;
  const result = await onTeam(deps, principal, teamId, { type: 'DeleteTeam', data: { tenant_id: principal.tenant_id } }, context, options);
  for (const event of result.events) {
    if (event.type === 'TeamDeleted') {
      await releaseReservation(deps, TEAM_NAME_SCOPE, teamNameKey(principal.tenant_id, event.data.name), teamId, actingContext(principal, context));
    }
  }
  await deps.readYourWrites(result.position);
}

/** Replaces the team's members; each must be a member of the tenant (400 `not_a_member`). */
export async function setTeamMembers(
  deps: TeamDependencies,
  principal: Principal,
  teamId: string,
  members: ReadonlyArray<{ user_id: string; can_write_documents?: boolean }>,
  context: RequestContext,
  preconditions: WritePreconditions = {},
): Promise<Versioned<TeamView>> {
  const { options } = await loadTeam(deps, principal.tenant_id, teamId, preconditions);
  const { state: roster } = await loadAggregate(deps, membershipAggregate, membershipStream(principal.tenant_id));
  for (const [index, member] of members.entries()) {
    if (roster.status !== 'active' || !roster.members[member.user_id]) {
      throw invalid('not_a_member', `${member.user_id} is not a member of this organization`, `members.${index}.user_id`);
    }
  }
  const result = await onTeam(deps, principal, teamId, { type: 'SetTeamMembers', data: { tenant_id: principal.tenant_id, members } }, context, options);
  return answered(deps, principal, teamId, result);
}

/** Sets one team member's document write flag (404 `team_member_not_found` if not in the team). */
export async function setTeamMemberWriteFlag(
  deps: TeamDependencies,
  principal: Principal,
  teamId: string,
  userId: string,
  canWriteDocuments: boolean,
  context: RequestContext,
  preconditions: WritePreconditions = {},
): Promise<Versioned<TeamView>> {
  const options = preconditions.expectedVersion === undefined ? {} : (await loadTeam(deps, principal.tenant_id, teamId, preconditions)).options;
  const result = await onTeam(
    deps,
    principal,
    teamId,
    { type: 'SetTeamMemberWriteFlag', data: { tenant_id: principal.tenant_id, user_id: userId, can_write_documents: canWriteDocuments } },
    context,
    options,
  );
  return answered(deps, principal, teamId, result);
}

/** Replaces the workspaces granted to the team; each must be the tenant's (400 `unknown_workspace`). */
export async function grantTeamWorkspaces(
  deps: TeamDependencies,
  principal: Principal,
  teamId: string,
  workspaceIds: readonly string[],
  context: RequestContext,
  preconditions: WritePreconditions = {},
): Promise<Versioned<TeamView>> {
  const { options } = await loadTeam(deps, principal.tenant_id, teamId, preconditions);
  for (const [index, workspaceId] of workspaceIds.entries()) {
    if (!(await isTenantWorkspace(deps, principal.tenant_id, workspaceId))) {
      throw invalid('unknown_workspace', `${workspaceId} is not a workspace of this organization`, `workspace_ids.${index}`);
    }
  }
  const result = await onTeam(deps, principal, teamId, { type: 'SetGrantedWorkspaces', data: { tenant_id: principal.tenant_id, workspace_ids: workspaceIds } }, context, options);
  return answered(deps, principal, teamId, result);
}

/**
 * Makes `teamIds` exactly the teams granted the workspace: a grant on each listed team and a
 * revocation on each team that has it and is not listed. Each command is idempotent, so a
 * repeated or interrupted request converges when sent again.
 *
 * The grants live on many team streams, so an expected version cannot be one append's
 * expected revision: it is compared with the workspace as read once the read models have
 * passed every event written before this request. That refuses an update based on a stale
 * read (412); two conditional writers racing within the same moment are not serialized.
 */
export async function setWorkspaceTeams(
  deps: TeamDependencies,
  principal: Principal,
  workspaceId: string,
  teamIds: readonly string[],
  context: RequestContext,
  preconditions: WritePreconditions = {},
): Promise<Versioned<WorkspaceView>> {
  const tenantId = principal.tenant_id;
  if (!(await isTenantWorkspace(deps, tenantId, workspaceId))) throw workspaceNotFound();
  if (preconditions.expectedVersion !== undefined) {
    await deps.readYourWrites(await deps.eventStore.headPosition());
    const { version } = await getWorkspace(deps, tenantId, workspaceId);
    if (version !== preconditions.expectedVersion) throw versionMismatch('workspace', preconditions.expectedVersion, version);
  }
  for (const [index, teamId] of teamIds.entries()) {
    const { state } = await loadAggregate(deps, teamAggregate, teamStream(teamId));
    if (state.status !== 'active' || state.tenant_id !== tenantId) throw invalid('unknown_team', `${teamId} is not a team of this organization`, `team_ids.${index}`);
  }
  const wanted = new Set(teamIds);
  const holders = (await grantsOf(deps, tenantId, [workspaceId])).map((grant) => grant.team_id).filter((teamId) => !wanted.has(teamId));
  let position: number | null = null;
  const record = (result: CommandResult<TeamEvent>): void => {
    if (result.position !== null) position = Math.max(position ?? 0, result.position);
  };
  for (const teamId of wanted) {
    record(await onTeam(deps, principal, teamId, { type: 'GrantWorkspace', data: { tenant_id: tenantId, workspace_id: workspaceId } }, context));
  }
  for (const teamId of holders) {
    try {
      record(await onTeam(deps, principal, teamId, { type: 'RevokeWorkspace', data: { tenant_id: tenantId, workspace_id: workspaceId } }, context));
    } catch (error) {
      // A team deleted since the read model listed it no longer holds anything to revoke.
      if (!(error instanceof DomainError && error.code === 'team_not_found')) throw error;
    }
  }
  return readBack(deps, position, 'the change of the workspace', () => getWorkspace(deps, tenantId, workspaceId));
}
