// OpenAPI import routes of spec 4.12 (user token): preview a document by URL or upload,
// apply it (`POST /api/v1/workspaces/{workspace_id}/integrations/import/...`) and reimport an
// integration's document (`POST /api/v1/integrations/{id}/reimport`). The rules are the use
// cases' (application/integration/openapi-import.ts); this file decodes and encodes.
//
// - The upload is multipart (`file`, JSON or YAML) under OPENAPI_MAX_BYTES (413
//   `openapi_too_large` past it); a document sent in a JSON body (`source.document`) is also
//   bounded by BODY_LIMIT_BYTES.
// - Apply honours Idempotency-Key. A reimport is an action: the same request again finds the
//   difference already applied.

import { readFile } from 'node:fs/promises';
import Router from '@koa/router';
import type { Middleware } from 'koa';
import * as t from 'io-ts';
import type { AccessDenialRecorder } from '../../../application/access-denial/access-denials';
import {
  type DocumentSource,
  type OpenApiImportDependencies,
  REMOVED_ACTIONS,
  applyImport,
  previewImport,
  reimportIntegration,
} from '../../../application/integration/openapi-import';
import type { UseCaseDependencies } from '../../../application/shared/dependencies';
import { DefaultHeaders, IntegrationAuth } from '../../../domain/integration/integration';
import { invalid } from '../../../domain/shared/errors';
import { RiskTier } from '../../../domain/tool/tool';
import { multipartBody, uploadOf } from '../bodies/multipart';
import { decodeBody } from '../decode';
import { HttpError } from '../errors';
import type { AuthenticatedState } from '../middleware/authenticate';
import { authenticateUserRecordingDenials } from '../middleware/authorize';
import { idempotencySeedOf, idempotentCreation } from '../middleware/idempotency';
import { requestContextOf } from '../request-context';
import type { IntegrationAdapters } from './integrations';

const optional = <C extends t.Mixed>(codec: C) => t.union([codec, t.undefined]);

export const PreviewImportBody = t.type({ url: t.string }, 'PreviewImportBody');
/** The document: a URL to fetch, or its text (JSON or YAML); exactly one. */
export const ImportSource = t.type({ url: optional(t.string), document: optional(t.string) }, 'ImportSource');
export const ImportIntegrationBody = t.type(
  {
    integration_id: optional(t.string),
    name: optional(t.string),
    base_url: optional(t.string),
    auth: optional(IntegrationAuth),
    default_headers: optional(DefaultHeaders),
    credentials: optional(t.union([t.string, t.null])),
  },
  'ImportIntegration',
);
export const OperationOverrides = t.record(t.string, t.type({ name: optional(t.string), chat: optional(t.boolean), risk: optional(RiskTier) }), 'OperationOverrides');
export const ApplyImportBody = t.type(
  { source: ImportSource, integration: optional(ImportIntegrationBody), operations: optional(t.array(t.string)), overrides: optional(OperationOverrides) },
  'ApplyImportBody',
);
export const ReimportBody = t.type(
  {
    source: optional(ImportSource),
    dry_run: optional(t.boolean),
    add: optional(t.array(t.string)),
    overwrite_edits: optional(t.boolean),
    removed: optional(t.keyof(Object.fromEntries(REMOVED_ACTIONS.map((action) => [action, null])) as Record<(typeof REMOVED_ACTIONS)[number], null>)),
  },
  'ReimportBody',
);

/** The field the uploaded document comes in. */
export const DOCUMENT_FILE_FIELD = 'file';

/** What the import routes need beyond the identity ports: the guarded client, and the limits of a document. */
export type ImportAdapters = IntegrationAdapters & Pick<OpenApiImportDependencies, 'openapi' | 'openapiReader'>;

function sourceOf(body: t.TypeOf<typeof ImportSource>): DocumentSource {
  if ((body.url === undefined) === (body.document === undefined)) throw invalid('invalid_request', 'source: give either url or document', 'source');
  return body.url !== undefined ? { kind: 'url', url: body.url, field: 'source.url' } : { kind: 'text', text: body.document as string, field: 'source.document' };
}

