// Connector tools called (issue #13 point 3): a business tool of an SDK connection (source
// `sdk`, target `sdk_connection`) is run by its organization's connector server, through the
// platform's connector client, as `tool.invoke`, then `tool.resume` after each challenge.
//
// Saga `connector_tool_calls` (version 1) drives every connector call, so no caller sends one
// itself: it reacts to a call that is ready (ToolCallRequested not waiting for an approval,
// ToolCallApproved of one that waited, ToolCallResumed), and `runConnectorToolCall`:
//  1. checks the call is still ready (a redelivery after the outcome sends nothing), the tool
//     live and enabled (`tool_gone`, `tool_disabled`), its connection there and enabled
//     (`connection_gone`, `connection_disabled`), the arguments still valid for the schema;
//  2. records the sending (ToolCallDispatched, with the request_id derived from the call's id
//     and phase: `<id>:invoke`, `<id>:resume:<n>`) before it goes, so a process that stops
//     mid-call is seen on redelivery: the same request goes once more with the same request_id,
//     and a third time never (the call fails `interrupted`; domain/tool-call);
//  3. sends the request: `tool` the connector's name, `parameters` the arguments,
//     `organization_id` the tenant, `conversation_id` and `channel` of the chat's conversation,
//     `identity` the end user on a messaging channel (a WhatsApp sender: `wa_id`, `phone_number`)
//     or a widget visitor the host site vouched for (`user_id`, `verified`: not once they cleared
//     their identity since the turn's message),
//     `authentication` the context the connection returned earlier in the conversation
//     (connector-authentication.ts), the end user's X-End-User-Token / Session of the turn
//     (spec 5.1 rule 4; none once they cleared their identity in the conversation:
//     end-user.ts), signed with the current secret, once more with the previous one during a
//     rotation's grace when the connector refuses the signature;
//  4. records the answer: `result` -> ToolCallSucceeded (its `output` is the call's result;
//     an `authentication_context` with it is kept first, for the conversation's next calls);
//     `challenge` -> ToolCallChallenged (the prompt in clear, the resume token sealed);
//     `error` (the codes of spec 7.2: denied, customer_not_found, not_found, invalid_request,
//     configuration_error, internal_error, ...) -> ToolCallFailed with the connector's code and
//     message; no usable answer (a ConnectorCallError) -> ToolCallFailed with its reason
//     (unreachable, timeout, refused_address, invalid_signature, protocol_mismatch,
//     bad_response).
// What is recorded of the exchange: the protocol request with `resume_token`,
// `challenge_response`, `identity` and `authentication` redacted, the connector's `output` (or its error), the end user's
// headers never. Log lines name the call, its outcome and latency only.
//
// `resumeToolCall` records the user's answer to a challenge (sealed) and waits for the outcome,
// as `callTool` waits for a first one. Its events carry the system actor `connector_tool_calls`.

import { contactOf, conversationStream, verifiedUserIdOf } from '../../domain/conversation/conversation';
import { DomainError } from '../../domain/shared/errors';
import { ERASED_PERSONAL_DATA } from '../../domain/shared/events';
import { toolStream } from '../../domain/tool/tool';
import { type Caller, type ToolCallCommand, type ToolCallEvent, toolCallDecider, toolCallStream } from '../../domain/tool-call/tool-call';
import { handleCommand, loadAggregate } from '../command-handling/handle-command';
import { type ConnectorClient, type ConnectorRequest, type ConnectorTarget, connectorEndpointUrl } from '../ports/connector-client';
import type { RecordedOf } from '../ports/domain-event-store';
import type { Saga } from '../sagas/saga';
import { sdkConnectionTarget } from '../sdk-connection/sdk-connections';
import { type RequestContext, systemContext } from '../shared/request-context';
import { InvalidArgumentsError, requireValidArguments } from '../tool/input-schema';
import { toolAggregate } from '../tool/tools';
import { type ConnectorAuthenticationSettings, authenticationToSend, keepAuthentication } from './connector-authentication';
import { type ConnectorStep, failedBefore, sendConnectorRequest } from './connector-step';
import { endUserClearedSince, forwardedEndUser } from './end-user';
import { REDACTED, Redaction } from './redaction';
import { RECORDED_BODY_MAX_BYTES, type ToolCallDependencies, type ToolCallOutcome, awaitToolCallOutcome, cut, toolCallAggregate } from './tool-calls';

