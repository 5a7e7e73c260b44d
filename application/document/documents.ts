// Documents of the knowledge base (spec 4.5): use cases over the document aggregate and the
// `documents` read model.
//
// - Adding (an upload or a text) checks everything before anything is written: the caller may
//   write the workspace (a team write flag, or admin and owner always), the bytes are at most
//   DOCUMENT_MAX_BYTES (413 `document_too_large`), their sniffed type is supported (415
//   `unsupported_document_type`), the title is good (400), and the documents quota has room
//   (429 `quota_exceeded`). Only then are the bytes put in the blob store under
//   `<tenant_id>/<document_id>`, and then DocumentAdded appended; if the append fails, the
//   bytes are deleted again. A refused document leaves no event and no blob behind.
// - The document waits as `queued`: the indexing saga (application/knowledge) extracts,
//   chunks and indexes it on DocumentAdded and DocumentReindexRequested, and on DocumentDeleted
//   removes its chunks and its blob. A delete request appends DocumentDeleted and nothing else.
// - Reading (list, get, view) is for members whose teams grant the workspace, and for admins
//   and owners; anything else is 404, so a document's existence is not revealed. Writing
//   (delete, reindex) also needs the write flag: 403 `workspace_read_only` for a reader.
// - A document created under an idempotency key takes its id and event ids from the key.
// - A document's version (ETag) is its stream's revision; delete and reindex honour If-Match.

import { createHash } from 'node:crypto';
import { type DocumentAddedData, type DocumentCommand, type DocumentEvent, type DocumentState, MAX_TITLE_LENGTH, documentDecider, documentEvents, documentStream } from '../../domain/document/document';
import type { IndexingStatus } from '../../domain/document/document';
import { DomainError, invalid, notFound, tooLarge, unsupportedType } from '../../domain/shared/errors';
import { checkText } from '../../domain/shared/text';
import { DOCUMENTS, type DocumentEntry } from '../../projections/documents';
import { TENANTS, type TenantDocument } from '../../projections/tenants';
import { type Aggregate, type CommandDependencies, type CommandResult, handleCommand, loadAggregate } from '../command-handling/handle-command';
import { requireQuota } from '../entitlement/entitlements';
import type { BlobStore } from '../ports/blob-store';
import { MAX_PAGE_SIZE, type Page, type Where } from '../ports/read-store';
import type { TextExtractor } from '../ports/text-extractor';
import { type Principal, actingContext } from '../session/sessions';
import { type ReadModelDependencies, type ReadYourWritesDependencies, type Written, readBackChange } from '../shared/read-models';
import type { RequestContext } from '../shared/request-context';
import { type Versioned, type WritePreconditions, expectedRevisionOf, versionOfRevision } from '../shared/versions';
import { requireWritableWorkspace, workspaceAccess } from '../workspace/workspace-access';

export const documentAggregate: Aggregate<DocumentCommand, DocumentEvent, DocumentState> = { decider: documentDecider, events: documentEvents };

export interface DocumentSettings {
  /** DOCUMENT_MAX_BYTES: the largest document, uploaded or as text. */
  maxBytes: number;
}

/** What the document use cases need: commands, read models, the blob store and the type sniffing. */
export interface DocumentDependencies extends CommandDependencies, ReadModelDependencies, ReadYourWritesDependencies {
  blobStore: BlobStore;
  extractor: Pick<TextExtractor, 'sniff' | 'supported'>;
  documents: DocumentSettings;
}

/** A document as the API shows it (the blob's key and the tenant stay inside). */
export interface DocumentView {
  id: string;
  workspace_id: string;
  title: string;
  source: DocumentEntry['source'];
  filename: string | null;
  content_type: string;
  size_bytes: number;
  sha256: string;
  status: IndexingStatus;
  failure_reason: string | null;
  chunks: number;
  generation: number;
  added_by: string;
  added_at: string;
  indexed_at: string | null;
  updated_at: string;
}

export const DOCUMENT_STATUSES: readonly IndexingStatus[] = ['queued', 'indexing', 'ready', 'failed'];

/** The fallback title of an upload whose file name gives none. */
export const UNTITLED = 'Untitled document';

const documentView = (entry: DocumentEntry): DocumentView => ({
  id: entry.id,
  workspace_id: entry.workspace_id,
  title: entry.title,
  source: entry.source,
  filename: entry.filename,
  content_type: entry.content_type,
  size_bytes: entry.size_bytes,
  sha256: entry.sha256,
  status: entry.status,
  failure_reason: entry.failure_reason,
  chunks: entry.chunks,
  generation: entry.generation,
  added_by: entry.added_by,
  added_at: entry.added_at,
  indexed_at: entry.indexed_at,
  updated_at: entry.updated_at,
});

