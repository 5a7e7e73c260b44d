// Tool calls (issue #12 points 3 to 5): a business tool called with arguments, by a person
// testing it, by the assistant in a chat turn, or (#14) by a flow. Each is a tool-call
// aggregate (domain/tool-call): requested, maybe approved or refused, then succeeded or failed.
//
// `callTool` is the one way a tool is called:
// 1. The tool must be the tenant's, live (404 `tool_not_found`) and enabled (409
//    `tool_disabled`); a connector tool's SDK connection must be there and enabled (409
//    `connection_disabled`). The arguments must satisfy its input_schema (400
//    `invalid_arguments` listing every bad field, application/tool/input-schema.ts) and, for an
//    integration's tool, fill its path.
// 2. The call is recorded (ToolCallRequested: the arguments, the caller, the end user's token
//    and session sealed). An `approval_required` tool's call waits for an owner's or admin's
//    approval (`awaiting_approval`), unless the caller approves it as they make it
//    (`approvedBy`, an owner's or admin's own test): then requested and approved are one append.
// 3. A call that need not wait runs at once (`runToolCall`); one that waited is run by the
//    approval saga (approved-tool-calls.ts) once approved. A connector tool's call (#13) is
//    never run by its caller: the saga of connector-tool-calls.ts runs it (so a restart
//    mid-call repeats it at most once, with the same request_id), and the caller waits for its
//    outcome at most CONNECTOR_TIMEOUT_MS plus a margin (`awaitToolCallOutcome`): `running`
//    when the wait ends first, `challenge` when the connector asks the user something.
//
// Running a call: the tool and integration as they are then (a tool deleted or disabled
// meanwhile fails the call: `tool_gone`, `tool_disabled`; an integration deleted:
// `integration_gone`), the arguments checked again (the schema may have changed), the request
// built from the mapping (tool-request.ts) with the integration's credentials opened only now,
// the end user's headers forwarded (unless they cleared their identity since: end-user.ts), and sent through the outbound guard with TOOL_TIMEOUT_MS
// and TOOL_MAX_RESPONSE_BYTES. What is recorded of the exchange is redacted (redaction.ts) and
// each body cut to RECORDED_BODY_MAX_BYTES; the caller gets the API's answer as JSON (its text
// when it is not JSON), redacted the same way, whole. The outcome: ToolCallSucceeded for a 2xx,
// ToolCallFailed otherwise (`http_error` with the answer; `timeout`, `network`,
// `private_address`, `insecure_url`, `unresolvable_host`, `response_too_large`,
// `auth_failed`, ... without one). An outcome already recorded (a redelivered approval, a
// retry) is answered as recorded: the aggregate refuses a second one.
//
// Log lines name the call, its status and latency: never a URL, header, body or argument.

import { DomainError, conflict, notFound } from '../../domain/shared/errors';
import { type LiveTool, connectorToolName, toolStream } from '../../domain/tool/tool';
import {
  type ConnectorOfCall,
  type RecordedExchange,
  type ToolCallCommand,
  type ToolCallEvent,
  type ToolCallOrigin,
  type ToolCallState,
  type Caller,
  toolCallDecider,
  toolCallEvents,
  toolCallStream,
} from '../../domain/tool-call/tool-call';
import { type Aggregate, type CommandDependencies, handleCommand, loadAggregate } from '../command-handling/handle-command';
import { integrationCredentials } from '../integration/integrations';
import { sdkConnectionTarget } from '../sdk-connection/sdk-connections';
import type { Secrets } from '../ports/identity';
import type { Logger } from '../ports/logger';
import { OutboundCallError, type OutboundHttp, type OutboundResponse } from '../ports/outbound-http';
import type { RequestContext } from '../shared/request-context';
import { AccessTokenCache, AccessTokenError, fetchAccessToken } from './access-tokens';
import { forwardedEndUser } from './end-user';
import { Redaction } from './redaction';
import { InvalidArgumentsError, requireValidArguments } from '../tool/input-schema';
import { toolAggregate } from '../tool/tools';
import { type AddedToRequest, type ToolHttpRequest, buildToolRequest } from './tool-request';

/** What a caller asks for. */
export interface ToolCallInput {
  tool_id: string;
  /** Checked against the tool's input_schema: 400 `invalid_arguments` listing every bad field. */
  arguments: unknown;
  caller: Caller;
  origin: ToolCallOrigin;
  /** X-End-User-Token and X-End-User-Session of the chat turn, in clear: forwarded to the API, recorded only sealed. */
  end_user?: { token: string | null; session: string | null };
}

