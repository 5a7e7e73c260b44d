// What a query needs: the read models, and for a use case that answers after a write, the wait
// until they show it.

import { DomainError } from '../../domain/shared/errors';
import type { ReadStore } from '../ports/read-store';

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
 * finds nothing (404) because they had not caught up in time is ReadModelBehindError.
 */
export async function readBack<T>(deps: ReadYourWritesDependencies, position: number | null, recorded: string, read: () => Promise<T>): Promise<T> {
  const caughtUp = await deps.readYourWrites(position);
  try {
    return await read();
  } catch (error) {
    if (!caughtUp && error instanceof DomainError && error.kind === 'not_found') throw new ReadModelBehindError(recorded);
    throw error;
  }
}
