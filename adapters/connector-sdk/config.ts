// Connector configuration (spec 2.6) and its defaults, resolved once at start-up so the
// request path never re-reads the environment or re-checks options.
import { ConnectorConfigurationError } from './errors';
import type { ResumeTokenLedger } from './resume-tokens';
import { PROTOCOL_VERSION } from './version';

/** Storage offered to a tool when the connector runs inside an installation scope (managed installs). */
export interface ConnectorStorage {
  /** Reads a value; undefined when absent. */
  get(key: string): Promise<unknown>;
  /** Writes a JSON-serializable value. */
  set(key: string, value: unknown): Promise<void>;
  /** Removes a value. */
  delete(key: string): Promise<void>;
}

/** What a connector reports when a handler fails unexpectedly (the caller only sees `internal_error`). */
export type ConnectorErrorReporter = (error: unknown, request: { request_id?: string; tool?: string }) => void;

/** Options of `createConnector` (spec 2.6 plus rotation, limits, resume tokens and a clock). */
export interface ConnectorOptions {
  /** Secret shared with the SDK Connection. Defaults to `process.env.SVC_SIGNING_SECRET`. */
  signingSecret?: string;
  /**
   * Every accepted secret, newest first, for zero-downtime rotation: any of them verifies a
   * request; the first seals resume tokens. Give this or `signingSecret`, not both.
   */
  signingSecrets?: readonly string[];
  /** Must match the platform; only `'1'` exists. */
  protocolVersion?: '1';
  /** Replay window, either direction, in seconds. Default 300. */
  maxTimestampSkewSeconds?: number;
  /** HTTP path of the endpoint. Default `/svc`. */
  endpointPath?: string;
  /** Largest accepted request body; larger ones get 413. Default 1 MiB. */
  maxBodyBytes?: number;
  /** Lifetime of a challenge's resume token. Default 600 (10 minutes). */
  resumeTokenTtlSeconds?: number;
  /** Shared single-use record for resume tokens across replicas (see resume-tokens.ts). */
  resumeTokenLedger?: ResumeTokenLedger;
  /** Storage of the installation scope; without it `context.storage` throws `configuration_error`. */
  installationStorage?: ConnectorStorage;
  /** Clock in Unix milliseconds; inject one in tests. Default `Date.now`. */
  now?: () => number;
  /** Called with every uncaught handler error. Default: `console.error`. */
  onError?: ConnectorErrorReporter;
  /** Environment to read secrets from. Default `process.env`. */
  env?: Readonly<Record<string, string | undefined>>;
}

/** Configuration with every default applied. */
export interface ConnectorConfig {
  signingSecrets: readonly string[];
  protocolVersion: string;
  maxTimestampSkewSeconds: number;
  endpointPath: string;
  maxBodyBytes: number;
  resumeTokenTtlSeconds: number;
  resumeTokenLedger: ResumeTokenLedger | undefined;
  installationStorage: ConnectorStorage | undefined;
  now: () => number;
  onError: ConnectorErrorReporter;
}

/** Environment variable the signing secret is read from (spec 5.2 rule 5). */
export const SIGNING_SECRET_ENV = 'SVC_SIGNING_SECRET';
/** Optional previous secret, accepted during a rotation's grace period. */
export const PREVIOUS_SIGNING_SECRET_ENV = 'SVC_SIGNING_SECRET_PREVIOUS';

export const DEFAULT_MAX_TIMESTAMP_SKEW_SECONDS = 300;
export const DEFAULT_ENDPOINT_PATH = '/svc';
export const DEFAULT_MAX_BODY_BYTES = 1024 * 1024;
export const DEFAULT_RESUME_TOKEN_TTL_SECONDS = 600;

const reportToConsole: ConnectorErrorReporter = (error, request) => {
  console.error('[connector] uncaught handler error', request, error);
};

function resolveSecrets(options: ConnectorOptions): readonly string[] {
  if (options.signingSecret !== undefined && options.signingSecrets !== undefined) {
    throw new ConnectorConfigurationError('Give signingSecret or signingSecrets, not both');
  }
  let secrets: readonly string[];
  if (options.signingSecrets !== undefined) {
    secrets = options.signingSecrets;
  } else if (options.signingSecret !== undefined) {
    secrets = [options.signingSecret];
  } else {
    const env = options.env ?? process.env;
    const current = env[SIGNING_SECRET_ENV];
    const previous = env[PREVIOUS_SIGNING_SECRET_ENV];
    secrets = current ? (previous ? [current, previous] : [current]) : [];
  }
  if (secrets.length === 0 || secrets.some((secret) => typeof secret !== 'string' || secret === '')) {
    throw new ConnectorConfigurationError(
      `Connector signing secret missing: pass signingSecret (or signingSecrets) to createConnector, or set ${SIGNING_SECRET_ENV} to the SDK Connection's signing secret`,
    );
  }
  return secrets;
}

function positive(name: string, value: number | undefined, fallback: number, allowZero = false): number {
  if (value === undefined) return fallback;
  if (!Number.isFinite(value) || value < 0 || (value === 0 && !allowZero)) {
    throw new ConnectorConfigurationError(`${name} must be a positive number, got ${String(value)}`);
  }
  return value;
}

/** Applies defaults and checks options; throws ConnectorConfigurationError on anything unusable. */
export function resolveConnectorConfig(options: ConnectorOptions): ConnectorConfig {
  const protocolVersion = options.protocolVersion ?? PROTOCOL_VERSION;
  if (protocolVersion !== PROTOCOL_VERSION) {
    throw new ConnectorConfigurationError(`protocolVersion must be '${PROTOCOL_VERSION}', the only protocol version this SDK speaks`);
  }
  const endpointPath = options.endpointPath ?? DEFAULT_ENDPOINT_PATH;
  if (!endpointPath.startsWith('/') || endpointPath.includes('?')) {
    throw new ConnectorConfigurationError(`endpointPath must be a path starting with '/', got '${endpointPath}'`);
  }
  return {
    signingSecrets: Object.freeze([...resolveSecrets(options)]),
    protocolVersion,
    maxTimestampSkewSeconds: positive('maxTimestampSkewSeconds', options.maxTimestampSkewSeconds, DEFAULT_MAX_TIMESTAMP_SKEW_SECONDS, true),
    endpointPath,
    maxBodyBytes: positive('maxBodyBytes', options.maxBodyBytes, DEFAULT_MAX_BODY_BYTES),
    resumeTokenTtlSeconds: positive('resumeTokenTtlSeconds', options.resumeTokenTtlSeconds, DEFAULT_RESUME_TOKEN_TTL_SECONDS),
    resumeTokenLedger: options.resumeTokenLedger,
    installationStorage: options.installationStorage,
    now: options.now ?? Date.now,
    onError: options.onError ?? reportToConsole,
  };
}
