// One invocation through the connector-manager: the connector client's call, retried with
// exponential back-off where a retry cannot do harm, all within one time budget.
//
// Retried: a call that got no answer because the connection failed (`unreachable`: refused,
// reset, closed before a whole answer) or whose answer had a 5xx status (the SDK's 500
// `internal_error`, a proxy's 502/503). Never retried: a refused address, a refused signature,
// another protocol version, a malformed answer with a 2xx or 4xx status, and a timeout (the
// budget is spent, see below): none of them changes by asking again.
//
// Which requests: `ping`, `tools.list` and `capabilities.list` always (they change nothing).
// `tool.invoke` and `tool.resume` only when the caller gave the `request_id`: the retry is
// sent with that same id, so a connector that keys its side effects on it (the protocol's
// correlation id) runs the tool once. Without a caller's id the connector-manager makes one
// up for the single attempt, and a tool call that may have run is not repeated behind the
// caller's back.
//
// Time: the timeout (the request's `timeout_ms`, else CONNECTOR_TIMEOUT_MS, 30 s) is the
// budget of the whole invocation, retries and waits included; each attempt gets what is left
// of it, and no retry starts when its wait would end past the budget. A caller therefore
// never waits much longer than the timeout it asked for, whatever the number of attempts.
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  ConnectorCallError,
  type ConnectorClient,
  type ConnectorExchange,
  type ConnectorRequest,
  type ConnectorTarget,
} from '../../application/ports/connector-client';

export interface RetryPolicy {
  /** Attempts of a retryable call, the first included (CONNECTOR_MANAGER_MAX_ATTEMPTS). */
  maxAttempts: number;
  /** The wait before the second attempt; it doubles before each next one (CONNECTOR_MANAGER_RETRY_BASE_MS). */
  retryBaseMs: number;
  /** The budget when the caller names none (CONNECTOR_TIMEOUT_MS). */
  timeoutMs: number;
}

/** No single wait between two attempts is longer than this. */
const LONGEST_WAIT_MS = 10_000;

export type InvokeOutcome =
  | { ok: true; exchange: ConnectorExchange; attempts: number; latency_ms: number }
  | { ok: false; error: ConnectorCallError; attempts: number; latency_ms: number };

const READ_ONLY = new Set(['ping', 'tools.list', 'capabilities.list']);

/** Whether the request may be sent again after a failed attempt. */
export function mayRetry(request: ConnectorRequest, callerGaveRequestId: boolean): boolean {
  return READ_ONLY.has(request.type) || callerGaveRequestId;
}

/** Whether an attempt's outcome is worth another attempt. */
function failedTransiently(outcome: InvokeOutcome): boolean {
  if (outcome.ok) return outcome.exchange.status >= 500;
  const { reason, status } = outcome.error;
  if (reason === 'unreachable') return true;
  return reason === 'bad_response' && status !== undefined && status >= 500;
}

/** Calls the connector, retrying as the header says. */
export async function invokeWithRetries(
  client: ConnectorClient,
  target: ConnectorTarget,
  request: ConnectorRequest,
  options: { callerGaveRequestId: boolean; policy: RetryPolicy },
): Promise<InvokeOutcome> {
  const { policy } = options;
  const started = performance.now();
  const elapsed = (): number => Math.round(performance.now() - started);
  const deadline = started + (target.timeoutMs ?? policy.timeoutMs);
  const attemptsAllowed = mayRetry(request, options.callerGaveRequestId) ? policy.maxAttempts : 1;
  let attempts = 0;
  for (;;) {
    attempts += 1;
    const remaining = Math.max(1, Math.floor(deadline - performance.now()));
    let outcome: InvokeOutcome;
    try {
      const exchange = await client.call({ ...target, timeoutMs: remaining }, request);
      outcome = { ok: true, exchange, attempts, latency_ms: elapsed() };
    } catch (error) {
      const failure = error instanceof ConnectorCallError ? error : new ConnectorCallError('unreachable', String(error), elapsed());
      outcome = { ok: false, error: failure, attempts, latency_ms: elapsed() };
    }
    if (attempts >= attemptsAllowed || !failedTransiently(outcome)) return outcome;
    const wait = Math.min(LONGEST_WAIT_MS, policy.retryBaseMs * 2 ** (attempts - 1));
    // A retry that could not finish in the budget would only turn this answer into a timeout.
    if (performance.now() + wait >= deadline) return outcome;
    await sleep(wait);
  }
}
