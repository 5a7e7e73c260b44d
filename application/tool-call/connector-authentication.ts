// The authentication context a connector returns with a result (spec 2.3 `authentication_context`),
// kept per conversation and connection and sent back as `authentication` (spec 2.2) on the
// conversation's later calls to that connection (domain/connector-authentication). The example
// connector's `order_status` returns one once the customer passed its OTP, and answers a call
// that carries it without asking again.
//
// - Kept sealed; sent in clear only inside the signed request; the recorded request shows it
//   redacted (connector-tool-calls.ts).
// - Sent only while it is younger than CONNECTOR_AUTHENTICATION_TTL_SECONDS and the end user has
//   not cleared their identity in the conversation since it was kept (the widget's
//   clearIdentity(): a new person may be at the keyboard).
// - A connector answering `{}` drops it; one larger than MAX_CONTEXT_BYTES as JSON is not kept
//   (logged), the one before stays.
// - Only chat calls have a conversation: flows and test calls neither send nor keep one.

import {
  type ConnectorAuthenticationCommand,
  type ConnectorAuthenticationEvent,
  type ConnectorAuthenticationState,
  connectorAuthenticationDecider,
  connectorAuthenticationEvents,
  connectorAuthenticationStream,
} from '../../domain/connector-authentication/connector-authentication';
import { type Aggregate, type CommandDependencies, handleCommand } from '../command-handling/handle-command';
import type { Secrets } from '../ports/identity';
import type { RequestContext } from '../shared/request-context';
import { endUserClearedAfter } from './end-user';

export const MAX_CONTEXT_BYTES = 16 * 1024;

export interface ConnectorAuthenticationSettings {
  /** How long a kept context is sent back (CONNECTOR_AUTHENTICATION_TTL_SECONDS). */
  ttlSeconds: number;
}

export interface AuthenticationSubject {
  tenantId: string;
  conversationId: string;
  connectionId: string;
}

type Dependencies = CommandDependencies & { secrets: Secrets };

const aggregate: Aggregate<ConnectorAuthenticationCommand, ConnectorAuthenticationEvent, ConnectorAuthenticationState> = {
  decider: connectorAuthenticationDecider,
  events: connectorAuthenticationEvents,
};

const streamOf = (deps: Pick<CommandDependencies, 'ids'>, { tenantId, conversationId, connectionId }: AuthenticationSubject): string =>
  connectorAuthenticationStream(deps.ids.fromKey(`connectorAuthentication\u0000${tenantId}\u0000${conversationId}\u0000${connectionId}`));

/** The context to send as `authentication` on a call of the conversation to the connection; null when there is none to send (see the top of this file). */
export async function authenticationToSend(deps: Dependencies, subject: AuthenticationSubject, settings: ConnectorAuthenticationSettings): Promise<Record<string, unknown> | null> {
  const [last] = await deps.eventStore.readStream(streamOf(deps, subject), { direction: 'backwards', maxCount: 1 });
  if (last?.type !== 'ConnectorAuthenticationKept' || last.data.tenant_id !== subject.tenantId) return null;
  if (deps.clock.now().getTime() - Date.parse(last.data.kept_at) > settings.ttlSeconds * 1000) return null;
  if (await endUserClearedAfter(deps, subject.conversationId, last.position)) return null;
  return JSON.parse(deps.secrets.open(last.data.context_sealed)) as Record<string, unknown>;
}

/** What became of a context a connector returned. */
export type KeptOutcome = 'kept' | 'dropped' | 'too_large';

/** Keeps the context a connector returned with the result of `toolCallId` (an empty one drops the kept one). */
export async function keepAuthentication(deps: Dependencies, subject: AuthenticationSubject, returned: Record<string, unknown>, toolCallId: string, context: RequestContext): Promise<KeptOutcome> {
  const identity = { tenant_id: subject.tenantId, conversation_id: subject.conversationId, connection_id: subject.connectionId, tool_call_id: toolCallId };
  const stream = streamOf(deps, subject);
  if (Object.keys(returned).length === 0) {
    await handleCommand(deps, aggregate, stream, { type: 'DropConnectorAuthentication', data: identity }, context);
    return 'dropped';
  }
  const json = JSON.stringify(returned);
  if (Buffer.byteLength(json, 'utf8') > MAX_CONTEXT_BYTES) return 'too_large';
  await handleCommand(deps, aggregate, stream, { type: 'KeepConnectorAuthentication', data: { ...identity, context_sealed: deps.secrets.seal(json) } }, context);
  return 'kept';
}
