// What the orchestration-event aggregate seals its payloads and step outputs under, and what an
// erased payload reads as (docs/orchestration-events.md, "Payload retention"). Shared with the
// aggregate that erases them (domain/orchestration-payloads).

import { isCalendarDay } from '../shared/calendar-day';
import { type DomainError, invalid } from '../shared/errors';

/** The subject of an organization's payloads received on a day: one key per organization and day. */
export const orchestrationPayloadSubject = (tenantId: string, day: string): string => `orchestration:${tenantId}:${day}`;

const SUBJECT = /^orchestration:(.+):(\d{4}-\d{2}-\d{2})$/;
const DAY_MS = 24 * 3600 * 1000;

/**
 * Days after a day begins before its payloads may be erased: the retention keeps at least the
 * whole day after it (ORCHESTRATION_PAYLOAD_RETENTION_DAYS is 1 or more), so the events of a day
 * and of the day before can always be sealed and read.
 */
export const PAYLOAD_DAY_KEPT_DAYS = 2;

/**
 * When the key of an orchestration payload subject may first be erased (a reader may keep it
 * in memory until then: no process can erase it sooner); null for any other subject.
 */
export function payloadKeyKeptUntil(subject: string): Date | null {
  const match = SUBJECT.exec(subject);
  if (!match || !isCalendarDay(match[2])) return null;
  return new Date(Date.parse(`${match[2]}T00:00:00.000Z`) + PAYLOAD_DAY_KEPT_DAYS * DAY_MS);
}

/** The longest retention, the operator's (ORCHESTRATION_PAYLOAD_RETENTION_DAYS) or an organization's. */
export const MAX_PAYLOAD_RETENTION_DAYS = 3650;

/**
 * How many whole days an organization's payloads are kept: its own setting
 * (`orchestration_payload_retention_days`), within the operator's when that is not 0 (kept
 * until erased otherwise); the operator's when it has none. 0: kept until erased otherwise.
 */
export function payloadRetentionDaysOf(operatorDays: number, organizationDays: number | undefined): number {
  if (organizationDays === undefined) return operatorDays;
  return operatorDays === 0 ? organizationDays : Math.min(operatorDays, organizationDays);
}

/** A delay the payload would not outlive (its retention of `days`, 0: none): 400 `delay_past_retention` naming `delay_seconds`. */
export function delayPastRetention(delaySeconds: number, days: number): DomainError | null {
  if (days <= 0 || delaySeconds <= days * 24 * 3600) return null;
  return invalid('delay_past_retention', `the payload is kept ${days} days after the day it is received: a delay of more than ${days * 24 * 3600} seconds would find it erased`, 'delay_seconds');
}

/** The day (`YYYY-MM-DD`, UTC) of an ISO 8601 time the platform recorded (always UTC, `Z`). */
export const payloadDayOf = (at: string): string => at.slice(0, 10);


/**
 * What an erased payload reads as: a top-level `$erased` no payload may carry (the envelope's
 * rules refuse it), so an erased payload is never taken for one sent so.
 */
export const ERASED_PAYLOAD: Readonly<Record<string, unknown>> = Object.freeze({ $erased: true });

export const isErasedPayload = (payload: Readonly<Record<string, unknown>>): boolean => payload.$erased === true && Object.keys(payload).length === 1;
