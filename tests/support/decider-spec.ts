// given/when/then over a decider: given events, when a command, then events or an error.

import { expect } from 'chai';
import { isLeft } from 'fp-ts/Either';
import type { Decider, Message } from '../../domain/shared/decider';
import { DomainError } from '../../domain/shared/errors';

export const FIXED_NOW = new Date('2026-11-22T10:00:00.000Z');

export function deciderSpec<Command extends Message, Event extends Message, State>(decider: Decider<Command, Event, State>, now: Date = FIXED_NOW) {
  return {
    given(events: Event[]) {
      return {
        when(command: Command) {
          const state = events.reduce(decider.evolve, decider.initialState());
          const decision = decider.decide(command, state, { now });
          return {
            then(expected: Event[]): void {
              if (isLeft(decision)) throw new Error(`expected events, got ${decision.left.code}: ${decision.left.message}`);
              expect(decision.right).to.deep.equal(expected);
            },
            thenThrows(kind: DomainError['kind'], code: string, field?: string): void {
              if (!isLeft(decision)) throw new Error(`expected ${code}, got events ${JSON.stringify(decision.right)}`);
              expect(decision.left).to.be.instanceOf(DomainError);
              expect({ kind: decision.left.kind, code: decision.left.code }).to.deep.equal({ kind, code });
              if (field !== undefined) expect(decision.left.field).to.equal(field);
            },
          };
        },
      };
    },
  };
}
