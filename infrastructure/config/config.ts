// The one config object, decoded from the environment with io-ts. Every bad variable is
// reported at once, each with what was expected and what was found.

import path from 'node:path';
import * as t from 'io-ts';
import { isLeft } from 'fp-ts/Either';
import { MAX_PAYLOAD_RETENTION_DAYS } from '../../domain/orchestration-event/payloads';

function fromString<A>(name: string, expected: string, parse: (raw: string) => A | undefined): t.Type<A, string, unknown> {
  return new t.Type<A, string, unknown>(
    name,
    (value): value is A => value !== undefined,
    (input, context) => {
      if (typeof input !== 'string') return t.failure(input, context, expected);
      const parsed = parse(input.trim());
      return parsed === undefined ? t.failure(input, context, expected) : t.success(parsed);
    },
    String,
  );
}

const integerBetween = (min: number, max: number) =>
  fromString(`Integer[${min},${max}]`, `an integer from ${min} to ${max}`, (raw) => {
    if (!/^-?\d+$/.test(raw)) return undefined;
    const value = Number(raw);
    return value >= min && value <= max ? value : undefined;
  });

const booleanString = fromString('Boolean', '"true" or "false"', (raw) => (raw === 'true' ? true : raw === 'false' ? false : undefined));

const oneOf = <A extends string>(...values: A[]) =>
  fromString(values.join('|'), `one of ${values.join(', ')}`, (raw) => (values as string[]).includes(raw) ? (raw as A) : undefined);

const urlWithScheme = (...schemes: string[]) =>
  fromString(`URL(${schemes.join('|')})`, `a URL starting with ${schemes.map((s) => `${s}://`).join(' or ')}`, (raw) => {
    try {
      const url = new URL(raw);
      return schemes.includes(url.protocol.replace(/:$/, '')) ? raw : undefined;
    } catch {
      return undefined;
    }
  });

const nonEmpty = fromString('NonEmptyString', 'a non-empty string', (raw) => (raw.length > 0 ? raw : undefined));

