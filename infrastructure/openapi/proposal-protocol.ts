// The messages between WorkerOpenApiReader (worker-reader.ts) and its worker
// (proposal-worker.ts), in a module of their own: the serving thread loads this one, never the
// worker's module and the OpenAPI parser it runs.

import type { DomainError } from '../../domain/shared/errors';

/** What the worker posts back for one request. */
export type ProposalAnswer =
  | { ok: true; proposal: unknown }
  | { ok: false; refusal: { kind: DomainError['kind']; code: string; message: string; field?: string } }
  | { ok: false; failure: string };
