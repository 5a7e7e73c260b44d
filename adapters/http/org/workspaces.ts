// Workspace routes of spec 4.11: any member lists and reads the tenant's workspaces, each with
// the teams granted to it; an Admin or Owner sets which teams have a workspace. Mounted under
// /api/v1/org after authentication. A workspace carries its ETag; setting its teams honours
// If-Match.

import Router from '@koa/router';
import * as t from 'io-ts';
import type { UseCaseDependencies } from '../../../application/shared/dependencies';
import { getWorkspace, listWorkspaces, setWorkspaceTeams } from '../../../application/team/teams';
import { decodeBody } from '../decode';
import { answerVersioned, preconditionsOf } from '../entity-tags';
import type { AuthenticatedState } from '../middleware/authenticate';
import { requireRole } from '../middleware/authorize';
import { pageQuery } from '../pagination';
import { requestContextOf } from '../request-context';
import { boundedArray } from './teams';

/** A bound on one request's list, not on the tenant's teams. */
const MAX_TEAMS_PER_REQUEST = 1000;
export const WorkspaceTeamsBody = t.type({ team_ids: boundedArray(t.string, MAX_TEAMS_PER_REQUEST) }, 'WorkspaceTeamsBody');

export function orgWorkspacesRouter(identity: UseCaseDependencies): Router<AuthenticatedState> {
  const router = new Router<AuthenticatedState>();

  router.get('/workspaces', async (ctx) => {
    ctx.body = await listWorkspaces(identity, ctx.state.principal.tenant_id, pageQuery(ctx.query));
  });

  router.get('/workspaces/:id', async (ctx) => {
    answerVersioned(ctx, await getWorkspace(identity, ctx.state.principal.tenant_id, ctx.params.id));
  });

  router.put('/workspaces/:id/teams', requireRole('admin'), async (ctx) => {
    const preconditions = preconditionsOf(ctx);
    const { team_ids } = decodeBody(WorkspaceTeamsBody, ctx.request.body);
    answerVersioned(ctx, await setWorkspaceTeams(identity, ctx.state.principal, ctx.params.id, team_ids, requestContextOf(ctx), preconditions));
  });

  return router;
}
