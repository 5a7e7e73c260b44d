// What the widget's visitor routes share beyond widget-auth.ts: whose Idempotency-Key a
// creating route's key is (the visitor's, within the widget's tenant), and the context of what
// the visitor does (the end user as actor).

import type { ParameterizedContext } from 'koa';
import type { WidgetAccessDependencies } from '../../../application/widget/widget-access';
import { visitorContext } from '../../../application/widget/widget-access';
import type { IdempotencyCaller } from '../middleware/idempotency';
import { requestContextOf } from '../request-context';
import { type WidgetState, requestVisitor } from './widget-auth';

/** A visitor's Idempotency-Key: unique per tenant and visitor (400 without the visitor header). */
export const widgetVisitorCaller =
  (deps: WidgetAccessDependencies) =>
  (ctx: ParameterizedContext<WidgetState>): IdempotencyCaller => {
    const visitor = requestVisitor(deps, ctx);
    return { scope: [ctx.state.widget.tenant_id, 'visitor', visitor.party.id], context: visitorContext(ctx.state.widget, visitor, requestContextOf(ctx)) };
  };
