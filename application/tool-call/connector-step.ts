// The step executor for connector tools (issue #14 point 3: "the chat runtime's tool calls and
// this runner share one step executor"): one `tool.invoke` (or `tool.resume`) of an SDK
// connection's tool, signed with the connection's current secret (once more with the previous
// one during a rotation's grace when the connector refuses the signature), its answer turned
// into one of three outcomes. It never throws for what the connector did: an error answer or a
// call without a usable answer (ConnectorCallError) is a `failed` outcome with the connector's
// code or the client's reason (unreachable, timeout, refused_address, invalid_signature,
// protocol_mismatch, bad_response).
//
// Callers: the flow runner (application/orchestration/dispatcher.ts) and the chat's
// connector_tool_calls saga (application/tool-call/connector-tool-calls.ts), each with its own
// request_id (derived, so a redelivery is recognisable by the connector) and its own record of
// the outcome.

import { ConnectorCallError, type ConnectorAnswer, type ConnectorClient, type ConnectorRequest, type ConnectorTarget } from '../ports/connector-client';
import type { Clock } from '../ports/clock';
import type { DomainEventStore } from '../ports/domain-event-store';
import type { Secrets } from '../ports/identity';
import { sdkConnectionTarget } from '../sdk-connection/sdk-connections';

export type ConnectorStep =
  | { kind: 'failed'; code: string; message: string; status: number | null; latency_ms: number; answer: ConnectorAnswer | null }
  /** `authentication_context`: who the connector found the user to be (connector-authentication.ts); absent when it said nothing. */
  | { kind: 'result'; output: Record<string, unknown>; authentication_context?: Record<string, unknown>; status: number; latency_ms: number }
  | { kind: 'challenge'; resume_token: string; challenge: Record<string, unknown>; latency_ms: number };

export const failedBefore = (code: string, message: string): ConnectorStep => ({ kind: 'failed', code, message, status: null, latency_ms: 0, answer: null });

const refusedSignature = (step: ConnectorStep): boolean => step.kind === 'failed' && step.code === 'invalid_signature';

/** One sending, signed with `current`; during a rotation's grace once more with `previous` when the signature is refused. */
export async function sendConnectorRequest(
  client: ConnectorClient,
  target: (secret: string) => ConnectorTarget,
  request: ConnectorRequest,
  current: string,
  previous: string | undefined,
): Promise<ConnectorStep> {
  const first = await sendOnce(client, target(current), request);
  return previous !== undefined && refusedSignature(first) ? sendOnce(client, target(previous), request) : first;
}

async function sendOnce(client: ConnectorClient, target: ConnectorTarget, request: ConnectorRequest): Promise<ConnectorStep> {
  try {
    const { answer, latency_ms, status } = await client.call(target, request);
    switch (answer.type) {
      case 'result':
        return { kind: 'result', output: answer.output, ...(answer.authentication_context === undefined ? {} : { authentication_context: answer.authentication_context }), status, latency_ms };
      case 'challenge':
        return { kind: 'challenge', resume_token: answer.resume_token, challenge: answer.challenge, latency_ms };
      case 'error':
        return { kind: 'failed', code: answer.code, message: answer.message, status, latency_ms, answer };
      default:
        // The client checks the answer's type against the request's: this is a bug of ours, not the connector's.
        return { kind: 'failed', code: 'bad_response', message: `the connector answered ${answer.type} to ${request.type}`, status, latency_ms, answer: null };
    }
  } catch (error) {
    if (!(error instanceof ConnectorCallError)) throw error;
    return { kind: 'failed', code: error.reason, message: error.detail, status: error.status ?? null, latency_ms: error.latencyMs, answer: null };
  }
}

export interface ConnectorStepDependencies {
  eventStore: DomainEventStore;
  secrets: Secrets;
  clock: Clock;
  connectorClient: ConnectorClient;
}

/**
 * Invokes `tool` of the tenant's SDK connection with `parameters`, carrying `requestId`: the
 * connection is read from its stream (always current); a connection gone or disabled fails
 * before anything is sent (`connection_gone`, `connection_disabled`).
 */
export async function invokeConnectorTool(
  deps: ConnectorStepDependencies,
  call: { tenantId: string; connectionId: string; tool: string; parameters: Record<string, unknown>; requestId: string; workspaceId?: string | null },
): Promise<ConnectorStep> {
  const connection = await sdkConnectionTarget(deps, call.tenantId, call.connectionId);
  if (connection === null) return failedBefore('connection_gone', 'the SDK connection was deleted');
  if (!connection.enabled) return failedBefore('connection_disabled', 'the SDK connection is disabled');
  const [current, previous] = connection.secrets;
  if (current === undefined) return failedBefore('connection_gone', 'the SDK connection has no signing secret');
  const request: ConnectorRequest = { type: 'tool.invoke', request_id: call.requestId, organization_id: call.tenantId, tool: call.tool, parameters: call.parameters };
  const target = (signingSecret: string): ConnectorTarget => ({
    endpoint: connection.endpoint,
    signingSecret,
    traceId: call.requestId,
    connectionId: call.connectionId,
    tenantId: call.tenantId,
    workspaceId: call.workspaceId ?? null,
  });
  return sendConnectorRequest(deps.connectorClient, target, request, current, previous);
}
