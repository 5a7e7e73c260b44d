// Schedules: what an SDK connection advertised in the `schedules` of `capabilities.list`,
// stored by its last sync, run by the platform (the connector only advertises them, as it does
// its flows). A schedule emits an orchestration event at each time its cron expression names;
// the flows whose trigger matches that event's name run as for any other event, with its
// retries, dead letter and replay (docs/orchestration-events.md, "Schedules").
//
// Accepted shape:
//   {
//     id: 'nightly_stock_sync',            // 1-100 of [A-Za-z0-9_.-], unique in the connection
//     cron: '0 2 * * *',                   // five fields: minute hour day-of-month month day-of-week
//     timezone: 'Europe/Paris',            // an IANA time zone; default UTC
//     event: 'shop.stock.sync_due',        // the name of the event emitted (the name grammar)
//     payload: { full: true },             // optional: the event's payload, with `scheduled_for` added
//     label: 'Nightly stock sync',         // optional
//   }
//
// - At most once per occurrence, whatever the number of processes and restarts: the event's
//   idempotency key is `schedule:<connection id>:<schedule id>:<occurrence>`, so every process
//   that finds an occurrence due makes the same event, appended once.
// - The scheduler looks every ORCHESTRATION_SCHEDULE_TICK_MS; when it looks, it emits each
//   schedule's latest occurrence since it last looked (a schedule that named several times in
//   between, after a stall, runs once, for the latest). At start it looks back
//   ORCHESTRATION_SCHEDULE_CATCH_UP_SECONDS, so an occurrence missed while no process ran is
//   emitted late, once; one older than that is not made up.
// - Only the schedules of active organizations run: a suspended or deleted one's connector is
//   not called on its behalf (an occurrence while it is suspended is not made up after).
// - Only enabled connections' schedules run, and each only from the sync that brought it as it
//   is (a sync that advertises it unchanged keeps that time) or the enabling after: syncing
//   or enabling at 14:00 a schedule for 02:00 does not run this morning's occurrence, even in a
//   process that starts and looks back.
// - Scheduled events do not take from the organization's emit budget (as a flow's follow-on
//   events do not): a cron names a minute at the most, and a connection has at most
//   MAX_SCHEDULES of them.

import { Cron } from 'croner';
import { EVENT_NAME_MAX_LENGTH, EVENT_NAME_PATTERN } from '../../domain/orchestration-event/orchestration-event';
import { DomainError } from '../../domain/shared/errors';
import type { Logger } from '../ports/logger';
import type { ScheduleMetrics } from '../ports/metrics';
import type { ReadModelDependencies } from '../shared/read-models';
import { systemContext } from '../shared/request-context';
import { SDK_CONNECTIONS, type SdkConnectionDocument, schedulesOf, sdkConnectionsProjection } from '../../projections/sdk-connections';
import { TENANTS, type TenantDocument } from '../../projections/tenants';
import { isActiveTenant } from '../tenant/active-tenant';
import { type OrchestrationDependencies, queueEnvelope } from './orchestration-events';

export const MAX_SCHEDULES = 20;
export const ORCHESTRATION_SCHEDULER = 'orchestration_scheduler';
const SCHEDULE_ID = /^[A-Za-z0-9_.-]{1,100}$/;
const LABEL_MAX_LENGTH = 200;
/** Bounds one look's work on one schedule (a week of minutes is 10,080). */
const MAX_OCCURRENCES_PER_LOOK = 100_000;

export interface Schedule {
  id: string;
  label: string | null;
  cron: string;
  timezone: string;
  event: string;
  payload: Record<string, unknown>;
}

/** An advertised schedule as read: runnable, or with the reason it is not (its id when that could be read). */
export type ReadSchedule = { ok: true; schedule: Schedule; pattern: Cron } | { ok: false; id: string | null; reason: string };

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

function knownTimeZone(timezone: string): boolean {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: timezone });
    return true;
  } catch {
    return false;
  }
}

