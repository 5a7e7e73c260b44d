// Who may read and write the knowledge of which workspace (spec 4.11): an Admin or Owner every
// workspace of the tenant; a member the workspaces granted to a team they are in, and writes
// documents there when one of those teams gives them the write flag. Documents, retrieval and
// citations all ask here, so a member never sees a chunk of a workspace they were not granted.

import { ROLE_RANK } from '../../domain/membership/membership';
import { forbidden, notFound } from '../../domain/shared/errors';
import { TEAMS, type TeamDocument } from '../../projections/teams';
import { WORKSPACES, type WorkspaceDocument } from '../../projections/workspaces';
import type { Principal } from '../session/sessions';
import type { ReadModelDependencies } from '../shared/read-models';

const MAX_TEAMS = 1000;

export interface WorkspaceAccess {
  /** Every workspace the caller may read (documents, retrieval, citations). */
  readable: ReadonlySet<string>;
  /** The workspaces the caller may add documents to and delete them from. */
  writable: ReadonlySet<string>;
}

const isAdmin = (principal: Pick<Principal, 'role'>): boolean => ROLE_RANK[principal.role] >= ROLE_RANK.admin;

/** What the caller may read and write, from the workspaces and teams read models. */
export async function workspaceAccess(deps: ReadModelDependencies, principal: Pick<Principal, 'tenant_id' | 'user_id' | 'role'>): Promise<WorkspaceAccess> {
  if (isAdmin(principal)) {
    const all = await deps.readStore.collection<WorkspaceDocument>(WORKSPACES).find({ where: { tenant_id: principal.tenant_id }, limit: 1000 });
    const ids = new Set(all.items.map((workspace) => workspace.id));
    return { readable: ids, writable: ids };
  }
  const teams = await deps.readStore.collection<TeamDocument>(TEAMS).find({ where: { tenant_id: principal.tenant_id }, limit: MAX_TEAMS });
  const readable = new Set<string>();
  const writable = new Set<string>();
  for (const team of teams.items) {
    const membership = team.members.find((member) => member.user_id === principal.user_id);
    if (!membership) continue;
    for (const workspaceId of team.workspace_ids) {
      readable.add(workspaceId);
      if (membership.can_write_documents) writable.add(workspaceId);
    }
  }
  return { readable, writable };
}

/** 404 for a workspace that is not the tenant's or that the caller may not read (its existence is not revealed). */
export async function requireReadableWorkspace(deps: ReadModelDependencies, principal: Pick<Principal, 'tenant_id' | 'user_id' | 'role'>, workspaceId: string): Promise<void> {
  const access = await workspaceAccess(deps, principal);
  if (!access.readable.has(workspaceId)) throw notFound('workspace_not_found', 'no such workspace');
}

/** 404 as above; 403 `workspace_read_only` for a workspace the caller reads but may not write. */
export async function requireWritableWorkspace(deps: ReadModelDependencies, principal: Pick<Principal, 'tenant_id' | 'user_id' | 'role'>, workspaceId: string): Promise<void> {
  const access = await workspaceAccess(deps, principal);
  if (!access.readable.has(workspaceId)) throw notFound('workspace_not_found', 'no such workspace');
  if (!access.writable.has(workspaceId)) throw forbidden('workspace_read_only', "your teams may read this workspace's documents but not change them; ask an admin for the write flag");
}