/** Every variable the platform reads, with its default. README.md lists them too. */
const variables = {
  PORT: { codec: integerBetween(0, 65535), default: '8080' },
  HOST: { codec: nonEmpty, default: '0.0.0.0' },
  DATA_DIR: { codec: nonEmpty, default: './data' },
  SQLITE_SYNCHRONOUS: { codec: oneOf('full', 'normal', 'off'), default: 'full' },
  SQLITE_CHECKPOINT: { codec: oneOf('background', 'inline'), default: 'background' },
  PROJECTION_THREAD: { codec: oneOf('worker', 'main'), default: 'worker' },
  EVENTSTORE_URL: { codec: urlWithScheme('esdb', 'esdb+discover', 'kurrentdb', 'kurrentdb+discover', 'kdb', 'kdb+discover'), default: undefined },
  MONGODB_URL: { codec: urlWithScheme('mongodb', 'mongodb+srv'), default: undefined },
  LOG_LEVEL: { codec: oneOf('trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent'), default: 'info' },
  NODE_ENV: { codec: oneOf('development', 'production', 'test'), default: 'development' },
  METRICS_AUTH_TOKEN: { codec: nonEmpty, default: undefined },
  METRICS_PUBLIC: { codec: booleanString, default: 'false' },
  BODY_LIMIT_BYTES: { codec: integerBetween(1024, 100 * 1024 * 1024), default: String(1024 * 1024) },
  TRUST_PROXY_HOPS: { codec: integerBetween(0, 16), default: '0' },
  EVENT_CLIENT_IP: { codec: oneOf('full', 'truncated', 'none'), default: 'full' },
  READ_YOUR_WRITES_TIMEOUT_MS: { codec: integerBetween(0, 60_000), default: '2000' },
  READY_MAX_PROJECTION_LAG: { codec: integerBetween(0, Number.MAX_SAFE_INTEGER), default: '1000' },
  SHUTDOWN_TIMEOUT_MS: { codec: integerBetween(0, 600_000), default: '10000' },
  HTTP_KEEP_ALIVE_TIMEOUT_MS: { codec: integerBetween(1000, 3_600_000), default: '5000' },
  SAGA_MAX_ATTEMPTS: { codec: integerBetween(1, 1000), default: '8' },
  SAGA_CONCURRENCY: { codec: integerBetween(1, 1000), default: '16' },
  TOKEN_TTL_SECONDS: { codec: integerBetween(60, 30 * 24 * 3600), default: String(12 * 3600) },
  OTP_TTL_SECONDS: { codec: integerBetween(60, 24 * 3600), default: '600' },
  IMPERSONATION_TTL_SECONDS: { codec: integerBetween(60, 3600), default: '900' },
  REGISTRATION_TIMEOUT_SECONDS: { codec: integerBetween(0, 7 * 24 * 3600), default: '900' },
  TOKEN_SECRET_KEY: { codec: fromString('PaserkSecret', 'a PASERK k4.secret key', (raw) => (raw.startsWith('k4.secret.') ? raw : undefined)), default: undefined },
  TOKEN_PREVIOUS_PUBLIC_KEYS: {
    codec: fromString('PaserkPublicList', 'PASERK k4.public keys (32 bytes each), comma-separated', (raw) => {
      const keys = raw.split(',').map((key) => key.trim()).filter((key) => key !== '');
      const valid = keys.every((key) => key.startsWith('k4.public.') && /^[A-Za-z0-9_-]+$/.test(key.slice('k4.public.'.length)) && Buffer.from(key.slice('k4.public.'.length), 'base64url').length === 32);
      return valid ? keys : undefined;
    }),
    default: undefined,
  },
  DATA_ENCRYPTION_KEY: {
    codec: fromString('Base64Key', '32 bytes, base64-encoded', (raw) => (Buffer.from(raw, 'base64').length === 32 ? raw : undefined)),
    default: undefined,
  },
  SCRYPT_LOG_N: { codec: integerBetween(10, 20), default: '17' },
  ENABLE_GRAPHQL_PLAYGROUND: { codec: booleanString, default: 'false' },
  GRAPHQL_INTROSPECTION: { codec: booleanString, default: undefined },
  GRAPHQL_MAX_DEPTH: { codec: integerBetween(1, 1000), default: '15' },
  GRAPHQL_MAX_FIELDS: { codec: integerBetween(1, 100_000), default: '300' },
  GRAPHQL_MAX_COST: { codec: integerBetween(1, 10_000_000), default: '1000' },
  RATE_LIMIT_WINDOW_SECONDS: { codec: integerBetween(1, 24 * 3600), default: '900' },
  RATE_LIMIT_PER_IP: { codec: integerBetween(1, 1_000_000), default: '100' },
  RATE_LIMIT_PER_EMAIL: { codec: integerBetween(1, 1_000_000), default: '10' },
  SUPER_ADMIN_EMAIL: { codec: fromString('Email', 'an email address', (raw) => (/^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(raw) ? raw : undefined)), default: undefined },
  SUPER_ADMIN_PASSWORD: { codec: fromString('AdminPassword', 'at least 12 characters', (raw) => (raw.length >= 12 ? raw : undefined)), default: undefined },
  SMTP_URL: { codec: urlWithScheme('smtp', 'smtps'), default: undefined },
  SMTP_FROM: { codec: nonEmpty, default: 'svc platform <no-reply@localhost>' },
  MAIL_OUTBOX_ONLY: { codec: booleanString, default: 'false' },
  BILLING_GRACE_DAYS: { codec: integerBetween(0, 90), default: '7' },
  BILLING_RETURN_URL: { codec: urlWithScheme('http', 'https'), default: undefined },
  READ_CACHE_TTL_MS: { codec: integerBetween(0, 60_000), default: '1000' },
  LEASE_TTL_MS: { codec: integerBetween(100, 600_000), default: '15000' },
  LEASE_HOLDER_ID: { codec: fromString('HolderId', '1 to 200 printable characters', (raw) => (/^[\x21-\x7e]{1,200}$/.test(raw) ? raw : undefined)), default: undefined },
  AUDIT_CHECKPOINT_ENTRIES: { codec: integerBetween(1, 1_000_000), default: '100' },
  AUDIT_CHECKPOINT_INTERVAL_SECONDS: { codec: integerBetween(1, 7 * 24 * 3600), default: '300' },
  ACCESS_DENIALS_PER_MINUTE: { codec: integerBetween(1, 1_000_000), default: '30' },
  IDEMPOTENCY_KEY_TTL_SECONDS: { codec: integerBetween(60, 30 * 24 * 3600), default: String(24 * 3600) },
  PUBLIC_URL: {
    codec: fromString('PublicUrl', 'an http:// or https:// URL without query or fragment', (raw) => {
      try {
        const url = new URL(raw);
        return ['http:', 'https:'].includes(url.protocol) && url.search === '' && url.hash === '' && !raw.includes('?') && !raw.includes('#') ? raw.replace(/\/+$/, '') : undefined;
      } catch {
        return undefined;
      }
    }),
    default: undefined,
  },
  BILLING_SANDBOX_WEBHOOK_SECRET: { codec: fromString('WebhookSecret', 'at least 16 characters', (raw) => (raw.length >= 16 ? raw : undefined)), default: undefined },
  STRIPE_SECRET_KEY: { codec: fromString('StripeSecretKey', 'a Stripe secret or restricted key (sk_... or rk_...)', (raw) => (/^(sk|rk)_[A-Za-z0-9_]+$/.test(raw) ? raw : undefined)), default: undefined },
  OUTBOUND_ALLOW_INSECURE: { codec: booleanString, default: undefined },
  OUTBOUND_ALLOW_PRIVATE_NETWORKS: { codec: booleanString, default: undefined },
  // Deprecated aliases of the two above (the names #11 shipped), read only when the new name is unset.
  HANDOFF_ALLOW_INSECURE_URLS: { codec: booleanString, default: undefined },
  HANDOFF_ALLOW_PRIVATE_NETWORKS: { codec: booleanString, default: undefined },
  HANDOFF_MAX_ATTEMPTS: { codec: integerBetween(1, 100), default: '6' },
  HANDOFF_TIMEOUT_MS: { codec: integerBetween(100, 120_000), default: '10000' },
  HANDOFF_RETRY_BASE_SECONDS: { codec: integerBetween(1, 24 * 3600), default: '60' },
  CRM_DELIVERY_MAX_ATTEMPTS: { codec: integerBetween(1, 100), default: '6' },
  CRM_DELIVERY_TIMEOUT_MS: { codec: integerBetween(100, 120_000), default: '10000' },
  CRM_DELIVERY_RETRY_BASE_SECONDS: { codec: integerBetween(1, 24 * 3600), default: '60' },
  WIDGET_LEADS_PER_HOUR: { codec: integerBetween(1, 1_000_000), default: '10' },
  WIDGET_LEADS_PER_IP_PER_HOUR: { codec: integerBetween(1, 1_000_000), default: '100' },
  SPEECH_BASE_URL: { codec: urlWithScheme('http', 'https'), default: undefined },
  SPEECH_API_KEY: { codec: nonEmpty, default: undefined },
  SPEECH_STT_MODEL: { codec: nonEmpty, default: 'whisper-1' },
  SPEECH_TTS_MODEL: { codec: nonEmpty, default: 'tts-1' },
  SPEECH_TTS_VOICE: { codec: fromString('Voice', '1 to 64 letters, digits, _ . and -', (raw) => (/^[A-Za-z0-9_.-]{1,64}$/.test(raw) ? raw : undefined)), default: 'alloy' },
  SPEECH_TIMEOUT_MS: { codec: integerBetween(100, 600_000), default: '30000' },
  SPEECH_MAX_AUDIO_BYTES: { codec: integerBetween(1024, 25 * 1024 * 1024), default: String(10 * 1024 * 1024) },
  SPEECH_REQUESTS_PER_MINUTE: { codec: integerBetween(1, 1_000_000), default: '20' },
  TOOL_TIMEOUT_MS: { codec: integerBetween(100, 120_000), default: '15000' },
  TOOL_MAX_RESPONSE_BYTES: { codec: integerBetween(1024, 64 * 1024 * 1024), default: String(1024 * 1024) },
  SDK_SECRET_GRACE_SECONDS: { codec: integerBetween(0, 30 * 24 * 3600), default: '86400' },
  CONNECTOR_AUTHENTICATION_TTL_SECONDS: { codec: integerBetween(60, 30 * 24 * 3600), default: '3600' },
  STRIPE_WEBHOOK_SECRET: { codec: fromString('StripeWebhookSecret', "a Stripe endpoint's signing secret (whsec_...)", (raw) => (/^whsec_[A-Za-z0-9_+/=]+$/.test(raw) ? raw : undefined)), default: undefined },
  EMBEDDINGS_BASE_URL: { codec: urlWithScheme('http', 'https'), default: undefined },
  EMBEDDINGS_API_KEY: { codec: nonEmpty, default: undefined },
  EMBEDDINGS_MODEL: { codec: nonEmpty, default: 'text-embedding-3-small' },
  EMBEDDINGS_BATCH_SIZE: { codec: integerBetween(1, 2048), default: '64' },
  DOCUMENT_MAX_BYTES: { codec: integerBetween(1024, 1024 * 1024 * 1024), default: String(20 * 1024 * 1024) },
  EXTRACTION_THREADS: { codec: integerBetween(0, 16), default: '1' },
  EXTRACTION_TIMEOUT_MS: { codec: integerBetween(1000, 3_600_000), default: '120000' },
  EXTRACTION_MAX_HEAP_MB: { codec: integerBetween(64, 16384), default: '1024' },
  OPENAPI_MAX_BYTES: { codec: integerBetween(1024, 100 * 1024 * 1024), default: String(5 * 1024 * 1024) },
  OPENAPI_FETCH_TIMEOUT_MS: { codec: integerBetween(100, 120_000), default: '10000' },
  OPENAPI_READ_TIMEOUT_MS: { codec: integerBetween(100, 600_000), default: '20000' },
  S3_BUCKET: { codec: fromString('S3Bucket', 'an S3 bucket name (3 to 63 lowercase letters, digits, dots and hyphens)', (raw) => (/^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/.test(raw) ? raw : undefined)), default: undefined },
  S3_ENDPOINT: { codec: urlWithScheme('http', 'https'), default: undefined },
  S3_REGION: { codec: nonEmpty, default: 'us-east-1' },
  S3_ACCESS_KEY_ID: { codec: nonEmpty, default: undefined },
  S3_SECRET_ACCESS_KEY: { codec: nonEmpty, default: undefined },
  S3_FORCE_PATH_STYLE: { codec: booleanString, default: 'false' },
  LLM_BASE_URL: { codec: urlWithScheme('http', 'https'), default: undefined },
  LLM_API_KEY: { codec: nonEmpty, default: undefined },
  LLM_MODEL: { codec: nonEmpty, default: undefined },
  LLM_TIMEOUT_MS: { codec: integerBetween(100, 600_000), default: '60000' },
  CHAT_HEARTBEAT_MS: { codec: integerBetween(1, 3_600_000), default: '15000' },
  WIDGET_WS_HEARTBEAT_MS: { codec: integerBetween(1, 3_600_000), default: '25000' },
  WIDGET_WS_RESUME_TIMEOUT_MS: { codec: integerBetween(1, 600_000), default: '10000' },
  WIDGET_WS_MAX_CONNECTIONS_PER_VISITOR: { codec: integerBetween(1, 1000), default: '5' },
  WIDGET_WS_MESSAGES_PER_MINUTE: { codec: integerBetween(1, 100_000), default: '20' },
  WIDGET_WS_HIGH_WATER_BYTES: { codec: integerBetween(1024, 64 * 1024 * 1024), default: String(256 * 1024) },
  WIDGET_WS_SLOW_CLIENT_MS: { codec: integerBetween(1, 3_600_000), default: '30000' },
  WHATSAPP_GRAPH_BASE_URL: { codec: urlWithScheme('http', 'https'), default: 'https://graph.facebook.com' },
  WHATSAPP_OUTBOX: { codec: booleanString, default: 'false' },
  WHATSAPP_TIMEOUT_MS: { codec: integerBetween(100, 120_000), default: '15000' },
  WHATSAPP_MAX_ATTEMPTS: { codec: integerBetween(1, 100), default: '5' },
  WHATSAPP_RETRY_BASE_SECONDS: { codec: integerBetween(1, 24 * 3600), default: '30' },
  WHATSAPP_ORDER_WAIT_SECONDS: { codec: integerBetween(0, 3600), default: '120' },
  WHATSAPP_MERGE_SECONDS: { codec: integerBetween(0, 600), default: '30' },
  WHATSAPP_PAUSE_SECONDS: { codec: integerBetween(0, 60), default: '0' },
  CONNECTOR_TIMEOUT_MS: { codec: integerBetween(100, 120_000), default: '30000' },
  CONNECTOR_MAX_RESPONSE_BYTES: { codec: integerBetween(1024, 64 * 1024 * 1024), default: String(1024 * 1024) },
  CONNECTOR_MANAGER_TOKEN: { codec: fromString('ConnectorManagerToken', '16 to 512 printable characters without spaces', (raw) => (/^[\x21-\x7e]{16,512}$/.test(raw) ? raw : undefined)), default: undefined },
  CONNECTOR_MANAGER_URL: { codec: urlWithScheme('http', 'https'), default: undefined },
  CONNECTOR_MANAGER_PORT: { codec: integerBetween(0, 65535), default: '8090' },
  CONNECTOR_MANAGER_MAX_ATTEMPTS: { codec: integerBetween(1, 10), default: '3' },
  CONNECTOR_MANAGER_RETRY_BASE_MS: { codec: integerBetween(1, 60_000), default: '200' },
  ORCHESTRATION_MAX_PAYLOAD_BYTES: { codec: integerBetween(1024, 16 * 1024 * 1024), default: String(64 * 1024) },
  ORCHESTRATION_MAX_DEPTH: { codec: integerBetween(0, 100), default: '8' },
  ORCHESTRATION_SEQUENCE_GAP_WAIT_MS: { codec: integerBetween(0, 24 * 3600 * 1000), default: '60000' },
  ORCHESTRATION_REPLAY_MAX_PER_REQUEST: { codec: integerBetween(1, 1000), default: '100' },
  ORCHESTRATION_EMITS_PER_MINUTE: { codec: integerBetween(1, 100_000_000), default: '60000' },
  ORCHESTRATION_PAYLOAD_RETENTION_DAYS: { codec: integerBetween(0, MAX_PAYLOAD_RETENTION_DAYS), default: '30' },
  ORCHESTRATION_MAX_ATTEMPTS: { codec: integerBetween(1, 100), default: '5' },
  ORCHESTRATION_RETRY_BASE_MS: { codec: integerBetween(1, 3600 * 1000), default: '1000' },
  ORCHESTRATION_RETRY_MAX_MS: { codec: integerBetween(1, 24 * 3600 * 1000), default: '300000' },
  ORCHESTRATION_DISPATCH_CONCURRENCY: { codec: integerBetween(1, 1024), default: '64' },
  ORCHESTRATION_TENANT_CONCURRENCY: { codec: integerBetween(1, 1024), default: '32' },
  ORCHESTRATION_RESUME_AFTER_MS: { codec: integerBetween(0, 24 * 3600 * 1000), default: '60000' },
  ORCHESTRATION_METRICS_EVENT_NAMES: { codec: integerBetween(0, 10_000), default: '200' },
  ORCHESTRATION_SCHEDULE_TICK_MS: { codec: integerBetween(100, 60_000), default: '5000' },
  ORCHESTRATION_SCHEDULE_CATCH_UP_SECONDS: { codec: integerBetween(0, 7 * 24 * 3600), default: '3600' },
} as const;

