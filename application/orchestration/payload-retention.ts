// The retention of orchestration payloads (docs/orchestration-events.md, "Payload retention"):
// the payloads and step outputs of the events an organization received on a day are sealed
// under that organization's key for the day (domain/orchestration-event/payloads.ts). Once
// ORCHESTRATION_PAYLOAD_RETENTION_DAYS whole days (or the organization's own
// `orchestration_payload_retention_days`, within it) have passed since the day ended, the saga
// `orchestration_payload_retention` records OrchestrationPayloadsErased for it and deletes the
// key (the saga personal_data_erasure does it again after the event), and the projection
// scrubs the day's documents. 0 keeps them until erased otherwise. An owner or admin erases
// the days before a date sooner (`POST /api/v1/org/events/payloads/erase`), any day before
// yesterday: the keys of today and yesterday are in use, and may be kept in memory by every
// process until then (payloadKeyKeptUntil).
//
// Both erase an organization's days oldest first, from the oldest day the read model still
// keeps, waiting for the read model to scrub each before reading the next; a day erased before
// records nothing again (the day's stream decides), so two processes erasing at once do no harm.

import { PAYLOAD_DAY_KEPT_DAYS, orchestrationPayloadSubject, payloadDayOf, payloadRetentionDaysOf } from '../../domain/orchestration-event/payloads';
import { isCalendarDay } from '../../domain/shared/calendar-day';
import {
  type OrchestrationPayloadsCommand,
  type OrchestrationPayloadsEvent,
  type OrchestrationPayloadsState,
  type PayloadErasureReason,
  orchestrationPayloadsDecider,
  orchestrationPayloadsEvents,
  orchestrationPayloadsStream,
} from '../../domain/orchestration-payloads/orchestration-payloads';
import { DomainError, invalid } from '../../domain/shared/errors';
import { ORCHESTRATION_EVENTS, type OrchestrationEventDocument, orchestrationEventsProjection } from '../../projections/orchestration-events';
import { TENANTS, type TenantDocument } from '../../projections/tenants';
import { type Aggregate, type CommandDependencies, handleCommand } from '../command-handling/handle-command';
import type { Logger } from '../ports/logger';
import type { PersonalDataVault } from '../ports/personal-data';
import type { Saga } from '../sagas/saga';
import { type Principal, actingContext } from '../session/sessions';
import type { ReadModelDependencies, ReadYourWritesDependencies } from '../shared/read-models';
import { type RequestContext, systemContext } from '../shared/request-context';

export const ORCHESTRATION_PAYLOAD_RETENTION = 'orchestration_payload_retention';

export const orchestrationPayloadsAggregate: Aggregate<OrchestrationPayloadsCommand, OrchestrationPayloadsEvent, OrchestrationPayloadsState> = {
  decider: orchestrationPayloadsDecider,
  events: orchestrationPayloadsEvents,
};

export type PayloadRetentionDependencies = CommandDependencies & ReadModelDependencies & ReadYourWritesDependencies & { personalData: PersonalDataVault };

/** Days one call erases at most for an organization; the next call goes on. */
const DAYS_PER_CALL = 400;
/** The first version of the orchestration_events read model with `payload_day` and `payload_erased`. */
const PAYLOAD_DAYS_SINCE_VERSION = 3;
/** How often the retention looks (by the clock): a day is erased within this time after its retention. */
const RETENTION_EVERY_MS = 3600 * 1000;
const TENANTS_PAGE = 500;
const DAY_MS = 24 * 3600 * 1000;

/** The first day kept at `now` with a retention of `days`; the days before it are erased. */
export const firstDayKept = (now: Date, days: number): string => payloadDayOf(new Date(now.getTime() - days * DAY_MS).toISOString());

/** The organization's oldest day before `before` whose payloads the read model still keeps, or null. */
async function oldestDayKept(deps: ReadModelDependencies, tenantId: string, before: string): Promise<string | null> {
  const { items } = await deps.readStore
    .collection<OrchestrationEventDocument>(ORCHESTRATION_EVENTS)
    .find({ where: { tenant_id: tenantId, payload_erased: false, payload_day: { lt: before } }, sort: { field: 'payload_day', direction: 'asc' }, limit: 1, index: 'tenant_id,payload_erased,payload_day' });
  return items[0]?.payload_day ?? null;
}

/** Whether the served read model has payload days (an upgrade rebuilds it into version 3 meanwhile). */
async function servesPayloadDays(deps: ReadModelDependencies): Promise<boolean> {
  const served = await deps.readStore.getProjectionState(orchestrationEventsProjection.name);
  return served === null || served.version >= PAYLOAD_DAYS_SINCE_VERSION;
}

/**
 * Erases the organization's payloads of every day before `before` (`YYYY-MM-DD`) that the read
 * model still keeps, oldest first (at most DAYS_PER_CALL): the days erased now.
 */
