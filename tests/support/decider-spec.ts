// given/when/then over a decider: given events, when a command, then events, nothing, or an
// error (a refusal that still records events is asserted with both).

import { expect } from 'chai';
import { isLeft } from 'fp-ts/Either';
import type { Decider, Message } from '../../domain/shared/decider';
import { DomainError, RejectionWithEvents } from '../../domain/shared/errors';

export const FIXED_NOW = new Date('2026-11-22T10:00:00.000Z');

export function deciderSpec<Command extends Message, Event extends Message, State>(decider: Decider<Command, Event, State>, now: Date = FIXED_NOW) {
  return {
    given(events: Event[]) {
      return {
        when(command: Command) {
          const state = events.reduce(decider.evolve, decider.initialState());
          const decision = decider.decide(command, state, { now });
          const expectRefusal = (kind: DomainError['kind'], code: string, field?: string): DomainError => {
            if (!isLeft(decision)) throw new Error(`expected ${code}, got events ${JSON.stringify(decision.right)}`);
            expect(decision.left).to.be.instanceOf(DomainError);
            expect({ kind: decision.left.kind, code: decision.left.code }).to.deep.equal({ kind, code });
            if (field !== undefined) expect(decision.left.field).to.equal(field);
            return decision.left;
          };
          return {
            then(expected: Event[]): void {
              if (isLeft(decision)) throw new Error(`expected events, got ${decision.left.code}: ${decision.left.message}`);
              expect(expected, 'use thenNothingHappened() to expect no events').to.not.be.empty;
              expect(decision.right).to.deep.equal(expected);
            },
            /** Accepted, and nothing to record (an idempotent repeat). */
            thenNothingHappened(): void {
              if (isLeft(decision)) throw new Error(`expected no events, got ${decision.left.code}: ${decision.left.message}`);
              expect(decision.right).to.deep.equal([]);
            },
            /** Refused, with nothing recorded. */
            thenThrows(kind: DomainError['kind'], code: string, field?: string): void {
              const refusal = expectRefusal(kind, code, field);
              expect(refusal instanceof RejectionWithEvents ? refusal.events : [], 'the refusal records events: use thenRejectsWithEvents').to.deep.equal([]);
            },
            /** Refused, and the refusal itself is recorded (a failed attempt counts). */
            thenRejectsWithEvents(kind: DomainError['kind'], code: string, expected: Event[]): void {
              const refusal = expectRefusal(kind, code);
              expect(refusal, 'a refusal that records events').to.be.instanceOf(RejectionWithEvents);
              expect((refusal as RejectionWithEvents<Event>).events).to.deep.equal(expected);
            },
          };
        },
      };
    },
  };
}
