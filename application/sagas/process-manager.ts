// What a process manager is (Emmett's Workflow, in our words): pure functions, like a
// decider. `evolve` folds the events of the stream it looks after into its state; `decide`
// takes one input (the triggering event, "this is due", the answer of an outside call) and
// returns what should happen: commands to aggregates and requests for outside calls, or
// nothing. No I/O, no clock (`now` comes in the context): the saga around it reads the
// stream, performs the calls and runs the commands, and is the only part that can fail.
//
// The rule every process manager keeps: it looks at the state before asking for a side
// effect, so an input delivered twice asks for nothing the second time.

import type { DecisionContext, Message } from '../../domain/shared/decider';

export interface ProcessManager<Input extends Message, Event extends Message, State, Output extends Message> {
  initialState(): State;
  evolve(state: State, event: Event): State;
  /** What the input calls for, given the state; [] when nothing (already done, not due). */
  decide(input: Input, state: State, context: DecisionContext): Output[];
}