const documentNotFound = (): DomainError => notFound('document_not_found', 'no such document');

/** The blob store's key of a document's bytes: made by the platform, never from a file name. */
export const documentBlobKey = (tenantId: string, documentId: string): string => `${tenantId}/${documentId}`;

// ------------------------------------------------------------------------------------ names

/** Characters a name shown to people never holds: controls, line and paragraph separators, bidi overrides. */
const UNSAFE_IN_NAMES = /[\u0000-\u001F\u007F-\u009F\u2028\u2029\u202A-\u202E\u2066-\u2069]/g;

/** Cuts `value` to at most `max` characters (code points), never inside a surrogate pair. */
function truncated(value: string, max: number): string {
  const characters = [...value];
  return characters.length <= max ? value : characters.slice(0, max).join('').trim();
}

/** The name of an uploaded file as it is kept: its last path segment, without unsafe characters; null when nothing is left. */
export function keptFilename(filename: string | null): string | null {
  if (filename === null) return null;
  const base = filename.split(/[\\/]/).pop() ?? '';
  const clean = truncated(base.replace(/[\uD800-\uDFFF]/g, '').replace(UNSAFE_IN_NAMES, '').normalize('NFC').trim(), 255);
  return clean === '' ? null : clean;
}

/** An upload's title when none is given: the file name without its extension. */
export function titleFromFilename(filename: string | null): string {
  if (filename === null) return UNTITLED;
  const dot = filename.lastIndexOf('.');
  const stem = (dot > 0 ? filename.slice(0, dot) : filename).replace(/[_]+/g, ' ').replace(/\s+/g, ' ').trim();
  return stem === '' ? UNTITLED : truncated(stem, MAX_TITLE_LENGTH);
}

// ---------------------------------------------------------------------------------- queries

/** The caller's readable entry of a document, or 404 (another tenant's, or a workspace they may not read). */
async function readableEntry(deps: ReadModelDependencies, principal: Pick<Principal, 'tenant_id' | 'user_id' | 'role'>, documentId: string): Promise<DocumentEntry> {
  const entry = await deps.readStore.collection<DocumentEntry>(DOCUMENTS).get(documentId);
  if (!entry || entry.tenant_id !== principal.tenant_id) throw documentNotFound();
  const { readable } = await workspaceAccess(deps, principal);
  if (!readable.has(entry.workspace_id)) throw documentNotFound();
  return entry;
}

export interface DocumentFilters {
  workspace_id?: string;
  status?: IndexingStatus;
}

/**
 * The documents the caller may read, newest first: every workspace's for an admin or owner,
 * the granted workspaces' for a member. Filtering by a workspace the caller may not read is 404.
 */
export async function listDocuments(
  deps: ReadModelDependencies,
  principal: Pick<Principal, 'tenant_id' | 'user_id' | 'role'>,
  filters: DocumentFilters,
  page: { limit?: number; cursor?: string },
): Promise<Page<DocumentView>> {
  const { readable } = await workspaceAccess(deps, principal);
  const where: Where = { tenant_id: principal.tenant_id };
  if (filters.workspace_id !== undefined) {
    if (!readable.has(filters.workspace_id)) throw notFound('workspace_not_found', 'no such workspace');
    where.workspace_id = filters.workspace_id;
  } else {
    if (readable.size === 0) return { items: [], next_cursor: null };
    where.workspace_id = { in: [...readable].sort() };
  }
  if (filters.status !== undefined) where.status = filters.status;
  const found = await deps.readStore.collection<DocumentEntry>(DOCUMENTS).find({ where, sort: { field: 'added_at', direction: 'desc' }, ...page });
  return { items: found.items.map(documentView), next_cursor: found.next_cursor };
}

/** One document the caller may read, with its version; 404 otherwise. */
export async function getDocument(deps: ReadModelDependencies, principal: Pick<Principal, 'tenant_id' | 'user_id' | 'role'>, documentId: string): Promise<Versioned<DocumentView>> {
  const entry = await readableEntry(deps, principal, documentId);
  return { value: documentView(entry), version: versionOfRevision(entry.revision) };
}

export interface DocumentContent {
  bytes: Buffer;
  /** As sniffed when it was added. */
  content_type: string;
  /** A name for the download: the uploaded file's, or the title with the type's extension. */
  filename: string;
}

/** The original bytes of a document the caller may read; 404 otherwise. */
export async function viewDocument(
  deps: ReadModelDependencies & Pick<DocumentDependencies, 'blobStore' | 'extractor'>,
  principal: Pick<Principal, 'tenant_id' | 'user_id' | 'role'>,
  documentId: string,
): Promise<DocumentContent> {
  const entry = await readableEntry(deps, principal, documentId);
  const blob = await deps.blobStore.get(entry.blob_key);
  // Deleted since the read model was read: the cleanup removed the bytes.
  if (!blob) throw documentNotFound();
  const extension = deps.extractor.supported.find((type) => type.content_type === entry.content_type)?.extension ?? 'bin';
  return { bytes: blob.bytes, content_type: entry.content_type, filename: entry.filename ?? `${entry.title}.${extension}` };
}

