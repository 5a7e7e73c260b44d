// The port that reads an OpenAPI document and says what it proposes to import
// (application/integration/openapi-proposal.ts). Reading is CPU work whose cost the document's
// author controls (YAML, validation, `$ref`s that expand): the platform's adapter does it off
// the request's thread and stops it past a time limit (infrastructure/openapi/).

import type { ImportProposal } from '../integration/openapi-proposal';

export interface OpenApiProposalRequest {
  /** The document's bytes (or text), JSON or YAML. */
  bytes: Buffer | string;
  /** The request field the document came in, named by refusals (`url`, `file`, `source.document`). */
  field: string;
  /** Where it was fetched from, or null. */
  url: string | null;
  /** Tool names the workspace uses already. */
  takenNames: string[];
  /** Names kept for operations that have a tool already: [operation key, name]. */
  namesByOperation: Array<[string, string]>;
}

export interface OpenApiReader {
  /** The proposal of a readable document; rejects with a 400 DomainError naming `field` otherwise. */
  propose(request: OpenApiProposalRequest): Promise<ImportProposal>;
}
