// What a query needs: the read models, and for a use case that answers after a write, the wait
// until they show it.

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
