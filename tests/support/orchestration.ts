// Orchestration events for suites that need one dispatched, processed, failed or
// dead-lettered: driven through the dispatch queue's commands (application/orchestration/
// dispatch-queue.ts), as the flow runner will drive them, each followed by read-your-writes.

import { expect } from 'chai';
import { SignedConnectorClient } from '../../adapters/connector-client/connector-client';
import { createExampleConnector } from '../../adapters/connector-sdk/example/connector';
import { handleCommands } from '../../application/command-handling/handle-command';
import { type DispatchCandidate, failAttempt, markProcessed, nextDispatchable, startDispatch } from '../../application/orchestration/dispatch-queue';
import { causedEventAppend } from '../../application/orchestration/orchestration-events';
import type { ConnectorClient } from '../../application/ports/connector-client';
import { GuardedOutboundHttp } from '../../infrastructure/outbound/signed-http';
import { systemClock } from '../../infrastructure/system';
import { orchestrationEventsProjection } from '../../projections/orchestration-events';
import type { Projection, ProjectionView } from '../../projections/projection';
import { type Account, liftSeatLimit, registerOwner } from './identity';
import type { TestServer } from './server';
import { subscribeTo } from './subscriptions';

type Ref = { event_id: string; tenant_id: string };

/** Starts an attempt of the event (it must be due); answers the attempt number. */
export async function dispatch(server: TestServer, ref: Ref, flows: string[] = ['test_flow']): Promise<number> {
  const started = await startDispatch(server.platform.orchestration, { ...ref, gap: null }, flows);
  if (!started) throw new Error(`event ${ref.event_id} could not be dispatched`);
  await server.platform.readYourWrites(started.position);
  return started.attempt;
}

/** Dispatches the event and ends the attempt processed. */
export async function process(server: TestServer, ref: Ref): Promise<void> {
  const attempt = await dispatch(server, ref);
  await server.platform.readYourWrites(await markProcessed(server.platform.orchestration, ref, attempt));
}

/** Dispatches the event and fails the attempt: retried at `retryAt`, or dead-lettered when null. */
export async function fail(server: TestServer, ref: Ref, retryAt: Date | null): Promise<void> {
  const attempt = await dispatch(server, ref);
  const error = { code: 'connector_failed', message: 'the connector answered 500' };
  await server.platform.readYourWrites(await failAttempt(server.platform.orchestration, ref, attempt, error, retryAt));
}

/** What the dispatcher would take now for the tenant. */
export function dispatchable(server: TestServer, tenantId: string, limit = 100): Promise<DispatchCandidate[]> {
  return nextDispatchable(server.platform.orchestration, { tenantId, limit });
}

/**
 * A follow-on event appended on its own, as a flow runner that died before recording its step
 * left it (the runner appends it with that step: recordSteps' `before`). Its id and position.
 */
export async function appendCausedEvent(...args: Parameters<typeof causedEventAppend>): Promise<{ event_id: string; position: number | null }> {
  const prepared = await causedEventAppend(...args);
  if (prepared.kind === 'existing') return { event_id: prepared.event_id, position: prepared.position };
  const [result] = await handleCommands(args[0], [prepared.command]);
  return { event_id: prepared.event_id, position: result.position };
}

/** The orchestration events' read model, held at will: while held, its projection applies nothing (the read model stops where it is). */
export function heldOrchestrationEvents(): { projection: Projection; hold(): void; release(): void } {
  let held = false;
  let release: () => void = () => undefined;
  let released = Promise.resolve();
  const projection: Projection = {
    ...orchestrationEventsProjection,
    async apply(event: never, view: ProjectionView) {
      if (held) await released;
      return orchestrationEventsProjection.apply(event, view);
    },
  } as Projection;
  return {
    projection,
    hold: () => {
      held = true;
      released = new Promise((resolve) => (release = resolve));
    },
    release: () => {
      held = false;
      release();
    },
  };
}

const EXAMPLE_CONNECTOR_SECRET = 'ssec_example-connector-test-secret-0123456789abcdef';

/**
 * An organization on premium with the example connector (listening here, closed by `closers`)
 * as an enabled, synced SDK connection: its `prepare_order` flow runs on shop.order.created.
 */
export async function organizationWithConnector(server: TestServer, slug: string, closers: Array<() => Promise<void>>): Promise<{ owner: Account; endpoint: string; connectionId: string }> {
  const owner = await registerOwner(server, slug);
  await liftSeatLimit(server, owner.tenant_id);
  await subscribeTo(server, owner.tenant_id, 'premium');
  const listening = await createExampleConnector({ signingSecrets: [EXAMPLE_CONNECTOR_SECRET], otpDelivery: { send: async () => undefined } }).listen(0, '127.0.0.1');
  closers.push(() => listening.close());
  const headers = { authorization: `Bearer ${owner.token}` };
  const endpoint = listening.url.replace(/\/svc$/, '');
  const created = await server.request('POST', '/api/v1/org/sdk-connections', { headers, body: { name: `${slug} shop`, webhook_url: endpoint, signing_secret: EXAMPLE_CONNECTOR_SECRET, enabled: true } });
  expect(created.status, created.text).to.equal(201);
  const synced = await server.request('POST', `/api/v1/org/sdk-connections/${created.json.id}/sync-tools`, { headers, body: {} });
  expect(synced.status, synced.text).to.equal(200);
  return { owner, endpoint, connectionId: created.json.id as string };
}

/** The platform's own connector client, allowed to call the example connectors listening on this machine. */
export function signedConnectorClient(): ConnectorClient {
  return new SignedConnectorClient(new GuardedOutboundHttp({ allowInsecureUrls: true, allowPrivateNetworks: true }), { timeoutMs: 10_000, maxResponseBytes: 1024 * 1024, clock: systemClock });
}
