// The website widget's configuration routes (spec 4.4, docs/widget.md "Configuration"):
// `GET, POST /tenant/widget` read and change the settings (a POST names only the settings it
// changes; it carries the ETag and honours If-Match); `POST /tenant/widget/identity-secret`
// makes a new identity secret and answers it this once.

import Router from '@koa/router';
import * as t from 'io-ts';
import { type WidgetConfigDependencies, configureWidget, readWidgetConfig, rotateWidgetIdentitySecret } from '../../../application/widget/widget-config';
import { NonEmptyTrimmed } from '../../../domain/shared/codecs';
import { invalid } from '../../../domain/shared/errors';
import { WidgetSettings } from '../../../domain/widget-config/widget-config';
import { decodeBody } from '../decode';
import { answerVersioned, preconditionsOf } from '../entity-tags';
import type { AuthenticatedState } from '../middleware/authenticate';
import { requestContextOf } from '../request-context';

/** Any of the settings; the others keep their value. */
export const WidgetSettingsBody = t.partial({ ...WidgetSettings.props, workspace_id: t.union([NonEmptyTrimmed, t.null]) }, 'WidgetSettingsBody');

/** A misspelt setting would otherwise be ignored without a word: it is named instead. */
function requireKnownSettings(body: unknown): void {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return;
  const unknown = Object.keys(body).find((field) => !(field in WidgetSettingsBody.props));
  if (unknown !== undefined) throw invalid('invalid_request', `${unknown.slice(0, 100)}: not a widget setting; the settings are ${Object.keys(WidgetSettingsBody.props).join(', ')}`, unknown.slice(0, 100));
}

export function tenantWidgetRouter(deps: WidgetConfigDependencies): Router<AuthenticatedState> {
  const router = new Router<AuthenticatedState>();

  router.get('/widget', async (ctx) => {
    answerVersioned(ctx, await readWidgetConfig(deps, ctx.state.principal.tenant_id));
  });

  router.post('/widget', async (ctx) => {
    const preconditions = preconditionsOf(ctx);
    const changes = decodeBody(WidgetSettingsBody, ctx.request.body);
    requireKnownSettings(ctx.request.body);
    answerVersioned(ctx, await configureWidget(deps, ctx.state.principal, changes, requestContextOf(ctx), preconditions));
  });

  router.post('/widget/identity-secret', async (ctx) => {
    const preconditions = preconditionsOf(ctx);
    answerVersioned(ctx, await rotateWidgetIdentitySecret(deps, ctx.state.principal, requestContextOf(ctx), preconditions));
    ctx.status = 201;
  });

  return router;
}
