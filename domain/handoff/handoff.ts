// The handoff aggregate: one delivery of a conversation that a person took over to the
// tenant's handoff webhook. Stream `handoff-<id>`, the id being the id of the triggering
// `ConversationStatusChanged` event, so a redelivered trigger finds the handoff it started
// and the receiver gets one delivery id per handoff (its idempotency key).
//
// Every attempt, failure, scheduled retry and the final give-up is an event here (the
// pattern of domain/email): the stream alone says whether the conversation reached the
// webhook, is being posted, waits for its next attempt, or was given up.

import * as t from 'io-ts';
import { type Either, left, right } from 'fp-ts/Either';
import type { Decider } from '../shared/decider';
import { type DomainError, conflict, notFound } from '../shared/errors';
import { type EventOf, declareEvent, eventGroup, type GroupEvent } from '../shared/events';
import { toStreamName } from '../shared/stream-names';

const Actor = t.type({ kind: t.string, id: t.string });

export const HandoffRequested = declareEvent(
  'HandoffRequested',
  t.type({
    handoff_id: t.string,
    tenant_id: t.string,
    conversation_id: t.string,
    /** The conversation's revision at the hand-off: the payload shows the conversation up to there, the same on every attempt. */
    conversation_revision: t.number,
    /** Who handed it off (the actor of the status change). */
    handed_off_by: Actor,
    handed_off_at: t.string,
    /** The webhook configured when it was requested. */
    url: t.string,
    requested_at: t.string,
  }),
);
/** An attempt is claimed before the webhook is called: of two deliveries racing, one posts. */
export const HandoffAttemptStarted = declareEvent('HandoffAttemptStarted', t.type({ handoff_id: t.string, attempt: t.number, url: t.string, started_at: t.string }));
export const HandoffDelivered = declareEvent('HandoffDelivered', t.type({ handoff_id: t.string, attempt: t.number, status_code: t.number, delivered_at: t.string }));
/** An attempt failed (no answer, or not 2xx); the next one is due at `next_attempt_at`. */
export const HandoffDeliveryFailed = declareEvent(
  'HandoffDeliveryFailed',
  t.type({ handoff_id: t.string, attempt: t.number, status_code: t.union([t.number, t.null]), error: t.string, failed_at: t.string, next_attempt_at: t.string }),
);
/**
 * No more attempts: the last one failed (`reason: 'attempts_exhausted'`), or the handoff had no
 * point any more (`'withdrawn'`: the tenant turned handoffs off meanwhile, or the conversation
 * was erased). Recorded without a reason before the reason was.
 */
export const HandoffAbandoned = declareEvent(
  'HandoffAbandoned',
  t.intersection([
    t.type({ handoff_id: t.string, attempts: t.number, status_code: t.union([t.number, t.null]), error: t.string, abandoned_at: t.string }),
    t.partial({ reason: t.keyof({ attempts_exhausted: null, withdrawn: null }) }),
  ]),
);
export type HandoffAbandonReason = 'attempts_exhausted' | 'withdrawn';

export const handoffEvents = eventGroup('handoff', [HandoffRequested, HandoffAttemptStarted, HandoffDelivered, HandoffDeliveryFailed, HandoffAbandoned]);
export type HandoffEvent = GroupEvent<typeof handoffEvents>;
export type HandoffRequestedData = EventOf<typeof HandoffRequested>['data'];

export type HandoffCommand =
  | { type: 'RequestHandoff'; data: Omit<HandoffRequestedData, 'requested_at'> }
  | { type: 'StartHandoffAttempt'; data: { attempt: number; url: string } }
  | { type: 'RecordHandoffDelivered'; data: { attempt: number; status_code: number } }
  | { type: 'RecordHandoffFailure'; data: { attempt: number; status_code: number | null; error: string; next_attempt_at: string } }
  | { type: 'AbandonHandoff'; data: { attempt: number; status_code: number | null; error: string; reason: HandoffAbandonReason } };

interface Delivery {
  request: HandoffRequestedData;
  /** Attempts started so far. */
  attempts: number;
  last_error: string | null;
}

export type HandoffState =
  | { status: 'absent' }
  | ({ status: 'requested' } & Delivery)
  | ({ status: 'sending'; started_at: string } & Delivery)
  | ({ status: 'retrying'; next_attempt_at: string } & Delivery)
  | ({ status: 'delivered' } & Delivery)
  | ({ status: 'abandoned' } & Delivery);

export type HandoffStatus = HandoffState['status'];

export const handoffStream = (handoffId: string): string => toStreamName(handoffEvents.category, handoffId);

const deliveryOf = ({ request, attempts, last_error }: Delivery): Delivery => ({ request, attempts, last_error });

export const handoffDecider: Decider<HandoffCommand, HandoffEvent, HandoffState> = {
  initialState: () => ({ status: 'absent' }),
  evolve(state, event) {
    if (event.type === 'HandoffRequested') return { status: 'requested', request: event.data, attempts: 0, last_error: null };
    if (state.status === 'absent') return state;
    const delivery = deliveryOf(state);
    switch (event.type) {
      case 'HandoffAttemptStarted':
        return { ...delivery, status: 'sending', attempts: event.data.attempt, started_at: event.data.started_at };
      case 'HandoffDelivered':
        return { ...delivery, status: 'delivered' };
      case 'HandoffDeliveryFailed':
        return { ...delivery, status: 'retrying', attempts: Math.max(delivery.attempts, event.data.attempt), last_error: event.data.error, next_attempt_at: event.data.next_attempt_at };
      case 'HandoffAbandoned':
        return { ...delivery, status: 'abandoned', last_error: event.data.error };
    }
  },
  decide(command, state, { now }): Either<DomainError, HandoffEvent[]> {
    const at = now.toISOString();
    if (command.type === 'RequestHandoff') {
      if (state.status !== 'absent') return left(conflict('handoff_exists', 'this handoff was already requested'));
      return right([{ type: 'HandoffRequested', data: { ...command.data, requested_at: at } }]);
    }
    if (state.status === 'absent') return left(notFound('handoff_not_found', 'no such handoff'));
    const handoff_id = state.request.handoff_id;
    // Claims and outcomes that no longer fit the state (another delivery settled the attempt
    // first) record nothing: the stream already says what happened.
    switch (command.type) {
      case 'StartHandoffAttempt': {
        const next = state.status === 'requested' || state.status === 'retrying' ? state.attempts + 1 : null;
        return right(command.data.attempt === next ? [{ type: 'HandoffAttemptStarted', data: { handoff_id, attempt: next, url: command.data.url, started_at: at } }] : []);
      }
      case 'RecordHandoffDelivered':
        // A late success is still the truth, whatever was decided meanwhile.
        return right(state.status === 'delivered' ? [] : [{ type: 'HandoffDelivered', data: { handoff_id, ...command.data, delivered_at: at } }]);
      case 'RecordHandoffFailure':
        if (state.status !== 'sending' || state.attempts !== command.data.attempt) return right([]);
        return right([{ type: 'HandoffDeliveryFailed', data: { handoff_id, ...command.data, failed_at: at } }]);
      case 'AbandonHandoff': {
        // After the attempt that failed last; or, waiting for an attempt (the tenant turned
        // handoffs off meanwhile), after the attempts made so far.
        const settles = state.status === 'sending' || state.status === 'requested' || state.status === 'retrying';
        if (!settles || state.attempts !== command.data.attempt) return right([]);
        const { attempt, status_code, error, reason } = command.data;
        return right([{ type: 'HandoffAbandoned', data: { handoff_id, attempts: attempt, status_code, error, reason, abandoned_at: at } }]);
      }
    }
  },
};
