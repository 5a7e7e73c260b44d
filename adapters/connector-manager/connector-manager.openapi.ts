// OpenAPI description of the connector-manager as the main server mounts it (connector-manager.ts).
// `npm run connector-manager` serves the same route at `/v1/invoke`.

import { type ApiArea, enumOf, integer, object, schemaOfCodec, string } from '../http/openapi/describe';
import { InvokeBody, MOUNTED_PREFIX, INVOKE_PATH } from './connector-manager';

const REASONS = ['unreachable', 'timeout', 'refused_address', 'invalid_signature', 'protocol_mismatch', 'bad_response'];

export const connectorManagerApi: ApiArea = {
  tag: 'connector-manager',
  description:
    'Signs and posts a protocol request to a connector server for the caller (spec 4.1, 8). Served here only when `CONNECTOR_MANAGER_TOKEN` is set (404 otherwise); `npm run connector-manager` serves it alone at `/v1/invoke`.',
  schemas: {
    ConnectorManagerAnswer: object({
      answer: { type: 'object', required: ['type'], properties: { type: enumOf(['pong', 'tools.list', 'capabilities.list', 'result', 'challenge', 'error']) }, description: "the connector's answer (spec 2.3), checked to be of the type the request expects" },
      status: integer("the connector's HTTP status"),
      latency_ms: integer('the whole invocation, retries and waits included'),
      attempts: integer('calls made, the first included'),
    }),
    ConnectorManagerFailure: object({
      code: enumOf(REASONS, 'why no usable answer came'),
      message: string('what was wrong (for `bad_response`, the field of the answer and what it should have been)'),
      latency_ms: integer(),
      attempts: integer(),
    }),
  },
  routes: {
    [`${MOUNTED_PREFIX}${INVOKE_PATH}`]: {
      post: {
        summary: 'Call a connector',
        description:
          "Signs `request` (with `protocol_version` '1' and a `request_id` made up when absent) with `signing_secret` per spec 5.2 and posts it to `{endpoint}/svc` through the outbound guard, at most `timeout_ms` (default `CONNECTOR_TIMEOUT_MS`, 30 s) for the whole invocation. Retries with exponential back-off after a failed connection or a 5xx answer: always for `ping`, `tools.list` and `capabilities.list`; for `tool.invoke` and `tool.resume` only when the request carries its `request_id`, sent again unchanged. Forwards `x-svc-trace-id`, `X-End-User-Token`, `X-End-User-Session` and the tenancy headers to the connector. 400 naming the header or field: `x-svc-tenant-id`, `x-svc-workspace-id` (1 to 200 printable characters; `*` for the whole organization), `target_id` (`sdk:{connection_id}`), `endpoint`, `signing_secret`, `request.*` (`request.tool` is required for tool calls), `timeout_ms`.",
        access: 'connector_manager_token',
        headers: [
          { name: 'x-svc-tenant-id', description: 'the organization the call is for', required: true, schema: { type: 'string', minLength: 1, maxLength: 200 } },
          { name: 'x-svc-workspace-id', description: 'the workspace the call is for; `*` for the whole organization', required: true, schema: { type: 'string', minLength: 1, maxLength: 200 } },
          { name: 'x-svc-trace-id', description: 'forwarded to the connector; default the request id', schema: { type: 'string' } },
          { name: 'X-End-User-Token', description: "the end user's token in the tenant's own systems, forwarded", schema: { type: 'string' } },
          { name: 'X-End-User-Session', description: "the end user's session in the tenant's own systems, forwarded", schema: { type: 'string' } },
        ],
        body: { json: schemaOfCodec(InvokeBody) },
        success: { status: 200, description: "the connector's answer, an `error` answer of a tool call included", json: { $ref: '#/components/schemas/ConnectorManagerAnswer' } },
        errors: [404],
        otherAnswers: { '502': { description: 'no usable answer from the connector', json: { $ref: '#/components/schemas/ConnectorManagerFailure' } } },
      },
    },
  },
};
