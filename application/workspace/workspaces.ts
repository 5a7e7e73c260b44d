// Workspaces: the workspace aggregate, and the console's (GraphQL) use cases: the tenant's
// workspaces, creating one and renaming one. The REST workspace routes, with the teams granted
// to each, are in application/team/teams.ts.

import { notFound } from '../../domain/shared/errors';
import { type WorkspaceCommand, type WorkspaceEvent, type WorkspaceState, workspaceDecider, workspaceEvents, workspaceStream } from '../../domain/workspace/workspace';
import { WORKSPACES, type WorkspaceDocument } from '../../projections/workspaces';
import { type Aggregate, type CommandDependencies, handleCommand } from '../command-handling/handle-command';
import { type Principal, actingContext } from '../session/sessions';
import { type ReadModelDependencies, type ReadYourWritesDependencies, ReadModelBehindError } from '../shared/read-models';
import type { RequestContext } from '../shared/request-context';

export const workspaceAggregate: Aggregate<WorkspaceCommand, WorkspaceEvent, WorkspaceState> = { decider: workspaceDecider, events: workspaceEvents };

export interface WorkspaceSummary {
  id: string;
  name: string;
  is_default: boolean;
  created_at: string;
}

type WorkspaceWriteDependencies = CommandDependencies & ReadModelDependencies & ReadYourWritesDependencies;

const summaryOf = (doc: WorkspaceDocument): WorkspaceSummary => ({ id: doc.id, name: doc.name, is_default: doc.is_default, created_at: doc.created_at });

/** The tenant's workspaces, oldest first. */
/** The tenant's default workspace (made with the tenant), or null while it is still being set up. */
export async function defaultWorkspaceOf(deps: ReadModelDependencies, tenantId: string): Promise<string | null> {
  const { items } = await deps.readStore.collection<WorkspaceDocument>(WORKSPACES).find({ where: { tenant_id: tenantId, is_default: true }, limit: 1 });
  return items[0]?.id ?? null;
}

export async function listTenantWorkspaces(deps: ReadModelDependencies, tenantId: string): Promise<WorkspaceSummary[]> {
  const page = await deps.readStore
    .collection<WorkspaceDocument>(WORKSPACES)
    .find({ where: { tenant_id: tenantId }, sort: { field: 'created_at', direction: 'asc' }, limit: 1000 });
  return page.items.map(summaryOf);
}

/** A new workspace (not the default one) in the caller's tenant. */
export async function createWorkspace(deps: WorkspaceWriteDependencies, principal: Principal, name: string, context: RequestContext): Promise<WorkspaceSummary> {
  const workspaceId = deps.ids.newId();
  const result = await handleCommand(
    deps,
    workspaceAggregate,
    workspaceStream(workspaceId),
    { type: 'CreateWorkspace', data: { tenant_id: principal.tenant_id, workspace_id: workspaceId, name, is_default: false } },
    actingContext(principal, context),
  );
  await deps.readYourWrites(result.position);
  const doc = await deps.readStore.collection<WorkspaceDocument>(WORKSPACES).get(workspaceId);
  if (doc) return summaryOf(doc);
  // The read model has not caught up within the wait: the event says all the answer holds.
  const created = result.events.find((event) => event.type === 'WorkspaceCreated');
  if (created?.type !== 'WorkspaceCreated') throw new ReadModelBehindError('the workspace');
  return { id: created.data.workspace_id, name: created.data.name, is_default: created.data.is_default, created_at: created.data.created_at };
}

/** Renames a workspace of the caller's tenant; another tenant's is 404. */
export async function renameWorkspace(deps: WorkspaceWriteDependencies, principal: Principal, workspaceId: string, name: string, context: RequestContext): Promise<WorkspaceSummary> {
  const workspaces = deps.readStore.collection<WorkspaceDocument>(WORKSPACES);
  const current = await workspaces.get(workspaceId);
  if (!current || current.tenant_id !== principal.tenant_id) throw notFound('workspace_not_found', 'no such workspace');
  const result = await handleCommand(
    deps,
    workspaceAggregate,
    workspaceStream(workspaceId),
    { type: 'RenameWorkspace', data: { name } },
    actingContext(principal, context),
  );
  await deps.readYourWrites(result.position);
  const doc = (await workspaces.get(workspaceId)) ?? current;
  // A read model that has not caught up within the wait still has the old name: the event has the new one.
  const renamed = result.events.find((event) => event.type === 'WorkspaceRenamed');
  return { ...summaryOf(doc), ...(renamed?.type === 'WorkspaceRenamed' ? { name: renamed.data.name } : {}) };
}
