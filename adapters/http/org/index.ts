// Everything under /api/v1/org: user token required (a widget token is 401), every 403 is
// recorded for the audit log, then one router per area.

import Router from '@koa/router';
import type { AccessDenialRecorder } from '../../../application/access-denial/access-denials';
import type { UseCaseDependencies } from '../../../application/shared/dependencies';
import type { AuthenticatedState } from '../middleware/authenticate';
import { authenticateUserRecordingDenials } from '../middleware/authorize';
import { orgMembersRouter } from './members';
import { orgTeamsRouter } from './teams';
import { orgWorkspacesRouter } from './workspaces';

export function orgRouter(identity: UseCaseDependencies, denials: AccessDenialRecorder, areas: Array<Router<AuthenticatedState>> = []): Router<AuthenticatedState> {
  const router = new Router<AuthenticatedState>({ prefix: '/api/v1/org' });
  router.use(authenticateUserRecordingDenials(identity, denials));
  for (const area of [orgMembersRouter(identity), orgTeamsRouter(identity), orgWorkspacesRouter(identity), ...areas]) router.use(area.routes());
  return router;
}
