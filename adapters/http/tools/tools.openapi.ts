// OpenAPI description of the business tools (tools/tools.ts).

import { PAGE_PARAMETERS, type ApiArea, arrayOf, boolean, dateTime, enumOf, nullable, object, page, ref, schemaOfCodec, string } from '../openapi/describe';
import { HTTP_METHODS, MAX_INPUT_SCHEMA_BYTES, MAX_TOOL_PARAMETERS, PARAMETER_LOCATIONS, RISK_TIERS, TOOL_DESCRIPTION_MAX_LENGTH, TOOL_PATH_MAX_LENGTH } from '../../../domain/tool/tool';
import { CreateToolBody, UpdateToolBody } from './tools';

const WHO_READS = 'Only in workspaces the caller may read: every workspace for an admin or owner, the workspaces granted to their teams for a member; anything else is 404.';
const WHO_WRITES = "Needs the write flag of one of the caller's teams on the workspace (admins and owners always): 403 `workspace_read_only` for a reader.";
const FIELD_ERRORS =
  `400 naming the field: \`integration_id\` (\`integration_not_found\`: not an integration of this workspace), \`name\` (\`invalid_name\`: 1 to 64 letters, digits, _ or -, starting with a letter), ` +
  `\`description\` (at most ${TOOL_DESCRIPTION_MAX_LENGTH} characters), \`method\` (${HTTP_METHODS.join(', ')}), \`path\` (\`invalid_path\`: starts with /, at most ${TOOL_PATH_MAX_LENGTH} characters, no ? or #, placeholders \`{name}\`), ` +
  `\`parameters\` and \`parameters.<i>.argument\`/\`.name\` (\`invalid_parameters\`: at most ${MAX_TOOL_PARAMETERS}; each argument a property of input_schema, mapped once; every path placeholder mapped, and nothing mapped to a placeholder the path lacks; only a body argument may have name null, the whole body), ` +
  `\`input_schema\` (\`invalid_input_schema\`: a JSON Schema (2020-12) of type object that compiles, at most ${MAX_INPUT_SCHEMA_BYTES} bytes, no $id), \`chat\`, \`risk\`, \`enabled\` (\`invalid_request\`). ` +
  'Names are unique in the workspace, ignoring case: 409 `tool_name_taken`.';

export const toolsApi: ApiArea = {
  tag: 'tools',
  description:
    "A workspace's business tools (spec 4.12): operations of its integrations the assistant may call, each with its HTTP method, path template, where each argument goes, the JSON Schema of its arguments, whether chat may offer it, and its risk tier.",
  schemas: {
    ParameterMapping: object({
      argument: string('the property of the arguments (input_schema)'),
      in: enumOf(PARAMETER_LOCATIONS),
      name: nullable(string('the path placeholder, query parameter, header or body property; null (body only): the argument is the whole body')),
    }),
    Tool: object({
      id: string(),
      workspace_id: string(),
      integration_id: nullable(string('the integration the tool calls')),
      connection_id: nullable(string("an SDK connection's tool: the connection")),
      source: enumOf(['manual', 'openapi', 'sdk'], 'manual: written by a person; openapi: imported; sdk: a connector’s'),
      name: string('how the model calls the tool; unique in the workspace, ignoring case'),
      description: string(),
      method: enumOf(HTTP_METHODS),
      path: string('a path template under the integration’s base URL, such as /pets/{petId}'),
      parameters: arrayOf(ref('ParameterMapping')),
      input_schema: { type: 'object', description: 'the JSON Schema the arguments must satisfy' },
      chat: boolean('whether the assistant may offer the tool in chat'),
      risk: enumOf(RISK_TIERS, 'read: called at once; write: called at once and shown as an action; approval_required: a call waits for an owner’s or admin’s approval'),
      enabled: boolean(),
      origin: nullable(object({ operation_key: string(), imported_at: dateTime() }, 'an imported tool: the operation it came from')),
      edited_fields: arrayOf(string(), 'fields a person changed since the last import; a reimport keeps them unless told to overwrite'),
      created_at: dateTime(),
      updated_at: dateTime(),
      updated_by: object({ kind: string('user, admin, ...'), id: string() }),
    }),
  },
  routes: {
    '/api/v1/workspaces/{workspace_id}/tools': {
      get: {
        summary: "List a workspace's tools",
        description: `Oldest first. ${WHO_READS}`,
        access: 'user',
        query: [
          { name: 'integration_id', description: 'only the tools of this integration', schema: { type: 'string' } },
          { name: 'source', description: 'only tools of this source (400 naming `source` otherwise)', schema: enumOf(['manual', 'openapi', 'sdk']) },
          ...PAGE_PARAMETERS,
        ],
        success: { status: 200, description: 'a page of tools', json: page(ref('Tool')) },
        errors: [404],
      },
      post: {
        idempotent: true,
        versioned: 'read',
        summary: 'Create a tool',
        description: `Defaults: \`description\` empty, \`parameters\` none, \`input_schema\` an object without properties, \`chat\` true, \`risk\` read for GET and write otherwise, \`enabled\` true. ${FIELD_ERRORS} The plan's business tools limit: 429 \`quota_exceeded\` with \`limit\` and \`used\`. ${WHO_WRITES}`,
        access: 'user',
        body: { json: schemaOfCodec(CreateToolBody) },
        success: { status: 201, description: 'the new tool', json: ref('Tool'), headers: { Location: { description: 'the path of the new tool', schema: { type: 'string' } } } },
        errors: [403, 404, 409, 429],
      },
    },
    '/api/v1/tools/{id}': {
      get: { summary: 'A tool', description: WHO_READS, access: 'user', versioned: 'read', success: { status: 200, description: 'the tool', json: ref('Tool') }, errors: [404] },
      patch: {
        summary: 'Change a tool',
        description: `Every field is optional: an absent one keeps its value (changing \`method\` leaves \`risk\` as it is). The same values again record nothing. \`integration_id\` may be sent only as the tool's own (400 \`integration_fixed\` otherwise). ${FIELD_ERRORS} ${WHO_WRITES}`,
        access: 'user',
        versioned: 'conditional',
        body: { json: schemaOfCodec(UpdateToolBody) },
        success: { status: 200, description: 'the tool as it stands', json: ref('Tool') },
        errors: [403, 404, 409],
      },
      delete: {
        summary: 'Delete a tool',
        description: `Its name becomes free and the business tools quota goes down; its calls stay in the log. ${WHO_WRITES}`,
        access: 'user',
        versioned: 'conditional',
        success: { status: 204, description: 'deleted' },
        errors: [403, 404],
      },
    },
  },
};