export interface DocumentStatusCount {
  tenant_id: string;
  /** The tenant's slug, when the tenant is known. */
  tenant_slug: string | null;
  status: IndexingStatus;
  documents: number;
  chunks: number;
}

/** Documents and their chunks per tenant and status (the indexing progress an operator watches); one tenant's when named. */
export async function documentStatusCounts(deps: ReadModelDependencies, tenantId?: string): Promise<DocumentStatusCount[]> {
  const counts = new Map<string, DocumentStatusCount>();
  const documents = deps.readStore.collection<DocumentEntry>(DOCUMENTS);
  let cursor: string | undefined;
  do {
    const page = await documents.find({ ...(tenantId === undefined ? {} : { where: { tenant_id: tenantId } }), limit: MAX_PAGE_SIZE, cursor });
    for (const entry of page.items) {
      const key = `${entry.tenant_id}\u0000${entry.status}`;
      const count = counts.get(key) ?? { tenant_id: entry.tenant_id, tenant_slug: null, status: entry.status, documents: 0, chunks: 0 };
      count.documents += 1;
      count.chunks += entry.chunks;
      counts.set(key, count);
    }
    cursor = page.next_cursor ?? undefined;
  } while (cursor);
  const tenants = deps.readStore.collection<TenantDocument>(TENANTS);
  const slugs = new Map<string, string | null>();
  for (const count of counts.values()) {
    if (!slugs.has(count.tenant_id)) slugs.set(count.tenant_id, (await tenants.get(count.tenant_id))?.slug ?? null);
    count.tenant_slug = slugs.get(count.tenant_id) ?? null;
  }
  const order = (status: IndexingStatus): number => DOCUMENT_STATUSES.indexOf(status);
  return [...counts.values()].sort((a, b) => (a.tenant_slug ?? a.tenant_id).localeCompare(b.tenant_slug ?? b.tenant_id) || a.tenant_id.localeCompare(b.tenant_id) || order(a.status) - order(b.status));
}

// -------------------------------------------------------------------------------- adding

interface NewDocument {
  workspace_id: string;
  /** Null: from the file name (uploads only). */
  title: string | null;
  source: DocumentAddedData['source'];
  filename: string | null;
  bytes: Buffer;
}

async function answered(deps: DocumentDependencies, principal: Principal, documentId: string, written: Written | null): Promise<Versioned<DocumentView>> {
  return readBackChange(deps, written, 'the document', () => getDocument(deps, principal, documentId));
}

/** The checks, then the blob, then the event (see the header); the new document as read back. */
async function addDocument(deps: DocumentDependencies, principal: Principal, input: NewDocument, context: RequestContext, options: { idempotencyKey?: string }): Promise<Versioned<DocumentView>> {
  const key = options.idempotencyKey === undefined ? undefined : `${options.idempotencyKey}:document`;
  const documentId = key === undefined ? deps.ids.newId() : deps.ids.fromKey(key);
  const stream = documentStream(documentId);
  // A retry that takes over a request which stopped after recording its document finds that document.
  if (key !== undefined && (await loadAggregate(deps, documentAggregate, stream)).state.status !== 'absent') return answered(deps, principal, documentId, null);

  await requireWritableWorkspace(deps, principal, input.workspace_id);
  if (input.bytes.length > deps.documents.maxBytes) {
    throw tooLarge('document_too_large', `a document may be at most ${deps.documents.maxBytes} bytes; this one is ${input.bytes.length}`);
  }
  const filename = keptFilename(input.filename);
  const contentType = deps.extractor.sniff(input.bytes, filename);
  if (contentType === null) {
    const supported = deps.extractor.supported.map((type) => type.extension.toUpperCase()).join(', ');
    throw unsupportedType('unsupported_document_type', `the file is not a document the platform reads (${supported}); its type is decided from its content, not its name`);
  }
  let title = titleFromFilename(filename);
  if (input.title !== null) {
    const checked = checkText('title', input.title, { max: MAX_TITLE_LENGTH });
    if (checked._tag === 'Left') throw checked.left;
    title = checked.right;
  }
  await requireQuota(deps, principal.tenant_id, 'documents');

  const blobKey = documentBlobKey(principal.tenant_id, documentId);
  await deps.blobStore.put(blobKey, input.bytes, contentType);
  let result: CommandResult<DocumentEvent>;
  try {
    result = await handleCommand(
      deps,
      documentAggregate,
      stream,
      {
        type: 'AddDocument',
        data: {
          document_id: documentId,
          tenant_id: principal.tenant_id,
          workspace_id: input.workspace_id,
          title,
          source: input.source,
          filename,
          content_type: contentType,
          size_bytes: input.bytes.length,
          sha256: createHash('sha256').update(input.bytes).digest('hex'),
          blob_key: blobKey,
          added_by: principal.user_id,
        },
      },
      actingContext(principal, context),
      { idempotencyKey: key },
    );
  } catch (error) {
    // Only when the document surely was not recorded: bytes without a document are litter, a
    // document without its bytes would be broken.
    const recorded = await loadAggregate(deps, documentAggregate, stream).then(
      ({ state }) => state.status !== 'absent',
      () => true,
    );
    if (!recorded) await deps.blobStore.delete(blobKey).catch(() => undefined);
    throw error;
  }
  return answered(deps, principal, documentId, result);
}