type Variables = typeof variables;

/** Every variable the platform reads, with its default when it has one (README.md's configuration table is checked against it). */
export function configurationVariables(): Array<{ name: string; default: string | undefined }> {
  return Object.entries(variables).map(([name, variable]) => ({ name, default: (variable as { default?: string }).default }));
}
type Decoded<K extends keyof Variables> = t.TypeOf<Variables[K]['codec']>;

export interface Config {
  port: number;
  host: string;
  dataDir: string;
  sqliteSynchronous: 'full' | 'normal' | 'off';
  /** `background`: the WAL is checkpointed by a worker thread (infrastructure/sqlite/checkpointer.ts); `inline`: by SQLite at the end of a commit. */
  sqliteCheckpoint: 'background' | 'inline';
  /** `worker`: the embedded store's projection file (the audit log, the orchestration events) is built on a thread of its own (infrastructure/sqlite/projection-thread.ts); `main`: on the serving thread. */
  projectionThread: 'worker' | 'main';
  eventStoreUrl: string | null;
  mongoDbUrl: string | null;
  logLevel: Decoded<'LOG_LEVEL'>;
  nodeEnv: Decoded<'NODE_ENV'>;
  metricsAuthToken: string | null;
  metricsPublic: boolean;
  bodyLimitBytes: number;
  /**
   * How many reverse proxies in front of the platform append to X-Forwarded-For: the client's
   * address is the entry the outermost of them added. 0: the connection's own address.
   */
  trustProxyHops: number;
  /** How much of the client's address every event's metadata records (the audit log shows it): whole, its network, or nothing. */
  eventClientIp: Decoded<'EVENT_CLIENT_IP'>;
  readYourWritesTimeoutMs: number;
  readyMaxProjectionLag: number;
  shutdownTimeoutMs: number;
  /** How long an idle kept-alive connection stays open; behind a load balancer, longer than its idle timeout. */
  httpKeepAliveTimeoutMs: number;
  sagaMaxAttempts: number;
  /** Events each saga handles at once per process; one stream's events stay in order. */
  sagaConcurrency: number;
  tokenTtlSeconds: number;
  otpTtlSeconds: number;
  /** How long a super admin's impersonation token lasts: 60 s to one hour. */
  impersonationTtlSeconds: number;
  /** How long a sign-up may take before the registration saga finishes or releases it. */
  registrationTimeoutSeconds: number;
  tokenSecretKey: string | null;
  /** Public halves of earlier token keys (PASERK k4.public): audit checkpoints they signed still verify. */
  tokenPreviousPublicKeys: string[];
  dataEncryptionKey: string | null;
  scryptLogN: number;
  enableGraphqlPlayground: boolean;
  /** Whether GraphQL answers introspection; unset, on except in production. */
  graphqlIntrospection: boolean;
  graphqlMaxDepth: number;
  graphqlMaxFields: number;
  graphqlMaxCost: number;
  rateLimitWindowSeconds: number;
  rateLimitPerIp: number;
  rateLimitPerEmail: number;
  superAdminEmail: string | null;
  superAdminPassword: string | null;
  smtpUrl: string | null;
  smtpFrom: string;
  /** Days a subscription whose period ended unpaid keeps its plan (past_due) before it ends. */
  billingGraceDays: number;
  /** The page payers return to after a checkout; null: the platform's base URL. */
  billingReturnUrl: string | null;
  readCacheTtlMs: number;
  leaseTtlMs: number;
  /** Null: `hostname:pid:random`, chosen when the platform is created. */
  leaseHolderId: string | null;
  auditCheckpointEntries: number;
  auditCheckpointIntervalSeconds: number;
  accessDenialsPerMinute: number;
  idempotencyKeyTtlSeconds: number;
  /** The platform's public base URL (no trailing slash); null: the base of the request that opened a checkout. */
  publicUrl: string | null;
  /** Signs the sandbox provider's webhooks; null: derived from the data key. */
  billingSandboxWebhookSecret: string | null;
  /** Both set: payments go through Stripe; both null: through the embedded sandbox. */
  stripeSecretKey: string | null;
  stripeWebhookSecret: string | null;
  /** Set: chunks and questions get vectors from this OpenAI-compatible endpoint (hybrid retrieval); null: BM25 alone. */
  embeddingsBaseUrl: string | null;
  /** Null: no Authorization header (a local server). */
  embeddingsApiKey: string | null;
  embeddingsModel: string;
  /** Texts per embeddings request. */
  embeddingsBatchSize: number;
  /** Both set: the assistant answers through this OpenAI-compatible server and model; both null: the embedded extractive engine. */
  llmBaseUrl: string | null;
  llmModel: string | null;
  /** Null for a model server that needs no key. */
  llmApiKey: string | null;
  /** The longest wait for the model's answer to start, and then between two of its chunks. */
  llmTimeoutMs: number;
  /** How often a streaming chat sends its keep-alive comment. */
  chatHeartbeatMs: number;
  /** /ws/chat (adapters/ws): heartbeat, the resume deadline, per-visitor limits, backpressure. */
  widgetSocket: {
    heartbeatMs: number;
    resumeTimeoutMs: number;
    maxConnectionsPerVisitor: number;
    messagesPerMinute: number;
    highWaterBytes: number;
    slowClientMs: number;
  };
  /** Every outbound request (handoff webhook, CRM, integrations, connectors) may be plain http (OUTBOUND_ALLOW_INSECURE; development only). */
  outboundAllowInsecure: boolean;
  /** Every outbound request may go to private, loopback, link-local or metadata addresses (OUTBOUND_ALLOW_PRIVATE_NETWORKS; development, tests). */
  outboundAllowPrivateNetworks: boolean;
  /** Attempts to post a handoff before it is given up. */
  handoffMaxAttempts: number;
  /** How long one handoff POST may take. */
  handoffTimeoutMs: number;
  /** The wait after the first failed attempt; it doubles after each next one, up to an hour. */
  handoffRetryBaseSeconds: number;
  /** Sending leads to the tenant's CRM (application/lead/lead-crm-delivery.ts). */
  crmDelivery: CrmDeliveryConfig;
  /** Leads one widget visitor, and one client address, may leave an hour (429 past either). */
  widgetLeads: { perVisitorPerHour: number; perIpPerHour: number };
  /** Speech to text and text to speech; `baseUrl` null: the platform has none (503 `configuration_error`). */
  speech: SpeechConfig;
  /** How long one call of a business tool's API (or its OAuth2 token endpoint) may take. */
  toolTimeoutMs: number;
  /** The largest answer of a business tool's API; a longer one fails the call (`response_too_large`). */
  toolMaxResponseBytes: number;
  /** How long the previous signing secret of an SDK connection still signs after a rotation that names no grace (0: not at all). */
  sdkSecretGraceSeconds: number;
  /** How long the authentication context a connector returned is sent back on the conversation's later calls (CONNECTOR_AUTHENTICATION_TTL_SECONDS). */
  connectorAuthenticationTtlSeconds: number;
  /** Largest document a tenant may upload or add as text (413 `document_too_large` above). */
  documentMaxBytes: number;
  /** Where documents' text is read: `threads` worker threads at once, each document within the limits; 0 threads: on the serving thread. */
  extraction: { threads: number; timeoutMs: number; maxHeapMb: number };
  /** The largest OpenAPI document an import reads, fetched or uploaded. */
  openapiMaxBytes: number;
  /** How long fetching an OpenAPI document by URL may take. */
  openapiFetchTimeoutMs: number;
  /** How long reading (parsing, validating, dereferencing) one OpenAPI document may take, in its worker thread. */
  openapiReadTimeoutMs: number;
  /** Set: documents' original bytes live in this S3-compatible bucket; null: under DATA_DIR/blobs. */
  s3: S3Config | null;
  /** The WhatsApp channel (docs/whatsapp.md). */
  whatsapp: WhatsAppConfig;
  /** How the platform calls connector servers (adapters/connector-client). */
  connectors: ConnectorCallConfig;
  /** The connector-manager: mounted under /connector-manager when its token is set; where calls go when its URL is set. */
  connectorManager: ConnectorManagerSettings;
  /** The bounds of orchestration events (docs/orchestration-events.md). */
  orchestration: OrchestrationConfig;
  /** How the dispatcher runs flows and retries them (application/orchestration/dispatcher.ts). */
  orchestrationDispatch: OrchestrationDispatchConfig;
}

