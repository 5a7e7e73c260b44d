// GET, PATCH /api/v1/me/notifications: the caller's own notification preferences in the current
// organization (application/notification/notification-preferences.ts). Any member; the answer
// carries its ETag and a PATCH honours If-Match.

import Router from '@koa/router';
import * as t from 'io-ts';
import { readNotificationPreferences, setNotificationPreferences } from '../../../application/notification/notification-preferences';
import type { UseCaseDependencies } from '../../../application/shared/dependencies';
import { closedPartial, decodeBody } from '../decode';
import { answerVersioned, preconditionsOf } from '../entity-tags';
import { type AuthenticatedState, authenticateUser } from '../middleware/authenticate';
import { requestContextOf } from '../request-context';

/** Every preference optional (left out: kept); an unknown one is refused rather than ignored. */
export const NotificationPreferencesBody = closedPartial({ orchestration_alerts: t.boolean, handoff_failures: t.boolean, crm_failures: t.boolean, knowledge_gaps: t.boolean }, 'NotificationPreferencesBody');

export function meNotificationsRouter(identity: UseCaseDependencies): Router<AuthenticatedState> {
  const router = new Router<AuthenticatedState>({ prefix: '/api/v1/me/notifications' });
  router.use(authenticateUser(identity));
  router.get('/', async (ctx) => {
    answerVersioned(ctx, await readNotificationPreferences(identity, ctx.state.principal));
  });
  router.patch('/', async (ctx) => {
    const preconditions = preconditionsOf(ctx);
    const body = decodeBody(NotificationPreferencesBody, ctx.request.body);
    answerVersioned(ctx, await setNotificationPreferences(identity, ctx.state.principal, body, requestContextOf(ctx), preconditions));
  });
  return router;
}
