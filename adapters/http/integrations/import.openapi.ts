// OpenAPI description of the OpenAPI import (integrations/import.ts).

import { type ApiArea, arrayOf, boolean, enumOf, nullable, object, ref, schemaOfCodec, string } from '../openapi/describe';
import { IntegrationAuth } from '../../../domain/integration/integration';
import { PARAMETER_LOCATIONS, RISK_TIERS } from '../../../domain/tool/tool';
import { REMOVED_ACTIONS } from '../../../application/integration/openapi-import';
import { MAX_IMPORTED_OPERATIONS } from '../../../application/integration/openapi-proposal';
import { ApplyImportBody, DOCUMENT_FILE_FIELD, PreviewImportBody, ReimportBody } from './import';

const WHO_READS = 'Only in workspaces the caller may read (every workspace for an admin or owner, those granted to their teams for a member); anything else is 404.';
const WHO_WRITES = "Needs the write flag of one of the caller's teams on the workspace (admins and owners always): 403 `workspace_read_only` for a reader.";
const DOCUMENT_ERRORS =
  'The document must be OpenAPI 3.0 or 3.1, JSON or YAML, at most OPENAPI_MAX_BYTES; refusals are 400 naming the field: `not_openapi` (not text, neither JSON nor YAML, no `openapi` field), `swagger_not_supported` (Swagger 2.0: convert it to OpenAPI 3 first), `unsupported_openapi_version`, `invalid_openapi` (with what the validator found), `openapi_too_large`. Internal `$ref`s are followed (chains, and circular schemas, which are cut with a `(recursive: Name)` placeholder); external ones are never fetched.';
const URL_ERRORS =
  'A URL is fetched with GET through the outbound guard within OPENAPI_FETCH_TIMEOUT_MS, redirects not followed: `invalid_url`, `insecure_url` (not https), `private_address` (loopback, private, link-local, metadata), `unresolvable_host` (relaxed only by OUTBOUND_ALLOW_INSECURE and OUTBOUND_ALLOW_PRIVATE_NETWORKS), `openapi_unreachable` (no answer, a time-out, a status other than 2xx), `openapi_too_large`.';

const parameterMapping = object({
  argument: string('the property of input_schema'),
  in: enumOf(PARAMETER_LOCATIONS),
  name: nullable(string('the path placeholder, query parameter, header or body property; null: the argument is the whole body')),
});
const toolSummary = object({ operation_key: string(), tool_id: string(), name: string() });

