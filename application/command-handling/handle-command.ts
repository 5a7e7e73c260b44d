// The one command handler: load the stream, fold `evolve`, run `decide`, append with the
// revision that was read, and retry a bounded number of times when another writer got
// there first. Every write in the platform goes through here.

import { isLeft } from 'fp-ts/Either';
import type * as t from 'io-ts';
import type { Decider, Message } from '../../domain/shared/decider';
import { DomainError, RejectionWithEvents } from '../../domain/shared/errors';
import type { Clock, IdGenerator } from '../ports/clock';
import { type EventStore, type NewEvent, type RecordedEvent, WrongExpectedRevisionError } from '../ports/event-store';
import { type RequestContext, eventMetadata } from '../shared/request-context';

export interface CommandDependencies {
  eventStore: EventStore;
  clock: Clock;
  ids: IdGenerator;
}

/** An aggregate as the handler needs it: its decider and the codec its events decode with. */
export interface Aggregate<Command extends Message, Event extends Message, State> {
  decider: Decider<Command, Event, State>;
  events: t.Decoder<unknown, Event>;
  /** Maps an old event shape to the current one; history is never rewritten. */
  upcast?(event: Message): Message;
}

export interface HandleOptions {
  /** The revision the client last saw (If-Match); a mismatch is 412, with no retry. */
  expectedRevision?: number;
  /** Derives event ids from this key, so a redelivered trigger appends nothing new. */
  idempotencyKey?: string;
  /** Tenant written into the metadata when it differs from the caller's (tenant creation). */
  tenantId?: string | null;
  maxAttempts?: number;
}

export interface CommandResult<Event extends Message> {
  stream: string;
  events: Event[];
  /** The stream's revision after the command; -1 when it still has no events. */
  revision: number;
  /** Commit position of the last event appended; null when the command appended nothing. */
  position: number | null;
}

const DEFAULT_MAX_ATTEMPTS = 10;

/** Spreads the retries of writers that lost the same race, so they do not collide again. */
const jitter = (attempt: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, Math.random() * Math.min(50, 2 ** attempt)));

export async function handleCommand<Command extends Message, Event extends Message, State>(
  deps: CommandDependencies,
  aggregate: Aggregate<Command, Event, State>,
  stream: string,
  command: Command,
  context: RequestContext,
  options: HandleOptions = {},
): Promise<CommandResult<Event>> {
  const maxAttempts = options.expectedRevision === undefined ? (options.maxAttempts ?? DEFAULT_MAX_ATTEMPTS) : 1;
  for (let attempt = 1; ; attempt += 1) {
    const recorded = await deps.eventStore.readStream(stream);
    const revision = recorded.length > 0 ? recorded[recorded.length - 1].revision : -1;
    if (options.expectedRevision !== undefined && options.expectedRevision !== revision) {
      throw preconditionFailed(stream, options.expectedRevision, revision);
    }
    const key = options.idempotencyKey;
    const eventIds = key ? (index: number): string => deps.ids.fromKey(`${key}#${index}`) : null;
    if (eventIds && recorded.some((event) => event.id === eventIds(0))) {
      return { stream, events: [], revision, position: null };
    }
    const state = recorded.map((event) => decodeEvent(aggregate, event)).reduce(aggregate.decider.evolve, aggregate.decider.initialState());
    const now = deps.clock.now();
    const decision = aggregate.decider.decide(command, state, { now });
    // A refusal may still have something to record (a failed attempt): append, then throw.
    let rejection: DomainError | null = null;
    let events: Event[];
    if (isLeft(decision)) {
      if (!(decision.left instanceof RejectionWithEvents) || decision.left.events.length === 0) throw decision.left;
      rejection = decision.left;
      events = (decision.left as RejectionWithEvents<Event>).events;
    } else {
      events = decision.right;
    }
    if (events.length === 0) return { stream, events, revision, position: null };
    const metadata = eventMetadata(context, now, options.tenantId === undefined ? context.tenant_id : options.tenantId);
    const toAppend: NewEvent[] = events.map((event, index) => ({
      id: eventIds ? eventIds(index) : deps.ids.newId(),
      type: event.type,
      data: event.data,
      metadata,
    }));
    try {
      const result = await deps.eventStore.appendToStream(stream, toAppend, { expectedRevision: revision === -1 ? 'no_stream' : revision });
      if (rejection) throw rejection;
      return { stream, events, revision: result.nextExpectedRevision, position: result.position };
    } catch (error) {
      if (!(error instanceof WrongExpectedRevisionError)) throw error;
      if (options.expectedRevision !== undefined) throw preconditionFailed(stream, options.expectedRevision, error.actual);
      if (attempt >= maxAttempts) {
        throw new DomainError('conflict', 'concurrent_modification', `${stream} kept changing while the command ran; try again`);
      }
      await jitter(attempt);
    }
  }
}

function decodeEvent<Event extends Message>(aggregate: Aggregate<Message, Event, unknown>, recorded: RecordedEvent): Event {
  const message = aggregate.upcast ? aggregate.upcast({ type: recorded.type, data: recorded.data }) : { type: recorded.type, data: recorded.data };
  const decoded = aggregate.events.decode(message);
  if (isLeft(decoded)) {
    throw new Error(`${recorded.stream}@${recorded.revision}: event ${recorded.type} does not match its codec; add an upcaster`);
  }
  return decoded.right;
}

function preconditionFailed(stream: string, expected: number, actual: number | 'no_stream'): DomainError {
  return new DomainError('precondition_failed', 'revision_mismatch', `${stream} is at revision ${String(actual)}, not ${expected}`);
}

/** Folds a stream into its aggregate's state, for reads that need the write model's truth. */
export async function loadAggregate<Command extends Message, Event extends Message, State>(
  deps: Pick<CommandDependencies, 'eventStore'>,
  aggregate: Aggregate<Command, Event, State>,
  stream: string,
): Promise<{ state: State; revision: number }> {
  const recorded = await deps.eventStore.readStream(stream);
  const state = recorded.map((event) => decodeEvent(aggregate, event)).reduce(aggregate.decider.evolve, aggregate.decider.initialState());
  return { state, revision: recorded.length > 0 ? recorded[recorded.length - 1].revision : -1 };
}
