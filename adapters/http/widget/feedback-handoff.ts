// What a widget visitor does with their own conversation besides chatting (spec 4.4):
// `POST /api/v1/widget/messages/{id}/feedback` rates an answer of the assistant,
// `POST /api/v1/widget/conversations/{id}/handoff` asks for a person (the tenant's handoff
// webhook is called as for a member's handoff), and `POST /api/v1/widget/conversations/{id}/erase`
// erases the conversation. Widget token, visitor header; the rules are
// application/widget/visitor-conversations.ts.

import Router from '@koa/router';
import * as t from 'io-ts';
import type { ConversationErasureUseCaseDependencies } from '../../../application/conversation/conversations';
import { eraseVisitorConversation, giveVisitorFeedback, handOffVisitorConversation } from '../../../application/widget/visitor-conversations';
import type { WidgetAccessDependencies } from '../../../application/widget/widget-access';
import { FeedbackBody } from '../conversations/conversations';
import { decodeBody } from '../decode';
import { requestContextOf } from '../request-context';
import { jsonBodyInRoute } from '../bodies/json';
import { type WidgetRoutesOptions, type WidgetState, authenticateWidgetRequest, requestVisitor } from './widget-auth';

export const VisitorHandoffBody = t.type({ reason: t.union([t.string, t.undefined]) }, 'VisitorHandoffBody');

export function widgetFeedbackHandoffRouter(deps: ConversationErasureUseCaseDependencies & WidgetAccessDependencies, options: WidgetRoutesOptions): Router<WidgetState> {
  const router = new Router<WidgetState>({ prefix: '/api/v1/widget' });
  const widget = authenticateWidgetRequest(deps, options);
  const body = jsonBodyInRoute(options.bodyLimitBytes);

  router.post('/messages/:id/feedback', widget, body, async (ctx) => {
    const visitor = requestVisitor(deps, ctx);
    const { rating, comment } = decodeBody(FeedbackBody, ctx.request.body);
    ctx.body = await giveVisitorFeedback(deps, ctx.state.widget, visitor, ctx.params.id, { rating, comment }, requestContextOf(ctx));
    ctx.status = 201;
  });

  router.post('/conversations/:id/handoff', widget, body, async (ctx) => {
    const visitor = requestVisitor(deps, ctx);
    const { reason } = decodeBody(VisitorHandoffBody, ctx.request.body);
    ctx.body = await handOffVisitorConversation(deps, ctx.state.widget, visitor, ctx.params.id, { reason }, requestContextOf(ctx));
  });

  router.post('/conversations/:id/erase', widget, async (ctx) => {
    const visitor = requestVisitor(deps, ctx);
    ctx.body = await eraseVisitorConversation(deps, ctx.state.widget, visitor, ctx.params.id, requestContextOf(ctx));
  });

  return router;
}
