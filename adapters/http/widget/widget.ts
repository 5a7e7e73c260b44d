// The website widget's HTTP routes (spec 4.4, docs/widget.md "HTTP routes"), all with the
// widget token (`Authorization: Bearer <widget token>`, widget-auth.ts), from the tenant's
// allowed origins; those that act for a visitor need X-Widget-Visitor (and, in verified-identity
// mode, X-Widget-User-Id / X-Widget-User-Hash):
//   POST /api/v1/widget/chat                          a turn: JSON, or SSE with Accept: text/event-stream
//   GET  /api/v1/widget/settings                      the widget's public appearance
//   GET  /api/v1/widget/conversations/{id}/messages   the visitor's own conversation, in cursor pages
//   POST /api/v1/widget/identity/clear                the host page's clearIdentity()
//   OPTIONS /api/v1/widget/*                          the CORS preflight of every widget route
// Leads, feedback, handoff and speech are routers of their own in this folder.
//
// POST /chat honours Idempotency-Key for a JSON answer (keys are the visitor's own); a streamed
// turn cannot be given again, so a key on it is refused (400) before anything is recorded.

import Router from '@koa/router';
import type { Middleware, ParameterizedContext } from 'koa';
import * as t from 'io-ts';
import { AssistantUnavailableError } from '../../../application/chat/chat';
import type { UseCaseDependencies } from '../../../application/shared/dependencies';
import { type Visitor, visitorContext } from '../../../application/widget/widget-access';
import { widgetAppearance } from '../../../application/widget/widget-appearance';
import { type WidgetChatDependencies, type WidgetTurnRequest, clearVisitorIdentity, listVisitorConversations, listVisitorMessages, openWidgetTurn, widgetChat } from '../../../application/widget/widget-chat';
import { NonEmptyTrimmed } from '../../../domain/shared/codecs';
import { invalid } from '../../../domain/shared/errors';
import { ASSISTANT_UNAVAILABLE, END_USER_SESSION_HEADER, END_USER_TOKEN_HEADER, streamTurnAnswer } from '../chat/chat';
import { decodeBody } from '../decode';
import { HttpError } from '../errors';
import { IDEMPOTENCY_KEY_HEADER, type IdempotencyCaller, answerHoldsPersonalDataOf, idempotencySeedOf, idempotentCreation } from '../middleware/idempotency';
import { conversationSubject } from '../../../domain/conversation/conversation';
import { pageQuery } from '../pagination';
import { requestContextOf } from '../request-context';
import { jsonBodyInRoute } from '../bodies/json';
import { WIDGET_REQUEST_HEADERS, type WidgetRoutesOptions, type WidgetState, authenticateWidgetRequest, requestVisitor } from './widget-auth';

const OptionalId = t.union([NonEmptyTrimmed, t.null, t.undefined]);
export const WidgetChatBody = t.type({ message: t.string, conversation_id: OptionalId }, 'WidgetChatBody');
export const IdentityClearBody = t.type({ conversation_id: OptionalId }, 'IdentityClearBody');

/** The methods and the lifetime a preflight grants (the actual request is checked in full). */
export const WIDGET_ALLOWED_METHODS = 'GET, POST';
export const PREFLIGHT_MAX_AGE_SECONDS = 600;

export interface WidgetRouteOptions extends WidgetRoutesOptions {
  /** CHAT_HEARTBEAT_MS: how often a streamed answer sends its keep-alive comment. */
  heartbeatMs: number;
}

/** The state of a widget route: the widget, and the visitor on routes that act for one. */
export interface VisitorState extends WidgetState {
  visitor: Visitor;
}

type WidgetContext = ParameterizedContext<VisitorState>;

/**
 * The CORS preflight of any widget route. It carries no token, so no tenant's origins can be
 * checked here: it grants the methods and headers to the asking origin, and the actual request
 * answers `Access-Control-Allow-Origin` only for an origin the tenant allows.
 */
export function widgetPreflight(ctx: WidgetContext): void {
  const origin = ctx.get('origin');
  ctx.vary('Origin');
  if (origin) ctx.set('Access-Control-Allow-Origin', origin);
  ctx.set('Access-Control-Allow-Methods', WIDGET_ALLOWED_METHODS);
  ctx.set('Access-Control-Allow-Headers', WIDGET_REQUEST_HEADERS.join(', '));
  ctx.set('Access-Control-Max-Age', String(PREFLIGHT_MAX_AGE_SECONDS));
  ctx.status = 204;
}

