// The ConnectorDoctor port over the connector SDK's doctor (adapters/connector-sdk/doctor.ts):
// the same conformance cases an organization runs with the SDK's CLI, run by the platform for
// `POST /api/v1/org/sdk-connections/{id}/test?deep=true`.
//
// Every probe goes through the platform's outbound guard (OutboundHttp.request) rather than the
// SDK's own client: the guard checks the address again at connection time, so a deep test can
// reach no address an ordinary call could not (a name pointed at an internal address after the
// connection was saved included), follows no redirect and reads a bounded answer. Probes are
// signed as the SDK signs (its `signedHeaders`), at the platform's clock.

import { type CallConnectorOptions, type ConnectorCallResult } from '../connector-sdk/client';
import { runConnectorChecks } from '../connector-sdk/doctor';
import { signedHeaders } from '../connector-sdk/signing';
import type { Clock } from '../../application/ports/clock';
import { type ConnectorTarget, connectorEndpointUrl } from '../../application/ports/connector-client';
import type { ConformanceCase, ConnectorDoctor } from '../../application/ports/connector-doctor';
import { OutboundCallError, type OutboundHttp } from '../../application/ports/outbound-http';

/** An answer beyond this is not read: a probe needs the status, the headers and a short body. */
const MAX_PROBE_ANSWER_BYTES = 256 * 1024;

export interface GuardedConnectorDoctorOptions {
  outbound: OutboundHttp;
  clock: Clock;
  /** The wait for each probe's answer when the target names none. */
  timeoutMs: number;
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

export class GuardedConnectorDoctor implements ConnectorDoctor {
  constructor(private readonly options: GuardedConnectorDoctorOptions) {}

  check(target: ConnectorTarget): Promise<ConformanceCase[]> {
    return runConnectorChecks({
      url: connectorEndpointUrl(target.endpoint),
      secret: target.signingSecret,
      timeoutMs: target.timeoutMs ?? this.options.timeoutMs,
      now: () => this.options.clock.now().getTime(),
      send: (probe) => this.send(probe),
    });
  }

  /** One probe as the SDK's `callConnector` sends it, through the guard. */
  private async send(probe: CallConnectorOptions): Promise<ConnectorCallResult> {
    const method = (probe.method ?? 'POST').toUpperCase();
    const withBody = method !== 'GET' && method !== 'HEAD';
    const rawBody = typeof probe.body === 'string' ? probe.body : JSON.stringify(probe.body);
    const headers: Record<string, string> = { ...signedHeaders(probe.secret, rawBody, { timestamp: probe.timestamp, traceId: probe.traceId }), ...probe.headers };
    if (!withBody) delete headers['content-type'];
    try {
      const response = await this.options.outbound.request({
        method,
        url: probe.url,
        headers,
        body: withBody ? rawBody : null,
        timeoutMs: probe.timeoutMs ?? this.options.timeoutMs,
        maxResponseBytes: MAX_PROBE_ANSWER_BYTES,
      });
      const text = response.body.toString('utf8');
      return { status: response.status, headers: response.headers, text, json: parseJson(text) };
    } catch (error) {
      // The doctor reports a failed probe with the error's message: say which refusal it was.
      if (error instanceof OutboundCallError) throw new Error(`${error.reason}: ${error.message}`);
      throw error;
    }
  }
}
