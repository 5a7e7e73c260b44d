// The erasure of an organization's orchestration payloads of one day (docs/orchestration-events.md,
// "Payload retention"): one stream per organization and day, `orchestrationPayloads-<tenant id>:<day>`.
// Recording OrchestrationPayloadsErased deletes the key the payloads and step outputs of the
// events received that day are sealed under (domain/orchestration-event/payloads.ts), so they
// read as erased everywhere from then on: in the event log, in any rebuild, in the read model
// (whose copies the projection scrubs). The retention records it for each day once
// ORCHESTRATION_PAYLOAD_RETENTION_DAYS have passed since; an owner or admin, for the days before
// a date (application/orchestration/payload-retention.ts). It cannot be undone.

import * as t from 'io-ts';
import { type Either, left, right } from 'fp-ts/Either';
import type { Decider } from '../shared/decider';
import { type DomainError, invalid } from '../shared/errors';
import { declareEvent, eventGroup, type GroupEvent } from '../shared/events';
import { toStreamName } from '../shared/stream-names';
import { isCalendarDay } from '../shared/calendar-day';
import { orchestrationPayloadSubject } from '../orchestration-event/payloads';

/** Why a day's payloads were erased: its retention passed, or an owner or admin asked. */
export const PayloadErasureReason = t.keyof({ retention: null, request: null });
export type PayloadErasureReason = t.TypeOf<typeof PayloadErasureReason>;

export const OrchestrationPayloadsErased = declareEvent(
  'OrchestrationPayloadsErased',
  t.type({
    tenant_id: t.string,
    /** The day the events were received, `YYYY-MM-DD` (UTC). */
    day: t.string,
    reason: PayloadErasureReason,
    erased_at: t.string,
  }),
);

export const orchestrationPayloadsEvents = eventGroup('orchestrationPayloads', [OrchestrationPayloadsErased], {
  subject: (data) => orchestrationPayloadSubject(String(data.tenant_id), String(data.day)),
  fields: {},
  erasedBy: 'OrchestrationPayloadsErased',
});
export type OrchestrationPayloadsEvent = GroupEvent<typeof orchestrationPayloadsEvents>;

export const orchestrationPayloadsStream = (tenantId: string, day: string): string => toStreamName(orchestrationPayloadsEvents.category, `${tenantId}:${day}`);

export type OrchestrationPayloadsCommand = { type: 'EraseOrchestrationPayloads'; data: { tenant_id: string; day: string; reason: PayloadErasureReason } };

export type OrchestrationPayloadsState = { status: 'kept' } | { status: 'erased'; erased_at: string };

export const orchestrationPayloadsDecider: Decider<OrchestrationPayloadsCommand, OrchestrationPayloadsEvent, OrchestrationPayloadsState> = {
  initialState: () => ({ status: 'kept' }),
  evolve: (_state, event) => ({ status: 'erased', erased_at: event.data.erased_at }),
  decide(command, state, { now }): Either<DomainError, OrchestrationPayloadsEvent[]> {
    const { tenant_id, day, reason } = command.data;
    if (!isCalendarDay(day)) return left(invalid('invalid_request', 'day must be a calendar day, YYYY-MM-DD', 'day'));
    // Erased before: once is for good.
    if (state.status === 'erased') return right([]);
    return right([{ type: 'OrchestrationPayloadsErased', data: { tenant_id, day, reason, erased_at: now.toISOString() } }]);
  },
};
