// What a query needs: the read models, and for a use case that answers after a write, the wait
// until they show it.

import { DomainError } from '../../domain/shared/errors';
import type { ReadStore } from '../ports/read-store';
import { type Versioned, revisionOfVersion } from './versions';

export interface ReadModelDependencies {
  readStore: ReadStore;
}

export interface ReadYourWritesDependencies {
  /**
   * Waits until the read models have passed a write's position (read-your-writes): all of
   * them, or only the named projections when the caller reads nothing else next.
   */
  readYourWrites(position: number | null, projections?: readonly string[]): Promise<boolean>;
}

/**
 * A write is recorded, but the read models its answer comes from had not caught up with it
 * within READ_YOUR_WRITES_TIMEOUT_MS (a projection stopped or far behind): 503 with
 * Retry-After, rather than an answer that says the thing just made does not exist.
 */
export class ReadModelBehindError extends DomainError {
  constructor(recorded: string, advice = 'read it again in a moment rather than repeat it') {
    super('unavailable', 'read_model_behind', `${recorded} is recorded, but the read models have not caught up with it yet: ${advice}`);
  }
}

/**
 * Waits for the read models to pass a write's `position`, then reads its answer; a read that
 * finds nothing (404) because they had not caught up in time is ReadModelBehindError (with
 * `advice` in place of "read it again" where reading again cannot give the whole answer).
 */
export async function readBack<T>(deps: ReadYourWritesDependencies, position: number | null, recorded: string, read: () => Promise<T>, advice?: string): Promise<T> {
  return (await waitAndRead(deps, position, recorded, read, advice)).answer;
}

async function waitAndRead<T>(deps: ReadYourWritesDependencies, position: number | null, recorded: string, read: () => Promise<T>, advice?: string): Promise<{ answer: T; caughtUp: boolean }> {
  const caughtUp = await deps.readYourWrites(position);
  try {
    return { answer: await read(), caughtUp };
  } catch (error) {
    if (!caughtUp && error instanceof DomainError && error.kind === 'not_found') throw new ReadModelBehindError(recorded, advice);
    throw error;
  }
}

/** What a write gave back that its answer must show: where it was committed, and its stream's revision after it. */
export interface Written {
  position: number | null;
  revision: number;
}

/**
 * readBack for a change of a resource versioned by its stream's revision (versions.ts), given
 * the write (null: nothing written, nothing waited for). When the read models had not caught up
 * in time, one that still shows an older revision would answer the change as not made, and its
 * version as ETag would make the client's next conditional write a 412: that is
 * ReadModelBehindError too, unless the answer carries what it alone can give (`evenIfBehind`:
 * a secret shown only once), when the older revision is answered as before. `advice` replaces
 * the error's "read it again" where reading again cannot give the whole answer.
 */
export async function readBackChange<T>(
  deps: ReadYourWritesDependencies,
  written: Written | null,
  recorded: string,
  read: () => Promise<Versioned<T>>,
  options: { evenIfBehind?: boolean; advice?: string } = {},
): Promise<Versioned<T>> {
  const position = written?.position ?? null;
  const { answer, caughtUp } = await waitAndRead(deps, position, recorded, read, options.advice);
  const behind = !caughtUp && written !== null && position !== null && revisionOfVersion(answer.version) < written.revision;
  if (behind && !options.evenIfBehind) throw new ReadModelBehindError(recorded, options.advice);
  return answer;
}

/**
 * For a change answered from read models without a version to compare (readBackChange): waits
 * for the read models to pass the write's `position`, and when that timed out,
 * ReadModelBehindError unless the document the write changed (`changed` reads it) has applied
 * it: its `position`, of the last event applied, at or past the write's.
 */
export async function requireApplied(deps: ReadYourWritesDependencies, position: number | null, recorded: string, changed: () => Promise<{ position: number } | null>): Promise<void> {
  if (position === null || (await deps.readYourWrites(position))) return;
  const doc = await changed();
  if (doc === null || doc.position < position) throw new ReadModelBehindError(recorded);
}