export interface ToolCallOptions {
  /** An owner's or admin's own call (a test): an `approval_required` tool runs at once, the approval recorded as theirs. */
  approvedBy?: Caller;
  /** The call's id derives from it: a retry finds the call it made. */
  idempotencyKey?: string;
}

/**
 * How a call ended, or that it waits. `result` is the API's answer as JSON (its text when it is
 * not JSON), already redacted; a connector's: its `output`. `challenge`: the connector asks the
 * user `prompt` first (answered through `resumeToolCall`); `running`: a connector call whose
 * outcome was not recorded within the caller's wait.
 */
export type ToolCallOutcome =
  | { status: 'awaiting_approval'; tool_call_id: string }
  | { status: 'challenge'; tool_call_id: string; prompt: string; challenge: Record<string, unknown> }
  | { status: 'running'; tool_call_id: string }
  | { status: 'refused'; tool_call_id: string; reason: string }
  | { status: 'succeeded'; tool_call_id: string; http_status: number; latency_ms: number; result: unknown }
  | { status: 'failed'; tool_call_id: string; code: string; message: string; http_status: number | null; latency_ms: number; result: unknown };

/** The dependencies are the execution work's to define; the shapes above are fixed. */
export type ToolCallFunction<Deps> = (deps: Deps, tenantId: string, input: ToolCallInput, context: RequestContext, options?: ToolCallOptions) => Promise<ToolCallOutcome>;

/** TOOL_TIMEOUT_MS and TOOL_MAX_RESPONSE_BYTES. */
export interface ToolLimits {
  timeoutMs: number;
  maxResponseBytes: number;
}

/** What calling a tool needs. */
export interface ToolCallDependencies extends CommandDependencies {
  secrets: Secrets;
  outbound: OutboundHttp;
  logger: Logger;
  toolLimits: ToolLimits;
  /** The integrations' OAuth2 access tokens, kept per process (one cache per platform). */
  accessTokens: AccessTokenCache;
  /** How long a caller waits for a connector call's outcome (CONNECTOR_TIMEOUT_MS plus a margin). */
  connectorWaitMs: number;
}

/** Each body of a recorded exchange, at most, in UTF-8 bytes: the rest is cut (`truncated` on the response). */
export const RECORDED_BODY_MAX_BYTES = 16 * 1024;

export const toolCallAggregate: Aggregate<ToolCallCommand, ToolCallEvent, ToolCallState> = { decider: toolCallDecider, events: toolCallEvents };

const toolNotFound = (): DomainError => notFound('tool_not_found', 'no such tool');
const toolCallNotFound = (): DomainError => notFound('tool_call_not_found', 'no such tool call');

/** The tenant's live tool, from its stream (404 `tool_not_found` otherwise). */
export async function liveTool(deps: Pick<CommandDependencies, 'eventStore'>, tenantId: string, toolId: string): Promise<LiveTool> {
  const { state } = await loadAggregate(deps, toolAggregate, toolStream(toolId));
  if (state.status !== 'active' || state.tenant_id !== tenantId) throw toolNotFound();
  return state;
}

/** A placeholder base for checking that arguments can be placed before anything is recorded. */
const CHECK_BASE = { base_url: 'https://tool.invalid', default_headers: {} };
const NOTHING_ADDED: AddedToRequest = { headers: {}, query: {} };

/** The checked arguments of a call of `tool` (400 `invalid_arguments` listing every bad field). */
function callableArguments(tool: LiveTool, args: unknown): Record<string, unknown> {
  requireValidArguments(tool.definition.input_schema, args);
  // The schema is of type object (a rule of the tool), so arguments that satisfy it are one.
  const checked = args as Record<string, unknown>;
  const built = buildToolRequest(tool.definition, checked, CHECK_BASE, NOTHING_ADDED);
  if ('problems' in built) throw new InvalidArgumentsError(built.problems);
  return checked;
}

/** The checked arguments of a connector tool's call: they travel whole as the request's `parameters`. */
function connectorArguments(tool: LiveTool, args: unknown): Record<string, unknown> {
  requireValidArguments(tool.definition.input_schema, args);
  return args as Record<string, unknown>;
}

