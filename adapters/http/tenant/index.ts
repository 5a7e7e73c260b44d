// Everything under /api/v1/tenant (spec 4.8, 4.4): the organization's handoff webhook, CRM
// connector, feedback, unanswered questions, analytics and website widget configuration. A user token of the
// organization's owner or an admin (a member is 403 `insufficient_role`, recorded like every
// denial; a widget token is 401). Shapes in docs/tenant-configuration.md and docs/widget.md.

import Router from '@koa/router';
import type { AccessDenialRecorder } from '../../../application/access-denial/access-denials';
import type { OutboundHttp } from '../../../application/ports/outbound-http';
import type { UseCaseDependencies } from '../../../application/shared/dependencies';
import type { AuthenticatedState } from '../middleware/authenticate';
import { authenticateUserRecordingDenials, requireRole } from '../middleware/authorize';
import { tenantAnalyticsRouter } from './analytics';
import { tenantCrmRouter } from './crm';
import { tenantEndUsersRouter } from './end-users';
import { tenantFeedbacksRouter } from './feedbacks';
import { tenantHandoffRouter } from './handoff';
import { tenantLeadsRouter } from './leads';
import { tenantUnansweredQuestionsRouter } from './unanswered-questions';
import { tenantWidgetRouter } from './widget';

/** What the tenant routes need beyond the identity ports: the guarded client that checks the addresses tenants give. */
export interface TenantAdapters {
  outbound: OutboundHttp;
}

export function tenantRouter(identity: UseCaseDependencies, denials: AccessDenialRecorder, adapters: TenantAdapters): Router<AuthenticatedState> {
  const router = new Router<AuthenticatedState>({ prefix: '/api/v1/tenant' });
  router.use(authenticateUserRecordingDenials(identity, denials), requireRole('admin'));
  const deps = { ...identity, ...adapters };
  for (const area of [tenantHandoffRouter(deps), tenantCrmRouter(deps), tenantFeedbacksRouter(identity), tenantUnansweredQuestionsRouter(identity), tenantAnalyticsRouter(identity), tenantWidgetRouter(identity)]) router.use(area.routes());
  // The leads the widget's visitors left (#15).
  router.use(tenantLeadsRouter(identity).routes());
  router.use(tenantEndUsersRouter(identity).routes());
  return router;
}
