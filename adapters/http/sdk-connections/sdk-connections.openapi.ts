// OpenAPI description of the SDK connections (sdk-connections/sdk-connections.ts).

import { DEGRADED_REASONS } from '../../../domain/sdk-connection/sdk-connection';
import { MAX_SECRET_GRACE_SECONDS } from '../../../application/sdk-connection/sdk-connections';
import { PAGE_PARAMETERS, type ApiArea, arrayOf, boolean, dateTime, enumOf, integer, nullable, object, page, ref, schemaOfCodec, string } from '../openapi/describe';
import { CreateSdkConnectionBody, SyncToolsBody, UpdateSdkConnectionBody } from './sdk-connections';

const WHO = 'Owners and admins only (403 `insufficient_role` for a member). Another organization’s connection is 404 `sdk_connection_not_found`.';
const FIELD_ERRORS =
  '400 naming the field: `name` (1 to 100 characters), `webhook_url` (`invalid_url`; `insecure_url` unless https, `private_address` for a loopback, private, link-local or metadata address, `unresolvable_host`; relaxed only by OUTBOUND_ALLOW_INSECURE and OUTBOUND_ALLOW_PRIVATE_NETWORKS), `signing_secret` (`invalid_secret`: 16 to 256 printable ASCII characters without spaces, or empty for the platform to make one).';

const record = { type: 'object', additionalProperties: true };
const reason = enumOf(DEGRADED_REASONS, 'why the connection is degraded (see docs/sdk-connections.md)');
const reasonOrNull = { type: ['string', 'null'], enum: [...DEGRADED_REASONS, null], description: 'why the connection is degraded (see docs/sdk-connections.md); null when healthy' };

