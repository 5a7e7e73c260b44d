// A refused request, recorded so that the audit log shows permission denials too. Each
// denial is its own one-event stream `accessDenial-<id>`: nothing ever reads them back as
// an aggregate, so one growing stream per tenant would only cost reads.
//
// Recording is bounded per principal and minute (application/access-denial): past the
// bound, denials are only counted, and the count is recorded once for the window as
// `AccessDenialsSuppressed`, so a member cannot grow the log at will.

import * as t from 'io-ts';
import { type Either, right } from 'fp-ts/Either';
import { type EventOf, declareEvent, eventGroup, type GroupEvent } from '../shared/events';
import type { Decider } from '../shared/decider';
import type { DomainError } from '../shared/errors';
import { toStreamName } from '../shared/stream-names';

export const AccessDenied = declareEvent(
  'AccessDenied',
  t.type({ tenant_id: t.string, user_id: t.string, method: t.string, path: t.string, code: t.string, denied_at: t.string }),
);
/** Denials of one principal in one window past the bound: counted, not recorded one by one. */
export const AccessDenialsSuppressed = declareEvent(
  'AccessDenialsSuppressed',
  t.type({ tenant_id: t.string, user_id: t.string, count: t.number, window_start: t.string, window_end: t.string }),
);
export const accessDenialEvents = eventGroup('accessDenial', [AccessDenied, AccessDenialsSuppressed]);
export type AccessDenialEvent = GroupEvent<typeof accessDenialEvents>;

export type AccessDenialCommand =
  | { type: 'RecordAccessDenial'; data: Omit<EventOf<typeof AccessDenied>['data'], 'denied_at'> }
  | { type: 'RecordSuppressedAccessDenials'; data: EventOf<typeof AccessDenialsSuppressed>['data'] };

export const accessDenialStream = (id: string): string => toStreamName(accessDenialEvents.category, id);

export const accessDenialDecider: Decider<AccessDenialCommand, AccessDenialEvent, null> = {
  initialState: () => null,
  evolve: (state) => state,
  decide(command, _state, { now }): Either<DomainError, AccessDenialEvent[]> {
    switch (command.type) {
      case 'RecordAccessDenial':
        return right([{ type: 'AccessDenied', data: { ...command.data, denied_at: now.toISOString() } }]);
      case 'RecordSuppressedAccessDenials':
        return right(command.data.count > 0 ? [{ type: 'AccessDenialsSuppressed', data: command.data }] : []);
    }
  },
};