export const CONNECTOR_TOOL_CALLS = 'connector_tool_calls';

export type ConnectorToolCallDependencies = ToolCallDependencies & { connectorClient: ConnectorClient; connectorAuthentication: ConnectorAuthenticationSettings };

/** A challenge's human text: its `message` (the SDK's convention), else `prompt` or `text`, else a plain request. */
export function challengePrompt(challenge: Record<string, unknown>): string {
  for (const field of ['message', 'prompt', 'text']) {
    const value = challenge[field];
    if (typeof value === 'string' && value.trim() !== '') return value.trim().slice(0, 1000);
  }
  return 'Please confirm to continue: enter the code you received.';
}

/** The longest connector error message kept (a model relays it; a page of stack trace helps nobody). */
const MAX_ERROR_MESSAGE = 1000;

// One sending and its outcome: the step executor the flow runner shares (connector-step.ts).
type Step = ConnectorStep;

/** What a request says of the chat conversation it comes from. */
interface ConversationFacts {
  /** `console`, `widget`, `whatsapp`... */
  channel: string;
  /**
   * Who the end user is there (spec 2.2 `identity`): a WhatsApp sender's id and number; a widget
   * visitor the host site vouched for, by its user id there.
   */
  identity: { wa_id: string; phone_number: string } | { user_id: string; verified: true } | null;
}

async function conversationFactsOf(deps: ConnectorToolCallDependencies, conversationId: string, replyTo: string): Promise<ConversationFacts | null> {
  const [started] = await deps.eventStore.readStream(conversationStream(conversationId), { maxCount: 1 });
  if (started?.type !== 'ConversationStarted') return null;
  const { channel } = started.data;
  const contact = contactOf(started.data)?.address ?? null;
  if (channel === 'whatsapp' && contact !== null && contact !== ERASED_PERSONAL_DATA) return { channel, identity: { wa_id: contact, phone_number: `+${contact}` } };
  const userId = verifiedUserIdOf(started.data);
  // Not once the visitor signed out of the host site after the turn's message, as their token.
  const vouched = channel === 'widget' && userId !== null && userId !== ERASED_PERSONAL_DATA && !(await endUserClearedSince(deps, conversationId, replyTo));
  return { channel, identity: vouched ? { user_id: userId, verified: true } : null };
}

/**
 * Runs a connector call that is ready (see the header) and records its outcome; a call in any
 * other state, or no connector call, is left as it is. Never throws for what the connector did.
 */
