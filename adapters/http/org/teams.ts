// Team routes of spec 4.11 (Admin and Owner): teams, their members and document write flags,
// and the workspaces they are granted. Mounted under /api/v1/org after authentication.
// Creating a team honours Idempotency-Key; a team carries its ETag and updates honour If-Match.

import Router from '@koa/router';
import * as t from 'io-ts';
import type { UseCaseDependencies } from '../../../application/shared/dependencies';
import {
  createTeam,
  deleteTeam,
  getTeam,
  grantTeamWorkspaces,
  listTeams,
  setTeamMemberWriteFlag,
  setTeamMembers,
  updateTeam,
} from '../../../application/team/teams';
import { MAX_TEAM_MEMBERS, MAX_TEAM_WORKSPACES, TeamDescription, TeamName } from '../../../domain/team/team';
import { decodeBody } from '../decode';
import { answerVersioned, preconditionsOf } from '../entity-tags';
import type { AuthenticatedState } from '../middleware/authenticate';
import { idempotencySeedOf, idempotentCreation } from '../middleware/idempotency';
import { requireRole } from '../middleware/authorize';
import { pageQuery } from '../pagination';
import { requestContextOf } from '../request-context';

/** An array of at most `max` items, each decoded by `item` (errors name `field.index`). */
export const boundedArray = <C extends t.Mixed>(item: C, max: number) =>
  t.refinement(t.array(item), (items) => items.length <= max, `array of at most ${max} items`);

const Description = t.union([TeamDescription, t.null, t.undefined]);
export const CreateTeamBody = t.type({ name: TeamName, description: Description }, 'CreateTeamBody');
export const UpdateTeamBody = t.type({ name: t.union([TeamName, t.undefined]), description: Description }, 'UpdateTeamBody');
export const TeamMembersBody = t.type(
  { members: boundedArray(t.type({ user_id: t.string, can_write_documents: t.union([t.boolean, t.undefined]) }, 'TeamMemberEntry'), MAX_TEAM_MEMBERS) },
  'TeamMembersBody',
);
export const WriteFlagBody = t.type({ can_write_documents: t.boolean }, 'WriteFlagBody');
export const TeamWorkspacesBody = t.type({ workspace_ids: boundedArray(t.string, MAX_TEAM_WORKSPACES) }, 'TeamWorkspacesBody');

export function orgTeamsRouter(identity: UseCaseDependencies): Router<AuthenticatedState> {
  const router = new Router<AuthenticatedState>();
  const admin = requireRole('admin');

  router.get('/teams', admin, async (ctx) => {
    ctx.body = await listTeams(identity, ctx.state.principal.tenant_id, pageQuery(ctx.query));
  });

  router.post('/teams', admin, idempotentCreation(identity), async (ctx) => {
    const body = decodeBody(CreateTeamBody, ctx.request.body);
    const team = await createTeam(identity, ctx.state.principal, { name: body.name, description: body.description ?? null }, requestContextOf(ctx), {
      idempotencyKey: idempotencySeedOf(ctx),
    });
    ctx.status = 201;
    ctx.set('location', `/api/v1/org/teams/${team.value.id}`);
    answerVersioned(ctx, team);
  });

  router.get('/teams/:id', admin, async (ctx) => {
    answerVersioned(ctx, await getTeam(identity, ctx.state.principal.tenant_id, ctx.params.id));
  });

  router.patch('/teams/:id', admin, async (ctx) => {
    const preconditions = preconditionsOf(ctx);
    const changes = decodeBody(UpdateTeamBody, ctx.request.body);
    answerVersioned(ctx, await updateTeam(identity, ctx.state.principal, ctx.params.id, changes, requestContextOf(ctx), preconditions));
  });

  router.delete('/teams/:id', admin, async (ctx) => {
    await deleteTeam(identity, ctx.state.principal, ctx.params.id, requestContextOf(ctx), preconditionsOf(ctx));
    ctx.status = 204;
  });

  router.put('/teams/:id/members', admin, async (ctx) => {
    const preconditions = preconditionsOf(ctx);
    const { members } = decodeBody(TeamMembersBody, ctx.request.body);
    answerVersioned(ctx, await setTeamMembers(identity, ctx.state.principal, ctx.params.id, members, requestContextOf(ctx), preconditions));
  });

  router.put('/teams/:id/members/:user_id/write', admin, async (ctx) => {
    const preconditions = preconditionsOf(ctx);
    const { can_write_documents } = decodeBody(WriteFlagBody, ctx.request.body);
    answerVersioned(
      ctx,
      await setTeamMemberWriteFlag(identity, ctx.state.principal, ctx.params.id, ctx.params.user_id, can_write_documents, requestContextOf(ctx), preconditions),
    );
  });

  router.put('/teams/:id/workspaces', admin, async (ctx) => {
    const preconditions = preconditionsOf(ctx);
    const { workspace_ids } = decodeBody(TeamWorkspacesBody, ctx.request.body);
    answerVersioned(ctx, await grantTeamWorkspaces(identity, ctx.state.principal, ctx.params.id, workspace_ids, requestContextOf(ctx), preconditions));
  });

  return router;
}
