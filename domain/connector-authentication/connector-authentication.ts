// What a connector said about who the user of a conversation is (spec 2.2 `authentication`,
// 2.3 `authentication_context`): a connector's `result` may carry an authentication context
// (an OTP passed, a customer identified); the platform keeps the last one, sealed, and sends
// it back as `authentication` on the conversation's later calls to the same connection, so the
// user is not asked again. One stream per conversation and connection,
// `connectorAuthentication-<id>` (the id derived from tenant, conversation and connection).
//
// - The context is the connector's to shape (spec: not shown); it only ever enters an event
//   sealed. An empty object from the connector means "forget it" (ConnectorAuthenticationDropped).
// - Whether a kept context is still sent (its age, the end user clearing their identity in the
//   conversation since) is the application's to judge when it sends: the decider only keeps
//   and drops.

import * as t from 'io-ts';
import { type Either, left, right } from 'fp-ts/Either';
import type { Decider } from '../shared/decider';
import { type DomainError, notFound } from '../shared/errors';
import { declareEvent, eventGroup, type GroupEvent } from '../shared/events';
import { toStreamName } from '../shared/stream-names';

const Subject = { tenant_id: t.string, conversation_id: t.string, connection_id: t.string };

export const ConnectorAuthenticationKept = declareEvent(
  'ConnectorAuthenticationKept',
  t.type({
    ...Subject,
    /** The connector's authentication_context, sealed (JSON). */
    context_sealed: t.string,
    /** The call whose result carried it. */
    tool_call_id: t.string,
    kept_at: t.string,
  }),
);
export const ConnectorAuthenticationDropped = declareEvent(
  'ConnectorAuthenticationDropped',
  t.type({ ...Subject, tool_call_id: t.string, dropped_at: t.string }),
);

export const connectorAuthenticationEvents = eventGroup('connectorAuthentication', [ConnectorAuthenticationKept, ConnectorAuthenticationDropped]);
export type ConnectorAuthenticationEvent = GroupEvent<typeof connectorAuthenticationEvents>;

export type ConnectorAuthenticationState =
  | { status: 'none'; tenant_id: string | null }
  | { status: 'kept'; tenant_id: string; context_sealed: string; kept_at: string };

export type ConnectorAuthenticationCommand =
  | { type: 'KeepConnectorAuthentication'; data: { tenant_id: string; conversation_id: string; connection_id: string; context_sealed: string; tool_call_id: string } }
  | { type: 'DropConnectorAuthentication'; data: { tenant_id: string; conversation_id: string; connection_id: string; tool_call_id: string } };

export const connectorAuthenticationStream = (id: string): string => toStreamName(connectorAuthenticationEvents.category, id);

const notTheTenants = (): DomainError => notFound('connector_authentication_not_found', 'no such connector authentication');

export const connectorAuthenticationDecider: Decider<ConnectorAuthenticationCommand, ConnectorAuthenticationEvent, ConnectorAuthenticationState> = {
  initialState: () => ({ status: 'none', tenant_id: null }),

  evolve(_state, event) {
    switch (event.type) {
      case 'ConnectorAuthenticationKept':
        return { status: 'kept', tenant_id: event.data.tenant_id, context_sealed: event.data.context_sealed, kept_at: event.data.kept_at };
      case 'ConnectorAuthenticationDropped':
        return { status: 'none', tenant_id: event.data.tenant_id };
    }
  },

  decide(command, state, { now }): Either<DomainError, ConnectorAuthenticationEvent[]> {
    // The stream's id is derived from the tenant: another tenant's command cannot name it, but a decider does not rely on that.
    if (state.tenant_id !== null && state.tenant_id !== command.data.tenant_id) return left(notTheTenants());
    const at = now.toISOString();
    switch (command.type) {
      case 'KeepConnectorAuthentication':
        return right([{ type: 'ConnectorAuthenticationKept', data: { ...command.data, kept_at: at } }]);
      case 'DropConnectorAuthentication':
        return right(state.status === 'kept' ? [{ type: 'ConnectorAuthenticationDropped', data: { ...command.data, dropped_at: at } }] : []);
    }
  },
};