export async function runConnectorToolCall(deps: ConnectorToolCallDependencies, tenantId: string, toolCallId: string, context: RequestContext): Promise<void> {
  const stream = toolCallStream(toolCallId);
  const events = (await deps.eventStore.readStream(stream)) as unknown as ToolCallEvent[];
  const state = events.reduce(toolCallDecider.evolve, toolCallDecider.initialState());
  // An erased call (its conversation erased before it was sent) is sent no more.
  if (state.status !== 'ready' || state.erased || state.tenant_id !== tenantId || state.connector === undefined) return;
  const requested = events[0];
  if (requested?.type !== 'ToolCallRequested') throw new Error(`${stream}@0: expected ToolCallRequested, found ${requested?.type}`);
  const connector = state.connector;
  const origin = requested.data.origin;
  const conversationId = origin.kind === 'chat' ? origin.conversation_id : null;
  const authenticationSubject = conversationId === null ? null : { tenantId, conversationId, connectionId: connector.connection_id };

  const record = async (command: ToolCallCommand): Promise<void> => {
    try {
      await handleCommand(deps, toolCallAggregate, stream, command, context);
    } catch (error) {
      // Another run recorded an outcome first (a concurrent redelivery): that one stands.
      if (error instanceof DomainError && error.code === 'tool_call_not_ready') return;
      throw error;
    }
  };
  const finish = async (step: Step, requestId: string | null, request: ConnectorRequest | null, endpoint: string | null, secrets: string[]): Promise<void> => {
    const redaction = new Redaction(secrets);
    const exchange = (body: string, status: number) =>
      request === null || endpoint === null
        ? null
        : {
            request: { method: 'POST', url: redaction.url(connectorEndpointUrl(endpoint)), headers: { 'x-svc-protocol': '1', 'x-svc-trace-id': request.request_id }, body: cut(redaction.text(JSON.stringify(recordedRequest(request))), RECORDED_BODY_MAX_BYTES).text },
            response: (() => {
              const kept = cut(redaction.text(body), RECORDED_BODY_MAX_BYTES);
              return { status, headers: {}, body: kept.text, truncated: kept.truncated };
            })(),
          };
    switch (step.kind) {
      case 'result': {
        // Kept before the success is recorded: a process stopping between the two sends the call again, and the context comes again.
        if (step.authentication_context !== undefined && authenticationSubject !== null) {
          const kept = await keepAuthentication(deps, authenticationSubject, step.authentication_context, toolCallId, context);
          if (kept === 'too_large') deps.logger.warn({ tenant_id: tenantId, tool_call_id: toolCallId, connection_id: connector.connection_id }, 'connector tool call: an authentication_context over 16 KiB was not kept');
        }
        const recorded = exchange(JSON.stringify(step.output), step.status);
        await record({ type: 'RecordToolCallSuccess', data: { tenant_id: tenantId, status: step.status, latency_ms: step.latency_ms, exchange: recorded! } });
        break;
      }
      case 'challenge':
        await record({
          type: 'RecordToolCallChallenge',
          data: { tenant_id: tenantId, prompt: challengePrompt(step.challenge), challenge: step.challenge, resume_token_sealed: deps.secrets.seal(step.resume_token), latency_ms: step.latency_ms },
        });
        break;
      case 'failed': {
        const recorded = step.answer === null || step.status === null ? null : exchange(JSON.stringify(step.answer), step.status);
        const message = redaction.text(step.message).slice(0, MAX_ERROR_MESSAGE);
        await record({ type: 'RecordToolCallFailure', data: { tenant_id: tenantId, code: step.code, message, status: step.status, latency_ms: step.latency_ms, exchange: recorded } });
        break;
      }
    }
    deps.logger.info(
      { tenant_id: tenantId, tool_call_id: toolCallId, connection_id: connector.connection_id, request_id: requestId, outcome: step.kind, latency_ms: step.latency_ms, ...(step.kind === 'failed' ? { code: step.code } : {}) },
      'connector tool call answered',
    );
  };

  // 1. What may still stop the call before anything is sent.
  const { state: tool } = await loadAggregate(deps, toolAggregate, toolStream(state.tool_id));
  if (tool.status !== 'active' || tool.tenant_id !== tenantId) return finish(failedBefore('tool_gone', 'the tool was deleted'), null, null, null, []);
  if (!tool.definition.enabled) return finish(failedBefore('tool_disabled', 'the tool was disabled'), null, null, null, []);
  const connection = await sdkConnectionTarget(deps, tenantId, connector.connection_id);
  if (connection === null) return finish(failedBefore('connection_gone', "the tool's SDK connection was deleted"), null, null, null, []);
  if (!connection.enabled) return finish(failedBefore('connection_disabled', "the tool's SDK connection is disabled"), null, null, null, []);
  if (state.resumes === 0) {
    try {
      requireValidArguments(tool.definition.input_schema, state.arguments);
    } catch (error) {
      if (error instanceof InvalidArgumentsError) return finish(failedBefore('invalid_arguments', error.message), null, null, null, []);
      throw error;
    }
  }

  // 2. The sending, recorded before it goes.
  let requestId: string;
  try {
    const dispatched = await handleCommand(deps, toolCallAggregate, stream, { type: 'DispatchToolCall', data: { tenant_id: tenantId } }, context);
    const event = dispatched.events.find((candidate) => candidate.type === 'ToolCallDispatched');
    if (event?.type !== 'ToolCallDispatched') return;
    requestId = event.data.request_id;
  } catch (error) {
    if (!(error instanceof DomainError)) throw error;
    if (error.code === 'tool_call_not_ready') return;
    if (error.code === 'tool_call_interrupted') return finish(failedBefore('interrupted', `the platform stopped while the connector was being called, twice; ${error.message}`), null, null, null, []);
    throw error;
  }

  // 3. The request: an invoke, or a resume with the last challenge's token and the user's answer.
  const from = origin.kind === 'chat' ? await conversationFactsOf(deps, origin.conversation_id, origin.reply_to) : null;
  const authentication = authenticationSubject === null ? null : await authenticationToSend(deps, authenticationSubject, deps.connectorAuthentication);
  const base: ConnectorRequest = {
    type: 'tool.invoke',
    request_id: requestId,
    organization_id: tenantId,
    tool: connector.tool,
    ...(conversationId === null ? {} : { conversation_id: conversationId }),
    ...(from === null ? {} : { channel: from.channel }),
    ...(from?.identity ? { identity: from.identity } : {}),
    ...(authentication === null ? {} : { authentication }),
  };
  let request: ConnectorRequest;
  const secretsShown: string[] = [];
  if (state.resumes === 0) {
    request = { ...base, parameters: state.arguments };
  } else {
    const challenged = [...events].reverse().find((event) => event.type === 'ToolCallChallenged');
    const resumed = [...events].reverse().find((event) => event.type === 'ToolCallResumed');
    if (challenged?.type !== 'ToolCallChallenged' || resumed?.type !== 'ToolCallResumed') throw new Error(`${stream}: resumed without a challenge`);
    const resumeToken = deps.secrets.open(challenged.data.resume_token_sealed);
    const answer = deps.secrets.open(resumed.data.response_sealed);
    secretsShown.push(resumeToken, answer);
    request = { ...base, type: 'tool.resume', resume_token: resumeToken, challenge_response: answer };
  }
  const endUser = await forwardedEndUser(deps, requested.data);
  const shown = [...secretsShown, ...[endUser.token, endUser.session].filter((value): value is string => value !== null), ...connection.secrets];
  const target = (signingSecret: string): ConnectorTarget => ({
    endpoint: connection.endpoint,
    signingSecret,
    traceId: requestId,
    endUser,
    connectionId: connector.connection_id,
    tenantId,
    workspaceId: state.workspace_id,
  });
  const [current, previous] = connection.secrets;
  const step = await sendConnectorRequest(deps.connectorClient, target, request, current, previous);
  return finish(step, requestId, request, connection.endpoint, shown);
}

