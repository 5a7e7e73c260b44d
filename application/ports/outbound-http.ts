// The port for calls from the platform to addresses tenants give it: the handoff webhook now,
// the CRM and connector servers later. Every call is guarded against server-side request
// forgery (ARCHITECTURE.md, "Sagas and the connector"): https only unless the operator allows
// plain http, and no address in a private, loopback, link-local or metadata range unless the
// operator allows private networks (development, tests). The guard looks at the addresses a
// name resolves to when the address is given and again on every call (a name may be pointed
// elsewhere after it was checked), and the call connects only to an address it checked.

/** Why the platform will not call an address. */
export type OutboundRefusalReason = 'invalid_url' | 'insecure_url' | 'private_address' | 'unresolvable_host';

export interface OutboundRefusal {
  reason: OutboundRefusalReason;
  message: string;
}

/** A call that got no HTTP answer: the guard refused the address, or the network or the time limit failed it. */
export class OutboundCallError extends Error {
  constructor(
    readonly reason: OutboundRefusalReason | 'network' | 'timeout',
    message: string,
  ) {
    super(message);
    this.name = 'OutboundCallError';
  }
}

/** A POST signed as spec 5.2 signs connector requests. */
export interface SignedPost {
  url: string;
  /** The signing secret, in clear: it never leaves the call. */
  secret: string;
  /** The exact bytes sent and signed (JSON). */
  body: string;
  /** Unix seconds the signature is made at (`x-svc-timestamp`), from the platform's clock. */
  timestampSeconds: number;
  /** Further headers (an idempotency key, the kind of payload). */
  headers: Record<string, string>;
  timeoutMs: number;
}

export interface OutboundAnswer {
  status: number;
}

export interface OutboundHttp {
  /** Why the platform refuses to call `url` (its scheme, or where its name points), or null when it may. */
  refusalOf(url: string): Promise<OutboundRefusal | null>;
  /** POSTs the signed body; resolves with any HTTP answer (redirects are not followed), rejects with OutboundCallError when none came. */
  postSigned(request: SignedPost): Promise<OutboundAnswer>;
}
