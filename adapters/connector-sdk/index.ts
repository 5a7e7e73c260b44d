// svc-platform/connector-sdk: the library an organization runs its connector server with.
// See README.md in this folder.
export { createConnector, Connector } from './connector';
export type { ConnectorServer, RawConnectorRequest, RawHeaders } from './connector';
export type { ConnectorHttpResponse } from './responses';
export {
  DEFAULT_ENDPOINT_PATH,
  DEFAULT_MAX_BODY_BYTES,
  DEFAULT_MAX_TIMESTAMP_SKEW_SECONDS,
  DEFAULT_RESUME_TOKEN_TTL_SECONDS,
  PREVIOUS_SIGNING_SECRET_ENV,
  SIGNING_SECRET_ENV,
} from './config';
export type { ConnectorErrorReporter, ConnectorOptions, ConnectorStorage } from './config';
export { CONNECTOR_ERROR_CODES, ConnectorConfigurationError, ConnectorError, protocolError } from './errors';
export type { ConnectorErrorCode } from './errors';
export type {
  AdvertisedCapabilities,
  AdvertisedEntry,
  ToolAuth,
  ToolChallenge,
  ToolContext,
  ToolDefinition,
  ToolHandler,
  ToolOutcome,
  ToolParameters,
  ToolResult,
  ToolResumeHandler,
  ToolResumption,
} from './tools';
export type { InputSchema, InputSchemaType } from './schema-validation';
export { validateAgainstSchema } from './schema-validation';
export { InProcessResumeTokenLedger } from './resume-tokens';
export type { ResumeTokenLedger } from './resume-tokens';
export * from './headers';
export * from './protocol';
export { signRequest, signedHeaders, verifySignature } from './signing';
export type { SignatureCheck, SignatureCheckInput, SignatureRefusal, SignedHeadersOptions } from './signing';
export { callConnector, newRequestId } from './client';
export type { CallConnectorOptions, ConnectorCallResult } from './client';
export { runConnectorChecks, wrongPathUrl } from './doctor';
export type { ConnectorDoctorOptions, DoctorCheckResult } from './doctor';
export { PROTOCOL_VERSION, SDK_NAME, SDK_VERSION } from './version';
