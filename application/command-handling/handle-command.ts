// The one command handler: load the stream, fold `evolve`, run `decide`, append with the
// revision that was read, and retry a bounded number of times when another writer got
// there first. Every write in the platform goes through here.

import { isLeft } from 'fp-ts/Either';
import type { Decider, Message } from '../../domain/shared/decider';
import { DomainError, RejectionWithEvents } from '../../domain/shared/errors';
import { parseStreamName } from '../../domain/shared/stream-names';
import type { Clock, IdGenerator } from '../ports/clock';
import { type DomainEventStore, type DomainRecordedEvent, EventDecodingError } from '../ports/domain-event-store';
import { type ExpectedRevision, type NewEvent, WrongExpectedRevisionError } from '../ports/event-store';
import { type RequestContext, eventMetadata } from '../shared/request-context';
import { type WritePreconditions, expectedRevisionOf } from '../shared/versions';

export interface CommandDependencies {
  /** Decodes and upcasts what it reads (application/events/decoding-event-store.ts). */
  eventStore: DomainEventStore;
  clock: Clock;
  ids: IdGenerator;
}

/** An aggregate as the handler needs it: its decider and the group its events are declared in. */
export interface Aggregate<Command extends Message, Event extends Message, State> {
  decider: Decider<Command, Event, State>;
  events: AggregateEvents<Event>;
}

/** What the handler needs of the aggregate's event group (domain/shared/events.ts): which decoded events are its own, and their schema versions. */
export interface AggregateEvents<Event extends Message> {
  includes<M extends Message>(event: M): event is M & Event;
  versionOf(type: Event['type']): number;
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
    const decided = await decideOn(deps, aggregate, stream, command, context, options);
    if (decided.kind === 'done') return decided.result;
    try {
      const result = await deps.eventStore.appendToStream(stream, decided.toAppend, { expectedRevision: decided.expectedRevision });
      if (decided.rejection) throw decided.rejection;
      return { stream, events: decided.events, revision: result.nextExpectedRevision, position: result.position };
    } catch (error) {
      if (!(error instanceof WrongExpectedRevisionError)) throw error;
      if (options.expectedRevision !== undefined) throw preconditionFailed(stream, options.expectedRevision, error.actual);
      if (attempt >= maxAttempts) throw keptChanging(stream);
      await jitter(attempt);
    }
  }
}

/** One command of `handleCommands`: its aggregate, stream and context. */
export interface StreamCommand<Command extends Message = Message, Event extends Message = Message, State = unknown> {
  aggregate: Aggregate<Command, Event, State>;
  stream: string;
  command: Command;
  context: RequestContext;
  options?: Pick<HandleOptions, 'idempotencyKey' | 'tenantId'>;
}

/** A command of `handleCommands`, typed by its aggregate. */
export function streamCommand<Command extends Message, Event extends Message, State>(
  aggregate: Aggregate<Command, Event, State>,
  stream: string,
  command: Command,
  context: RequestContext,
  options?: Pick<HandleOptions, 'idempotencyKey' | 'tenantId'>,
): StreamCommand {
  // Checked here against its aggregate; handleCommands hands it back to the same aggregate only.
  return { aggregate, stream, command, context, ...(options ? { options } : {}) } as unknown as StreamCommand;
}

/**
 * Commands on several streams, each decided on what its stream holds, appended together
 * (EventStore.appendToStreams: all or none on the embedded store; in the order given on
 * EventStoreDB, so put first what must exist before the rest). A refusal refuses them all
 * before anything is appended, but for the events a refusal itself records
 * (RejectionWithEvents), which alone are appended before it is thrown; a conflict reads every
 * stream again and decides again, as handleCommand does for one. On EventStoreDB the appends
 * before a conflicting one stay, so each command must decide nothing the second time it finds
 * its own events (as an emit with an idempotency key does). The results in the order of the commands.
 */
export async function handleCommands(deps: CommandDependencies, commands: readonly StreamCommand[], maxAttempts = DEFAULT_MAX_ATTEMPTS): Promise<Array<CommandResult<Message>>> {
  for (let attempt = 1; ; attempt += 1) {
    const decisions = await Promise.all(commands.map(({ aggregate, stream, command, context, options }) => decideOn(deps, aggregate, stream, command, context, options ?? {})));
    const toAppend = decisions.flatMap((decided, index) => (decided.kind === 'append' ? [{ decided, stream: commands[index].stream }] : []));
    const rejection = toAppend.find(({ decided }) => decided.rejection !== null)?.decided.rejection ?? null;
    // Refused: what the others decided is not appended, only what the refusals record.
    const appending = rejection ? toAppend.filter(({ decided }) => decided.rejection !== null) : toAppend;
    try {
      const results = appending.length === 0 ? [] : await deps.eventStore.appendToStreams(appending.map(({ decided, stream }) => ({ stream, events: decided.toAppend, expectedRevision: decided.expectedRevision })));
      if (rejection) throw rejection;
      let appended = 0;
      return decisions.map((decided, index) => {
        if (decided.kind === 'done') return decided.result;
        const result = results[appended++];
        return { stream: commands[index].stream, events: decided.events, revision: result.nextExpectedRevision, position: result.position };
      });
    } catch (error) {
      if (!(error instanceof WrongExpectedRevisionError)) throw error;
      if (attempt >= maxAttempts) throw keptChanging(error.stream);
      await jitter(attempt);
    }
  }
}

