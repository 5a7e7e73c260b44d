// The port for the platform's calls to a connector server an organization runs (spec 4.1, 5.2,
// issue #13): the SDK connection's endpoint and signing secret, one protocol request, and the
// connector's answer decoded and checked. The adapter signs per 5.2 (`x-svc-protocol`,
// `x-svc-timestamp`, `x-svc-signature`, `x-svc-trace-id`), posts to `{endpoint}/svc` through
// the outbound guard (https only, no private address, unless the operator allows them), waits
// at most the timeout, and checks the answer's shape; whatever else happens becomes a
// ConnectorCallError with one of the reasons below and what was wrong, never a crash.
//
// The types mirror the connector protocol of spec 2.2 to 2.5 (adapters/connector-sdk/protocol.ts
// holds the wire codecs; the application does not import adapters).

export type ConnectorRequestType = 'ping' | 'tools.list' | 'capabilities.list' | 'tool.invoke' | 'tool.resume';

/** A protocol request (spec 2.2) before the client adds `protocol_version`. */
export interface ConnectorRequest {
  type: ConnectorRequestType;
  /** The correlation id: a retried tool call is sent with the same one. */
  request_id: string;
  organization_id?: string | null;
  conversation_id?: string | null;
  channel?: string | null;
  identity?: Record<string, unknown> | null;
  tool?: string | null;
  parameters?: Record<string, unknown> | null;
  authentication?: Record<string, unknown> | null;
  resume_token?: string | null;
  challenge_response?: string | null;
  person?: Record<string, unknown> | null;
  platform?: Record<string, unknown> | null;
}

/** Where and how to call: the connection's endpoint (its `webhook_url`) and the secret to sign with, in clear. */
export interface ConnectorTarget {
  endpoint: string;
  signingSecret: string;
  /** Default: the deployment's CONNECTOR_TIMEOUT_MS (30 s). */
  timeoutMs?: number;
  /** Forwarded as `x-svc-trace-id`; default: the request id. */
  traceId?: string;
  /** Forwarded when the chat turn carried them (spec 5.1 rule 4). */
  endUser?: { token: string | null; session: string | null };
}

export interface ConnectorToolDescriptor {
  name: string;
  description?: string;
  auth?: string;
  chat?: boolean;
  input_schema?: Record<string, unknown>;
}

export type ConnectorAnswer =
  | { type: 'pong'; protocol_version?: string; sdk_version?: string }
  | { type: 'tools.list'; tools: ConnectorToolDescriptor[]; protocol_version?: string; sdk_version?: string }
  | {
      type: 'capabilities.list';
      tools: ConnectorToolDescriptor[];
      flows: Record<string, unknown>[];
      events?: Record<string, unknown>[];
      webhooks?: Record<string, unknown>[];
      schedules?: Record<string, unknown>[];
      marketing?: Record<string, unknown>[];
      organization?: { version?: number; events?: { id: string; label: string }[]; actions?: { id: string; label: string }[]; tasks?: { id: string; label: string; priority?: string }[] };
      protocol_version?: string;
      sdk_version?: string;
      sdk_name?: string;
    }
  | { type: 'result'; output: Record<string, unknown>; authentication_context?: Record<string, unknown>; person_mutations?: unknown }
  | { type: 'challenge'; resume_token: string; challenge: Record<string, unknown> }
  /** A protocol error of spec 7.2 (`denied`, `customer_not_found`, `invalid_signature`, ...): an answer, not a failure of the call. */
  | { type: 'error'; code: string; message: string };

/**
 * Why a call got no usable answer:
 *   unreachable        no connection (refused, reset, closed before an answer, DNS);
 *   timeout            no complete answer within the timeout;
 *   refused_address    the guard refused the endpoint (insecure or private address);
 *   invalid_signature  the connector rejected our signature (401 or an `invalid_signature` error);
 *   protocol_mismatch  the connector speaks another protocol version;
 *   bad_response       an answer that is not a protocol response of the expected type (`detail` says what was wrong).
 */
export type ConnectorFailureReason = 'unreachable' | 'timeout' | 'refused_address' | 'invalid_signature' | 'protocol_mismatch' | 'bad_response';

export class ConnectorCallError extends Error {
  constructor(
    readonly reason: ConnectorFailureReason,
    readonly detail: string,
    readonly latencyMs: number,
  ) {
    super(`${reason}: ${detail}`);
    this.name = 'ConnectorCallError';
  }
}

export interface ConnectorExchange {
  answer: ConnectorAnswer;
  latency_ms: number;
  /** The HTTP status the connector answered with. */
  status: number;
}

export interface ConnectorClient {
  /** One signed protocol request; rejects with ConnectorCallError only. */
  call(target: ConnectorTarget, request: ConnectorRequest): Promise<ConnectorExchange>;
}
