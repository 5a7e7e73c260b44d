// Plans: the catalogue seeded on first start, the super admin's plan management, and the price
// list tenants read. Plan codes are unique (a reservation per code, held while the plan
// exists); a plan anybody is subscribed to is retired, never deleted.

import { DEFAULT_CATALOGUE } from '../../domain/plan/catalogue';
import { type PlanCommand, type PlanEvent, type PlanState, type PlanTerms, planDecider, planEvents, planStream } from '../../domain/plan/plan';
import { DomainError, conflict, notFound } from '../../domain/shared/errors';
import { PLANS, type PlanDocument } from '../../projections/plans';
import { type Aggregate, handleCommand, loadAggregate } from '../command-handling/handle-command';
import { SUBSCRIPTIONS } from '../../projections/subscriptions';
import type { Page } from '../ports/read-store';
import { defaultPlanCode } from '../entitlement/entitlements';
import { type ReservationDependencies, claimReservation, releaseReservation } from '../reservation/reservations';
import { type ReadModelDependencies, type ReadYourWritesDependencies, type Written, readBackChange } from '../shared/read-models';
import { type RequestContext, systemContext } from '../shared/request-context';
import { type Versioned, type WritePreconditions, expectedRevisionOf, versionOfRevision } from '../shared/versions';

export const planAggregate: Aggregate<PlanCommand, PlanEvent, PlanState> = { decider: planDecider, events: planEvents };
const PLAN_CODE_SCOPE = 'plan_code';

/** A plan as tenants see it in the price list: a stable shape. */
export interface PlanOffer {
  id: string;
  code: string;
  name: string;
  description: string;
  prices: PlanDocument['prices'];
  limits: PlanDocument['limits'];
  features: PlanDocument['features'];
}

/** A plan as the super admin sees it. */
export interface PlanView extends PlanOffer {
  status: PlanDocument['status'];
  created_at: string;
  updated_at: string;
}

export const planOffer = (plan: PlanDocument): PlanOffer => ({
  id: plan.id,
  code: plan.code,
  name: plan.name,
  description: plan.description,
  prices: plan.prices,
  limits: plan.limits,
  features: plan.features,
});

export const planView = (plan: PlanDocument): PlanView => ({ ...planOffer(plan), status: plan.status, created_at: plan.created_at, updated_at: plan.updated_at });

const defaultPlanConflict = (what: string): DomainError =>
  conflict('default_plan', `this is the default plan, which every tenant without a subscription is on: it cannot be ${what}; make another plan the default first`);

const adminContext = (context: RequestContext): RequestContext => ({ ...context, tenant_id: null });

/**
 * Records the default catalogue's plans that were never recorded: on the first start, all of
 * them. A plan the operator later deleted is not recreated (its stream exists). Safe to run
 * in several processes at once: the ids are fixed, so the second writer finds the plan there.
 */
export async function seedPlanCatalogue(deps: ReservationDependencies): Promise<{ seeded: number; position: number | null }> {
  let seeded = 0;
  let position: number | null = null;
  for (const { plan_id, code, ...terms } of DEFAULT_CATALOGUE) {
    const { revision } = await loadAggregate(deps, planAggregate, planStream(plan_id));
    if (revision >= 0) continue;
    const context = systemContext(deps.ids.newId(), 'plan_catalogue');
    await claimReservation(deps, PLAN_CODE_SCOPE, code, plan_id, context);
    try {
      position = (await handleCommand(deps, planAggregate, planStream(plan_id), { type: 'CreatePlan', data: { plan_id, code, ...terms } }, context)).position;
      seeded += 1;
    } catch (error) {
      if (!(error instanceof DomainError && error.code === 'plan_exists')) throw error;
    }
  }
  return { seeded, position };
}

/** Sellable plans, cheapest first: the price list of `GET /billing/plans`. */
export async function sellablePlans(deps: ReadModelDependencies): Promise<PlanOffer[]> {
  const page = await deps.readStore.collection<PlanDocument>(PLANS).find({ where: { status: 'sellable' }, sort: { field: 'sort_amount', direction: 'asc' }, limit: 1000 });
  return page.items.map(planOffer);
}

/** Every plan, sellable and retired, cheapest first, one page at a time. */
export async function listPlans(deps: ReadModelDependencies, filter: { status?: PlanDocument['status'] }, page: { limit?: number; cursor?: string }): Promise<Page<PlanView>> {
  const found = await deps.readStore.collection<PlanDocument>(PLANS).find({ where: filter.status ? { status: filter.status } : {}, sort: { field: 'sort_amount', direction: 'asc' }, ...page });
  return { items: found.items.map(planView), next_cursor: found.next_cursor };
}

async function planDocument(deps: ReadModelDependencies, planId: string): Promise<PlanDocument> {
  const plan = await deps.readStore.collection<PlanDocument>(PLANS).get(planId);
  if (!plan) throw notFound('plan_not_found', 'no such plan');
  return plan;
}

