// Orchestration events for suites that need one dispatched, processed, failed or
// dead-lettered: driven through the dispatch queue's commands (application/orchestration/
// dispatch-queue.ts), as the flow runner will drive them, each followed by read-your-writes.

import { handleCommands } from '../../application/command-handling/handle-command';
import { type DispatchCandidate, failAttempt, markProcessed, nextDispatchable, startDispatch } from '../../application/orchestration/dispatch-queue';
import { causedEventAppend } from '../../application/orchestration/orchestration-events';
import type { TestServer } from './server';

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