export interface CrmDeliveryConfig {
  /** Attempts before a lead's delivery is given up (CRM_DELIVERY_MAX_ATTEMPTS). */
  maxAttempts: number;
  /** How long one call of the CRM may take (CRM_DELIVERY_TIMEOUT_MS). */
  timeoutMs: number;
  /** The wait after the first failed attempt; it doubles after each next one, up to an hour (CRM_DELIVERY_RETRY_BASE_SECONDS). */
  retryBaseSeconds: number;
}

export interface SpeechConfig {
  /** SPEECH_BASE_URL: an OpenAI-compatible audio server (`https://api.openai.com/v1`); null: no speech. */
  baseUrl: string | null;
  /** SPEECH_API_KEY; null for a server that needs none. */
  apiKey: string | null;
  sttModel: string;
  ttsModel: string;
  /** The voice when a request names none. */
  ttsVoice: string;
  timeoutMs: number;
  /** The largest audio accepted for transcription (413 above). */
  maxAudioBytes: number;
  /** Speech requests per caller (a member, a widget visitor) and minute (429 above). */
  requestsPerMinute: number;
}

export interface WhatsAppConfig {
  /** Where the Cloud API is (WHATSAPP_GRAPH_BASE_URL, no trailing slash): Meta's, or a local server speaking its format. */
  graphBaseUrl: string;
  /** Every reply stays in the embedded outbox, whatever the tenant's access token (WHATSAPP_OUTBOX). */
  outboxOnly: boolean;
  /** How long one Cloud API call may take (WHATSAPP_TIMEOUT_MS). */
  timeoutMs: number;
  /** Attempts to send a reply before it is given up (WHATSAPP_MAX_ATTEMPTS). */
  maxAttempts: number;
  /** The wait after the first failed attempt; it doubles after each next one, up to an hour (WHATSAPP_RETRY_BASE_SECONDS). */
  retryBaseSeconds: number;
  /** How long a message waits for the same sender's earlier ones to be handled, so they are answered in order (WHATSAPP_ORDER_WAIT_SECONDS; 0: not at all). */
  orderWaitSeconds: number;
  /** A text's turn also asks the same sender's texts received up to this long after it, still waiting for their turn (WHATSAPP_MERGE_SECONDS; 0: never). */
  mergeSeconds: number;
  /** A text is answered once its sender has written nothing for this long, at most WHATSAPP_MERGE_SECONDS after it (WHATSAPP_PAUSE_SECONDS; 0: at once). */
  pauseSeconds: number;
}

