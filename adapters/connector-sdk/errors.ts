// The one error type of the connector protocol (spec 7.2). A handler throws or returns a
// ConnectorError to answer `{type:'error', code, message}` with HTTP 200; anything else it
// throws is an uncaught failure, answered 500 `internal_error` without leaking the message.

/** The error codes of spec 7.2. */
export const CONNECTOR_ERROR_CODES = [
  'invalid_signature',
  'protocol_mismatch',
  'invalid_request',
  'not_found',
  'denied',
  'customer_not_found',
  'person_not_found',
  'configuration_error',
  'internal_error',
] as const;

/** A code of spec 7.2. */
export type ConnectorErrorCode = (typeof CONNECTOR_ERROR_CODES)[number];

/** A protocol-level failure with a code of spec 7.2; its message is sent to the caller. */
export class ConnectorError extends Error {
  constructor(
    readonly code: ConnectorErrorCode,
    message: string,
  ) {
    super(message);
    this.name = 'ConnectorError';
  }
}

/** Shorthand for `new ConnectorError(code, message)`, for handlers that return rather than throw. */
export function protocolError(code: ConnectorErrorCode, message: string): ConnectorError {
  return new ConnectorError(code, message);
}

/** Thrown by `createConnector` when the configuration cannot work (missing secret, bad schema). */
export class ConnectorConfigurationError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ConnectorConfigurationError';
  }
}
