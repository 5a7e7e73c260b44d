// The widget token on HTTP (spec 5.1: `Authorization: Bearer <widget token>`), the browser's
// Origin, and the visitor a request speaks for. Shared by every widget route; /ws/chat applies
// the same rules through application/widget/widget-access.ts.
//
// Visitor headers (docs/widget.md):
//   X-Widget-Visitor    the random visitor id the widget keeps in the browser (required where a
//                       route acts for a visitor);
//   X-Widget-User-Id, X-Widget-User-Hash
//                       verified identity: the host's user id and its HMAC-SHA256 (hex) with the
//                       widget's identity secret, as identify({user_id, user_hash}) gave them.
// identify({token, session}) becomes X-End-User-Token / X-End-User-Session, as on /api/v1/chat.

import type { Context, Middleware } from 'koa';
import { type Visitor, type WidgetAccessDependencies, type WidgetPrincipal, authenticateWidget, originAllowed, requireAllowedOrigin, visitorOf } from '../../../application/widget/widget-access';
import { bearerToken } from '../request-context';
import type { RequestState } from '../middleware/request-context';

export const WIDGET_VISITOR_HEADER = 'X-Widget-Visitor';
export const WIDGET_USER_ID_HEADER = 'X-Widget-User-Id';
export const WIDGET_USER_HASH_HEADER = 'X-Widget-User-Hash';

/** The headers a widget's cross-origin request may send (CORS preflight). */
export const WIDGET_REQUEST_HEADERS = ['authorization', 'content-type', 'idempotency-key', 'x-widget-visitor', 'x-widget-user-id', 'x-widget-user-hash', 'x-end-user-token', 'x-end-user-session', 'x-request-id', 'x-correlation-id'];

/** What every widget router is built with. */
export interface WidgetRoutesOptions {
  /** PUBLIC_URL: its origin (the public chat page's) is always allowed. */
  publicUrl: string | null;
  /** BODY_LIMIT_BYTES: a widget route reads its JSON body itself, after the token and origin (bodies/json.ts). */
  bodyLimitBytes: number;
}

export interface WidgetState extends RequestState {
  widget: WidgetPrincipal;
}

/**
 * The platform's own origin, which is always allowed (the public chat page at /chat/{slug}):
 * PUBLIC_URL's origin when configured, otherwise the origin this request was addressed to.
 */
export function platformOriginOf(ctx: Context, publicUrl: string | null): string {
  if (publicUrl) return new URL(publicUrl).origin;
  return `${ctx.protocol}://${ctx.host}`;
}

/**
 * Authenticates the widget token (401 `invalid_widget_token`; 403 for a suspended or deleted
 * tenant or a disabled widget) and checks the Origin (403 `origin_not_allowed`). An allowed
 * browser origin gets `Access-Control-Allow-Origin` with the answer, errors included, so the
 * widget can read why it was refused; any other gets none, and the browser withholds the answer.
 */
export function authenticateWidgetRequest(deps: WidgetAccessDependencies, options: { publicUrl: string | null }): Middleware<WidgetState> {
  return async (ctx, next) => {
    const origin = ctx.get('origin') || null;
    ctx.vary('Origin');
    const widget = await authenticateWidget(deps, bearerToken(ctx));
    const platformOrigin = platformOriginOf(ctx, options.publicUrl);
    if (origin !== null && originAllowed(widget.settings, origin, platformOrigin)) ctx.set('Access-Control-Allow-Origin', origin);
    requireAllowedOrigin(widget, origin, platformOrigin);
    ctx.state.widget = widget;
    await next();
  };
}

/** The visitor of a widget request, from its visitor headers (400 / 401 as `visitorOf` says). */
export function requestVisitor(deps: WidgetAccessDependencies, ctx: Context & { state: WidgetState }): Visitor {
  return visitorOf(deps, ctx.state.widget, {
    visitor_id: ctx.get(WIDGET_VISITOR_HEADER),
    user_id: ctx.get(WIDGET_USER_ID_HEADER) || null,
    user_hash: ctx.get(WIDGET_USER_HASH_HEADER) || null,
  });
}