/** The request as recorded: the resume token, the user's answer, who they are and the authentication context never in clear. */
function recordedRequest(request: ConnectorRequest): Record<string, unknown> {
  return {
    ...request,
    ...(request.authentication ? { authentication: REDACTED } : {}),
    ...(request.identity ? { identity: REDACTED } : {}),
    ...(request.resume_token ? { resume_token: REDACTED } : {}),
    ...(request.challenge_response !== undefined && request.challenge_response !== null ? { challenge_response: REDACTED } : {}),
  };
}

/**
 * The user's answer to a call's challenge (an OTP), recorded sealed (ToolCallResumed), then the
 * outcome as `callTool` gives one: the saga sends `tool.resume`. 409 `tool_call_not_challenged`
 * for a call that is not waiting for an answer; 404 for another tenant's.
 */
export async function resumeToolCall(
  deps: ToolCallDependencies,
  tenantId: string,
  toolCallId: string,
  answer: string,
  by: Caller,
  context: RequestContext,
): Promise<ToolCallOutcome> {
  await handleCommand(deps, toolCallAggregate, toolCallStream(toolCallId), { type: 'ResumeToolCall', data: { tenant_id: tenantId, response_sealed: deps.secrets.seal(answer), by } }, context);
  return (await awaitToolCallOutcome(deps, toolCallId, deps.connectorWaitMs)).outcome;
}

type ReadyType = 'ToolCallRequested' | 'ToolCallApproved' | 'ToolCallResumed';

export function connectorToolCallsSaga(deps: ConnectorToolCallDependencies): Saga<ReadyType> {
  return {
    name: CONNECTOR_TOOL_CALLS,
    version: 1,
    filter: { kind: 'event_type', types: ['ToolCallRequested', 'ToolCallApproved', 'ToolCallResumed'] },
    async handle(event: RecordedOf<ReadyType>) {
      const { tenant_id, tool_call_id } = event.data;
      if (event.type === 'ToolCallRequested' && (event.data.connector === undefined || event.data.awaiting_approval)) return;
      if (event.type !== 'ToolCallRequested') {
        const [first] = await deps.eventStore.readStream(toolCallStream(tool_call_id), { maxCount: 1 });
        if (first?.type !== 'ToolCallRequested' || first.data.connector === undefined) return;
      }
      const context = { ...systemContext(event.metadata.correlation_id, CONNECTOR_TOOL_CALLS, event.id), tenant_id };
      await runConnectorToolCall(deps, tenant_id, tool_call_id, context);
    },
  };
}