export async function getPlan(deps: ReadModelDependencies, planId: string): Promise<Versioned<PlanView & { subscribers: number }>> {
  const plan = await planDocument(deps, planId);
  return { value: { ...planView(plan), subscribers: await subscriberCount(deps, planId) }, version: versionOfRevision(plan.revision) };
}

/** Tenants whose subscription is on the plan (whatever its state: a canceled one may renew). */
async function subscriberCount(deps: ReadModelDependencies, planId: string): Promise<number> {
  return deps.readStore.collection(SUBSCRIPTIONS).count({ plan_id: planId });
}

type PlanWriteDependencies = ReservationDependencies & ReadModelDependencies & ReadYourWritesDependencies;

export async function createPlan(deps: PlanWriteDependencies, input: { code: string } & PlanTerms, context: RequestContext): Promise<Versioned<PlanView & { subscribers: number }>> {
  const planId = deps.ids.newId();
  const command: PlanCommand = { type: 'CreatePlan', data: { plan_id: planId, ...input } };
  // Refuse a bad plan before claiming its code, so it leaves no reservation behind.
  const dryRun = planDecider.decide(command, planDecider.initialState(), { now: deps.clock.now() });
  if (dryRun._tag === 'Left') throw dryRun.left;
  const acting = adminContext(context);
  try {
    await claimReservation(deps, PLAN_CODE_SCOPE, input.code, planId, acting);
  } catch (error) {
    if (error instanceof DomainError && error.kind === 'conflict') throw conflict('plan_code_taken', `a plan with the code ${input.code} exists`);
    throw error;
  }
  let written: Written;
  try {
    written = await handleCommand(deps, planAggregate, planStream(planId), command, acting);
  } catch (error) {
    await releaseReservation(deps, PLAN_CODE_SCOPE, input.code, planId, acting).catch(() => undefined);
    throw error;
  }
  // A plan the read models do not show yet was a 404 right after it was made.
  return readBackChange(deps, written, 'the plan', () => getPlan(deps, planId));
}

/**
 * Replaces the plan's terms (subscribers get them at once) and, when `sellable` is given and
 * differs, sells a retired plan again or stops selling it (subscribers keep it either way);
 * `If-Match` guards a lost update. Everything that can refuse is asked before the first write,
 * and the answer is read once after the last.
 */
export async function changePlan(
  deps: PlanWriteDependencies,
  planId: string,
  change: { terms: PlanTerms; sellable?: boolean },
  preconditions: WritePreconditions,
  context: RequestContext,
): Promise<Versioned<PlanView & { subscribers: number }>> {
  const plan = await planDocument(deps, planId);
  const expectedRevision = expectedRevisionOf('plan', preconditions.expectedVersion, plan.revision);
  const toggles = change.sellable !== undefined && change.sellable !== (plan.status === 'sellable');
  if (toggles && !change.sellable && plan.code === (await defaultPlanCode(deps))) throw defaultPlanConflict('retired');
  const acting = adminContext(context);
  let written: Written = await handleCommand(deps, planAggregate, planStream(planId), { type: 'ChangePlanTerms', data: change.terms }, acting, { expectedRevision });
  if (toggles) written = await handleCommand(deps, planAggregate, planStream(planId), { type: change.sellable ? 'ReinstatePlan' : 'RetirePlan', data: {} }, acting);
  return readBackChange(deps, written, 'the change of the plan', () => getPlan(deps, planId));
}

/** Sells a retired plan again, or stops selling one (`sellable` false): subscribers keep it either way. */
export async function setPlanSellable(deps: PlanWriteDependencies, planId: string, sellable: boolean, context: RequestContext): Promise<Versioned<PlanView & { subscribers: number }>> {
  const plan = await planDocument(deps, planId);
  if (!sellable && plan.code === (await defaultPlanCode(deps))) throw defaultPlanConflict('retired');
  const result = await handleCommand(deps, planAggregate, planStream(planId), { type: sellable ? 'ReinstatePlan' : 'RetirePlan', data: {} }, adminContext(context));
  return readBackChange(deps, result, 'the change of the plan', () => getPlan(deps, planId));
}

/**
 * Deletes a plan nobody is subscribed to, and frees its code; a plan with subscribers is
 * retired instead. Answers which of the two happened.
 */
export async function deletePlan(deps: PlanWriteDependencies, planId: string, context: RequestContext): Promise<{ outcome: 'deleted' | 'retired' }> {
  const plan = await planDocument(deps, planId);
  if (plan.code === (await defaultPlanCode(deps))) throw defaultPlanConflict('deleted');
  const subscribers = await subscriberCount(deps, planId);
  const acting = adminContext(context);
  const result = await handleCommand(deps, planAggregate, planStream(planId), { type: 'DeletePlan', data: { subscribers } }, acting);
  const deleted = result.events.some((event) => event.type === 'PlanDeleted');
  if (deleted) await releaseReservation(deps, PLAN_CODE_SCOPE, plan.code, planId, acting);
  await deps.readYourWrites(result.position);
  return { outcome: deleted ? 'deleted' : 'retired' };
}
