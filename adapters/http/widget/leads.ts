// `POST /api/v1/widget/leads` (spec 4.4): a widget visitor leaves their contact details.
// Widget token, visitor header; honours Idempotency-Key (the visitor's). The rules and the CRM
// delivery that follows are application/lead; docs/widget.md, "Leads and the CRM".

import Router from '@koa/router';
import * as t from 'io-ts';
import { type LeadDependencies, captureLead } from '../../../application/lead/leads';
import type { UseCaseDependencies } from '../../../application/shared/dependencies';
import { decodeBody } from '../decode';
import { idempotencySeedOf, idempotentCreation } from '../middleware/idempotency';
import { requestContextOf } from '../request-context';
import { jsonBodyInRoute } from '../bodies/json';
import { type WidgetRoutesOptions, type WidgetState, authenticateWidgetRequest, requestVisitor } from './widget-auth';
import { widgetVisitorCaller } from './widget-visitor-requests';

const Field = t.union([t.string, t.null, t.undefined]);

export const LeadBody = t.type(
  {
    name: Field,
    /** An email or a phone is needed. */
    email: Field,
    phone: Field,
    company: Field,
    message: Field,
    /** The visitor's widget conversation the lead came from. */
    conversation_id: Field,
    /** The page the visitor left it on. */
    page_url: Field,
  },
  'LeadBody',
);

export type WidgetLeadsDependencies = LeadDependencies & UseCaseDependencies;

export function widgetLeadsRouter(deps: WidgetLeadsDependencies, options: WidgetRoutesOptions): Router<WidgetState> {
  const router = new Router<WidgetState>({ prefix: '/api/v1/widget' });

  router.post('/leads', authenticateWidgetRequest(deps, options), jsonBodyInRoute(options.bodyLimitBytes), idempotentCreation(deps, widgetVisitorCaller(deps)), async (ctx) => {
    const visitor = requestVisitor(deps, ctx);
    const body = decodeBody(LeadBody, ctx.request.body);
    ctx.body = await captureLead(deps, ctx.state.widget, visitor, body, requestContextOf(ctx), { idempotencyKey: idempotencySeedOf(ctx) });
    ctx.status = 201;
  });

  return router;
}
