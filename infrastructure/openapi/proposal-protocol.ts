// What WorkerOpenApiReader (worker-reader.ts) and its worker (proposal-worker.ts) say to each
// other, apart from the worker: the serving thread loads this, never the parser the worker runs.

import type { DomainError } from '../../domain/shared/errors';

/** What the worker posts once it is ready for documents. */
export const READY = 'ready';

/** What the worker posts back for one request. */
export type ProposalAnswer =
  | { ok: true; proposal: unknown }
  | { ok: false; refusal: { kind: DomainError['kind']; code: string; message: string; field?: string } }
  | { ok: false; failure: string };
