// `GET /tenant/unanswered-questions`: the questions the assistant answered without the
// knowledge base, newest first, filtered by workspace and by when they were asked; cursor pages.

import Router from '@koa/router';
import { listUnansweredQuestions } from '../../../application/conversation/unanswered-questions';
import type { ReadModelDependencies } from '../../../application/shared/read-models';
import { invalid } from '../../../domain/shared/errors';
import type { AuthenticatedState } from '../middleware/authenticate';
import { pageQuery } from '../pagination';
import { single, timeBound } from './query';

export function tenantUnansweredQuestionsRouter(deps: ReadModelDependencies): Router<AuthenticatedState> {
  const router = new Router<AuthenticatedState>();

  router.get('/unanswered-questions', async (ctx) => {
    const workspaceId = single(ctx.query, 'workspace_id');
    if (workspaceId === '') throw invalid('invalid_request', 'workspace_id: expected a workspace id', 'workspace_id');
    const filter = { workspace_id: workspaceId, from: timeBound(ctx.query, 'from'), to: timeBound(ctx.query, 'to') };
    if (filter.from && filter.to && filter.from > filter.to) throw invalid('invalid_request', 'from: must not be after to', 'from');
    ctx.body = await listUnansweredQuestions(deps, ctx.state.principal.tenant_id, filter, pageQuery(ctx.query));
  });

  return router;
}
