// Document routes of spec 4.5 under /api/v1/documents (user token): upload (multipart
// `workspace_id`, `file`, optional `title`), add a text, list, get (ETag), delete and reindex
// (If-Match), and view the original bytes. Who may do what, the limits and the statuses are
// the use cases' (application/document/documents.ts); this file decodes and encodes.
//
// The upload's body is multipart, streamed to a temporary file under DOCUMENT_MAX_BYTES (413
// `document_too_large` past it, before anything else is read); creating routes honour
// Idempotency-Key, an upload compared by its fields and its file's name and digest.

import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import Router from '@koa/router';
import type { Middleware } from 'koa';
import * as t from 'io-ts';
import type { AccessDenialRecorder } from '../../../application/access-denial/access-denials';
import {
  DOCUMENT_STATUSES,
  type DocumentDependencies,
  addTextDocument,
  deleteDocument,
  getDocument,
  listDocuments,
  reindexDocument,
  uploadDocument,
  viewDocument,
} from '../../../application/document/documents';
import type { UseCaseDependencies } from '../../../application/shared/dependencies';
import { invalid } from '../../../domain/shared/errors';
import { multipartBody, uploadOf } from '../bodies/multipart';
import { decodeBody } from '../decode';
import { answerVersioned, preconditionsOf } from '../entity-tags';
import { HttpError } from '../errors';
import type { AuthenticatedState } from '../middleware/authenticate';
import { authenticateUserRecordingDenials } from '../middleware/authorize';
import { describeRequestBody, idempotencySeedOf, idempotentCreation } from '../middleware/idempotency';
import { pageQuery } from '../pagination';
import { requestContextOf } from '../request-context';

const NonEmptyString = t.refinement(t.string, (value) => value.trim().length > 0, 'non-empty string');
export const UploadFields = t.type({ workspace_id: NonEmptyString, title: t.union([t.string, t.undefined]) }, 'UploadFields');
export const TextDocumentBody = t.type({ workspace_id: NonEmptyString, title: t.string, text: t.string }, 'TextDocumentBody');
const Status = t.keyof(Object.fromEntries(DOCUMENT_STATUSES.map((status) => [status, null])) as Record<(typeof DOCUMENT_STATUSES)[number], null>, 'DocumentStatus');
export const DocumentListQuery = t.type({ workspace_id: t.union([NonEmptyString, t.undefined]), status: t.union([Status, t.undefined]) }, 'DocumentListQuery');

/** The field the file comes in. */
export const FILE_FIELD = 'file';

/** What the document routes need besides the identity ports. */
export type DocumentAdapters = Pick<DocumentDependencies, 'blobStore' | 'extractor' | 'documents'>;

interface ReadUpload {
  fields: t.TypeOf<typeof UploadFields>;
  filename: string | null;
  bytes: Buffer;
}

const readUploads = new WeakMap<object, ReadUpload>();

/** The multipart limits' 413s, in the documents' own words. */
const tooLargeAsDocument =
  (maxBytes: number): Middleware =>
  async (_ctx, next) => {
    try {
      await next();
    } catch (error) {
      if (error instanceof HttpError && error.status === 413 && (error.code === 'file_too_large' || error.code === 'payload_too_large')) {
        throw new HttpError(413, 'document_too_large', `a document may be at most ${maxBytes} bytes`);
      }
      throw error;
    }
  };

/**
 * Reads the upload's fields and its one file (400 naming the field otherwise), and describes
 * the request for Idempotency-Key: its fields, and its file's name and digest.
 */
const readUpload: Middleware = async (ctx, next) => {
  const upload = uploadOf(ctx);
  const fields = decodeBody(UploadFields, upload.fields);
  const file = upload.files[0];
  if (!file || file.field !== FILE_FIELD) throw invalid('invalid_request', `${FILE_FIELD}: send the document as a file in the "${FILE_FIELD}" field`, FILE_FIELD);
  const bytes = await readFile(file.path);
  readUploads.set(ctx.request, { fields, filename: file.filename, bytes });
  describeRequestBody(ctx, { fields: upload.fields, file: { filename: file.filename, size: bytes.length, sha256: createHash('sha256').update(bytes).digest('hex') } });
  await next();
};