/** Reads one advertised schedule; `maxPayloadBytes` is the envelope's bound (ORCHESTRATION_MAX_PAYLOAD_BYTES). */
export function readSchedule(raw: unknown, limits: { maxPayloadBytes: number }): ReadSchedule {
  if (!isRecord(raw)) return { ok: false, id: null, reason: 'a schedule must be an object' };
  const id = typeof raw.id === 'string' && SCHEDULE_ID.test(raw.id) ? raw.id : null;
  const refuse = (reason: string): ReadSchedule => ({ ok: false, id, reason });
  if (id === null) return refuse('id must be 1 to 100 of letters, digits, _ . -');
  if (typeof raw.cron !== 'string') return refuse('cron must be a cron expression of five fields (minute hour day-of-month month day-of-week)');
  const timezone = raw.timezone ?? 'UTC';
  if (typeof timezone !== 'string' || !knownTimeZone(timezone)) return refuse('timezone must be an IANA time zone (for example Europe/Paris)');
  let pattern: Cron;
  try {
    pattern = new Cron(raw.cron.trim(), { timezone, mode: '5-part' });
  } catch (error) {
    return refuse(`cron: ${error instanceof Error ? error.message.replace(/^CronPattern: /, '') : String(error)}`);
  }
  if (typeof raw.event !== 'string' || raw.event.length > EVENT_NAME_MAX_LENGTH || !EVENT_NAME_PATTERN.test(raw.event)) {
    return refuse('event must be an event name: <system>.<entity>.<action>, lowercase (for example shop.stock.sync_due)');
  }
  const payload = raw.payload ?? {};
  if (!isRecord(payload)) return refuse('payload must be an object');
  if (Buffer.byteLength(JSON.stringify(payload), 'utf8') > limits.maxPayloadBytes) return refuse(`payload must be at most ${limits.maxPayloadBytes} bytes as JSON`);
  const label = raw.label ?? null;
  if (label !== null && (typeof label !== 'string' || label.length > LABEL_MAX_LENGTH)) return refuse(`label must be text of at most ${LABEL_MAX_LENGTH} characters`);
  return { ok: true, schedule: { id, label, cron: raw.cron.trim(), timezone, event: raw.event, payload }, pattern };
}

/**
 * A connection's schedules as read, in the order advertised: the first MAX_SCHEDULES, an id
 * already taken by an earlier one refused.
 */
export function readSchedules(advertised: readonly unknown[], limits: { maxPayloadBytes: number }): ReadSchedule[] {
  const seen = new Set<string>();
  return advertised.map((raw, index): ReadSchedule => {
    if (index >= MAX_SCHEDULES) return { ok: false, id: isRecord(raw) && typeof raw.id === 'string' ? raw.id : null, reason: `a connection runs at most ${MAX_SCHEDULES} schedules` };
    const read = readSchedule(raw, limits);
    if (!read.ok) return read;
    if (seen.has(read.schedule.id)) return { ok: false, id: read.schedule.id, reason: 'id is taken by an earlier schedule of this connection' };
    seen.add(read.schedule.id);
    return read;
  });
}

/** The latest time the pattern names after `after` and at or before `upTo`; null when none. */
export function latestOccurrence(pattern: Cron, after: Date, upTo: Date): Date | null {
  let latest: Date | null = null;
  let next = pattern.nextRun(after);
  for (let looked = 0; next !== null && next.getTime() <= upTo.getTime() && looked < MAX_OCCURRENCES_PER_LOOK; looked += 1) {
    latest = next;
    next = pattern.nextRun(next);
  }
  return latest;
}

/** The idempotency key of one occurrence: the same event whichever process emits it, however often. */
export const occurrenceKey = (connectionId: string, scheduleId: string, occurrence: Date): string => `schedule:${connectionId}:${scheduleId}:${occurrence.toISOString()}`;

export interface ScheduleView extends Schedule {
  /** The next time it runs (null when the connection is disabled, or the schedule cannot be read). */
  next_run_at: string | null;
  /** Why it does not run; null when it does. */
  problem: string | null;
}

