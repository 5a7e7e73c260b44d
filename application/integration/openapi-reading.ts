// The reading of an OpenAPI document and its proposal, in the calling thread: what the
// platform's worker runs (infrastructure/openapi/), and what tests call directly.

import type { OpenApiProposalRequest, OpenApiReader } from '../ports/openapi-reader';
import { readOpenApiDocument } from './openapi-document';
import { type ImportProposal, proposeImport } from './openapi-proposal';

export const inProcessOpenApiReader: OpenApiReader = {
  async propose(request: OpenApiProposalRequest): Promise<ImportProposal> {
    const document = await readOpenApiDocument(request.bytes, request.field);
    return proposeImport(document, { url: request.url, takenNames: request.takenNames, namesByOperation: new Map(request.namesByOperation) });
  },
};