/** `callTool`, also answering the position of the last event it wrote (routes answer from the read models). */
export async function requestToolCall(
  deps: ToolCallDependencies,
  tenantId: string,
  input: ToolCallInput,
  context: RequestContext,
  options: ToolCallOptions = {},
): Promise<{ outcome: ToolCallOutcome; position: number | null }> {
  const tool = await liveTool(deps, tenantId, input.tool_id);
  if (!tool.definition.enabled) throw conflict('tool_disabled', `the tool ${tool.definition.name} is disabled: enable it to call it`);
  let connector: ConnectorOfCall | null = null;
  if (tool.target.kind === 'sdk_connection') {
    const connection = await sdkConnectionTarget(deps, tenantId, tool.target.connection_id);
    if (connection === null) throw conflict('connection_gone', `the SDK connection of the tool ${tool.definition.name} was deleted`);
    if (!connection.enabled) throw conflict('connection_disabled', `the SDK connection of the tool ${tool.definition.name} is disabled: enable it to call its tools`);
    connector = { connection_id: tool.target.connection_id, tool: connectorToolName(tool.target, tool.definition) ?? tool.definition.name };
  }
  const args = connector === null ? callableArguments(tool, input.arguments) : connectorArguments(tool, input.arguments);
  const key = options.idempotencyKey === undefined ? undefined : `${options.idempotencyKey}:tool-call`;
  const toolCallId = key === undefined ? deps.ids.newId() : deps.ids.fromKey(key);
  const awaiting = tool.definition.risk === 'approval_required' && options.approvedBy === undefined;
  const sealed = (value: string | null | undefined): string | null => (value ? deps.secrets.seal(value) : null);
  const requested = await handleCommand(
    deps,
    toolCallAggregate,
    toolCallStream(toolCallId),
    {
      type: 'RequestToolCall',
      data: {
        tenant_id: tenantId,
        workspace_id: tool.workspace_id,
        tool_call_id: toolCallId,
        tool_id: tool.tool_id,
        tool_name: tool.definition.name,
        risk: tool.definition.risk,
        arguments: args,
        caller: input.caller,
        origin: input.origin,
        awaiting_approval: awaiting,
        end_user_token_sealed: sealed(input.end_user?.token),
        end_user_session_sealed: sealed(input.end_user?.session),
        ...(connector === null ? {} : { connector }),
        ...(options.approvedBy === undefined ? {} : { approved_by: options.approvedBy }),
      },
    },
    context,
    { idempotencyKey: key },
  );
  if (awaiting && requested.events.length > 0) return { outcome: { status: 'awaiting_approval', tool_call_id: toolCallId }, position: requested.position };
  // The connector saga runs it; the caller waits for what it records.
  if (connector !== null) {
    const waited = await awaitToolCallOutcome(deps, toolCallId, deps.connectorWaitMs);
    return { outcome: waited.outcome, position: waited.position ?? requested.position };
  }
  // A call that need not wait, or a retry that finds its call (answered as it stands).
  const ran = await runToolCall(deps, tenantId, toolCallId, context);
  return { outcome: ran.outcome, position: ran.position ?? requested.position };
}

/** Calls a business tool (see the top of this file); the shape chat turns and flows use. */
export const callTool: ToolCallFunction<ToolCallDependencies> = async (deps, tenantId, input, context, options) => (await requestToolCall(deps, tenantId, input, context, options)).outcome;

// ------------------------------------------------------------------------------------ running

