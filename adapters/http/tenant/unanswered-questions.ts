// `GET /tenant/unanswered-questions`: the questions the assistant answered without the
// knowledge base, newest first, filtered by workspace and by when they were asked; cursor pages.
// `GET /tenant/unanswered-questions/summary`: the same questions counted as asked alike, the
// most asked first.

import Router from '@koa/router';
import { SUMMARY_MAX_GROUPS, type UnansweredQuestionFilter, listUnansweredQuestions, summarizeUnansweredQuestions } from '../../../application/conversation/unanswered-questions';
import type { ReadModelDependencies } from '../../../application/shared/read-models';
import { invalid } from '../../../domain/shared/errors';
import type { AuthenticatedState } from '../middleware/authenticate';
import { pageQuery } from '../pagination';
import { type Query, single, timeBound } from './query';

export const SUMMARY_DEFAULT_GROUPS = 20;

function filterOf(query: Query): UnansweredQuestionFilter {
  const workspaceId = single(query, 'workspace_id');
  if (workspaceId === '') throw invalid('invalid_request', 'workspace_id: expected a workspace id', 'workspace_id');
  const filter = { workspace_id: workspaceId, from: timeBound(query, 'from'), to: timeBound(query, 'to') };
  if (filter.from && filter.to && filter.from > filter.to) throw invalid('invalid_request', 'from: must not be after to', 'from');
  return filter;
}

export function tenantUnansweredQuestionsRouter(deps: ReadModelDependencies): Router<AuthenticatedState> {
  const router = new Router<AuthenticatedState>();

  router.get('/unanswered-questions', async (ctx) => {
    ctx.body = await listUnansweredQuestions(deps, ctx.state.principal.tenant_id, filterOf(ctx.query), pageQuery(ctx.query));
  });

  router.get('/unanswered-questions/summary', async (ctx) => {
    const filter = filterOf(ctx.query);
    const limit = single(ctx.query, 'limit') ?? String(SUMMARY_DEFAULT_GROUPS);
    if (!/^\d+$/.test(limit) || Number(limit) < 1 || Number(limit) > SUMMARY_MAX_GROUPS) throw invalid('invalid_limit', `limit must be an integer from 1 to ${SUMMARY_MAX_GROUPS}`, 'limit');
    ctx.body = await summarizeUnansweredQuestions(deps, ctx.state.principal.tenant_id, filter, Number(limit));
  });

  return router;
}