export interface UploadedDocument {
  workspace_id: string;
  /** Null or absent: the file name without its extension. */
  title?: string | null;
  filename: string | null;
  bytes: Buffer;
}

/** Adds an uploaded file as a document of the workspace (see the header for the checks). */
export async function uploadDocument(
  deps: DocumentDependencies,
  principal: Principal,
  upload: UploadedDocument,
  context: RequestContext,
  options: { idempotencyKey?: string } = {},
): Promise<Versioned<DocumentView>> {
  return addDocument(deps, principal, { workspace_id: upload.workspace_id, title: upload.title ?? null, source: 'upload', filename: upload.filename, bytes: upload.bytes }, context, options);
}

export interface TextDocument {
  workspace_id: string;
  title: string;
  text: string;
}

/** Adds a text as a document of the workspace; its type is sniffed like an upload's (Markdown, CSV, HTML or plain text). */
export async function addTextDocument(
  deps: DocumentDependencies,
  principal: Principal,
  input: TextDocument,
  context: RequestContext,
  options: { idempotencyKey?: string } = {},
): Promise<Versioned<DocumentView>> {
  if (/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/.test(input.text)) throw invalid('invalid_request', 'text contains a lone surrogate (not valid Unicode text)', 'text');
  if (input.text.includes('\u0000')) throw invalid('invalid_request', 'text must not contain NUL characters', 'text');
  if (input.text.trim() === '') throw invalid('invalid_request', 'text must not be empty', 'text');
  return addDocument(deps, principal, { workspace_id: input.workspace_id, title: input.title, source: 'text', filename: null, bytes: Buffer.from(input.text, 'utf8') }, context, options);
}

// --------------------------------------------------------------------- delete and reindex

/**
 * The caller's live document from the write model, checked for writing (404 when they may not
 * read it, 403 `workspace_read_only` when they only read it), and the revision a write must
 * append at when the client named the version it saw (412 otherwise).
 */
async function writableDocument(deps: DocumentDependencies, principal: Principal, documentId: string, preconditions: WritePreconditions): Promise<{ expectedRevision?: number }> {
  const { state, revision } = await loadAggregate(deps, documentAggregate, documentStream(documentId));
  if (state.status !== 'live' || state.document.tenant_id !== principal.tenant_id) throw documentNotFound();
  try {
    await requireWritableWorkspace(deps, principal, state.document.workspace_id);
  } catch (error) {
    if (error instanceof DomainError && error.code === 'workspace_not_found') throw documentNotFound();
    throw error;
  }
  return { expectedRevision: expectedRevisionOf('document', preconditions.expectedVersion, revision) };
}

/**
 * Deletes a document: DocumentDeleted, nothing else. The indexing saga removes its chunks and
 * its bytes when it sees the event.
 */
export async function deleteDocument(deps: DocumentDependencies, principal: Principal, documentId: string, context: RequestContext, preconditions: WritePreconditions = {}): Promise<void> {
  const options = await writableDocument(deps, principal, documentId, preconditions);
  const result = await handleCommand(deps, documentAggregate, documentStream(documentId), { type: 'DeleteDocument', data: { deleted_by: principal.user_id } }, actingContext(principal, context), options);
  await deps.readYourWrites(result.position);
}

/** Queues the next indexing generation of a document (the indexing saga rebuilds its chunks); the document as it is then. */
export async function reindexDocument(
  deps: DocumentDependencies,
  principal: Principal,
  documentId: string,
  context: RequestContext,
  preconditions: WritePreconditions = {},
): Promise<Versioned<DocumentView>> {
  const options = await writableDocument(deps, principal, documentId, preconditions);
  const result = await handleCommand(deps, documentAggregate, documentStream(documentId), { type: 'RequestReindex', data: { requested_by: principal.user_id } }, actingContext(principal, context), options);
  return answered(deps, principal, documentId, result);
}