/** The API's answer handed back: JSON when it parses, otherwise its text; null when empty. */
function resultOf(text: string): unknown {
  if (text.length === 0) return null;
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

/** A call's outcome as its events tell it (a call that is ready has none yet: it is running). */
export function outcomeOf(events: readonly ToolCallEvent[]): ToolCallOutcome {
  let outcome: ToolCallOutcome | null = null;
  for (const event of events) {
    const id = event.data.tool_call_id;
    switch (event.type) {
      case 'ToolCallDispatched':
        break;
      case 'ToolCallChallenged':
        outcome = { status: 'challenge', tool_call_id: id, prompt: event.data.prompt, challenge: event.data.challenge };
        break;
      case 'ToolCallResumed':
        outcome = null;
        break;
      case 'ToolCallRequested':
        outcome = event.data.awaiting_approval ? { status: 'awaiting_approval', tool_call_id: id } : null;
        break;
      case 'ToolCallApproved':
        outcome = null;
        break;
      case 'ToolCallRefused':
        outcome = { status: 'refused', tool_call_id: id, reason: event.data.reason };
        break;
      case 'ToolCallSucceeded':
        outcome = { status: 'succeeded', tool_call_id: id, http_status: event.data.status, latency_ms: event.data.latency_ms, result: resultOf(event.data.exchange.response?.body ?? '') };
        break;
      case 'ToolCallFailed': {
        const { code, message, status, latency_ms, exchange } = event.data;
        outcome = { status: 'failed', tool_call_id: id, code, message, http_status: status, latency_ms, result: exchange?.response ? resultOf(exchange.response.body) : null };
        break;
      }
    }
  }
  if (outcome === null) throw conflict('tool_call_running', 'the tool call is running; its outcome is not recorded yet');
  return outcome;
}

/** Pauses between readings of a call's stream while its caller waits: short at first (a connector answers in milliseconds), then at most WAIT_STEP_MAX_MS. */
const WAIT_STEP_MIN_MS = 10;
const WAIT_STEP_MAX_MS = 250;

/**
 * The call's outcome once one is recorded (or it waits for an approval or a challenge answer),
 * reading its stream until then; `running` when `waitMs` ends first. The stream is read, not a
 * read model: the outcome may be recorded by a saga in another process.
 */
export async function awaitToolCallOutcome(deps: Pick<CommandDependencies, 'eventStore'>, toolCallId: string, waitMs: number): Promise<{ outcome: ToolCallOutcome; position: number | null }> {
  const stream = toolCallStream(toolCallId);
  const deadline = performance.now() + waitMs;
  for (let pause = WAIT_STEP_MIN_MS; ; pause = Math.min(pause * 2, WAIT_STEP_MAX_MS)) {
    const recorded = await deps.eventStore.readStream(stream);
    const events = recorded.map((event) => event as unknown as ToolCallEvent);
    const state = events.reduce(toolCallDecider.evolve, toolCallDecider.initialState());
    if (state.status !== 'ready' && state.status !== 'absent') return { outcome: outcomeOf(events), position: recorded[recorded.length - 1]?.position ?? null };
    const left = deadline - performance.now();
    if (left <= 0) return { outcome: { status: 'running', tool_call_id: toolCallId }, position: null };
    await new Promise((resolve) => setTimeout(resolve, Math.min(pause, left)));
  }
}

/** The first `maxBytes` bytes of UTF-8 text, cut at a character boundary. */
export function cut(text: string, maxBytes: number): { text: string; truncated: boolean } {
  const bytes = Buffer.from(text, 'utf8');
  if (bytes.length <= maxBytes) return { text, truncated: false };
  let end = maxBytes;
  // Back off continuation bytes (10xxxxxx) so no character is split.
  while (end > 0 && (bytes[end] & 0xc0) === 0x80) end -= 1;
  return { text: bytes.subarray(0, end).toString('utf8'), truncated: true };
}

function recordedExchange(request: ToolHttpRequest, response: { status: number; headers: Record<string, string>; text: string } | null, redaction: Redaction): RecordedExchange {
  return {
    request: {
      method: request.method,
      url: redaction.url(request.url),
      headers: redaction.headers(request.headers),
      body: request.body === null ? null : cut(redaction.text(request.body), RECORDED_BODY_MAX_BYTES).text,
    },
    response: response === null ? null : (() => {
      const body = cut(response.text, RECORDED_BODY_MAX_BYTES);
      return { status: response.status, headers: redaction.headers(response.headers), body: body.text, truncated: body.truncated };
    })(),
  };
}

/** How an attempt went: an answer (any status), or a failure without one. */
type Attempt =
  | { kind: 'answered'; status: number; exchange: RecordedExchange; result: unknown }
  | { kind: 'failed'; code: string; message: string; exchange: RecordedExchange | null };

/** How the platform authenticates one call, and what must never be shown of it. */
interface Authentication {
  added: AddedToRequest;
  secrets: string[];
  headerNames: string[];
  queryNames: string[];
  /** The OAuth2 token used, and whether it was a kept one (a 401 then fetches a new one, once). */
  accessToken: { key: string; value: string; kept: boolean } | null;
}

type Integration = NonNullable<Awaited<ReturnType<typeof integrationCredentials>>>;

async function authenticationOf(deps: ToolCallDependencies, tenantId: string, integrationId: string, integration: Integration): Promise<Authentication> {
  const none: Authentication = { added: { headers: {}, query: {} }, secrets: [], headerNames: [], queryNames: [], accessToken: null };
  const { auth, credentials } = integration;
  if (auth.kind === 'none') return none;
  if (credentials === null) throw new AccessTokenError('auth_failed', `the integration has no credentials for its ${auth.kind} auth`);
  switch (auth.kind) {
    case 'api_key':
      return auth.in === 'header'
        ? { ...none, added: { headers: { [auth.name]: credentials }, query: {} }, secrets: [credentials], headerNames: [auth.name] }
        : { ...none, added: { headers: {}, query: { [auth.name]: credentials } }, secrets: [credentials], queryNames: [auth.name] };
    case 'bearer':
      return { ...none, added: { headers: { authorization: `Bearer ${credentials}` }, query: {} }, secrets: [credentials] };
    case 'basic': {
      const pair = Buffer.from(`${auth.username}:${credentials}`, 'utf8').toString('base64');
      return { ...none, added: { headers: { authorization: `Basic ${pair}` }, query: {} }, secrets: [credentials, pair] };
    }
    case 'oauth2_client_credentials': {
      const key = `${tenantId}:${integrationId}:${integration.revision}`;
      const client = { token_url: auth.token_url, client_id: auth.client_id, client_secret: credentials, scopes: auth.scopes };
      const token = await deps.accessTokens.token(key, deps.clock, () => fetchAccessToken(deps.outbound, client, deps.toolLimits.timeoutMs));
      return { ...none, added: { headers: { authorization: `Bearer ${token.value}` }, query: {} }, secrets: [credentials, token.value], accessToken: { key, ...token } };
    }
  }
}

/** Sends the call's request; never throws for what the API or the network did. */
async function attempt(deps: ToolCallDependencies, call: Exclude<ToolCallState, { status: 'absent' }>, endUser: { token: string | null; session: string | null }): Promise<Attempt> {
  const { state: tool } = await loadAggregate(deps, toolAggregate, toolStream(call.tool_id));
  if (tool.status !== 'active' || tool.tenant_id !== call.tenant_id) return { kind: 'failed', code: 'tool_gone', message: 'the tool was deleted', exchange: null };
  if (!tool.definition.enabled) return { kind: 'failed', code: 'tool_disabled', message: 'the tool was disabled', exchange: null };
  if (tool.target.kind !== 'integration') return { kind: 'failed', code: 'tool_not_callable', message: 'the tool belongs to an SDK connection', exchange: null };
  let args: Record<string, unknown>;
  try {
    args = callableArguments(tool, call.arguments);
  } catch (error) {
    if (error instanceof InvalidArgumentsError) return { kind: 'failed', code: 'invalid_arguments', message: error.message, exchange: null };
    throw error;
  }
  const integrationId = tool.target.integration_id;
  const integration = await integrationCredentials(deps, call.tenant_id, integrationId);
  if (integration === null) return { kind: 'failed', code: 'integration_gone', message: "the tool's integration was deleted", exchange: null };
  const endUserHeaders: Record<string, string> = {
    ...(endUser.token === null ? {} : { 'x-end-user-token': endUser.token }),
    ...(endUser.session === null ? {} : { 'x-end-user-session': endUser.session }),
  };
  const endUserSecrets = [endUser.token, endUser.session].filter((value): value is string => value !== null);

  const send = async (retried: boolean): Promise<Attempt> => {
    let authentication: Authentication;
    try {
      authentication = await authenticationOf(deps, call.tenant_id, integrationId, integration);
    } catch (error) {
      if (!(error instanceof AccessTokenError)) throw error;
      const redaction = new Redaction([...(integration.credentials === null ? [] : [integration.credentials]), ...endUserSecrets]);
      return { kind: 'failed', code: error.code, message: redaction.text(error.message), exchange: null };
    }
    const redaction = new Redaction([...authentication.secrets, ...endUserSecrets], { headers: authentication.headerNames, query: authentication.queryNames });
    const added = { headers: { ...endUserHeaders, ...authentication.added.headers }, query: authentication.added.query };
    const built = buildToolRequest(tool.definition, args, integration, added);
    if ('problems' in built) return { kind: 'failed', code: 'invalid_arguments', message: new InvalidArgumentsError(built.problems).message, exchange: null };
    const { request } = built;
    let response: OutboundResponse;
    try {
      response = await deps.outbound.request({ ...request, timeoutMs: deps.toolLimits.timeoutMs, maxResponseBytes: deps.toolLimits.maxResponseBytes });
    } catch (error) {
      if (!(error instanceof OutboundCallError)) throw error;
      return { kind: 'failed', code: error.reason, message: redaction.text(error.message), exchange: recordedExchange(request, null, redaction) };
    }
    const token = authentication.accessToken;
    if (response.status === 401 && token?.kept && !retried) {
      // The API no longer takes the kept token (revoked, or expired early): one new one.
      deps.accessTokens.forget(token.key, token.value);
      return send(true);
    }
    const text = redaction.text(response.body.toString('utf8'));
    return { kind: 'answered', status: response.status, exchange: recordedExchange(request, { status: response.status, headers: response.headers, text }, redaction), result: resultOf(text) };
  };
  return send(false);
}

/**
 * Runs a call that is ready (not waiting, not refused, no outcome yet) and records its outcome;
 * any other call is answered as it stands, and nothing is sent. 404 for another tenant's.
 */
export async function runToolCall(deps: ToolCallDependencies, tenantId: string, toolCallId: string, context: RequestContext): Promise<{ outcome: ToolCallOutcome; position: number | null }> {
  const stream = toolCallStream(toolCallId);
  const recorded = await loadCallEvents(deps, stream);
  const state = recorded.reduce(toolCallDecider.evolve, toolCallDecider.initialState());
  // An erased call (its conversation erased before it ran) is not there any more: nothing is sent.
  if (state.status === 'absent' || state.tenant_id !== tenantId || state.erased) throw toolCallNotFound();
  if (state.status !== 'ready') return { outcome: outcomeOf(recorded), position: null };
  // A connector call is the connector saga's to run (connector-tool-calls.ts), never sent from here.
  if (state.connector !== undefined) return { outcome: { status: 'running', tool_call_id: toolCallId }, position: null };
  const requested = recorded[0];
  if (requested.type !== 'ToolCallRequested') throw new Error(`${stream}@0: expected ToolCallRequested, found ${requested.type}`);
  const endUser = await forwardedEndUser(deps, requested.data);

  const started = performance.now();
  const result = await attempt(deps, state, endUser);
  const latency_ms = Math.round(performance.now() - started);
  const command: ToolCallCommand =
    result.kind === 'answered' && result.status >= 200 && result.status < 300
      ? { type: 'RecordToolCallSuccess', data: { tenant_id: tenantId, status: result.status, latency_ms, exchange: result.exchange } }
      : result.kind === 'answered'
        ? { type: 'RecordToolCallFailure', data: { tenant_id: tenantId, code: 'http_error', message: `the API answered HTTP ${result.status}`, status: result.status, latency_ms, exchange: result.exchange } }
        : { type: 'RecordToolCallFailure', data: { tenant_id: tenantId, code: result.code, message: result.message, status: null, latency_ms, exchange: result.exchange } };
  let position: number | null;
  try {
    position = (await handleCommand(deps, toolCallAggregate, stream, command, context)).position;
  } catch (error) {
    // Another run recorded the outcome first (a redelivered approval): that one stands.
    if (error instanceof DomainError && error.code === 'tool_call_not_ready') return { outcome: outcomeOf(await loadCallEvents(deps, stream)), position: null };
    throw error;
  }
  const outcome: ToolCallOutcome =
    command.type === 'RecordToolCallSuccess'
      ? { status: 'succeeded', tool_call_id: toolCallId, http_status: command.data.status, latency_ms, result: result.kind === 'answered' ? result.result : null }
      : { status: 'failed', tool_call_id: toolCallId, code: command.data.code, message: command.data.message, http_status: command.data.status, latency_ms, result: result.kind === 'answered' ? result.result : null };
  deps.logger.info(
    { tenant_id: tenantId, tool_call_id: toolCallId, tool_id: state.tool_id, status: outcome.status, http_status: command.data.status, latency_ms, ...(outcome.status === 'failed' ? { code: outcome.code } : {}) },
    'tool call finished',
  );
  return { outcome, position };
}

async function loadCallEvents(deps: Pick<CommandDependencies, 'eventStore'>, stream: string): Promise<ToolCallEvent[]> {
  const recorded = await deps.eventStore.readStream(stream);
  return recorded.map((event) => {
    if (!toolCallEvents.includes(event)) throw new Error(`${stream}: ${event.type} is not a tool-call event`);
    return event;
  });
}
