// The super admin's plans (spec 4.16): list, create, read, change and delete. A plan somebody
// is subscribed to is retired by DELETE, never removed; `sellable` on PUT retires or sells a
// plan again. Plans carry an ETag; PUT honours If-Match.

import Router from '@koa/router';
import type { Context } from 'koa';
import type { RequestContext } from '../../../application/shared/request-context';
import * as t from 'io-ts';
import { changePlan, createPlan, deletePlan, getPlan, listPlans } from '../../../application/plan/plans';
import type { UseCaseDependencies } from '../../../application/shared/dependencies';
import { FEATURES, PlanPrice } from '../../../domain/plan/plan';
import { invalid } from '../../../domain/shared/errors';
import { closedPartial, decodeBody } from '../decode';
import { answerVersioned, preconditionsOf } from '../entity-tags';
import { pageQuery } from '../pagination';
import { requestContextOf } from '../request-context';
import { type AdminState, requireAdmin } from './require-admin';

const Limit = t.union([t.number, t.null]);
export const PlanLimitsBody = t.type({ messages_per_month: Limit, documents: Limit, users: Limit, business_tools: Limit }, 'PlanLimits');
// Closed: a misspelt feature would leave the plan without it.
export const PlanFeaturesBody = closedPartial({ sdk_connections: t.boolean, whatsapp: t.boolean, handoff: t.boolean, crm: t.boolean }, 'PlanFeatures');
const PlanTermsFields = {
  name: t.string,
  prices: t.array(PlanPrice),
  limits: PlanLimitsBody,
};
const OptionalTermsFields = { description: t.string, features: PlanFeaturesBody };
export const CreatePlanBody = t.intersection([t.type({ code: t.string, ...PlanTermsFields }), t.partial(OptionalTermsFields)], 'CreatePlan');
export const ChangePlanBody = t.intersection([t.type(PlanTermsFields), t.partial({ ...OptionalTermsFields, sellable: t.boolean })], 'ChangePlan');

const withDefaults = <T extends { description?: string; features?: t.TypeOf<typeof PlanFeaturesBody> }>(body: T) => ({
  ...body,
  description: body.description ?? '',
  features: Object.fromEntries(FEATURES.map((feature) => [feature, body.features?.[feature] ?? false])) as Record<(typeof FEATURES)[number], boolean>,
});

const PLAN_STATUSES = ['sellable', 'retired'] as const;

export function adminPlansRouter(identity: UseCaseDependencies): Router<AdminState> {
  const router = new Router<AdminState>({ prefix: '/api/v1/admin' });
  const admin = requireAdmin(identity);

  router.get('/plans', admin, async (ctx) => {
    const status = ctx.query.status;
    if (status !== undefined && !PLAN_STATUSES.some((known) => known === status)) throw invalid('invalid_request', `status: expected one of ${PLAN_STATUSES.join(', ')}`, 'status');
    ctx.body = await listPlans(identity, { status: status as (typeof PLAN_STATUSES)[number] | undefined }, pageQuery(ctx.query));
  });

  router.post('/plans', admin, async (ctx) => {
    const { code, ...terms } = withDefaults(decodeBody(CreatePlanBody, ctx.request.body));
    const created = await createPlan(identity, { code, name: terms.name, description: terms.description, prices: terms.prices, limits: terms.limits, features: terms.features }, adminRequest(ctx));
    ctx.status = 201;
    ctx.set('Location', `/api/v1/admin/plans/${created.value.id}`);
    answerVersioned(ctx, created);
  });

  router.get('/plans/:id', admin, async (ctx) => {
    answerVersioned(ctx, await getPlan(identity, ctx.params.id));
  });

  router.put('/plans/:id', admin, async (ctx) => {
    const preconditions = preconditionsOf(ctx);
    const { sellable, ...body } = withDefaults(decodeBody(ChangePlanBody, ctx.request.body));
    const context = adminRequest(ctx);
    const terms = { name: body.name, description: body.description, prices: body.prices, limits: body.limits, features: body.features };
    answerVersioned(ctx, await changePlan(identity, ctx.params.id, { terms, sellable }, preconditions, context));
  });

  router.delete('/plans/:id', admin, async (ctx) => {
    const { outcome } = await deletePlan(identity, ctx.params.id, adminRequest(ctx));
    ctx.body = { id: ctx.params.id, outcome };
  });

  return router;
}

/** The request's context with the admin as actor. */
export function adminRequest(ctx: Context & { state: AdminState }): RequestContext {
  return { ...requestContextOf(ctx), actor: { kind: 'admin' as const, id: ctx.state.admin.admin_id } };
}
