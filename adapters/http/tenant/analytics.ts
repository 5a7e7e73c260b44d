// `GET /tenant/analytics?from=YYYY-MM-DD&to=YYYY-MM-DD` (spec 4.8): the organization's
// assistant analytics over a range of days (UTC): the last 30 days by default, at most 366.

import Router from '@koa/router';
import { conversationAnalytics } from '../../../application/analytics/conversation-analytics';
import { dayRange } from '../../../application/analytics/day-range';
import type { ReadModelDependencies } from '../../../application/shared/read-models';
import type { Clock } from '../../../application/ports/clock';
import type { AuthenticatedState } from '../middleware/authenticate';
import { single } from './query';

export function tenantAnalyticsRouter(deps: ReadModelDependencies & { clock: Clock }): Router<AuthenticatedState> {
  const router = new Router<AuthenticatedState>();

  router.get('/analytics', async (ctx) => {
    const range = dayRange({ from: single(ctx.query, 'from'), to: single(ctx.query, 'to') }, deps.clock.now());
    ctx.body = await conversationAnalytics(deps, ctx.state.principal.tenant_id, range);
  });

  return router;
}