export interface OrchestrationDispatchConfig {
  /** Attempts before an event is dead-lettered, counted since a person last re-queued it (ORCHESTRATION_MAX_ATTEMPTS). */
  maxAttempts: number;
  /** The first back-off, doubled per attempt, jittered to half..all of it (ORCHESTRATION_RETRY_BASE_MS). */
  retryBaseMs: number;
  /** The longest back-off (ORCHESTRATION_RETRY_MAX_MS). */
  retryMaxMs: number;
  /** Events dispatched at once (ORCHESTRATION_DISPATCH_CONCURRENCY). */
  concurrency: number;
  /** Events of one tenant dispatched at once (ORCHESTRATION_TENANT_CONCURRENCY). */
  tenantConcurrency: number;
  /** An attempt running longer is taken for one whose process died, and resumed (ORCHESTRATION_RESUME_AFTER_MS). */
  resumeAfterMs: number;
  /** Event names a process gives metrics series of their own; later ones are counted as `_other` (ORCHESTRATION_METRICS_EVENT_NAMES). */
  metricsEventNames: number;
  /** How often the scheduler looks for schedules' occurrences due (ORCHESTRATION_SCHEDULE_TICK_MS). */
  scheduleTickMs: number;
  /** How far back the scheduler looks when a process starts: an occurrence missed in that time is emitted late, once (ORCHESTRATION_SCHEDULE_CATCH_UP_SECONDS). */
  scheduleCatchUpSeconds: number;
}

export interface OrchestrationConfig {
  /** The largest payload an envelope may carry, as JSON (ORCHESTRATION_MAX_PAYLOAD_BYTES); larger is 400 `payload_too_large`. */
  maxPayloadBytes: number;
  /** The deepest chain of events causing events (ORCHESTRATION_MAX_DEPTH); deeper is 400 `depth_exceeded`. */
  maxDepth: number;
  /** How long a sequenced event waits for a missing predecessor before it goes on, the gap recorded (ORCHESTRATION_SEQUENCE_GAP_WAIT_MS). */
  sequenceGapWaitMs: number;
  /** Root events one range-replay request replays at most (ORCHESTRATION_REPLAY_MAX_PER_REQUEST). */
  replayMaxPerRequest: number;
  /** Events one organization may emit and ingest a minute, bursts up to as many (ORCHESTRATION_EMITS_PER_MINUTE); past it 429 `rate_limited`. */
  emitsPerMinute: number;
  /**
   * Whole days the payloads, step outputs and error messages of the events received on a day are kept after it
   * (ORCHESTRATION_PAYLOAD_RETENTION_DAYS), then erased; a longer `delay_seconds` is 400
   * `delay_past_retention`. 0: kept until erased otherwise.
   */
  payloadRetentionDays: number;
}

export interface ConnectorCallConfig {
  /** The longest wait for a connector's whole answer (CONNECTOR_TIMEOUT_MS, spec 8: about 30 s). */
  timeoutMs: number;
  /** A larger answer is refused as `bad_response`. */
  maxResponseBytes: number;
}