/** The multipart limit's 413s in the import's words. */
const tooLargeAsDocument =
  (maxBytes: number): Middleware =>
  async (_ctx, next) => {
    try {
      await next();
    } catch (error) {
      if (error instanceof HttpError && error.status === 413 && (error.code === 'file_too_large' || error.code === 'payload_too_large')) {
        throw new HttpError(413, 'openapi_too_large', `an OpenAPI document may be at most ${maxBytes} bytes (OPENAPI_MAX_BYTES)`);
      }
      throw error;
    }
  };

export function integrationImportRouter(identity: UseCaseDependencies, denials: AccessDenialRecorder, adapters: ImportAdapters): Router<AuthenticatedState> {
  const router = new Router<AuthenticatedState>({ prefix: '/api/v1' });
  const user = authenticateUserRecordingDenials(identity, denials);
  const deps: OpenApiImportDependencies = { ...identity, ...adapters };
  const maxBytes = adapters.openapi.maxBytes;

  router.post('/workspaces/:workspace_id/integrations/import/preview', user, async (ctx) => {
    const { url } = decodeBody(PreviewImportBody, ctx.request.body);
    ctx.body = await previewImport(deps, ctx.state.principal, ctx.params.workspace_id, { kind: 'url', url, field: 'url' });
  });

  router.post(
    '/workspaces/:workspace_id/integrations/import/preview/upload',
    user,
    tooLargeAsDocument(maxBytes),
    multipartBody({ maxFileBytes: maxBytes, maxFiles: 1, maxFields: 5 }),
    async (ctx) => {
      const file = uploadOf(ctx).files[0];
      if (!file || file.field !== DOCUMENT_FILE_FIELD) throw invalid('invalid_request', `${DOCUMENT_FILE_FIELD}: send the OpenAPI document (JSON or YAML) as a file in the "${DOCUMENT_FILE_FIELD}" field`, DOCUMENT_FILE_FIELD);
      ctx.body = await previewImport(deps, ctx.state.principal, ctx.params.workspace_id, { kind: 'text', text: await readFile(file.path), field: DOCUMENT_FILE_FIELD });
    },
  );

  router.post('/workspaces/:workspace_id/integrations/import/apply', user, idempotentCreation(identity), async (ctx) => {
    const body = decodeBody(ApplyImportBody, ctx.request.body);
    const { integration_id, name, base_url, auth, default_headers, credentials } = body.integration ?? {};
    const integration = Object.fromEntries(Object.entries({ integration_id, name, base_url, auth, default_headers, credentials }).filter(([, value]) => value !== undefined));
    const applied = await applyImport(
      deps,
      ctx.state.principal,
      ctx.params.workspace_id,
      { source: sourceOf(body.source), integration, ...(body.operations ? { operations: body.operations } : {}), ...(body.overrides ? { overrides: body.overrides } : {}) },
      requestContextOf(ctx),
      { idempotencyKey: idempotencySeedOf(ctx) },
    );
    ctx.status = 201;
    ctx.set('location', `/api/v1/integrations/${applied.integration.id}`);
    ctx.body = applied;
  });

  router.post('/integrations/:id/reimport', user, async (ctx) => {
    const body = decodeBody(ReimportBody, ctx.request.body);
    ctx.body = await reimportIntegration(
      deps,
      ctx.state.principal,
      ctx.params.id,
      {
        ...(body.source ? { source: sourceOf(body.source) } : {}),
        ...(body.dry_run === undefined ? {} : { dry_run: body.dry_run }),
        ...(body.add ? { add: body.add } : {}),
        ...(body.overwrite_edits === undefined ? {} : { overwrite_edits: body.overwrite_edits }),
        ...(body.removed ? { removed: body.removed } : {}),
      },
      requestContextOf(ctx),
    );
  });

  return router;
}