/** A schedule that does not run: why, and the entry as the connector advertised it. */
export interface UnrunnableScheduleView {
  id: string | null;
  problem: string;
  advertised: unknown;
}

/** A connection's schedules as its owners and admins see them (`GET .../schedules`). */
export function scheduleViews(doc: Pick<SdkConnectionDocument, 'schedules' | 'schedules_since' | 'enabled'>, limits: { maxPayloadBytes: number }, now: Date): Array<ScheduleView | UnrunnableScheduleView> {
  const { schedules } = schedulesOf(doc);
  return readSchedules(schedules, limits).map((read, index) => {
    if (!read.ok) return { id: read.id, problem: read.reason, advertised: schedules[index] };
    const next = doc.enabled ? read.pattern.nextRun(now) : null;
    return { ...read.schedule, next_run_at: next?.toISOString() ?? null, problem: null };
  });
}

export interface SchedulerSettings {
  /** How often the scheduler looks for occurrences due (ORCHESTRATION_SCHEDULE_TICK_MS). */
  tickMs: number;
  /** How far back it looks when it starts (ORCHESTRATION_SCHEDULE_CATCH_UP_SECONDS). */
  catchUpSeconds: number;
}

export interface SchedulerDependencies extends OrchestrationDependencies, ReadModelDependencies {
  logger: Logger;
  scheduleMetrics?: ScheduleMetrics;
}

/** One occurrence the scheduler emitted (or found emitted already: `created` false). */
export interface ScheduledEmit {
  tenant_id: string;
  connection_id: string;
  schedule_id: string;
  occurrence: string;
  event_id: string;
  created: boolean;
}

const PAGE = 500;
/** The first version of the sdk_connections read model with schedules (and its `scheduled` index). */
const SCHEDULES_SINCE_VERSION = 2;

/** Emits the occurrences of the enabled connections' schedules as they come due. */
export class OrchestrationScheduler {
  /** Occurrences up to this time were emitted; null before the first look. */
  private coveredTo: Date | null = null;
  private timer: NodeJS.Timeout | null = null;
  private looking: Promise<ScheduledEmit[]> | null = null;
  private stopped = true;
  /** Each connection's schedules as read, at the revision read: a look parses only what changed since the last. */
  private readByConnection = new Map<string, { revision: number; schedules: ReadSchedule[] }>();
  /** Whether the served sdk_connections read model has schedules: once it has, it always will. */
  private servesSchedules = false;
  private waitingLogged = false;

  constructor(
    private readonly deps: SchedulerDependencies,
    private readonly settings: SchedulerSettings,
  ) {}

  start(): void {
    if (!this.stopped) return;
    this.stopped = false;
    this.plan(0);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    await this.looking?.catch(() => undefined);
  }

  /** Looks once: emits what came due since the last look (since the catch-up window, the first time). */
  runOnce(): Promise<ScheduledEmit[]> {
    this.looking ??= this.look().finally(() => {
      this.looking = null;
    });
    return this.looking;
  }