export interface ConnectorManagerSettings {
  /** The bearer callers of the connector-manager present; null: the main server does not serve it. */
  token: string | null;
  /** Set: the platform sends its connector calls through the connector-manager there (with `token`). */
  url: string | null;
  /** Where `npm run connector-manager` listens. */
  port: number;
  /** Attempts of one retryable call, the first included. */
  maxAttempts: number;
  /** The wait before the second attempt; it doubles before each next one. */
  retryBaseMs: number;
}

/** What `npm run connector-manager` reads: the connector-manager's own variables and the outbound policy. */
export interface ConnectorManagerConfig {
  host: string;
  logLevel: Decoded<'LOG_LEVEL'>;
  bodyLimitBytes: number;
  outboundAllowInsecure: boolean;
  outboundAllowPrivateNetworks: boolean;
  connectors: ConnectorCallConfig;
  connectorManager: ConnectorManagerSettings & { token: string };
}

export interface S3Config {
  bucket: string;
  /** Null: AWS S3 of the region. */
  endpoint: string | null;
  region: string;
  /** Null: the client's default credential chain. */
  credentials: { accessKeyId: string; secretAccessKey: string } | null;
  forcePathStyle: boolean;
}

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`invalid configuration:\n${problems.map((problem) => `  - ${problem}`).join('\n')}`);
    this.name = 'ConfigError';
  }
}

/** Decodes the named variables (null when unset), collecting a problem for each bad one. */
function decodeVariables(env: NodeJS.ProcessEnv, names: ReadonlyArray<keyof Variables>): { values: Record<string, unknown>; problems: string[] } {
  const problems: string[] = [];
  const values: Record<string, unknown> = {};
  for (const name of names) {
    const variable = variables[name];
    const raw = env[name] === undefined || env[name] === '' ? variable.default : env[name];
    if (raw === undefined) {
      values[name] = null;
      continue;
    }
    const decoded = (variable.codec as t.Type<unknown, string, unknown>).decode(raw);
    if (isLeft(decoded)) {
      const expected = decoded.left[0]?.message ?? decoded.left[0]?.context[0]?.type.name ?? 'a valid value';
      const shown = /TOKEN|SECRET|PASSWORD|KEY/.test(name) ? '(hidden)' : JSON.stringify(raw);
      problems.push(`${name}: expected ${expected}, got ${shown}`);
    } else {
      values[name] = decoded.right;
    }
  }
  return { values, problems };
}

function connectorSettings(values: Record<string, unknown>): { connectors: ConnectorCallConfig; connectorManager: ConnectorManagerSettings } {
  return {
    connectors: { timeoutMs: values.CONNECTOR_TIMEOUT_MS as number, maxResponseBytes: values.CONNECTOR_MAX_RESPONSE_BYTES as number },
    connectorManager: {
      token: values.CONNECTOR_MANAGER_TOKEN as string | null,
      url: values.CONNECTOR_MANAGER_URL as string | null,
      port: values.CONNECTOR_MANAGER_PORT as number,
      maxAttempts: values.CONNECTOR_MANAGER_MAX_ATTEMPTS as number,
      retryBaseMs: values.CONNECTOR_MANAGER_RETRY_BASE_MS as number,
    },
  };
}

const CONNECTOR_MANAGER_VARIABLES = [
  'HOST',
  'LOG_LEVEL',
  'BODY_LIMIT_BYTES',
  'OUTBOUND_ALLOW_INSECURE',
  'OUTBOUND_ALLOW_PRIVATE_NETWORKS',
  'CONNECTOR_TIMEOUT_MS',
  'CONNECTOR_MAX_RESPONSE_BYTES',
  'CONNECTOR_MANAGER_TOKEN',
  'CONNECTOR_MANAGER_URL',
  'CONNECTOR_MANAGER_PORT',
  'CONNECTOR_MANAGER_MAX_ATTEMPTS',
  'CONNECTOR_MANAGER_RETRY_BASE_MS',
] as const satisfies ReadonlyArray<keyof Variables>;

/**
 * Decodes what the connector-manager process reads, and only that: the platform's other
 * requirements (a mailer in production, ...) are not the connector-manager's. Throws
 * ConfigError naming every bad variable, and CONNECTOR_MANAGER_TOKEN when it is missing.
 */
export function loadConnectorManagerConfig(env: NodeJS.ProcessEnv = process.env): ConnectorManagerConfig {
  const { values, problems } = decodeVariables(env, CONNECTOR_MANAGER_VARIABLES);
  if (problems.length === 0 && values.CONNECTOR_MANAGER_TOKEN === null) {
    problems.push('CONNECTOR_MANAGER_TOKEN: expected the bearer token callers present (16 to 512 printable characters); the connector-manager answers no one without it');
  }
  if (problems.length > 0) throw new ConfigError(problems);
  const { connectors, connectorManager } = connectorSettings(values);
  return {
    host: values.HOST as string,
    logLevel: values.LOG_LEVEL as ConnectorManagerConfig['logLevel'],
    bodyLimitBytes: values.BODY_LIMIT_BYTES as number,
    outboundAllowInsecure: (values.OUTBOUND_ALLOW_INSECURE as boolean | null) ?? false,
    outboundAllowPrivateNetworks: (values.OUTBOUND_ALLOW_PRIVATE_NETWORKS as boolean | null) ?? false,
    connectors,
    connectorManager: { ...connectorManager, token: connectorManager.token as string },
  };
}

