// The platform's connector client as the suites give it to a test server: the real one
// (adapters/connector-client), with a note of every call it was asked to make, so a test can
// see which secret signed which request (the connector cannot tell).

import type { ConnectorClient, ConnectorExchange, ConnectorRequest, ConnectorTarget } from '../../application/ports/connector-client';

export class RecordingConnectorClient implements ConnectorClient {
  /** Every call, in order: where, signed with which secret, what. */
  readonly sent: Array<{ endpoint: string; secret: string; request: ConnectorRequest; endUser?: ConnectorTarget['endUser'] }> = [];

  constructor(private readonly client: ConnectorClient) {}

  call(target: ConnectorTarget, request: ConnectorRequest): Promise<ConnectorExchange> {
    this.sent.push({ endpoint: target.endpoint, secret: target.signingSecret, request, ...(target.endUser ? { endUser: target.endUser } : {}) });
    return this.client.call(target, request);
  }
}
