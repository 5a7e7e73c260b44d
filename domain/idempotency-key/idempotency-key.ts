// The idempotency key aggregate: a client's `Idempotency-Key` on a creating route, scoped to
// its caller and route. Stream `idempotencyKey-<keyed digest of scope and key>` (the key is
// the client's text, so it never goes into a stream name as is).
//
// - The first request claims the key and runs; its 2xx answer is recorded (sealed) and is the
//   answer to every retry with the same request until `expires_at`. An answer that holds a
//   data subject's personal data (a chat answer: the conversation's texts) is recorded as
//   `IdempotentPersonalAnswerRecorded`, sealed under that subject's key, so erasing the
//   subject erases this copy too (docs/personal-data.md); any other under the data key.
// - The same key with another request is refused (422 `idempotency_key_reused`) for as long as
//   the key is bound.
// - A claim is held for `hold_seconds`: a retry meanwhile is refused (409
//   `idempotency_key_in_use`); a holder that crashed lets the hold lapse and the next retry
//   takes the claim over.
// - A request that was not answered 2xx releases the key, so the client may retry it.
// - `cycle` counts the lives of the key: a key whose answer (or unanswered claim) expired
//   starts a new cycle, a new request. The cycle and the request's hash seed the ids of what
//   the request creates, so a takeover or a retry after a release recreates the same ids and
//   appends nothing twice.

import * as t from 'io-ts';
import { type Either, left, right } from 'fp-ts/Either';
import { declareEvent, eventGroup, type GroupEvent } from '../shared/events';
import { toStreamName } from '../shared/stream-names';
import type { Decider } from '../shared/decider';
import { DomainError, conflict } from '../shared/errors';

export const IdempotencyKeyClaimed = declareEvent(
  'IdempotencyKeyClaimed',
  t.type({ claim_id: t.string, request_hash: t.string, cycle: t.number, held_until: t.string, expires_at: t.string }),
);
export const IdempotentAnswerRecorded = declareEvent(
  'IdempotentAnswerRecorded',
  t.type({ claim_id: t.string, status: t.number, answer_sealed: t.string, expires_at: t.string }),
);
/** `answer` (the answer's JSON text) is personal data of `subject`, sealed under its key. */
export const IdempotentPersonalAnswerRecorded = declareEvent(
  'IdempotentPersonalAnswerRecorded',
  t.type({ claim_id: t.string, status: t.number, subject: t.string, answer: t.string, expires_at: t.string }),
);
export const IdempotencyKeyReleased = declareEvent('IdempotencyKeyReleased', t.type({ claim_id: t.string }));
export const idempotencyKeyEvents = eventGroup('idempotencyKey', [IdempotencyKeyClaimed, IdempotentAnswerRecorded, IdempotentPersonalAnswerRecorded, IdempotencyKeyReleased], {
  // Each answer names its own subject; erasing that subject (its own aggregate's event) erases the copy.
  subject: (data) => String(data.subject),
  fields: { IdempotentPersonalAnswerRecorded: ['answer'] },
});
export type IdempotencyKeyEvent = GroupEvent<typeof idempotencyKeyEvents>;

/** An answer as kept: sealed with the data key, or personal data of a subject (opened by the store). */
export type KeptAnswer = { kind: 'sealed'; answer_sealed: string } | { kind: 'personal'; subject: string; answer: string };

export type IdempotencyKeyCommand =
  | { type: 'ClaimIdempotencyKey'; data: { claim_id: string; request_hash: string; hold_seconds: number; ttl_seconds: number } }
  | { type: 'RecordIdempotentAnswer'; data: { claim_id: string; status: number; answer: KeptAnswer; ttl_seconds: number } }
  | { type: 'ReleaseIdempotencyKey'; data: { claim_id: string } };

export type IdempotencyKeyState =
  | { status: 'free'; cycle: number }
  | { status: 'in_flight'; cycle: number; claim_id: string; request_hash: string; held_until: string; expires_at: string }
  | { status: 'answered'; cycle: number; request_hash: string; status_code: number; answer: KeptAnswer; expires_at: string };

export const idempotencyKeyStream = (id: string): string => toStreamName(idempotencyKeyEvents.category, id);

const reused = (): DomainError =>
  new DomainError('unprocessable', 'idempotency_key_reused', 'this Idempotency-Key was sent with another request; use a new key for a new request', 'Idempotency-Key');
const inUse = (): DomainError => conflict('idempotency_key_in_use', 'a request with this Idempotency-Key is still running; retry in a moment');

const isPast = (instant: string, now: Date): boolean => Date.parse(instant) <= now.getTime();
const after = (now: Date, seconds: number): string => new Date(now.getTime() + seconds * 1000).toISOString();

export const idempotencyKeyDecider: Decider<IdempotencyKeyCommand, IdempotencyKeyEvent, IdempotencyKeyState> = {
  initialState: () => ({ status: 'free', cycle: 0 }),
  evolve(state, event) {
    switch (event.type) {
      case 'IdempotencyKeyClaimed':
        return { status: 'in_flight', ...event.data };
      case 'IdempotentAnswerRecorded':
      case 'IdempotentPersonalAnswerRecorded': {
        if (state.status !== 'in_flight') return state;
        const answer: KeptAnswer =
          event.type === 'IdempotentAnswerRecorded' ? { kind: 'sealed', answer_sealed: event.data.answer_sealed } : { kind: 'personal', subject: event.data.subject, answer: event.data.answer };
        return { status: 'answered', cycle: state.cycle, request_hash: state.request_hash, status_code: event.data.status, answer, expires_at: event.data.expires_at };
      }
      case 'IdempotencyKeyReleased':
        return { status: 'free', cycle: state.cycle };
    }
  },
  decide(command, state, { now }): Either<DomainError, IdempotencyKeyEvent[]> {
    switch (command.type) {
      case 'ClaimIdempotencyKey': {
        const { claim_id, request_hash } = command.data;
        const claimed = (cycle: number): Either<DomainError, IdempotencyKeyEvent[]> =>
          right([{ type: 'IdempotencyKeyClaimed', data: { claim_id, request_hash, cycle, held_until: after(now, command.data.hold_seconds), expires_at: after(now, command.data.ttl_seconds) } }]);
        if (state.status === 'free') return claimed(state.cycle);
        if (isPast(state.expires_at, now)) return claimed(state.cycle + 1);
        if (state.request_hash !== request_hash) return left(reused());
        // The same request again: its answer is there to replay, or it is still running.
        if (state.status === 'answered') return right([]);
        return isPast(state.held_until, now) ? claimed(state.cycle) : left(inUse());
      }
      case 'RecordIdempotentAnswer': {
        // A claim taken over (or released) meanwhile belongs to another request, which answers.
        if (state.status !== 'in_flight' || state.claim_id !== command.data.claim_id) return right([]);
        const { claim_id, status, answer, ttl_seconds } = command.data;
        const expires_at = after(now, ttl_seconds);
        if (answer.kind === 'sealed') return right([{ type: 'IdempotentAnswerRecorded', data: { claim_id, status, answer_sealed: answer.answer_sealed, expires_at } }]);
        return right([{ type: 'IdempotentPersonalAnswerRecorded', data: { claim_id, status, subject: answer.subject, answer: answer.answer, expires_at } }]);
      }
      case 'ReleaseIdempotencyKey':
        if (state.status !== 'in_flight' || state.claim_id !== command.data.claim_id) return right([]);
        return right([{ type: 'IdempotencyKeyReleased', data: { claim_id: command.data.claim_id } }]);
    }
  },
};
