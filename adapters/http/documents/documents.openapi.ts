// OpenAPI description of the knowledge base's documents (documents/documents.ts).

import { PAGE_PARAMETERS, type ApiArea, dateTime, enumOf, integer, nullable, object, page, ref, schemaOfCodec, string } from '../openapi/describe';
import { SUPPORTED_TYPES } from '../../../application/document/document-types';
import { DOCUMENT_STATUSES } from '../../../application/document/documents';
import { FILE_FIELD, TextDocumentBody } from './documents';

/** The types a document may be (sniffed from its bytes), as the view route answers them. */
const DOCUMENT_TYPES = SUPPORTED_TYPES.map((type) => type.content_type);

const WHO_READS = 'Only documents of workspaces the caller may read: every workspace for an admin or owner, the workspaces granted to their teams for a member; any other document is 404.';
const WHO_WRITES = "Needs the write flag of one of the caller's teams on the document's workspace (admins and owners always): 403 `workspace_read_only` for a reader.";

export const documentsApi: ApiArea = {
  tag: 'documents',
  description: 'The knowledge base the assistant answers from (spec 4.5): documents uploaded or added as text, each indexed in the background (`status`).',
  schemas: {
    Document: object({
      id: string(),
      workspace_id: string(),
      title: string('1 to 200 characters'),
      source: enumOf(['upload', 'text'], 'an uploaded file, or a text added with POST /documents/text'),
      filename: nullable(string('the name the file was uploaded with (its last path segment); null for a text')),
      content_type: enumOf(DOCUMENT_TYPES, "sniffed from the document's bytes, never taken from its name"),
      size_bytes: integer(),
      sha256: string('hex SHA-256 of the original bytes'),
      status: enumOf(DOCUMENT_STATUSES, '`queued` until indexing starts, `indexing`, then `ready` (searchable) or `failed` (see `failure_reason`); a reindex queues it again'),
      failure_reason: nullable(string('why the indexing of the current generation failed')),
      chunks: integer('passages in the search index, from the last generation indexed'),
      generation: integer('the indexing generation: 1 when added, one more per reindex'),
      added_by: string('the user who added it'),
      added_at: dateTime(),
      indexed_at: nullable(dateTime('when the last generation was indexed')),
      updated_at: dateTime(),
    }),
  },
  routes: {
    '/api/v1/documents': {
      get: {
        summary: 'List documents',
        description: `Newest first. ${WHO_READS}`,
        access: 'user',
        query: [
          { name: 'workspace_id', description: "only this workspace's documents; a workspace the caller may not read is 404 `workspace_not_found`", schema: { type: 'string' } },
          { name: 'status', description: 'only documents with this indexing status', schema: enumOf(DOCUMENT_STATUSES) },
          ...PAGE_PARAMETERS,
        ],
        success: { status: 200, description: 'a page of documents', json: page(ref('Document')) },
        errors: [404],
      },
      post: {
        idempotent: true,
        versioned: 'read',
        summary: 'Upload a document',
        description: `PDF, DOCX, HTML, Markdown, plain text or CSV, its type sniffed from its bytes (anything else is 415 \`unsupported_document_type\`, whatever its name), at most DOCUMENT_MAX_BYTES (413 \`document_too_large\`); counts against the documents quota (429 \`quota_exceeded\`). A refused upload leaves nothing behind. The document is then \`queued\` for indexing. ${WHO_WRITES}`,
        access: 'user',
        body: {
          multipart: {
            type: 'object',
            required: ['workspace_id', FILE_FIELD],
            properties: {
              workspace_id: string('the workspace the document belongs to'),
              title: string('1 to 200 characters; absent or empty: the file name without its extension'),
              [FILE_FIELD]: { type: 'string', format: 'binary', description: 'the document, one file' },
            },
          },
        },
        success: { status: 201, description: 'the new document', json: ref('Document'), headers: { Location: { description: 'the path of the new document', schema: { type: 'string' } } } },
        errors: [404, 429],
      },
    },
    '/api/v1/documents/text': {
      post: {
        idempotent: true,
        versioned: 'read',
        summary: 'Add a document from text',
        description: `The text is kept as the document's bytes (UTF-8) and typed like an upload (Markdown, CSV, HTML or plain text); at most DOCUMENT_MAX_BYTES (and BODY_LIMIT_BYTES as a JSON body); counts against the documents quota. ${WHO_WRITES}`,
        access: 'user',
        body: { json: schemaOfCodec(TextDocumentBody) },
        success: { status: 201, description: 'the new document', json: ref('Document'), headers: { Location: { description: 'the path of the new document', schema: { type: 'string' } } } },
        errors: [404, 429],
      },
    },
    '/api/v1/documents/{id}': {
      get: { versioned: 'read', summary: 'One document', description: WHO_READS, access: 'user', success: { status: 200, description: 'the document', json: ref('Document') }, errors: [404] },
      delete: {
        versioned: 'conditional',
        summary: 'Delete a document',
        description: `Its passages leave the search index and its bytes the store shortly after (the indexing saga); its events stay for the audit log. ${WHO_WRITES}`,
        access: 'user',
        success: { status: 204, description: 'deleted' },
        errors: [404],
      },
    },
    '/api/v1/documents/{id}/reindex': {
      post: {
        versioned: 'conditional',
        summary: 'Rebuild the index of a document',
        description: `Queues the next indexing generation, which replaces the document's passages when it is done; one still running is superseded. ${WHO_WRITES}`,
        access: 'user',
        success: { status: 202, description: 'the document, queued again', json: ref('Document') },
        errors: [404],
      },
    },
    '/api/v1/documents/{id}/view': {
      get: {
        summary: 'View or download the original',
        description: `The bytes as uploaded, with their sniffed content type (text types in UTF-8), shown inline with the file name; never run as a page of the platform (a sandboxing Content-Security-Policy, nosniff). ${WHO_READS}`,
        access: 'user',
        success: {
          status: 200,
          description: 'the original bytes',
          content: { type: DOCUMENT_TYPES, schema: { type: 'string', format: 'binary' } },
          headers: {
            'Content-Disposition': { description: '`inline` with the file name, ASCII and UTF-8 (RFC 6266)', schema: { type: 'string' } },
            'X-Content-Type-Options': { description: '`nosniff`', schema: { type: 'string' } },
            'Content-Security-Policy': { description: 'sandboxes the document: no scripts, no requests', schema: { type: 'string' } },
          },
        },
        errors: [404],
      },
    },
  },
};
