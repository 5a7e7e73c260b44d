// `GET /tenant/feedbacks` (spec 4.8): the ratings people gave the assistant's answers, newest
// first, filtered by `rating` and by `from`/`to` (when given); cursor pages.

import Router from '@koa/router';
import { listFeedbacks } from '../../../application/feedback/feedbacks';
import type { ReadModelDependencies } from '../../../application/shared/read-models';
import { invalid } from '../../../domain/shared/errors';
import type { AuthenticatedState } from '../middleware/authenticate';
import { pageQuery } from '../pagination';
import { oneOf, timeBound } from './query';

export const RATINGS = ['up', 'down'] as const;

export function tenantFeedbacksRouter(deps: ReadModelDependencies): Router<AuthenticatedState> {
  const router = new Router<AuthenticatedState>();

  router.get('/feedbacks', async (ctx) => {
    const filter = { rating: oneOf(ctx.query, 'rating', RATINGS), from: timeBound(ctx.query, 'from'), to: timeBound(ctx.query, 'to') };
    if (filter.from && filter.to && filter.from > filter.to) throw invalid('invalid_request', 'from: must not be after to', 'from');
    ctx.body = await listFeedbacks(deps, ctx.state.principal.tenant_id, filter, pageQuery(ctx.query));
  });

  return router;
}