async function eraseDaysBefore(deps: PayloadRetentionDependencies, tenantId: string, before: string, reason: PayloadErasureReason, context: RequestContext): Promise<string[]> {
  const erased: string[] = [];
  while (erased.length < DAYS_PER_CALL) {
    const day = await oldestDayKept(deps, tenantId, before);
    // None left; or found again: the read model has not scrubbed it yet (behind), the next call goes on.
    if (day === null || erased.includes(day)) break;
    const result = await handleCommand(deps, orchestrationPayloadsAggregate, orchestrationPayloadsStream(tenantId, day), { type: 'EraseOrchestrationPayloads', data: { tenant_id: tenantId, day, reason } }, { ...context, tenant_id: tenantId });
    // The saga personal_data_erasure does it too, for a process that stops right here.
    await deps.personalData.erase(orchestrationPayloadSubject(tenantId, day));
    erased.push(day);
    await deps.readYourWrites(result.position, [orchestrationEventsProjection.name]);
  }
  return erased;
}

/** An organization's own retention (`orchestration_payload_retention_days`), when it set one. */
export const organizationRetentionOf = (tenant: Pick<TenantDocument, 'settings'> | null): number | undefined => {
  const days = tenant?.settings.orchestration_payload_retention_days;
  return typeof days === 'number' ? days : undefined;
};

/**
 * Erases every organization's days past its retention (the operator's `retentionDays`, or the
 * organization's own within it; none with 0): the number of days erased.
 */
export async function erasePayloadsPastRetention(deps: PayloadRetentionDependencies, retentionDays: number, logger?: Logger): Promise<number> {
  if (!(await servesPayloadDays(deps))) return 0;
  const now = deps.clock.now();
  const tenants = deps.readStore.collection<TenantDocument>(TENANTS);
  let erased = 0;
  let cursor: string | undefined;
  do {
    // Every organization, deleted ones too: their payloads are erased on time as well.
    const page = await tenants.find({ limit: TENANTS_PAGE, ...(cursor ? { cursor } : {}) });
    for (const tenant of page.items) {
      const kept = payloadRetentionDaysOf(retentionDays, organizationRetentionOf(tenant));
      if (kept <= 0) continue;
      const before = firstDayKept(now, kept);
      const days = await eraseDaysBefore(deps, tenant.id, before, 'retention', systemContext(`retention:${tenant.id}:${before}`, ORCHESTRATION_PAYLOAD_RETENTION));
      if (days.length > 0) logger?.info({ tenant_id: tenant.id, days }, 'orchestration payloads past their retention erased');
      erased += days.length;
    }
    cursor = page.next_cursor ?? undefined;
  } while (cursor);
  return erased;
}

/** What an erasure on request answers. */
export interface PayloadErasureView {
  /** The days erased by this request, oldest first; none when every one was erased before. */
  erased_days: string[];
}

/**
 * An owner's or admin's erasure of the organization's payloads received before `before`
 * (`YYYY-MM-DD`, at most yesterday): 400 naming `before` otherwise. Asking again erases nothing more.
 */
export function erasePayloadsOnRequest(deps: PayloadRetentionDependencies, principal: Principal, input: { before?: unknown }, context: RequestContext): Promise<PayloadErasureView> {
  return erasePayloadsOf(deps, principal.tenant_id, input, actingContext(principal, context));
}

/** The same erasure for an organization the caller names (the operator's CLI, the system acting). */
export async function erasePayloadsOf(deps: PayloadRetentionDependencies, tenantId: string, input: { before?: unknown }, context: RequestContext): Promise<PayloadErasureView> {
  const latest = payloadDayOf(new Date(deps.clock.now().getTime() - (PAYLOAD_DAY_KEPT_DAYS - 1) * DAY_MS).toISOString());
  const { before } = input;
  if (typeof before !== 'string' || !isCalendarDay(before)) throw invalid('invalid_request', 'before must be a calendar day, YYYY-MM-DD (the payloads received before it are erased)', 'before');
  if (before > latest) throw invalid('invalid_request', `before must be ${latest} (yesterday) at the latest: the payloads of today and yesterday are in use`, 'before');
  if (!(await servesPayloadDays(deps))) throw new DomainError('unavailable', 'read_model_rebuilding', 'the orchestration events read model is being rebuilt (an upgrade): try again once it is done');
  return { erased_days: await eraseDaysBefore(deps, tenantId, before, 'request', context) };
}

/** The retention's saga: it looks at most once an hour (by the clock), each organization in turn. */
export function orchestrationPayloadRetentionSaga(deps: PayloadRetentionDependencies, policy: { retentionDays: number }): Saga<'OrchestrationPayloadsErased'> {
  let nextLookAt = 0;
  return {
    name: ORCHESTRATION_PAYLOAD_RETENTION,
    version: 1,
    // It acts on time alone (runDue); the subscription is there because every saga has one.
    filter: { kind: 'event_type', types: ['OrchestrationPayloadsErased'] },
    async handle() {},
    async runDue({ logger }) {
      const now = deps.clock.now().getTime();
      if (now < nextLookAt) return;
      await erasePayloadsPastRetention(deps, policy.retentionDays, logger);
      nextLookAt = now + RETENTION_EVERY_MS;
    },
  };
}