/** Sets the request's visitor from its headers (400 `invalid_visitor`, 401 `invalid_identity` / `identity_required`). */
function withVisitor(deps: UseCaseDependencies): Middleware<VisitorState> {
  return async (ctx, next) => {
    ctx.state.visitor = requestVisitor(deps, ctx);
    await next();
  };
}

/** A visitor's Idempotency-Key: unique per tenant and visitor. */
const visitorCaller = (ctx: ParameterizedContext<VisitorState>): IdempotencyCaller => ({
  scope: [ctx.state.widget.tenant_id, 'widget', ctx.state.visitor.party.id],
  context: visitorContext(ctx.state.widget, ctx.state.visitor, requestContextOf(ctx)),
});

const wantsStream = (ctx: WidgetContext): boolean => ctx.accepts('application/json', 'text/event-stream') === 'text/event-stream';

/** A streamed turn cannot be replayed: an Idempotency-Key on it is refused before the key is claimed. */
const noKeyOnStream: Middleware<VisitorState> = async (ctx, next) => {
  if (wantsStream(ctx) && ctx.headers[IDEMPOTENCY_KEY_HEADER.toLowerCase()] !== undefined) {
    throw invalid('invalid_request', `${IDEMPOTENCY_KEY_HEADER}: a streamed turn cannot be given again; send the turn as JSON (without Accept: text/event-stream) to retry it safely`, IDEMPOTENCY_KEY_HEADER);
  }
  await next();
};

function turnRequestOf(ctx: WidgetContext): WidgetTurnRequest {
  const body = decodeBody(WidgetChatBody, ctx.request.body);
  return {
    message: body.message,
    conversation_id: body.conversation_id ?? null,
    end_user: { token: ctx.get(END_USER_TOKEN_HEADER) || null, session: ctx.get(END_USER_SESSION_HEADER) || null },
  };
}

export function widgetRouter(identity: UseCaseDependencies, chat: WidgetChatDependencies, options: WidgetRouteOptions): Router<VisitorState> {
  const router = new Router<VisitorState>({ prefix: '/api/v1/widget' });
  const widget = authenticateWidgetRequest(identity, { publicUrl: options.publicUrl });
  const visitor = withVisitor(identity);
  // After the token and origin: a browser can read a 400 or 415 about the body too.
  const body = jsonBodyInRoute(options.bodyLimitBytes);

  router.options('/*path', widgetPreflight);

  router.post('/chat', widget, body, visitor, noKeyOnStream, idempotentCreation<VisitorState>(identity, visitorCaller), async (ctx) => {
    const request = turnRequestOf(ctx);
    const context = requestContextOf(ctx);
    if (wantsStream(ctx)) {
      const turn = await openWidgetTurn(chat, ctx.state.widget, ctx.state.visitor, request, context);
      await streamTurnAnswer(ctx, chat, turn, options.heartbeatMs);
      return;
    }
    try {
      const answer = await widgetChat(chat, ctx.state.widget, ctx.state.visitor, request, context, { idempotencyKey: idempotencySeedOf(ctx) });
      answerHoldsPersonalDataOf(ctx, conversationSubject(answer.conversation_id));
      ctx.body = answer;
    } catch (error) {
      // The model server's fault, not the visitor's; the failure is on the conversation already.
      if (error instanceof AssistantUnavailableError) throw new HttpError(502, ASSISTANT_UNAVAILABLE, error.message);
      throw error;
    }
  });

  router.get('/settings', widget, async (ctx) => {
    ctx.body = await widgetAppearance(identity, ctx.state.widget);
  });

  router.get('/conversations', widget, visitor, async (ctx) => {
    ctx.body = await listVisitorConversations(identity, ctx.state.widget, ctx.state.visitor, pageQuery(ctx.query));
  });

  router.get('/conversations/:id/messages', widget, visitor, async (ctx) => {
    ctx.body = await listVisitorMessages(identity, ctx.state.widget, ctx.state.visitor, ctx.params.id, pageQuery(ctx.query));
  });

  router.post('/identity/clear', widget, body, visitor, async (ctx) => {
    const { conversation_id } = decodeBody(IdentityClearBody, ctx.request.body);
    await clearVisitorIdentity(chat, ctx.state.widget, ctx.state.visitor, conversation_id ?? null, requestContextOf(ctx));
    ctx.status = 204;
  });

  return router;
}
