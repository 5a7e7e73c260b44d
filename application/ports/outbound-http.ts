// The port for calls from the platform to addresses tenants give it: the handoff webhook, the
// CRM, business tools' APIs and their OAuth2 token endpoints, OpenAPI documents by URL, and
// connector servers. Every call is guarded against server-side request
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
    readonly reason: OutboundRefusalReason | 'network' | 'timeout' | 'response_too_large',
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

/** Any request to an address a tenant gave (a business tool's API, an OAuth2 token endpoint, an OpenAPI document). */
export interface OutboundRequest {
  method: string;
  url: string;
  /** Sent as given; the adapter adds only `content-length`. */
  headers: Record<string, string>;
  body: Buffer | string | null;
  timeoutMs: number;
  /** An answer whose body grows past this is abandoned: OutboundCallError `response_too_large`. */
  maxResponseBytes: number;
}

export interface OutboundResponse {
  status: number;
  /** Lowercased names; repeated headers joined with `, `. */
  headers: Record<string, string>;
  body: Buffer;
}

export interface OutboundHttp {
  /** Why the platform refuses to call `url` (its scheme, or where its name points), or null when it may. */
  refusalOf(url: string): Promise<OutboundRefusal | null>;
  /** POSTs the signed body; resolves with any HTTP answer (redirects are not followed), rejects with OutboundCallError when none came. */
  postSigned(request: SignedPost): Promise<OutboundAnswer>;
  /**
   * Sends the request through the guard (checked again at connection time, to the addresses
   * checked) and resolves with the whole answer, whatever its status; redirects are not
   * followed. Rejects with OutboundCallError when no complete answer came in time or in size.
   */
  request(request: OutboundRequest): Promise<OutboundResponse>;
}