/** Decodes the environment; throws ConfigError naming every bad variable. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const { values, problems } = decodeVariables(env, Object.keys(variables) as Array<keyof Variables>);
  const metricsPublic = values.METRICS_PUBLIC as boolean | undefined;
  if (problems.length === 0 && metricsPublic === false && values.METRICS_AUTH_TOKEN === null && env.NODE_ENV === 'production') {
    problems.push('METRICS_AUTH_TOKEN: expected a token in production unless METRICS_PUBLIC=true (GET /metrics would refuse every scrape)');
  }
  // Production that cannot send mail must say so on purpose: otherwise every code and
  // invitation would silently stay in the outbox.
  if (env.NODE_ENV === 'production' && values.SMTP_URL === null && values.MAIL_OUTBOX_ONLY === false) {
    problems.push('SMTP_URL: expected an smtp:// or smtps:// URL in production unless MAIL_OUTBOX_ONLY=true (no email could be sent; they would only be kept in the outbox)');
  }
  if (problems.length === 0 && (values.SUPER_ADMIN_EMAIL === null) !== (values.SUPER_ADMIN_PASSWORD === null)) {
    problems.push('SUPER_ADMIN_PASSWORD: SUPER_ADMIN_EMAIL and SUPER_ADMIN_PASSWORD go together: set both or neither');
  }
  if (problems.length === 0 && (values.STRIPE_SECRET_KEY === null) !== (values.STRIPE_WEBHOOK_SECRET === null)) {
    problems.push('STRIPE_WEBHOOK_SECRET: STRIPE_SECRET_KEY and STRIPE_WEBHOOK_SECRET go together: set both (payments through Stripe) or neither (the embedded sandbox)');
  }
  if (problems.length === 0 && values.EMBEDDINGS_API_KEY !== null && values.EMBEDDINGS_BASE_URL === null) {
    problems.push('EMBEDDINGS_BASE_URL: expected the endpoint EMBEDDINGS_API_KEY is for (e.g. https://api.openai.com/v1); without it no embeddings are used');
  }
  if (problems.length === 0 && (values.S3_ACCESS_KEY_ID === null) !== (values.S3_SECRET_ACCESS_KEY === null)) {
    problems.push('S3_SECRET_ACCESS_KEY: S3_ACCESS_KEY_ID and S3_SECRET_ACCESS_KEY go together: set both, or neither (the default credential chain)');
  }
  if (problems.length === 0 && (values.LLM_BASE_URL === null) !== (values.LLM_MODEL === null)) {
    problems.push('LLM_MODEL: LLM_BASE_URL and LLM_MODEL go together: set both (the assistant answers through that model server) or neither (the embedded extractive engine)');
  }
  if (problems.length === 0 && values.SPEECH_API_KEY !== null && values.SPEECH_BASE_URL === null) {
    problems.push('SPEECH_BASE_URL: expected the speech server SPEECH_API_KEY is for (e.g. https://api.openai.com/v1); without it the platform has no speech');
  }
  if (problems.length === 0 && values.CONNECTOR_MANAGER_URL !== null && values.CONNECTOR_MANAGER_TOKEN === null) {
    problems.push('CONNECTOR_MANAGER_TOKEN: expected the connector-manager\'s token: CONNECTOR_MANAGER_URL sends every connector call there, and it answers no one without it');
  }
  if (problems.length > 0) throw new ConfigError(problems);
  const s3: S3Config | null =
    values.S3_BUCKET === null
      ? null
      : {
          bucket: values.S3_BUCKET as string,
          endpoint: values.S3_ENDPOINT as string | null,
          region: values.S3_REGION as string,
          credentials:
            values.S3_ACCESS_KEY_ID === null ? null : { accessKeyId: values.S3_ACCESS_KEY_ID as string, secretAccessKey: values.S3_SECRET_ACCESS_KEY as string },
          forcePathStyle: values.S3_FORCE_PATH_STYLE as boolean,
        };
  return {
    port: values.PORT as number,
    host: values.HOST as string,
    dataDir: path.resolve(values.DATA_DIR as string),
    sqliteSynchronous: values.SQLITE_SYNCHRONOUS as Config['sqliteSynchronous'],
    sqliteCheckpoint: values.SQLITE_CHECKPOINT as Config['sqliteCheckpoint'],
    projectionThread: values.PROJECTION_THREAD as Config['projectionThread'],
    eventStoreUrl: values.EVENTSTORE_URL as string | null,
    mongoDbUrl: values.MONGODB_URL as string | null,
    logLevel: values.LOG_LEVEL as Config['logLevel'],
    nodeEnv: values.NODE_ENV as Config['nodeEnv'],
    metricsAuthToken: values.METRICS_AUTH_TOKEN as string | null,
    metricsPublic: values.METRICS_PUBLIC as boolean,
    bodyLimitBytes: values.BODY_LIMIT_BYTES as number,
    trustProxyHops: values.TRUST_PROXY_HOPS as number,
    eventClientIp: values.EVENT_CLIENT_IP as Config['eventClientIp'],
    readYourWritesTimeoutMs: values.READ_YOUR_WRITES_TIMEOUT_MS as number,
    readyMaxProjectionLag: values.READY_MAX_PROJECTION_LAG as number,
    shutdownTimeoutMs: values.SHUTDOWN_TIMEOUT_MS as number,
    httpKeepAliveTimeoutMs: values.HTTP_KEEP_ALIVE_TIMEOUT_MS as number,
    sagaMaxAttempts: values.SAGA_MAX_ATTEMPTS as number,
    sagaConcurrency: values.SAGA_CONCURRENCY as number,
    tokenTtlSeconds: values.TOKEN_TTL_SECONDS as number,
    otpTtlSeconds: values.OTP_TTL_SECONDS as number,
    impersonationTtlSeconds: values.IMPERSONATION_TTL_SECONDS as number,
    registrationTimeoutSeconds: values.REGISTRATION_TIMEOUT_SECONDS as number,
    tokenSecretKey: values.TOKEN_SECRET_KEY as string | null,
    tokenPreviousPublicKeys: (values.TOKEN_PREVIOUS_PUBLIC_KEYS as string[] | null) ?? [],
    dataEncryptionKey: values.DATA_ENCRYPTION_KEY as string | null,
    scryptLogN: values.SCRYPT_LOG_N as number,
    enableGraphqlPlayground: values.ENABLE_GRAPHQL_PLAYGROUND as boolean,
    graphqlIntrospection: (values.GRAPHQL_INTROSPECTION as boolean | null) ?? values.NODE_ENV !== 'production',
    graphqlMaxDepth: values.GRAPHQL_MAX_DEPTH as number,
    graphqlMaxFields: values.GRAPHQL_MAX_FIELDS as number,
    graphqlMaxCost: values.GRAPHQL_MAX_COST as number,
    rateLimitWindowSeconds: values.RATE_LIMIT_WINDOW_SECONDS as number,
    rateLimitPerIp: values.RATE_LIMIT_PER_IP as number,
    rateLimitPerEmail: values.RATE_LIMIT_PER_EMAIL as number,
    superAdminEmail: values.SUPER_ADMIN_EMAIL as string | null,
    superAdminPassword: values.SUPER_ADMIN_PASSWORD as string | null,
    smtpUrl: values.SMTP_URL as string | null,
    smtpFrom: values.SMTP_FROM as string,
    billingGraceDays: values.BILLING_GRACE_DAYS as number,
    billingReturnUrl: values.BILLING_RETURN_URL as string | null,
    readCacheTtlMs: values.READ_CACHE_TTL_MS as number,
    leaseTtlMs: values.LEASE_TTL_MS as number,
    leaseHolderId: values.LEASE_HOLDER_ID as string | null,
    auditCheckpointEntries: values.AUDIT_CHECKPOINT_ENTRIES as number,
    auditCheckpointIntervalSeconds: values.AUDIT_CHECKPOINT_INTERVAL_SECONDS as number,
    accessDenialsPerMinute: values.ACCESS_DENIALS_PER_MINUTE as number,
    idempotencyKeyTtlSeconds: values.IDEMPOTENCY_KEY_TTL_SECONDS as number,
    publicUrl: values.PUBLIC_URL as string | null,
    billingSandboxWebhookSecret: values.BILLING_SANDBOX_WEBHOOK_SECRET as string | null,
    stripeSecretKey: values.STRIPE_SECRET_KEY as string | null,
    stripeWebhookSecret: values.STRIPE_WEBHOOK_SECRET as string | null,
    embeddingsBaseUrl: values.EMBEDDINGS_BASE_URL as string | null,
    embeddingsApiKey: values.EMBEDDINGS_API_KEY as string | null,
    embeddingsModel: values.EMBEDDINGS_MODEL as string,
    embeddingsBatchSize: values.EMBEDDINGS_BATCH_SIZE as number,
    llmBaseUrl: values.LLM_BASE_URL as string | null,
    llmModel: values.LLM_MODEL as string | null,
    llmApiKey: values.LLM_API_KEY as string | null,
    llmTimeoutMs: values.LLM_TIMEOUT_MS as number,
    chatHeartbeatMs: values.CHAT_HEARTBEAT_MS as number,
    widgetSocket: {
      heartbeatMs: values.WIDGET_WS_HEARTBEAT_MS as number,
      resumeTimeoutMs: values.WIDGET_WS_RESUME_TIMEOUT_MS as number,
      maxConnectionsPerVisitor: values.WIDGET_WS_MAX_CONNECTIONS_PER_VISITOR as number,
      messagesPerMinute: values.WIDGET_WS_MESSAGES_PER_MINUTE as number,
      highWaterBytes: values.WIDGET_WS_HIGH_WATER_BYTES as number,
      slowClientMs: values.WIDGET_WS_SLOW_CLIENT_MS as number,
    },
    // Relaxed only when the operator says so, whatever NODE_ENV: a development default would
    // follow a misconfigured production deployment into its own network.
    outboundAllowInsecure: (values.OUTBOUND_ALLOW_INSECURE as boolean | null) ?? (values.HANDOFF_ALLOW_INSECURE_URLS as boolean | null) ?? false,
    outboundAllowPrivateNetworks: (values.OUTBOUND_ALLOW_PRIVATE_NETWORKS as boolean | null) ?? (values.HANDOFF_ALLOW_PRIVATE_NETWORKS as boolean | null) ?? false,
    handoffMaxAttempts: values.HANDOFF_MAX_ATTEMPTS as number,
    handoffTimeoutMs: values.HANDOFF_TIMEOUT_MS as number,
    handoffRetryBaseSeconds: values.HANDOFF_RETRY_BASE_SECONDS as number,
    crmDelivery: {
      maxAttempts: values.CRM_DELIVERY_MAX_ATTEMPTS as number,
      timeoutMs: values.CRM_DELIVERY_TIMEOUT_MS as number,
      retryBaseSeconds: values.CRM_DELIVERY_RETRY_BASE_SECONDS as number,
    },
    widgetLeads: { perVisitorPerHour: values.WIDGET_LEADS_PER_HOUR as number, perIpPerHour: values.WIDGET_LEADS_PER_IP_PER_HOUR as number },
    speech: {
      baseUrl: values.SPEECH_BASE_URL as string | null,
      apiKey: values.SPEECH_API_KEY as string | null,
      sttModel: values.SPEECH_STT_MODEL as string,
      ttsModel: values.SPEECH_TTS_MODEL as string,
      ttsVoice: values.SPEECH_TTS_VOICE as string,
      timeoutMs: values.SPEECH_TIMEOUT_MS as number,
      maxAudioBytes: values.SPEECH_MAX_AUDIO_BYTES as number,
      requestsPerMinute: values.SPEECH_REQUESTS_PER_MINUTE as number,
    },
    toolTimeoutMs: values.TOOL_TIMEOUT_MS as number,
    toolMaxResponseBytes: values.TOOL_MAX_RESPONSE_BYTES as number,
    sdkSecretGraceSeconds: values.SDK_SECRET_GRACE_SECONDS as number,
    connectorAuthenticationTtlSeconds: values.CONNECTOR_AUTHENTICATION_TTL_SECONDS as number,
    documentMaxBytes: values.DOCUMENT_MAX_BYTES as number,
    extraction: { threads: values.EXTRACTION_THREADS as number, timeoutMs: values.EXTRACTION_TIMEOUT_MS as number, maxHeapMb: values.EXTRACTION_MAX_HEAP_MB as number },
    openapiMaxBytes: values.OPENAPI_MAX_BYTES as number,
    openapiFetchTimeoutMs: values.OPENAPI_FETCH_TIMEOUT_MS as number,
    openapiReadTimeoutMs: values.OPENAPI_READ_TIMEOUT_MS as number,
    s3,
    whatsapp: {
      graphBaseUrl: (values.WHATSAPP_GRAPH_BASE_URL as string).replace(/\/+$/, ''),
      outboxOnly: values.WHATSAPP_OUTBOX as boolean,
      timeoutMs: values.WHATSAPP_TIMEOUT_MS as number,
      maxAttempts: values.WHATSAPP_MAX_ATTEMPTS as number,
      retryBaseSeconds: values.WHATSAPP_RETRY_BASE_SECONDS as number,
      orderWaitSeconds: values.WHATSAPP_ORDER_WAIT_SECONDS as number,
      mergeSeconds: values.WHATSAPP_MERGE_SECONDS as number,
      pauseSeconds: values.WHATSAPP_PAUSE_SECONDS as number,
    },
    ...connectorSettings(values),
    orchestration: {
      maxPayloadBytes: values.ORCHESTRATION_MAX_PAYLOAD_BYTES as number,
      maxDepth: values.ORCHESTRATION_MAX_DEPTH as number,
      sequenceGapWaitMs: values.ORCHESTRATION_SEQUENCE_GAP_WAIT_MS as number,
      replayMaxPerRequest: values.ORCHESTRATION_REPLAY_MAX_PER_REQUEST as number,
      emitsPerMinute: values.ORCHESTRATION_EMITS_PER_MINUTE as number,
      payloadRetentionDays: values.ORCHESTRATION_PAYLOAD_RETENTION_DAYS as number,
    },
    orchestrationDispatch: {
      maxAttempts: values.ORCHESTRATION_MAX_ATTEMPTS as number,
      retryBaseMs: values.ORCHESTRATION_RETRY_BASE_MS as number,
      retryMaxMs: values.ORCHESTRATION_RETRY_MAX_MS as number,
      concurrency: values.ORCHESTRATION_DISPATCH_CONCURRENCY as number,
      tenantConcurrency: values.ORCHESTRATION_TENANT_CONCURRENCY as number,
      resumeAfterMs: values.ORCHESTRATION_RESUME_AFTER_MS as number,
      metricsEventNames: values.ORCHESTRATION_METRICS_EVENT_NAMES as number,
      scheduleTickMs: values.ORCHESTRATION_SCHEDULE_TICK_MS as number,
      scheduleCatchUpSeconds: values.ORCHESTRATION_SCHEDULE_CATCH_UP_SECONDS as number,
    },
  };
}
