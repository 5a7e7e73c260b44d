// OpenAPI description of the integrations (integrations/integrations.ts).

import { PAGE_PARAMETERS, type ApiArea, boolean, dateTime, nullable, object, page, ref, schemaOfCodec, string } from '../openapi/describe';
import { IntegrationAuth, MAX_DEFAULT_HEADERS, RESERVED_HEADERS } from '../../../domain/integration/integration';
import { CreateIntegrationBody, UpdateIntegrationBody } from './integrations';

const WHO_READS = 'Only in workspaces the caller may read: every workspace for an admin or owner, the workspaces granted to their teams for a member; anything else is 404.';
const WHO_WRITES = "Needs the write flag of one of the caller's teams on the workspace (admins and owners always): 403 `workspace_read_only` for a reader.";
const FIELD_ERRORS = `400 naming the field: \`name\` (1 to 100 characters), \`base_url\` and \`auth.token_url\` (\`invalid_url\`; \`insecure_url\` unless https, \`private_address\` for a loopback, private, link-local or metadata address, \`unresolvable_host\`; both relaxed only by OUTBOUND_ALLOW_INSECURE and OUTBOUND_ALLOW_PRIVATE_NETWORKS), \`auth\` (an unknown kind), \`auth.name\`, \`auth.username\`, \`auth.client_id\`, \`auth.scopes.<i>\` (\`invalid_auth\`), \`default_headers.<name>\` (\`invalid_header\`: at most ${MAX_DEFAULT_HEADERS}, token names, values without control characters; \`reserved_header\` for ${RESERVED_HEADERS.join(', ')}), \`credentials\` (\`invalid_credentials\`: 1 to 4096 characters without control characters; none for auth kind none).`;

export const integrationsApi: ApiArea = {
  tag: 'integrations',
  description: "A workspace's own APIs that business tools call (spec 4.12): base URL, auth and default headers. The credentials are sealed when given and never answered.",
  schemas: {
    Integration: object({
      id: string(),
      workspace_id: string(),
      name: string('1 to 100 characters'),
      base_url: string('https, checked by the outbound guard when saved'),
      auth: { ...schemaOfCodec(IntegrationAuth), description: 'how the platform authenticates at the API; never the secret' },
      has_credentials: boolean('whether the secret of the auth kind is set; the secret itself is never answered'),
      default_headers: { type: 'object', additionalProperties: { type: 'string' }, description: 'sent with every call' },
      openapi_source: nullable(
        object(
          {
            url: nullable(string('the URL the document was fetched from; null for an upload or a document sent in the body')),
            sha256: string("the SHA-256 of the document's bytes, hex"),
            api_version: string("the document's info.version"),
            imported_at: dateTime(),
          },
          'the OpenAPI document the integration\'s tools were last imported from (POST .../integrations/import/apply, POST /api/v1/integrations/{id}/reimport); null when none was',
        ),
      ),
      created_at: dateTime(),
      updated_at: dateTime(),
      updated_by: object({ kind: string('user, admin, ...'), id: string() }),
    }),
  },
  routes: {
    '/api/v1/workspaces/{workspace_id}/integrations': {
      get: {
        summary: "List a workspace's integrations",
        description: `Oldest first. ${WHO_READS}`,
        access: 'user',
        query: [...PAGE_PARAMETERS],
        success: { status: 200, description: 'a page of integrations', json: page(ref('Integration')) },
        errors: [404],
      },
      post: {
        idempotent: true,
        versioned: 'read',
        summary: 'Create an integration',
        description: `\`credentials\` is the secret of the auth kind: the API key's value, the bearer token, the basic password, the OAuth2 client secret. ${FIELD_ERRORS} ${WHO_WRITES}`,
        access: 'user',
        body: { json: schemaOfCodec(CreateIntegrationBody) },
        success: { status: 201, description: 'the new integration', json: ref('Integration'), headers: { Location: { description: 'the path of the new integration', schema: { type: 'string' } } } },
        errors: [403, 404],
      },
    },
    '/api/v1/integrations/{id}': {
      get: { summary: 'An integration', description: WHO_READS, access: 'user', versioned: 'read', success: { status: 200, description: 'the integration', json: ref('Integration') }, errors: [404] },
      patch: {
        summary: 'Change an integration',
        description: `Every field is optional: an absent one keeps its value; \`credentials\` omitted keeps them, null removes them, a string replaces them. A new auth kind (other than none) needs new credentials or null (400 \`credentials_required\`); none drops them. The same values again record nothing. ${FIELD_ERRORS} ${WHO_WRITES}`,
        access: 'user',
        versioned: 'conditional',
        body: { json: schemaOfCodec(UpdateIntegrationBody) },
        success: { status: 200, description: 'the integration as it stands', json: ref('Integration') },
        errors: [403, 404],
      },
      put: {
        summary: 'Change an integration (as PATCH)',
        description: 'The same as PATCH, which the spec names; earlier releases answered PUT, and still do for the clients written then.',
        access: 'user',
        versioned: 'conditional',
        body: { json: schemaOfCodec(UpdateIntegrationBody) },
        success: { status: 200, description: 'the integration as it stands', json: ref('Integration') },
        errors: [403, 404],
      },
      delete: {
        summary: 'Delete an integration',
        description: `While tools call the integration: 409 \`integration_has_tools\` with \`tools\`, how many, unless \`cascade=true\`, which deletes those tools first (their names become free, the business tools quota goes down). ${WHO_WRITES}`,
        access: 'user',
        versioned: 'conditional',
        query: [{ name: 'cascade', description: '`true` deletes the tools that call the integration too; anything but true or false is 400 naming `cascade`', schema: { type: 'string', enum: ['true', 'false'], default: 'false' } }],
        success: { status: 204, description: 'deleted' },
        errors: [403, 404, 409],
      },
    },
  },
};