  private plan(delayMs: number): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => {
      this.timer = null;
      this.runOnce()
        .catch((error: unknown) => this.deps.logger.error({ err: error }, 'orchestration scheduler: the look failed; it is tried again at the next tick'))
        .finally(() => this.plan(this.settings.tickMs));
    }, delayMs);
    this.timer.unref();
  }

  private async look(): Promise<ScheduledEmit[]> {
    if (!(await this.readModelHasSchedules())) return [];
    const now = this.deps.clock.now();
    const from = this.coveredTo ?? new Date(now.getTime() - this.settings.catchUpSeconds * 1000);
    const emitted: ScheduledEmit[] = [];
    let failed = false;
    const connections = this.deps.readStore.collection<SdkConnectionDocument>(SDK_CONNECTIONS);
    const activeTenants = new Map<string, boolean>();
    const isActive = async (tenantId: string): Promise<boolean> => {
      let active = activeTenants.get(tenantId);
      if (active === undefined) {
        active = isActiveTenant(await this.deps.readStore.collection<TenantDocument>(TENANTS).get(tenantId));
        activeTenants.set(tenantId, active);
      }
      return active;
    };
    const readNow = new Map<string, { revision: number; schedules: ReadSchedule[] }>();
    let cursor: string | undefined;
    do {
      // Read only, every tick: the documents the read cache holds (tools and flows and all), not a copy of each.
      const page = await connections.find({ where: { scheduled: true }, limit: PAGE, shared: true, ...(cursor ? { cursor } : {}) });
      for (const doc of page.items) {
        if (!(await isActive(doc.tenant_id))) continue;
        const { schedules, since: startOf } = schedulesOf(doc);
        const known = this.readByConnection.get(doc.id);
        const current = known?.revision === doc.revision ? known : { revision: doc.revision, schedules: readSchedules(schedules, this.deps.orchestration) };
        readNow.set(doc.id, current);
        for (const read of current.schedules) {
          if (!read.ok) continue;
          // From the sync that brought it as it is, or the enabling after: never an occurrence before.
          const runsSince = new Date(startOf[read.schedule.id] ?? now);
          const since = runsSince.getTime() > from.getTime() ? runsSince : from;
          const occurrence = latestOccurrence(read.pattern, since, now);
          if (occurrence === null) continue;
          try {
            const run = await this.emit(doc, read.schedule, occurrence);
            emitted.push(run);
            this.deps.scheduleMetrics?.occurrence(run.created ? 'emitted' : 'found');
          } catch (error) {
            // A refusal (a payload the envelope's rules refuse) will not change by trying again;
            // anything else (the store) is tried again at the next look.
            const refused = error instanceof DomainError;
            if (!refused) failed = true;
            this.deps.scheduleMetrics?.occurrence(refused ? 'refused' : 'failed');
            this.deps.logger.warn({ err: error, tenant_id: doc.tenant_id, connection_id: doc.id, schedule_id: read.schedule.id, occurrence: occurrence.toISOString() }, 'orchestration scheduler: an occurrence could not be emitted');
          }
        }
      }
      cursor = page.next_cursor ?? undefined;
    } while (cursor);
    // Connections no longer scheduled (disabled, deleted, their organization suspended) are forgotten.
    this.readByConnection = readNow;
    if (!failed) this.coveredTo = now;
    this.deps.scheduleMetrics?.looked(now);
    return emitted;
  }

  /**
   * An upgrade rebuilds sdk_connections into a shadow while the older version keeps serving,
   * without schedules or their index. Until the swap the scheduler waits and covers nothing, so
   * its next look reaches back over what came due meanwhile (within the catch-up window).
   */
  private async readModelHasSchedules(): Promise<boolean> {
    if (this.servesSchedules) return true;
    const served = await this.deps.readStore.getProjectionState(sdkConnectionsProjection.name);
    // No state yet: a new store, built by this code from the start.
    this.servesSchedules = served === null || served.version >= SCHEDULES_SINCE_VERSION;
    if (!this.servesSchedules && !this.waitingLogged) {
      this.waitingLogged = true;
      this.deps.logger.info({ projection: sdkConnectionsProjection.name, served: served?.version }, 'orchestration scheduler: waiting for the rebuilt read model with schedules');
    }
    return this.servesSchedules;
  }

  private async emit(doc: SdkConnectionDocument, schedule: Schedule, occurrence: Date): Promise<ScheduledEmit> {
    const key = occurrenceKey(doc.id, schedule.id, occurrence);
    const scheduledFor = occurrence.toISOString();
    const body = { name: schedule.event, source: `schedule:${schedule.id}@${doc.id}`, payload: { ...schedule.payload, scheduled_for: scheduledFor }, idempotency_key: key };
    const outcome = await queueEnvelope(this.deps, doc.tenant_id, body, 'schedule', { ...systemContext(key, ORCHESTRATION_SCHEDULER), tenant_id: doc.tenant_id });
    return { tenant_id: doc.tenant_id, connection_id: doc.id, schedule_id: schedule.id, occurrence: scheduledFor, event_id: outcome.event.value.id, created: outcome.created };
  }
}
