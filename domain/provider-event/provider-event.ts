// The provider event aggregate: one webhook event of a payment provider, recorded once it has
// been handled, so that the same event delivered again (providers deliver at least once) is
// recognised and not applied twice. Stream `providerEvent-<digest of provider and event id>`:
// the provider's ids are not ours to put in a stream name as they are.
//
// The outcome says what the platform did with it: `applied` (a payment recorded),
// `ignored_unknown_checkout` (it names a checkout the platform never opened: recorded, not
// acted on) or `ignored` (a kind of event the platform does not act on).

import * as t from 'io-ts';
import { type Either, right } from 'fp-ts/Either';
import type { Decider } from '../shared/decider';
import type { DomainError } from '../shared/errors';
import { declareEvent, eventGroup, type GroupEvent } from '../shared/events';
import { toStreamName } from '../shared/stream-names';

export const PROVIDER_EVENT_OUTCOMES = ['applied', 'ignored_unknown_checkout', 'ignored'] as const;
export type ProviderEventOutcome = (typeof PROVIDER_EVENT_OUTCOMES)[number];

const Outcome = t.keyof({ applied: null, ignored_unknown_checkout: null, ignored: null });

const Receipt = t.type({
  provider: t.string,
  event_id: t.string,
  /** `checkout_paid`, `checkout_failed`, or the provider's own type of an event the platform does not act on. */
  kind: t.string,
  checkout_id: t.union([t.string, t.null]),
  outcome: Outcome,
});
export type ProviderEventReceipt = t.TypeOf<typeof Receipt>;

export const ProviderEventReceived = declareEvent('ProviderEventReceived', t.intersection([Receipt, t.type({ received_at: t.string })]));

export const providerEventEvents = eventGroup('providerEvent', [ProviderEventReceived]);
export type ProviderEventEvent = GroupEvent<typeof providerEventEvents>;

export type ProviderEventCommand = { type: 'RecordProviderEvent'; data: ProviderEventReceipt };

export type ProviderEventState = { status: 'absent' } | ({ status: 'received'; received_at: string } & ProviderEventReceipt);

/** `key` is a digest of the provider's name and its event id (application/provider-event). */
export const providerEventStream = (key: string): string => toStreamName(providerEventEvents.category, key);

export const providerEventDecider: Decider<ProviderEventCommand, ProviderEventEvent, ProviderEventState> = {
  initialState: () => ({ status: 'absent' }),
  evolve(_state, event) {
    return { status: 'received', ...event.data };
  },
  decide(command, state, { now }): Either<DomainError, ProviderEventEvent[]> {
    // The first record stands; the event delivered again records nothing.
    if (state.status === 'received') return right([]);
    return right([{ type: 'ProviderEventReceived', data: { ...command.data, received_at: now.toISOString() } }]);
  },
};