export const sdkConnectionsApi: ApiArea = {
  tag: 'sdk connections',
  description:
    "An organization's own connector servers (spec 2.1, 4.2), called with signed protocol requests (spec 5.2). The signing secret is sealed when given and answered only by the request that set it.",
  schemas: {
    SdkConnectionTest: object({
      status: enumOf(['healthy', 'degraded']),
      reason: reasonOrNull,
      detail: nullable(string('what was wrong, in words (never a secret)')),
      latency_ms: nullable(integer()),
      protocol_version: nullable(string('the pong’s protocol_version')),
      sdk_version: nullable(string('the pong’s sdk_version')),
      deep: nullable(object({ passed: integer(), total: integer() }, 'a deep test: how many conformance cases passed')),
      tested_at: dateTime(),
    }),
    SdkConnection: object({
      id: string(),
      name: string('1 to 100 characters, unique in the organization (ignoring case)'),
      webhook_url: string('the connector server’s endpoint; requests are posted to `{webhook_url}/svc` (an endpoint ending in /svc is used as it is)'),
      enabled: boolean(),
      has_secret: boolean('always true: there is a signing secret; it is never answered here'),
      previous_secret_valid_until: nullable(dateTime('while a rotation’s grace lasts: until when the previous secret still signs')),
      secret_rotated_at: nullable(dateTime()),
      status: enumOf(['untested', 'healthy', 'degraded'], '`untested` until the first test, then the last test’s outcome'),
      last_test: nullable(ref('SdkConnectionTest')),
      tools_count: integer('tools advertised at the last sync'),
      flows_count: integer(),
      events_count: integer(),
      schedules_count: integer('schedules advertised at the last sync (GET .../schedules says which run)'),
      tools: arrayOf(object({ name: string(), description: nullable(string()), auth: nullable(string()), chat: boolean() }), 'the tools advertised at the last sync'),
      organization: nullable({ ...record, description: 'organization metadata advertised at the last sync (spec 2.5)' }),
      last_sync: nullable(object({ via: enumOf(['capabilities.list', 'tools.list']), sdk_name: nullable(string()), sdk_version: nullable(string()), synced_at: dateTime() })),
      last_sync_failure: nullable(object({ reason, detail: string(), failed_at: dateTime() }, 'the last sync that failed since the last one that worked')),
      created_at: dateTime(),
      updated_at: dateTime(),
      updated_by: object({ kind: string('user, admin, ...'), id: string() }),
    }),
    RegisteredConnectorTool: object({
      id: string('the business tool'),
      name: string('its name in the workspace (how the model calls it)'),
      tool: string('the connector’s name for it (sent as `tool` in tool.invoke)'),
    }),
    SdkConnectionWithSecret: {
      allOf: [ref('SdkConnection'), { type: 'object', properties: { signing_secret: string('the signing secret in clear: answered by the create and by an update that rotates it, never again') } }],
    },
  },
  routes: {
    '/api/v1/org/sdk-connections': {
      get: {
        summary: "List the organization's SDK connections",
        description: `Oldest first; never a secret (\`has_secret\`). ${WHO}`,
        access: 'user',
        role: 'admin',
        query: [...PAGE_PARAMETERS],
        success: { status: 200, description: 'a page of connections', json: page(ref('SdkConnection')) },
      },
      post: {
        idempotent: true,
        versioned: 'read',
        summary: 'Create an SDK connection',
        description: `\`enabled\` defaults to false. \`signing_secret\` omitted or empty: the platform makes one (32 random bytes). The answer carries \`signing_secret\` in clear, this once: configure the connector with it. Needs the \`sdk_connections\` feature of the plan (403 \`feature_not_in_plan\`); 409 \`sdk_connection_name_taken\`. ${FIELD_ERRORS} ${WHO}`,
        access: 'user',
        role: 'admin',
        body: { json: schemaOfCodec(CreateSdkConnectionBody) },
        success: {
          status: 201,
          description: 'the new connection, with its signing secret',
          json: ref('SdkConnectionWithSecret'),
          headers: { Location: { description: 'the path of the new connection', schema: { type: 'string' } } },
        },
        errors: [409],
      },
    },
    '/api/v1/org/sdk-connections/{id}': {
      get: { summary: 'An SDK connection', description: WHO, access: 'user', role: 'admin', versioned: 'read', success: { status: 200, description: 'the connection', json: ref('SdkConnection') }, errors: [404] },
      patch: {
        summary: 'Change an SDK connection, or rotate its secret',
        description: `Every field is optional: an absent one keeps its value; the same values again record nothing. \`signing_secret\` rotates the secret (empty: the platform makes one), answered in clear this once; the previous secret still signs for \`grace_seconds\` (0 to ${MAX_SECRET_GRACE_SECONDS}; 0: no grace; default SDK_SECRET_GRACE_SECONDS), so the connector can be redeployed with the new one without downtime. 400 \`grace_without_rotation\`, \`invalid_grace\`; 409 \`sdk_connection_name_taken\`. ${FIELD_ERRORS} ${WHO}`,
        access: 'user',
        role: 'admin',
        versioned: 'conditional',
        body: { json: schemaOfCodec(UpdateSdkConnectionBody) },
        success: { status: 200, description: 'the connection as it stands, with `signing_secret` when rotated', json: ref('SdkConnectionWithSecret') },
        errors: [404, 409],
      },
      delete: {
        summary: 'Delete an SDK connection',
        description: `Deletes its business tools in every workspace, then the connection, and frees its name. ${WHO}`,
        access: 'user',
        role: 'admin',
        versioned: 'conditional',
        success: { status: 204, description: 'deleted' },
        errors: [404],
      },
    },
    '/api/v1/org/sdk-connections/{id}/test': {
      post: {
        summary: 'Test an SDK connection (signed ping)',
        description: `Sends a signed \`ping\` (during a rotation’s grace, once more with the previous secret when the connector refuses the signature) and records the outcome: \`healthy\` for a \`pong\` within CONNECTOR_TIMEOUT_MS with protocol_version 1 or none, otherwise \`degraded\` with the reason (${DEGRADED_REASONS.join(', ')}). \`deep=true\` also runs the connector doctor’s conformance cases and answers each with its fix hint. Answered 200 whatever the connector did. ${WHO}`,
        access: 'user',
        role: 'admin',
        query: [{ name: 'deep', description: '`true`: also run the conformance cases', schema: { type: 'string', enum: ['true', 'false'] } }],
        success: {
          status: 200,
          description: 'the recorded outcome',
          json: object({
            connection_id: string(),
            status: enumOf(['healthy', 'degraded']),
            reason: reasonOrNull,
            detail: nullable(string()),
            latency_ms: nullable(integer()),
            protocol_version: nullable(string()),
            sdk_version: nullable(string()),
            signed_with: enumOf(['current', 'previous'], 'the secret the connector accepted (degraded: the last one tried)'),
            deep: nullable(
              object({
                passed: integer(),
                total: integer(),
                cases: arrayOf(object({ name: string(), passed: boolean(), detail: string('what was observed'), hint: string('how to fix a failure') })),
              }),
            ),
            tested_at: dateTime(),
          }),
        },
        errors: [404],
      },
    },
    '/api/v1/org/sdk-connections/{id}/sync-tools': {
      post: {
        summary: "Fetch the connector's capabilities; register its tools",
        description: `Asks \`capabilities.list\` (\`tools.list\` when the connector does not know it) and records the tools, flows, events, schedules and organization metadata. With \`workspace_id\` and \`auto_register: true\`, each chat tool (\`chat\` not false) becomes a business tool of that workspace (source \`sdk\`, risk \`write\`), tools whose description or schema changed are updated, and tools the connector no longer offers are disabled; a new tool counts against the plan's business tools (429 \`quota_exceeded\`, nothing recorded). 400 \`workspace_required\` (auto_register without workspace_id), \`workspace_not_found\` naming \`workspace_id\`. 502 \`connector_unavailable\` with \`reason\` and \`detail\` when the connector gave no list (recorded as a failed sync). ${WHO}`,
        access: 'user',
        role: 'admin',
        body: { json: schemaOfCodec(SyncToolsBody) },
        success: {
          status: 200,
          description: 'what was recorded, and what became of the tools',
          json: object({
            connection_id: string(),
            via: enumOf(['capabilities.list', 'tools.list']),
            sdk_name: nullable(string()),
            sdk_version: nullable(string()),
            tools: arrayOf(object({ name: string(), description: nullable(string()), auth: nullable(string()), chat: boolean() })),
            flows_count: integer(),
            events_count: integer(),
            schedules_count: integer(),
            organization: nullable(record),
            synced_at: dateTime(),
            registration: nullable(
              object({
                workspace_id: string(),
                created: arrayOf(ref('RegisteredConnectorTool')),
                updated: arrayOf(ref('RegisteredConnectorTool')),
                disabled: arrayOf(ref('RegisteredConnectorTool')),
                unchanged: arrayOf(ref('RegisteredConnectorTool')),
                skipped: arrayOf(object({ tool: string('the connector’s name'), code: string(), reason: string() })),
              }),
            ),
          }),
        },
        errors: [404, 429, 502],
      },
    },
    '/api/v1/org/sdk-connections/{id}/flows': {
      get: {
        summary: 'The flows the connector advertised',
        description: `As of the last sync (empty before one, and for a connector answering only \`tools.list\`). The platform runs flows; the connector only advertises them. ${WHO}`,
        access: 'user',
        role: 'admin',
        success: { status: 200, description: 'the flows, in one page', json: object({ items: arrayOf(record), next_cursor: { type: 'null' } }) },
        errors: [404],
      },
    },
    '/api/v1/org/sdk-connections/{id}/schedules': {
      get: {
        summary: 'The schedules the connector advertised, as the platform runs them',
        description: `As of the last sync. Each schedule emits its \`event\` at the times its five-field \`cron\` names in its \`timezone\`, while the connection is enabled (docs/orchestration-events.md, "Schedules"). A schedule the platform cannot run is listed with \`problem\` (why) and \`advertised\` (as given). ${WHO}`,
        access: 'user',
        role: 'admin',
        success: {
          status: 200,
          description: 'the schedules, in the order advertised, in one page',
          json: object({
            items: arrayOf({
              oneOf: [
                object({
                  id: string(),
                  label: nullable(string()),
                  cron: string('minute hour day-of-month month day-of-week'),
                  timezone: string('an IANA time zone'),
                  event: string('the name of the event emitted'),
                  payload: record,
                  next_run_at: nullable(dateTime('null while the connection is disabled')),
                  problem: { type: 'null' },
                }),
                object({ id: nullable(string()), problem: string('why it does not run'), advertised: { description: 'the entry as the connector advertised it' } }),
              ],
            }),
            next_cursor: { type: 'null' },
          }),
        },
        errors: [404],
      },
    },
  },
};
