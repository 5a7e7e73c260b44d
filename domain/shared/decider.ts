// The shape every aggregate has (Emmett's decider): pure functions of commands, events and
// state. Clock and ids come in through the command or the context, never from here.

import type { Either } from 'fp-ts/Either';
import type { DomainError } from './errors';

/** An event or a command: a tagged record. */
export interface Message<Type extends string = string, Data = unknown> {
  type: Type;
  data: Data;
}

/** What decide may know besides the command and the state. */
export interface DecisionContext {
  now: Date;
}

export interface Decider<Command extends Message, Event extends Message, State> {
  initialState(): State;
  evolve(state: State, event: Event): State;
  decide(command: Command, state: State, context: DecisionContext): Either<DomainError, Event[]>;
}

/** Folds events into state. */
export function foldEvents<Event extends Message, State>(decider: Pick<Decider<Message, Event, State>, 'initialState' | 'evolve'>, events: readonly Event[]): State {
  return events.reduce(decider.evolve, decider.initialState());
}
