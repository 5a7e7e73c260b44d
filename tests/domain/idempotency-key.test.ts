import { idempotencyKeyDecider } from '../../domain/idempotency-key/idempotency-key';
import { FIXED_NOW, deciderSpec } from '../support/decider-spec';

const at = (seconds: number): string => new Date(FIXED_NOW.getTime() + seconds * 1000).toISOString();
const spec = deciderSpec(idempotencyKeyDecider);
const later = (seconds: number) => deciderSpec(idempotencyKeyDecider, new Date(FIXED_NOW.getTime() + seconds * 1000));

const claim = (claim_id: string, request_hash = 'h1') =>
  ({ type: 'ClaimIdempotencyKey', data: { claim_id, request_hash, hold_seconds: 30, ttl_seconds: 3600 } }) as const;
const claimed = (claim_id: string, cycle = 0, request_hash = 'h1', offset = 0) =>
  ({ type: 'IdempotencyKeyClaimed', data: { claim_id, request_hash, cycle, held_until: at(offset + 30), expires_at: at(offset + 3600) } }) as const;
const answered = { type: 'IdempotentAnswerRecorded', data: { claim_id: 'c1', status: 201, answer_sealed: 'sealed', expires_at: at(3600) } } as const;
const record = (claim_id: string) => ({ type: 'RecordIdempotentAnswer', data: { claim_id, status: 201, answer: { kind: 'sealed', answer_sealed: 'sealed' }, ttl_seconds: 3600 } }) as const;

describe('idempotency key decider', () => {
  it('claims an unused key in cycle 0, held and bound from now', () => {
    spec.given([]).when(claim('c1')).then([claimed('c1')]);
  });

  it('refuses the same request while it runs (409) and another request at any time (422)', () => {
    spec.given([claimed('c1')]).when(claim('c2')).thenThrows('conflict', 'idempotency_key_in_use');
    spec.given([claimed('c1')]).when(claim('c2', 'h2')).thenThrows('unprocessable', 'idempotency_key_reused', 'Idempotency-Key');
    spec.given([claimed('c1'), answered]).when(claim('c2', 'h2')).thenThrows('unprocessable', 'idempotency_key_reused');
    later(31).given([claimed('c1')]).when(claim('c2', 'h2')).thenThrows('unprocessable', 'idempotency_key_reused');
  });

  it('records nothing for the same request once answered: the answer is replayed', () => {
    spec.given([claimed('c1'), answered]).when(claim('c2')).thenNothingHappened();
  });

  it('lets a retry take over a claim whose hold lapsed, in the same cycle', () => {
    later(31).given([claimed('c1')]).when(claim('c2')).then([claimed('c2', 0, 'h1', 31)]);
  });

  it('starts a new cycle once the answer, or an unanswered claim, expired', () => {
    later(3600).given([claimed('c1'), answered]).when(claim('c2', 'h2')).then([claimed('c2', 1, 'h2', 3600)]);
    later(3600).given([claimed('c1')]).when(claim('c2', 'h2')).then([claimed('c2', 1, 'h2', 3600)]);
  });

  it('frees a released key for any request, in the same cycle', () => {
    const released = { type: 'IdempotencyKeyReleased', data: { claim_id: 'c1' } } as const;
    spec.given([claimed('c1')]).when({ type: 'ReleaseIdempotencyKey', data: { claim_id: 'c1' } }).then([released]);
    spec.given([claimed('c1'), released]).when(claim('c2', 'h2')).then([claimed('c2', 0, 'h2')]);
  });

  it('records the answer of the current claim only', () => {
    spec.given([claimed('c1')]).when(record('c1')).then([answered]);
    later(31).given([claimed('c1'), claimed('c2', 0, 'h1', 31)]).when(record('c1')).thenNothingHappened();
    spec.given([claimed('c1')]).when({ type: 'ReleaseIdempotencyKey', data: { claim_id: 'c2' } }).thenNothingHappened();
  });

  it('records an answer holding personal data under its subject, and replays it like any other', () => {
    const personal = { kind: 'personal', subject: 'conversation:k1', answer: '{"body":{"text":"hi"}}' } as const;
    const recorded = { type: 'IdempotentPersonalAnswerRecorded', data: { claim_id: 'c1', status: 200, subject: 'conversation:k1', answer: personal.answer, expires_at: at(3600) } } as const;
    spec.given([claimed('c1')]).when({ type: 'RecordIdempotentAnswer', data: { claim_id: 'c1', status: 200, answer: personal, ttl_seconds: 3600 } }).then([recorded]);
    spec.given([claimed('c1'), recorded]).when(claim('c2')).thenNothingHappened();
    spec.given([claimed('c1'), recorded]).when(claim('c2', 'h2')).thenThrows('unprocessable', 'idempotency_key_reused');
  });
});
