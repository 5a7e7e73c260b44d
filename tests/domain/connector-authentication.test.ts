import { type ConnectorAuthenticationEvent, connectorAuthenticationDecider } from '../../domain/connector-authentication/connector-authentication';
import { FIXED_NOW, deciderSpec } from '../support/decider-spec';

describe('connector authentication (kept per conversation and connection)', () => {
  const spec = deciderSpec(connectorAuthenticationDecider);
  const subject = { tenant_id: 't1', conversation_id: 'c1', connection_id: 'k1' };
  const at = FIXED_NOW.toISOString();
  const kept = (tool_call_id = 'call-1', context_sealed = 'sealed-1'): ConnectorAuthenticationEvent => ({ type: 'ConnectorAuthenticationKept', data: { ...subject, context_sealed, tool_call_id, kept_at: at } });

  it('keeps a context, and a later one in its place', () => {
    spec.given([]).when({ type: 'KeepConnectorAuthentication', data: { ...subject, context_sealed: 'sealed-1', tool_call_id: 'call-1' } }).then([kept()]);
    spec.given([kept()]).when({ type: 'KeepConnectorAuthentication', data: { ...subject, context_sealed: 'sealed-2', tool_call_id: 'call-2' } }).then([kept('call-2', 'sealed-2')]);
  });

  it('drops a kept context; with none kept there is nothing to drop', () => {
    spec.given([kept()]).when({ type: 'DropConnectorAuthentication', data: { ...subject, tool_call_id: 'call-2' } }).then([{ type: 'ConnectorAuthenticationDropped', data: { ...subject, tool_call_id: 'call-2', dropped_at: at } }]);
    spec.given([]).when({ type: 'DropConnectorAuthentication', data: { ...subject, tool_call_id: 'call-2' } }).thenNothingHappened();
    const dropped: ConnectorAuthenticationEvent = { type: 'ConnectorAuthenticationDropped', data: { ...subject, tool_call_id: 'call-2', dropped_at: at } };
    spec.given([kept(), dropped]).when({ type: 'DropConnectorAuthentication', data: { ...subject, tool_call_id: 'call-3' } }).thenNothingHappened();
  });

  it("refuses another tenant's command on the stream as if there were none", () => {
    spec.given([kept()]).when({ type: 'KeepConnectorAuthentication', data: { ...subject, tenant_id: 't2', context_sealed: 'sealed-x', tool_call_id: 'call-x' } }).thenThrows('not_found', 'connector_authentication_not_found');
  });
});
