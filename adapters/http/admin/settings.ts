// The platform settings routes (spec 4.16): `GET, PUT /api/v1/admin/settings`. The settings
// carry their ETag; a change honours If-Match. Shapes: docs/super-admin.md.

import Router from '@koa/router';
import { changePlatformSettings, readPlatformSettings } from '../../../application/platform-settings/platform-settings';
import type { UseCaseDependencies } from '../../../application/shared/dependencies';
import { PlatformSettingsChanges } from '../../../domain/platform-settings/platform-settings';
import { decodeBody } from '../decode';
import { answerVersioned, preconditionsOf } from '../entity-tags';
import { adminRequest } from './plans';
import { type AdminState, requireAdmin } from './require-admin';

/** The body of PUT /settings: any of the settings, each optional. */
export const SettingsBody = PlatformSettingsChanges;

export function adminSettingsRouter(identity: UseCaseDependencies): Router<AdminState> {
  const router = new Router<AdminState>({ prefix: '/api/v1/admin' });
  const admin = requireAdmin(identity);

  router.get('/settings', admin, async (ctx) => {
    answerVersioned(ctx, await readPlatformSettings(identity));
  });

  router.put('/settings', admin, async (ctx) => {
    const preconditions = preconditionsOf(ctx);
    const changes = decodeBody(SettingsBody, ctx.request.body);
    answerVersioned(ctx, await changePlatformSettings(identity, ctx.state.admin.admin_id, changes, adminRequest(ctx), preconditions));
  });

  return router;
}