export const integrationImportApi: ApiArea = {
  tag: 'integrations',
  schemas: {
    ImportedDocument: object({
      openapi: string('the OpenAPI version, 3.0.x or 3.1.x'),
      title: string('info.title'),
      version: string('info.version'),
      sha256: string("the SHA-256 of the document's bytes, hex"),
      url: nullable(string('where it was fetched from; null for an upload or a document in the body')),
    }),
    ImportProposal: object({
      document: ref('ImportedDocument'),
      integration: object(
        {
          name: string('info.title, at most 100 characters'),
          base_url: nullable(string('the first server, its variables at their defaults, resolved against the document URL when relative; null when none resolves (an upload with a relative server): give base_url when applying')),
          auth: { ...schemaOfCodec(IntegrationAuth), description: 'guessed from the security schemes, never with a credential; what only a person knows (the basic user name, the OAuth2 client id) is empty' },
          default_headers: { type: 'object', additionalProperties: { type: 'string' } },
          notes: arrayOf(string(), 'what the guess could not settle'),
        },
        'the integration apply creates unless told otherwise',
      ),
      operations: arrayOf(ref('ProposedOperation'), `each operation a tool can call, in the document's order (at most ${MAX_IMPORTED_OPERATIONS})`),
      skipped: arrayOf(ref('SkippedOperation'), 'operations a tool cannot call, with the reason'),
    }),
    ProposedOperation: object({
      operation_key: string('the operationId, or `METHOD /path` without one: how apply chooses it and a reimport matches its tool'),
      name: string('the tool name: the operationId made fit for a model (^[A-Za-z][A-Za-z0-9_-]{0,63}$) or method_path, unique in the workspace without case'),
      description: string('summary and description, at most 1024 characters'),
      method: enumOf(['GET', 'POST', 'PUT', 'PATCH', 'DELETE']),
      path: string('the path template, under the base URL'),
      parameters: arrayOf(parameterMapping, 'where each argument goes: path, query and header parameters by name; the properties of a JSON object body each as a body argument, any other body as one argument (name null)'),
      input_schema: { type: 'object', description: 'JSON Schema 2020-12 of the arguments: type object, required, additionalProperties false' },
      risk: enumOf(RISK_TIERS, 'the default risk tier: read for GET, write otherwise'),
      notes: arrayOf(string(), 'what of the operation the tool leaves out (an optional cookie, a non-JSON optional body)'),
    }),
    SkippedOperation: object({ operation_key: string(), method: string(), path: string(), reason: string() }),
    AppliedImport: object({
      integration: ref('Integration'),
      tools: arrayOf(object({ id: string(), operation_key: string(), name: string(), method: string(), path: string() }), 'the tools made'),
      skipped: arrayOf(ref('SkippedOperation')),
    }),
    Reimport: object({
      dry_run: boolean(),
      document: ref('ImportedDocument'),
      added: arrayOf(
        object({
          operation_key: string(),
          name: string(),
          method: string(),
          path: string(),
          chosen: boolean('whether this reimport makes its tool (in `add`, or `add` not given)'),
          tool_id: nullable(string('the tool made; null in a dry run or when not chosen')),
        }),
        'operations with no tool yet',
      ),
      changed: arrayOf(
        object({
          operation_key: string(),
          tool_id: string(),
          name: string(),
          fields: arrayOf(string(), 'the imported fields the document describes differently now'),
          kept_edits: arrayOf(string(), 'fields a person edited, kept as they are'),
          overwritten_edits: arrayOf(string(), 'fields a person edited that go back to the document (overwrite_edits)'),
        }),
      ),
      removed: arrayOf(
        object({ operation_key: string(), tool_id: string(), name: string(), reason: string(), action: enumOf(REMOVED_ACTIONS) }),
        'tools whose operation the document no longer has, or can no longer be a tool',
      ),
      unchanged: arrayOf(toolSummary),
      skipped: arrayOf(ref('SkippedOperation')),
    }),
  },
  routes: {
    '/api/v1/workspaces/{workspace_id}/integrations/import/preview': {
      post: {
        summary: 'Preview an OpenAPI import from a URL',
        description: `What the document at \`url\` proposes: an integration and a tool per operation, with a generated name, a description and a JSON Schema input built from the path, query, header and body parameters. Writes nothing. ${URL_ERRORS} ${DOCUMENT_ERRORS} ${WHO_READS}`,
        access: 'user',
        body: { json: schemaOfCodec(PreviewImportBody) },
        success: { status: 200, description: 'the proposal', json: ref('ImportProposal') },
        errors: [404],
      },
    },
    '/api/v1/workspaces/{workspace_id}/integrations/import/preview/upload': {
      post: {
        summary: 'Preview an OpenAPI import from an upload',
        description: `As the preview by URL, for a document uploaded as \`${DOCUMENT_FILE_FIELD}\` (a file larger than OPENAPI_MAX_BYTES is 413 \`openapi_too_large\`). ${DOCUMENT_ERRORS} ${WHO_READS}`,
        access: 'user',
        body: {
          multipart: {
            type: 'object',
            required: [DOCUMENT_FILE_FIELD],
            properties: { [DOCUMENT_FILE_FIELD]: { type: 'string', format: 'binary', description: 'the OpenAPI document, JSON or YAML' } },
          },
        },
        success: { status: 200, description: 'the proposal', json: ref('ImportProposal') },
        errors: [404],
      },
    },
    '/api/v1/workspaces/{workspace_id}/integrations/import/apply': {
      post: {
        idempotent: true,
        summary: 'Apply an OpenAPI import',
        description: `Creates the integration (its fields default to the preview's; \`credentials\` is the secret of the auth kind, sealed and never answered), or adds to an existing integration of the workspace (\`integration.integration_id\`, alone), and a tool (source \`openapi\`) per chosen operation: \`operations\` lists operation keys (every importable operation when absent), \`overrides\` gives per operation key a \`name\`, \`chat\` (default true) or \`risk\` (default read for GET, write otherwise). \`source\` is \`{url}\` or \`{document}\` (the text, also bounded by BODY_LIMIT_BYTES). Everything is checked before anything is written: 400 naming the field (\`source.url\`, \`source.document\`, \`integration.<field>\` as for creating an integration, \`operations.<i>\`: \`unknown_operation\` or \`operation_not_importable\`, \`overrides.<key>\`), 409 \`tool_name_taken\` (a name the workspace uses) or \`operation_imported\` (the integration has the operation's tool already: reimport it), 429 \`quota_exceeded\` when the plan's business tools limit cannot take the whole batch. The integration remembers the document's URL and SHA-256 (\`openapi_source\`). ${URL_ERRORS} ${DOCUMENT_ERRORS} ${WHO_WRITES}`,
        access: 'user',
        body: { json: schemaOfCodec(ApplyImportBody) },
        success: { status: 201, description: 'the integration and the tools made', json: ref('AppliedImport'), headers: { Location: { description: 'the path of the integration', schema: { type: 'string' } } } },
        errors: [403, 404, 409, 429],
      },
    },
    '/api/v1/integrations/{id}/reimport': {
      post: {
        summary: "Reimport an integration's OpenAPI document",
        description: `Compares the document (\`source\`, or the integration's remembered \`openapi_source.url\` when absent: 400 \`no_openapi_source\` without one) with the integration's imported tools by operation key: \`added\`, \`changed\` (with the fields, and the local edits that stay), \`removed\`, \`unchanged\`. \`dry_run: true\` answers only that (read access suffices). Otherwise: the new operations in \`add\` (all when absent; another key is 400 \`unknown_operation\`) become tools; changed tools take the document's definition, keeping the fields a person edited unless \`overwrite_edits\` (409 \`reimport_conflict\` when kept edits no longer fit it); removed operations' tools are disabled (\`removed\`: \`disable\`, the default, so nothing a person relies on vanishes unasked), deleted (\`delete\`) or left as they are (\`keep\`); \`chat\`, \`risk\` and \`enabled\` are never changed otherwise. Checked before anything is written, the business tools limit included (429). ${URL_ERRORS} ${DOCUMENT_ERRORS} ${WHO_WRITES}`,
        access: 'user',
        body: { json: schemaOfCodec(ReimportBody) },
        success: { status: 200, description: 'the difference, and what was done', json: ref('Reimport') },
        errors: [403, 404, 409, 429],
      },
    },
  },
};
