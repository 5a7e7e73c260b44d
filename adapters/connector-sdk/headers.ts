// Header names of the connector protocol (spec 4.1). Node lowercases incoming header
// names, so request headers are looked up in lowercase; response headers are written in
// lowercase too (HTTP names are case-insensitive, and HTTP/2 requires lowercase).

/** `v1=` + lowercase hex HMAC-SHA256 of `v1:<timestamp>:<raw body>` (spec 5.2). */
export const SIGNATURE_HEADER = 'x-svc-signature';
/** Unix seconds the signature was made at. */
export const TIMESTAMP_HEADER = 'x-svc-timestamp';
/** Protocol version the caller speaks; optional, but must match when present. */
export const PROTOCOL_HEADER = 'x-svc-protocol';
/** Correlation id forwarded by the platform; becomes `trace_id` in the tool context. */
export const TRACE_ID_HEADER = 'x-svc-trace-id';
/** Tenancy headers sent on the connector-manager path. */
export const TENANT_ID_HEADER = 'x-svc-tenant-id';
export const WORKSPACE_ID_HEADER = 'x-svc-workspace-id';

/** Response headers every connector answer carries (spec 4.1 rule 8). */
export const RESPONSE_PROTOCOL_HEADER = 'x-svc-protocol';
export const RESPONSE_PROTOCOL_VERSION_HEADER = 'x-svc-protocol-version';
export const RESPONSE_SDK_HEADER = 'x-svc-sdk';
export const RESPONSE_SDK_VERSION_HEADER = 'x-svc-version';

/** The four response headers of spec 4.1 rule 8, in the order a doctor reports them. */
export const REQUIRED_RESPONSE_HEADERS = [
  RESPONSE_PROTOCOL_HEADER,
  RESPONSE_PROTOCOL_VERSION_HEADER,
  RESPONSE_SDK_HEADER,
  RESPONSE_SDK_VERSION_HEADER,
] as const;