/** `filename="..."` (ASCII, quotes and controls replaced) and `filename*=UTF-8''...` (RFC 6266). */
export function contentDisposition(filename: string): string {
  const ascii = filename.replace(/[^\x20-\x7e]|["\\%;]/g, '_').trim() || 'document';
  const encoded = encodeURIComponent(filename).replace(/['()*]/g, (character) => `%${character.charCodeAt(0).toString(16).toUpperCase()}`);
  return `inline; filename="${ascii}"; filename*=UTF-8''${encoded}`;
}

/** A viewed document never runs as a page of the platform: no scripts, no requests, its own origin. */
export const VIEW_CONTENT_SECURITY_POLICY = "default-src 'none'; style-src 'unsafe-inline'; img-src data:; sandbox";

export function documentsRouter(identity: UseCaseDependencies, denials: AccessDenialRecorder, adapters: DocumentAdapters): Router<AuthenticatedState> {
  const router = new Router<AuthenticatedState>({ prefix: '/api/v1/documents' });
  const deps: DocumentDependencies = { ...identity, ...adapters };
  const user = authenticateUserRecordingDenials(identity, denials);
  const maxBytes = adapters.documents.maxBytes;

  router.post(
    '/',
    user,
    tooLargeAsDocument(maxBytes),
    multipartBody({ maxFileBytes: maxBytes, maxFiles: 1, maxFields: 10 }),
    readUpload,
    idempotentCreation(identity),
    async (ctx) => {
      const upload = readUploads.get(ctx.request)!;
      const title = upload.fields.title === undefined || upload.fields.title.trim() === '' ? null : upload.fields.title;
      const document = await uploadDocument(deps, ctx.state.principal, { workspace_id: upload.fields.workspace_id, title, filename: upload.filename, bytes: upload.bytes }, requestContextOf(ctx), {
        idempotencyKey: idempotencySeedOf(ctx),
      });
      ctx.status = 201;
      ctx.set('location', `/api/v1/documents/${document.value.id}`);
      answerVersioned(ctx, document);
    },
  );

  router.post('/text', user, idempotentCreation(identity), async (ctx) => {
    const body = decodeBody(TextDocumentBody, ctx.request.body);
    const document = await addTextDocument(deps, ctx.state.principal, body, requestContextOf(ctx), { idempotencyKey: idempotencySeedOf(ctx) });
    ctx.status = 201;
    ctx.set('location', `/api/v1/documents/${document.value.id}`);
    answerVersioned(ctx, document);
  });

  router.get('/', user, async (ctx) => {
    const filters = decodeBody(DocumentListQuery, { workspace_id: ctx.query.workspace_id, status: ctx.query.status });
    ctx.body = await listDocuments(deps, ctx.state.principal, filters, pageQuery(ctx.query));
  });

  router.get('/:id', user, async (ctx) => {
    answerVersioned(ctx, await getDocument(deps, ctx.state.principal, ctx.params.id));
  });

  router.delete('/:id', user, async (ctx) => {
    await deleteDocument(deps, ctx.state.principal, ctx.params.id, requestContextOf(ctx), preconditionsOf(ctx));
    ctx.status = 204;
  });

  router.post('/:id/reindex', user, async (ctx) => {
    const document = await reindexDocument(deps, ctx.state.principal, ctx.params.id, requestContextOf(ctx), preconditionsOf(ctx));
    ctx.status = 202;
    answerVersioned(ctx, document);
  });

  router.get('/:id/view', user, async (ctx) => {
    const content = await viewDocument(deps, ctx.state.principal, ctx.params.id);
    ctx.set('content-type', content.content_type.startsWith('text/') ? `${content.content_type}; charset=utf-8` : content.content_type);
    ctx.set('content-disposition', contentDisposition(content.filename));
    ctx.set('x-content-type-options', 'nosniff');
    ctx.set('content-security-policy', VIEW_CONTENT_SECURITY_POLICY);
    ctx.set('cache-control', 'private, no-store');
    ctx.body = content.bytes;
  });

  return router;
}
