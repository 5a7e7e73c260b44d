// OpenAPI description of tool execution, the execution log and approvals (tools/tool-calls.ts).

import { PAGE_PARAMETERS, type ApiArea, type Schema, boolean, dateTime, enumOf, integer, nullable, object, page, ref, schemaOfCodec, string } from '../openapi/describe';
import { RISK_TIERS } from '../../../domain/tool/tool';
import { TOOL_CALL_STATUSES, ToolCallOrigin } from '../../../domain/tool-call/tool-call';
import { REFUSAL_REASON_MAX_LENGTH } from '../../../application/tool-call/approvals';
import { RefusalBody } from './tool-calls';

const caller = object({ kind: enumOf(['user', 'end_user', 'admin', 'system']), id: string() });
const headers: Schema = { type: 'object', additionalProperties: { type: 'string' }, description: 'lowercased names; credentials and the end user\'s headers are "[redacted]"' };
const STATUS_QUERY = {
  name: 'status',
  description: `only calls in this status; anything else is 400 \`invalid_status\`. awaiting_approval: waits for an owner or admin; ready: may run (runs now); refused; succeeded (2xx); failed`,
  schema: enumOf(TOOL_CALL_STATUSES),
};
const REDACTION =
  'Every credential (Authorization, Proxy-Authorization, Cookie, Set-Cookie, the API key header or query parameter, the secret, OAuth2 access token and basic pair wherever they appear) and the end user\'s X-End-User-Token and X-End-User-Session are "[redacted]", in the request and the response; each body is cut at 16 KiB (`truncated`).';

