// The port for a deep test of an SDK connection (issue #13, `POST .../test?deep=true`): the
// connector doctor's conformance cases (spec 4.1, 5.2, 7.2, 9) run against the connection's
// endpoint, each with what was observed and how to fix a failure. The adapter wraps the
// connector SDK's doctor and sends every probe through the outbound guard.

import type { ConnectorTarget } from './connector-client';

/** One conformance case's outcome. */
export interface ConformanceCase {
  name: string;
  passed: boolean;
  /** What was observed (never a secret). */
  detail: string;
  /** How to fix a failure (given for a passed case too, for reference). */
  hint: string;
}

export interface ConnectorDoctor {
  /** Runs every conformance case, in order; resolves with each outcome and never rejects for the connector's failures. */
  check(target: ConnectorTarget): Promise<ConformanceCase[]>;
}
