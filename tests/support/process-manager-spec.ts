// given/when/then over a process manager: given the events of its stream(s), when an input
// (a trigger, "this is due", an outside call's answer), then the commands and calls it asks
// for, or nothing.

import { expect } from 'chai';
import type { Message } from '../../domain/shared/decider';
import type { ProcessManager } from '../../application/sagas/process-manager';
import { FIXED_NOW } from './decider-spec';

export function processManagerSpec<Input extends Message, Event extends Message, State, Output extends Message>(
  processManager: ProcessManager<Input, Event, State, Output>,
  now: Date = FIXED_NOW,
) {
  return {
    given(events: Event[]) {
      return {
        when(input: Input, at: Date = now) {
          const state = events.reduce(processManager.evolve, processManager.initialState());
          const outputs = processManager.decide(input, state, { now: at });
          return {
            then(expected: Output[]): void {
              expect(expected, 'use thenNothingHappened() to expect nothing').to.not.be.empty;
              expect(outputs).to.deep.equal(expected);
            },
            /** Nothing to do: already done, not due, or out of date. */
            thenNothingHappened(): void {
              expect(outputs).to.deep.equal([]);
            },
          };
        },
      };
    },
  };
}