export const toolCallsApi: ApiArea = {
  tag: 'tool calls',
  description:
    "Calls of business tools (spec 4.12): tests by people, chat steps and flow steps, each recorded as events (requested, approved or refused, succeeded or failed). A call of an `approval_required` tool waits for an owner's or admin's approval before it runs.",
  schemas: {
    ToolCall: object({
      id: string(),
      workspace_id: string(),
      tool_id: string(),
      tool_name: string(),
      risk: enumOf(RISK_TIERS),
      caller: { ...caller, description: 'who asked for the call' },
      origin: { ...schemaOfCodec(ToolCallOrigin), description: 'a test (`POST /tools/{id}/test`), a chat step, or a flow step' },
      arguments: { type: 'object', description: 'as given, checked against the tool\'s input_schema' },
      status: enumOf(TOOL_CALL_STATUSES),
      requested_at: dateTime(),
      approval: nullable(object({ by: caller, at: dateTime() }, 'who approved the call and when')),
      refusal: nullable(object({ by: caller, reason: string(), at: dateTime() }, 'who refused the call, why and when')),
      finished_at: nullable(dateTime('when the outcome was recorded')),
      http_status: nullable(integer("the API's answer; null before an outcome, or when no answer came")),
      latency_ms: nullable(integer()),
      error: nullable(
        object(
          { code: string(), message: string() },
          'why a failed call failed: http_error (a non-2xx answer), timeout, network, private_address, insecure_url, unresolvable_host, response_too_large, auth_failed (no credentials, or no OAuth2 token), integration_gone, tool_gone, tool_disabled, invalid_arguments (the schema changed before an approved call ran); for a connector tool: the connector\'s error code (denied, customer_not_found, person_not_found, not_found, invalid_request, configuration_error, internal_error, ...), or why no usable answer came (unreachable, timeout, refused_address, invalid_signature, protocol_mismatch, bad_response), connection_gone, connection_disabled, interrupted',
        ),
      ),
      request: nullable(object({ method: string(), url: string(), headers, body: nullable(string()) }, `the request as sent. ${REDACTION}`)),
      response: nullable(object({ status: integer(), headers, body: string(), truncated: boolean() }, `the answer as it came; null when none came. ${REDACTION}`)),
      challenge: nullable(object({ prompt: string(), at: dateTime() }, "a connector tool's open challenge (status `challenged`): what the user is asked; the resume token and the user's answer are never shown")),
      erased_at: nullable(dateTime('when what the call carried of people was erased, with the conversation it was a step of (docs/personal-data.md): its arguments read `{}`, request and response null, messages `[erased]`; null otherwise')),
    }),
    ToolTestResult: {
      allOf: [ref('ToolCall'), object({ result: { description: "the API's answer as JSON (its text when it is not JSON; null when empty or when none came), redacted, whole" } })],
    },
  },
  routes: {
    '/api/v1/tools/{id}/test': {
      post: {
        idempotent: true,
        summary: 'Run a tool with given arguments',
        description:
          "Calls the tool's API as a chat step would, with the integration's credentials, and answers the call with its redacted request and response. An owner's or admin's test of an `approval_required` tool runs at once, the approval recorded as theirs; a member's test waits for one (202, status awaiting_approval). A failing API is a 200 with status failed. 400 `invalid_arguments` lists every bad field in `errors: [{field, message}]` (`arguments.<name>`). 409 `tool_disabled` for a disabled tool, `tool_not_callable` for an SDK connection's. Needs the write flag of one of the caller's teams on the tool's workspace (admins and owners always): 403 `workspace_read_only` for a reader; a tool of a workspace the caller may not read is 404. With an Idempotency-Key a retry gets the first answer and the API is called once.",
        access: 'user',
        headers: [
          { name: 'X-End-User-Token', description: "forwarded to the API as a chat turn's end user token would be; recorded only sealed, redacted everywhere", schema: { type: 'string' } },
          { name: 'X-End-User-Session', description: "forwarded to the API as a chat turn's end user session would be; recorded only sealed, redacted everywhere", schema: { type: 'string' } },
        ],
        body: { json: { type: 'object', properties: { arguments: { type: 'object', description: "the tool's arguments, checked against its input_schema" } }, required: ['arguments'] } },
        success: { status: 200, description: 'the call, run: succeeded or failed, with the API\'s answer', json: ref('ToolTestResult') },
        otherAnswers: { '202': { description: 'the call waits for an approval by an owner or admin (status awaiting_approval)', json: ref('ToolTestResult') } },
        errors: [403, 404, 409],
      },
    },
    '/api/v1/tools/{id}/logs': {
      get: {
        summary: "A tool's execution log",
        description: "The tool's calls, newest first. Anyone who may read the tool's workspace; otherwise (or a deleted tool) 404 `tool_not_found`.",
        access: 'user',
        query: [STATUS_QUERY, ...PAGE_PARAMETERS],
        success: { status: 200, description: 'a page of calls', json: page(ref('ToolCall')) },
        errors: [404],
      },
    },
    '/api/v1/tool-calls': {
      get: {
        summary: "The organization's tool calls",
        description: 'Newest first. An owner or admin sees every call of the organization (`?status=awaiting_approval` is the approval queue); a member sees the calls they made.',
        access: 'user',
        query: [STATUS_QUERY, { name: 'tool_id', description: "only this tool's calls", schema: { type: 'string' } }, ...PAGE_PARAMETERS],
        success: { status: 200, description: 'a page of calls', json: page(ref('ToolCall')) },
      },
    },
    '/api/v1/tool-calls/{id}': {
      get: {
        summary: 'A tool call',
        description: "An owner or admin reads any call of the organization; a member reads their own (404 `tool_call_not_found` otherwise, as for another organization's).",
        access: 'user',
        success: { status: 200, description: 'the call', json: ref('ToolCall') },
        errors: [404],
      },
    },
    '/api/v1/tool-calls/{id}/approve': {
      post: {
        summary: 'Approve a waiting tool call',
        description:
          "The call runs next, in the background; its outcome is recorded on it (poll `GET /tool-calls/{id}`). Only an owner or admin: 403 `insufficient_role`. 404 `tool_call_not_found` for another organization's; 409 `tool_call_not_awaiting_approval` for a call that is not waiting.",
        access: 'user',
        success: { status: 200, description: 'the call, approved (status ready)', json: ref('ToolCall') },
        errors: [404, 409],
      },
    },
    '/api/v1/tool-calls/{id}/refuse': {
      post: {
        summary: 'Refuse a waiting tool call',
        description: `The call never runs. \`reason\`: 1 to ${REFUSAL_REASON_MAX_LENGTH} characters (400 naming \`reason\`). Only an owner or admin: 403 \`insufficient_role\`. 404 \`tool_call_not_found\` for another organization's; 409 \`tool_call_not_awaiting_approval\` for a call that is not waiting.`,
        access: 'user',
        body: { json: schemaOfCodec(RefusalBody) },
        success: { status: 200, description: 'the call, refused', json: ref('ToolCall') },
        errors: [404, 409],
      },
    },
    '/api/v1/tool-calls/{id}/erase': {
      post: {
        summary: "Erase a tool call's personal data",
        description:
          "For a person's request to have their data erased (docs/personal-data.md), for a call no conversation's erasure reaches (a flow's step, a test): the key its arguments, exchange, failure message, challenge and refusal reason are sealed under is deleted, so they cannot be read again anywhere; the execution log keeps its status, times and latency (`erased_at` set). A call still awaiting approval is refused first. It cannot be undone. Only an owner or admin: 403 `insufficient_role`; 404 `tool_call_not_found` for another organization's; erasing again answers the first erasure.",
        access: 'user',
        success: { status: 200, description: 'erased', json: object({ id: string(), erased_at: dateTime('when it was first erased') }) },
        errors: [404],
      },
    },
  },
};