type Decided<Event extends Message> =
  | { kind: 'done'; result: CommandResult<Event> }
  | { kind: 'append'; events: Event[]; toAppend: NewEvent[]; expectedRevision: ExpectedRevision; rejection: DomainError | null };

/** Reads the stream, folds it and decides: nothing to append (the result), or what to append at the revision read. */
async function decideOn<Command extends Message, Event extends Message, State>(
  deps: CommandDependencies,
  aggregate: Aggregate<Command, Event, State>,
  stream: string,
  command: Command,
  context: RequestContext,
  options: HandleOptions,
): Promise<Decided<Event>> {
  const recorded = await deps.eventStore.readStream(stream);
  const revision = recorded.length > 0 ? recorded[recorded.length - 1].revision : -1;
  if (options.expectedRevision !== undefined && options.expectedRevision !== revision) {
    throw preconditionFailed(stream, options.expectedRevision, revision);
  }
  const key = options.idempotencyKey;
  const keyedId = (index: number): string => deps.ids.fromKey(`${key}#${index}`);
  // Derived once: a keyed command on a long stream would otherwise hash once per event read.
  const firstKeyedId = key ? keyedId(0) : null;
  if (firstKeyedId !== null && recorded.some((event) => event.id === firstKeyedId)) {
    return { kind: 'done', result: { stream, events: [], revision, position: null } };
  }
  const state = recorded.map((event) => ownEvent(aggregate, event)).reduce(aggregate.decider.evolve, aggregate.decider.initialState());
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
  if (events.length === 0) return { kind: 'done', result: { stream, events, revision, position: null } };
  const metadata = eventMetadata(context, now, options.tenantId === undefined ? context.tenant_id : options.tenantId);
  const toAppend: NewEvent[] = events.map((event, index) => ({
    id: firstKeyedId === null ? deps.ids.newId() : index === 0 ? firstKeyedId : keyedId(index),
    type: event.type,
    data: event.data,
    metadata: { ...metadata, schema_version: aggregate.events.versionOf(event.type) },
  }));
  return { kind: 'append', events, toAppend, expectedRevision: revision === -1 ? 'no_stream' : revision, rejection };
}

function keptChanging(stream: string): DomainError {
  return new DomainError('conflict', 'concurrent_modification', `the ${recordOf(stream)} kept changing while the command ran; try again`);
}

/** The store decoded the event; it must also be one of this aggregate's (a stream holds one aggregate). */
function ownEvent<Event extends Message>(aggregate: Aggregate<Message, Event, unknown>, recorded: DomainRecordedEvent): Event {
  if (!aggregate.events.includes(recorded)) throw new EventDecodingError(recorded, 'unexpected_type', `${recorded.type} is not an event of the aggregate this stream holds`);
  return recorded;
}

function preconditionFailed(stream: string, expected: number, actual: number | 'no_stream'): DomainError {
  return new DomainError('precondition_failed', 'revision_mismatch', `the ${recordOf(stream)} is at revision ${String(actual)}, not ${expected}`);
}

/** What a client may read of a stream's name: its category; the id can be a tenant id or a reservation's keyed digest. */
export const recordOf = (stream: string): string => parseStreamName(stream).category;

/** Folds a stream into its aggregate's state, for reads that need the write model's truth. */
export async function loadAggregate<Command extends Message, Event extends Message, State>(
  deps: Pick<CommandDependencies, 'eventStore'>,
  aggregate: Aggregate<Command, Event, State>,
  stream: string,
): Promise<{ state: State; revision: number }> {
  const recorded = await deps.eventStore.readStream(stream);
  const state = recorded.map((event) => ownEvent(aggregate, event)).reduce(aggregate.decider.evolve, aggregate.decider.initialState());
  return { state, revision: recorded.length > 0 ? recorded[recorded.length - 1].revision : -1 };
}

/**
 * The revision a write must find on `stream` when the client named the version it read
 * (If-Match): 412 `revision_mismatch` naming `resource` when the stream has moved on since;
 * undefined, an unconditional write, when it named none.
 */
export async function revisionExpectedBy<Command extends Message, Event extends Message, State>(
  deps: Pick<CommandDependencies, 'eventStore'>,
  aggregate: Aggregate<Command, Event, State>,
  stream: string,
  resource: string,
  preconditions: WritePreconditions,
): Promise<number | undefined> {
  if (preconditions.expectedVersion === undefined) return undefined;
  const { revision } = await loadAggregate(deps, aggregate, stream);
  return expectedRevisionOf(resource, preconditions.expectedVersion, revision);
}
