// A refused request, recorded so that the audit log shows permission denials too. Each
// denial is its own one-event stream `accessDenial-<id>`: nothing ever reads them back as
// an aggregate, so one growing stream per tenant would only cost reads.

import * as t from 'io-ts';
import { type Either, right } from 'fp-ts/Either';
import { declareEvent, eventGroup, type GroupEvent } from '../shared/events';
import type { Decider } from '../shared/decider';
import type { DomainError } from '../shared/errors';
import { toStreamName } from '../shared/stream-names';

export const AccessDenied = declareEvent(
  'AccessDenied',
  t.type({ tenant_id: t.string, user_id: t.string, method: t.string, path: t.string, code: t.string, denied_at: t.string }),
);
export const accessDenialEvents = eventGroup('accessDenial', [AccessDenied]);
export type AccessDenialEvent = GroupEvent<typeof accessDenialEvents>;

export type AccessDenialCommand = { type: 'RecordAccessDenial'; data: Omit<AccessDenialEvent['data'], 'denied_at'> };

export const accessDenialStream = (id: string): string => toStreamName(accessDenialEvents.category, id);

export const accessDenialDecider: Decider<AccessDenialCommand, AccessDenialEvent, null> = {
  initialState: () => null,
  evolve: (state) => state,
  decide(command, _state, { now }): Either<DomainError, AccessDenialEvent[]> {
    return right([{ type: 'AccessDenied', data: { ...command.data, denied_at: now.toISOString() } }]);
  },
};
