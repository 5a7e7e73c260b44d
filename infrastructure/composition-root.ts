import type http from 'node:http';
// The composition root: wires one process from the config. With no EVENTSTORE_URL /
// MONGODB_URL everything is embedded in one SQLite file under DATA_DIR; each URL swaps in
// the real engine and nothing else changes.

import path from 'node:path';
import type Router from '@koa/router';
import type Koa from 'koa';
import { DecodingEventStore } from '../application/events/decoding-event-store';
import { checkReadiness } from '../application/operations/readiness';
import type { DomainEventStore } from '../application/ports/domain-event-store';
import { AccessDenialRecorder } from '../application/access-denial/access-denials';
import { AUDIT_ANCHORING, AuditAnchoring, type AuditAnchoringJob, recordAuditCheckpoint } from '../application/audit-log/audit-anchoring';
import type { AuditSigner } from '../application/ports/audit-signer';
import type { BlobStore } from '../application/ports/blob-store';
import type { Embeddings } from '../application/ports/embeddings';
import type { TextExtractor } from '../application/ports/text-extractor';
import { documentIndexingSaga } from '../application/knowledge/indexing-saga';
import type { Clock, IdGenerator } from '../application/ports/clock';
import type { EventStore } from '../application/ports/event-store';
import type { Logger } from '../application/ports/logger';
import type { ReadStore } from '../application/ports/read-store';
import type { SagaDelivery } from '../application/ports/saga-delivery';
import { CheckpointedSagaDelivery } from '../application/sagas/checkpointed-delivery';
import { allSagas } from '../application/sagas/index';
import { type AnySaga, exponentialBackoff } from '../application/sagas/saga';
import { SagaRunner } from '../application/sagas/saga-runner';
import type { ChatDependencies } from '../application/chat/chat';
import type { ToolCaller } from '../application/chat/tool-steps';
import { chatToolFollowUpSaga } from '../application/chat/tool-follow-up';
import type { AssistantEngine } from '../application/ports/assistant-engine';
import type { SearchIndex } from '../application/ports/search-index';
import { SignedConnectorClient } from '../adapters/connector-client/connector-client';
import { ConnectorManagerClient } from '../adapters/connector-manager/remote-client';
import type { ConnectorClient } from '../application/ports/connector-client';
import { AccessTokenCache } from '../application/tool-call/access-tokens';
import { approvedToolCallsSaga } from '../application/tool-call/approved-tool-calls';
import { connectorToolCallsSaga, resumeToolCall } from '../application/tool-call/connector-tool-calls';
import { type ToolCallDependencies, callTool } from '../application/tool-call/tool-calls';
import { GuardedConnectorDoctor } from '../adapters/connector-doctor/connector-doctor';
import type { EmitDependencies } from '../application/orchestration/orchestration-events';
import { orchestrationExpirySaga } from '../application/orchestration/expiry-pass';
import { orchestrationPayloadRetentionSaga } from '../application/orchestration/payload-retention';
import { orchestrationDeadLetterNoticesSaga } from '../application/orchestration/dead-letter-notices';
import { handoffFailureEmailsSaga } from '../application/handoff/handoff-failure-emails';
import { orchestrationAlertEmailsSaga } from '../application/orchestration/alert-emails';
import { rangeReplaySaga } from '../application/orchestration/range-replay';
import { ORCHESTRATION_DISPATCHER, OrchestrationDispatcher, orchestrationDispatcherSaga } from '../application/orchestration/dispatcher';
import { ORCHESTRATION_SCHEDULER, OrchestrationScheduler } from '../application/orchestration/schedules';
import { bootstrapSuperAdmin } from '../application/admin/admin-auth';
import { seedPlanCatalogue } from '../application/plan/plans';
import type { UseCaseDependencies } from '../application/shared/dependencies';
import type { ReservationDependencies } from '../application/reservation/reservations';
import { DEFAULT_OUTCOME_TIMEOUT_MS, mailDeliverySaga } from '../application/mail/mail-delivery';
import { teamMembershipCleanupSaga } from '../application/team/team-cleanup-saga';
import { registrationSaga } from '../application/registration/registration-process';
import { checkoutSettlementSaga } from '../application/checkout/checkout-settlement';
import { subscriptionPeriodsSaga } from '../application/subscription/subscription-periods';
import { handoffDeliverySaga } from '../application/handoff/handoff-delivery';
import { knowledgeGapEmailsSaga } from '../application/conversation/knowledge-gap-emails';
import { crmFailureEmailsSaga } from '../application/lead/crm-failure-emails';
import { leadCrmDeliverySaga } from '../application/lead/lead-crm-delivery';
import type { Speech } from '../application/ports/speech';
import { whatsappInboundSaga } from '../application/whatsapp/inbound-messages';
import { whatsappReplyDeliverySaga } from '../application/whatsapp/reply-delivery';
import { whatsappConversationRepliesSaga } from '../application/whatsapp/conversation-replies';
import { WhatsAppCloudApiMessaging } from '../adapters/messaging/whatsapp-cloud-api';
import { OutboxMessaging } from '../adapters/messaging/outbox';
import type { OutboundHttp } from '../application/ports/outbound-http';
import type { Secrets } from '../application/ports/identity';
import type { Mailer } from '../application/ports/mailer';
import type { PaymentProvider } from '../application/ports/payment-provider';
import { createHttpServer } from '../adapters/http/http-server';
import { WidgetChatSockets } from '../adapters/ws/widget-chat-socket';
import { allProjections } from '../projections/index';
import type { Projection } from '../projections/projection';
import { ProjectionRunner } from '../projections/runner';
import type { Config, ConnectorManagerConfig } from './config/config';
import { SqliteEventStore } from './event-store/sqlite';
import { SqliteSearchIndex } from './search-index/sqlite';
import { FileBlobStore } from './blob-store/files';
import { Ed25519AuditSigner } from './crypto/audit-signer';
import { DocumentTextExtractor } from './extraction/document-text-extractor';
import { ThreadedTextExtractor } from './extraction/threaded-text-extractor';
import { KEYS_FILE, loadKeys } from './crypto/keys';
import { ScryptPasswordHasher } from './crypto/passwords';
import { AesGcmSecrets } from './crypto/secrets';
import { MongoSubjectKeyTable } from './personal-data/mongodb';
import { SqliteSubjectKeyTable } from './personal-data/sqlite';
import { KeyedPersonalDataVault } from './personal-data/vault';
import { payloadKeyKeptUntil } from '../domain/orchestration-event/payloads';
import { personalDataErasureSaga } from '../application/personal-data/erasure-saga';
import { conversationErasureSaga } from '../application/conversation/conversation-erasure';
import { leadErasureSaga } from '../application/lead/lead-erasure';
import { accountClosureSaga } from '../application/user/account-closure';
import { PasetoTokenService } from './crypto/tokens';
import { createLogger } from './logging/logger';
import { ExtractiveAssistantEngine } from './assistant/extractive';
import { LogMailer } from './mail/log-mailer';
import { type SandboxDeliveryOptions, SandboxPaymentProvider, deriveSandboxWebhookSecret } from './payments/sandbox';
import { GuardedOutboundHttp } from './outbound/signed-http';
import { WorkerOpenApiReader } from './openapi/worker-reader';
import { TokenBucketRateLimiter } from './rate-limit/token-bucket';
import { InstrumentedEventStore, PlatformMetrics } from './metrics/metrics';
import { PrometheusOrchestrationMetrics, PrometheusScheduleMetrics } from './metrics/orchestration-metrics';
import { PrometheusWidgetSocketMetrics } from './metrics/widget-socket-metrics';
import { PrometheusExtractionMetrics } from './metrics/extraction-metrics';
import { ORCHESTRATION_EVENTS, orchestrationEventsProjection } from '../projections/orchestration-events';
import { SqliteReadStore } from './read-store/sqlite';
import { RoutedReadStore } from './read-store/routed';
import { ProjectionThread } from './sqlite/projection-thread';
import { auditLogProjection } from '../projections/audit-log';
import { checkDataFormat } from './sqlite/data-format';
import { BackgroundCheckpointer } from './sqlite/checkpointer';
import { type SqliteDatabase, derivedDataSynchronous, openSqliteDatabase } from './sqlite/database';
import { systemClock, uuidGenerator } from './system';
import { type BackupCheck, BackupError, type BackupReport, backUpDataFolder, verifyBackup } from './backup/data-folder-backup';
import { localProcesses } from './leases/local-processes';

export interface Platform {
  config: Config;
  logger: Logger;
  clock: Clock;
  ids: IdGenerator;
  /** Every read decoded and upcast to the current event shapes. */
  eventStore: DomainEventStore;
  /** The log as stored, undecoded, for the operator (`events read`, `events tail`). */
  storedEvents: EventStore;
  readStore: ReadStore;
  /** Command handling, with the keyed digest that names reservation streams. */
  commands: ReservationDependencies;
  identity: UseCaseDependencies;
  secrets: Secrets;
  mailer: Mailer;
  /**
   * Where tenants pay: Stripe when STRIPE_SECRET_KEY and STRIPE_WEBHOOK_SECRET are set,
   * otherwise the embedded sandbox, whose hosted checkout page is served under /billing/sandbox/
   * (PlatformOverrides.paymentProvider instead, for tests).
   */
  paymentProvider: PaymentProvider;
  /**
   * The original bytes of documents: an S3-compatible bucket when S3_BUCKET is set, otherwise
   * files under DATA_DIR/blobs (PlatformOverrides.blobStore instead, for tests).
   */
  blobStore: BlobStore;
  /** Sniffs a document's type from its bytes and reads its text (PDF, DOCX, HTML, Markdown, plain text, CSV). */
  textExtractor: TextExtractor;
  /** Vectors from EMBEDDINGS_BASE_URL for hybrid retrieval; null: BM25 alone. */
  embeddings: Embeddings | null;
  projections: ProjectionRunner;
  sagaDelivery: SagaDelivery;
  sagas: SagaRunner;
  /** Signs audit checkpoints with the platform's key. */
  auditSigner: AuditSigner;
  /**
   * Records the signed audit checkpoints (runs in the background once started): the job, or its
   * stand-in when it runs on the projection thread with the audit log (runOnce asks the thread).
   */
  auditAnchoring: AuditAnchoringJob;
  /** Records refused requests, bounded per principal and minute. */
  accessDenials: AccessDenialRecorder;
  metrics: PlatformMetrics;
  /**
   * The tenants' knowledge, searched for the assistant's passages: SQLite FTS5 in the embedded
   * file, MongoDB's text index with MONGODB_URL (PlatformOverrides.searchIndex instead, for tests).
   */
  searchIndex: SearchIndex;
  /**
   * What answers chat turns: the OpenAI-compatible model server when LLM_BASE_URL and
   * LLM_MODEL are set, otherwise the embedded extractive engine (PlatformOverrides.assistant instead).
   */
  assistant: AssistantEngine;
  /** What a chat turn needs (application/chat): the CLI's `chat ask` runs turns with it. */
  chat: ChatDependencies;
  /** What calling a business tool needs (`callTool`, application/tool-call): one OAuth2 token cache per platform. */
  toolCalls: ToolCallDependencies;
  /**
   * Signed protocol requests to connector servers (adapters/connector-client), through the
   * outbound guard; through the connector-manager at CONNECTOR_MANAGER_URL when that is set
   * (PlatformOverrides.connectorClient instead, for tests).
   */
  connectorClient: ConnectorClient;
  /**
   * What orchestration events need (application/orchestration): emitting, the dispatch queue
   * (dispatch-queue.ts) the flow runner takes events from, the deployment's bounds, the emit budget.
   */
  orchestration: EmitDependencies;
  /** The flow runner (application/orchestration/dispatcher.ts): `drain()` runs it until nothing is due. */
  dispatcher: OrchestrationDispatcher;
  /** Emits the occurrences of SDK connections' schedules (application/orchestration/schedules.ts). */
  scheduler: OrchestrationScheduler;
  /**
   * Read-your-writes: waits, at most READ_YOUR_WRITES_TIMEOUT_MS, until the named projections
   * (default all) have passed the position a write returned. False on timeout.
   */
  readYourWrites(position: number | null, projections?: readonly string[]): Promise<boolean>;
  /** Starts projections, sagas, the audit anchoring and the access-denial sweep. */
  start(): Promise<void>;
  /**
   * The routers of `httpApp()`, built anew (tests walk their routes). Their modules load with
   * the first call: a process that serves no HTTP (the operator CLI) never loads them.
   */
  httpRouters(): Promise<Router[]>;
  /** The HTTP application over this platform. */
  httpApp(): Promise<Koa>;
  /** A node:http server for `httpApp()`, serving the widget's WebSocket (/ws/chat) on its upgrades too. */
  httpServer(): Promise<http.Server>;
  /**
   * The shutdown of /ws/chat (main.ts calls it with `server.close()`): running turns get
   * `graceMs` to finish, then every widget socket is closed 1001 so the widget reconnects.
   * Needed before `server.close()` can complete: upgraded sockets keep the server open.
   */
  closeWidgetSockets(graceMs?: number): Promise<void>;
  /** Stops sagas and projections (their checkpoints are committed per batch) and closes the stores. */
  close(): Promise<void>;
}

export interface PlatformOverrides {
  logger?: Logger;
  clock?: Clock;
  projections?: readonly Projection[];
  sagas?: readonly AnySaga[];
  /** For tests: tighter polling of the saga retry list and due passes. */
  sagaRetryPollMs?: number;
  mailer?: Mailer;
  /** For tests: how often the audit anchoring reads the log. */
  auditAnchoringPollMs?: number;
  /** For tests: the sandbox payment provider's webhook retries. */
  sandboxWebhookDelivery?: SandboxDeliveryOptions;
  /** The payment provider tenants pay through, instead of the configured one. */
  paymentProvider?: PaymentProvider;
  /** Where documents' bytes are kept, instead of the configured store. */
  blobStore?: BlobStore;
  /** The search index, instead of the configured one. */
  searchIndex?: SearchIndex;
  /**
   * False: the document indexing saga does not run, so documents stay `queued`; for suites of
   * what the document routes record alone (default true).
   */
  documentIndexing?: boolean;
  /** False: no orchestration dispatcher saga (suites that drive the dispatch queue by hand). */
  orchestrationDispatcher?: boolean;
  /** False: the schedules' scheduler is not started (a test runs `scheduler.runOnce()` itself). */
  orchestrationScheduler?: boolean;
  /** The assistant engine, instead of the configured one. */
  assistant?: AssistantEngine;
  /** How the platform calls connectors, instead of the configured client. */
  connectorClient?: ConnectorClient;
}

export const BLOBS_FOLDER = 'blobs';
/** How much longer than CONNECTOR_TIMEOUT_MS a connector tool's caller waits for the saga to record the outcome. */
export const CONNECTOR_WAIT_MARGIN_MS = 5_000;

export const SQLITE_FILE = 'platform.db';
/**
 * The embedded store's projection file: the read models of PROJECTION_FILE_PROJECTIONS, built on
 * a thread of their own (PROJECTION_THREAD=worker: sqlite/projection-thread.ts), which writes
 * them without waiting for the serving thread's write lock on SQLITE_FILE.
 */
export const PROJECTION_FILE = 'read-models.db';
/**
 * The audit log (a row with six indexes and a link of a hash chain for every event, the
 * heaviest read model per event) and the orchestration events (the dispatch queue: five or six
 * writes for each event a flow runs); docs/performance-history.md.
 */
export const PROJECTION_FILE_PROJECTIONS: readonly string[] = [auditLogProjection.name, orchestrationEventsProjection.name];

/**
 * The embedded read store: SQLITE_FILE's, with the projection file's read models routed to it.
 * A read model still in SQLITE_FILE from a release before it moved is dropped there: it is
 * built again in the projection file from the events.
 */
async function embeddedReadStore(db: SqliteDatabase, config: Config, inProjectionFile: readonly Projection[], onProjectionThread: boolean, opened: (db: SqliteDatabase) => void): Promise<ReadStore> {
  const main = new SqliteReadStore(db, { cacheTtlMs: config.readCacheTtlMs });
  if (inProjectionFile.length === 0) return main;
  // The audit anchoring's cursor goes with the audit log (its job runs where the log is built).
  const moved = [...inProjectionFile, ...(inProjectionFile.some((projection) => projection.name === auditLogProjection.name) ? [{ name: AUDIT_ANCHORING, collections: [] }] : [])];
  for (const projection of moved) main.forgetProjection(projection);
  const projectionDb = openSqliteDatabase(path.join(config.dataDir, PROJECTION_FILE), { synchronous: derivedDataSynchronous(config.sqliteSynchronous) });
  opened(projectionDb);
  // Written by the projection thread's connection, this one's cache could not see its writes: none then.
  const projectionStore = new SqliteReadStore(projectionDb, { cacheTtlMs: onProjectionThread ? 0 : config.readCacheTtlMs });
  // Before the thread starts: this connection then knows the collections' fields for its queries.
  for (const projection of inProjectionFile) for (const spec of projection.collections) await projectionStore.ensureCollection(spec);
  return new RoutedReadStore(main, projectionStore, { projections: moved });
}

/** Opens the embedded file, refusing one written with another data format (DataFolderError). */
function openChecked(file: string, config: Config): SqliteDatabase {
  const db = openSqliteDatabase(file, { synchronous: config.sqliteSynchronous });
  try {
    checkDataFormat(db, file);
  } catch (error) {
    db.close();
    throw error;
  }
  return db;
}

export async function createPlatform(config: Config, overrides: PlatformOverrides = {}): Promise<Platform> {
  const logger = overrides.logger ?? createLogger(config.logLevel);
  const clock = overrides.clock ?? systemClock;
  let sqlite: SqliteDatabase | null = null;
  const openSqlite = (): SqliteDatabase => (sqlite ??= openChecked(path.join(config.dataDir, SQLITE_FILE), config));

  let projectionThread: ProjectionThread | null = null;
  // The client of an outside service is loaded only when it is configured (here and below):
  // the embedded default, and the operator CLI, start without them in memory.
  const eventStoreDb = config.eventStoreUrl ? (await import('./event-store/eventstoredb')).connectEventStoreDb(config.eventStoreUrl) : null;
  const rawEventStore: EventStore =
    eventStoreDb ?? new SqliteEventStore(openSqlite(), { now: () => clock.now(), onCommitted: (head) => projectionThread?.committed(head) });
  const projectionList = overrides.projections ?? allProjections;
  // In the projection file whichever thread builds them, so the data folder's layout does not depend on PROJECTION_THREAD.
  const inProjectionFile = config.mongoDbUrl ? [] : projectionList.filter((projection) => PROJECTION_FILE_PROJECTIONS.includes(projection.name));
  // The thread follows the events file: with EventStoreDB the serving thread builds them.
  const onProjectionThread = config.projectionThread === 'worker' && !config.eventStoreUrl && inProjectionFile.length > 0;
  // The audit anchoring hashes every event as the audit log does: it runs where the log is built.
  const anchoringOnThread = onProjectionThread && inProjectionFile.some((projection) => projection.name === auditLogProjection.name);
  let projectionDb: SqliteDatabase | null = null;
  const mongo = config.mongoDbUrl ? await (await import('./read-store/mongodb')).connectMongoReadStore(config.mongoDbUrl) : null;
  const readStore: ReadStore = mongo ?? (await embeddedReadStore(openSqlite(), config, inProjectionFile, onProjectionThread, (db) => (projectionDb = db)));

  let projections: ProjectionRunner | null = null;
  const metrics = new PlatformMetrics(() => (projections ? projections.status() : Promise.resolve([])));
  const storedEvents = new InstrumentedEventStore(rawEventStore, metrics);
  const keys = loadKeys({ dataDir: config.dataDir, tokenSecretKey: config.tokenSecretKey, dataEncryptionKey: config.dataEncryptionKey, tokenPreviousPublicKeys: config.tokenPreviousPublicKeys });
  const secrets = new AesGcmSecrets(keys.dataKey);
  // The keys of personal data live beside the log, never in it: in the embedded events file
  // (so a backup of the data folder holds them; on a connection of its own, see
  // personal-data/sqlite.ts), or with EventStoreDB in the MongoDB database when there is one.
  const subjectKeys =
    eventStoreDb && mongo ? new MongoSubjectKeyTable(mongo.db) : new SqliteSubjectKeyTable(openSqliteDatabase(path.join(config.dataDir, SQLITE_FILE), { synchronous: config.sqliteSynchronous }));
  // The key of an organization's orchestration payloads of a day is kept in memory while no process may erase it yet.
  const vault = new KeyedPersonalDataVault(subjectKeys, secrets, clock, payloadKeyKeptUntil);
  // The one place events are decoded (and personal data sealed and opened): the command
  // handler, projections and sagas all read through it.
  const eventStore = new DecodingEventStore(storedEvents, vault);
  // One holder id per platform (a process runs one): its projections and saga groups share it.
  // A restarted process takes the leases of the crashed one it replaces at once (local-processes.ts).
  const processes = localProcesses();
  const lease = { holder: config.leaseHolderId ?? processes.holderId(), ttlMs: config.leaseTtlMs, holderIsGone: processes.isGone };
  projections = new ProjectionRunner({ eventStore, readStore, clock, logger: logger.child({ component: 'projections' }) }, projectionList, {
    leaseHolder: lease.holder,
    leaseTtlMs: lease.ttlMs,
    leaseHolderIsGone: lease.holderIsGone,
    followedElsewhere: onProjectionThread ? inProjectionFile.map((projection) => projection.name) : [],
    rebuildElsewhere: (name) => (projectionThread ? projectionThread.rebuild(name) : Promise.reject(new Error(`projection ${name} is built on the projection thread, which is not running (start the platform first)`))),
  });
  const runner = projections;
  const startProjectionThread = async (): Promise<void> => {
    if (!onProjectionThread || projectionThread) return;
    projectionThread = await ProjectionThread.start({
      data: {
        eventsFile: path.join(config.dataDir, SQLITE_FILE),
        readModelsFile: path.join(config.dataDir, PROJECTION_FILE),
        synchronous: config.sqliteSynchronous,
        projections: inProjectionFile.map((projection) => projection.name),
        leaseHolder: `${lease.holder}/projection-thread`,
        leaseTtlMs: lease.ttlMs,
        readCacheTtlMs: config.readCacheTtlMs,
        logLevel: config.logLevel,
        dataKey: keys.dataKey,
        anchoring: anchoringOnThread ? { ...anchoringSettings, privateKey: keys.tokenPrivateKey, publicKey: keys.tokenPublicKey, previousPublicKeys: keys.previousTokenPublicKeys } : null,
      },
      logger: logger.child({ component: 'projection_thread' }),
      onProgress: (progress) => runner.observe(progress),
      recordCheckpoint: (toRecord) => recordAuditCheckpoint(commands, toRecord),
    });
  };

  const commands: ReservationDependencies = { eventStore, clock, ids: uuidGenerator, secrets };
  const smtpMailer = !overrides.mailer && config.smtpUrl ? new (await import('./mail/smtp-mailer')).SmtpMailer(config.smtpUrl, config.smtpFrom) : null;
  const mailer = overrides.mailer ?? smtpMailer ?? new LogMailer(logger.child({ component: 'mail' }), config.nodeEnv === 'development');
  const paymentProvider: PaymentProvider =
    overrides.paymentProvider ??
    (config.stripeSecretKey && config.stripeWebhookSecret
      ? new (await import('./payments/stripe')).StripePaymentProvider({ secretKey: config.stripeSecretKey, webhookSecret: config.stripeWebhookSecret, clock })
      : new SandboxPaymentProvider({
          readStore,
          clock,
          logger: logger.child({ component: 'sandbox_payments' }),
          webhookSecret: config.billingSandboxWebhookSecret ?? deriveSandboxWebhookSecret(keys.dataKey),
          publicUrl: config.publicUrl,
          delivery: overrides.sandboxWebhookDelivery,
        }));
  const s3BlobStore = !overrides.blobStore && config.s3 ? new (await import('./blob-store/s3')).S3BlobStore(config.s3) : null;
  const blobStore: BlobStore = overrides.blobStore ?? s3BlobStore ?? new FileBlobStore(path.join(config.dataDir, BLOBS_FOLDER));
  // Off the serving thread unless the operator says 0: a large PDF would stall every request.
  const threadedExtractor =
    config.extraction.threads === 0
      ? null
      : new ThreadedTextExtractor({
          maxWorkers: config.extraction.threads,
          timeoutMs: config.extraction.timeoutMs,
          maxHeapMb: config.extraction.maxHeapMb,
          observe: (outcome, seconds) => extractionMetrics.observe(outcome, seconds),
        });
  const extractionMetrics = new PrometheusExtractionMetrics(metrics.registry, () => threadedExtractor?.load() ?? { running: 0, waiting: 0 });
  const textExtractor: TextExtractor = threadedExtractor ?? new DocumentTextExtractor();
  const embeddings: Embeddings | null = config.embeddingsBaseUrl
    ? new (await import('./llm/embeddings')).OpenAiEmbeddings({
        baseUrl: config.embeddingsBaseUrl,
        apiKey: config.embeddingsApiKey,
        model: config.embeddingsModel,
        batchSize: config.embeddingsBatchSize,
      })
    : null;
  const readYourWrites = (position: number | null, names?: readonly string[]): Promise<boolean> =>
    runner.waitFor(position, { timeoutMs: config.readYourWritesTimeoutMs, projections: names });
  const identity: UseCaseDependencies = {
    ...commands,
    readStore,
    secrets,
    personalData: vault,
    passwords: new ScryptPasswordHasher(config.scryptLogN),
    tokens: new PasetoTokenService(keys.tokenPrivateKey, keys.tokenPublicKey, clock),
    settings: {
      tokenTtlSeconds: config.tokenTtlSeconds,
      otpTtlSeconds: config.otpTtlSeconds,
      idempotencyKeyTtlSeconds: config.idempotencyKeyTtlSeconds,
      registrationTimeoutSeconds: config.registrationTimeoutSeconds,
      impersonationTtlSeconds: config.impersonationTtlSeconds,
    },
    readYourWrites,
  };
  const searchIndex: SearchIndex = overrides.searchIndex ?? (mongo ? (await import('./search-index/mongodb')).mongoSearchIndex(mongo) : new SqliteSearchIndex(openSqlite()));
  // Every store that uses the embedded file has opened it by now.
  const openedSqlite = sqlite as SqliteDatabase | null;
  const checkpointer =
    openedSqlite && config.sqliteCheckpoint === 'background'
      ? await BackgroundCheckpointer.start(openedSqlite, path.join(config.dataDir, SQLITE_FILE), {
          synchronous: config.sqliteSynchronous,
          onFallback: (reason) => logger.warn({ reason }, 'the embedded store checkpoints inline again'),
        })
      : null;
  const assistant: AssistantEngine =
    overrides.assistant ??
    (config.llmBaseUrl && config.llmModel
      ? new (await import('./assistant/openai')).OpenAiAssistantEngine({ baseUrl: config.llmBaseUrl, apiKey: config.llmApiKey, model: config.llmModel, timeoutMs: config.llmTimeoutMs })
      : new ExtractiveAssistantEngine());
  const auditSigner = new Ed25519AuditSigner(keys.tokenPrivateKey, keys.tokenPublicKey, keys.previousTokenPublicKeys);
  const anchoringSettings = { entriesPerCheckpoint: config.auditCheckpointEntries, intervalMs: config.auditCheckpointIntervalSeconds * 1000, pollMs: overrides.auditAnchoringPollMs ?? 1000 };
  const auditAnchoring: AuditAnchoringJob = anchoringOnThread
    ? {
        start: () => undefined,
        stop: async () => undefined,
        runOnce: () => (projectionThread ? projectionThread.anchorOnce() : Promise.reject(new Error('the audit anchoring runs on the projection thread, which is not running (start the platform first)'))),
      }
    : new AuditAnchoring({ ...commands, readStore, signer: auditSigner, logger: logger.child({ component: 'audit_anchoring' }) }, anchoringSettings);
  const accessDenials = new AccessDenialRecorder({ ...commands, logger: logger.child({ component: 'access_denials' }) }, { perMinute: config.accessDenialsPerMinute });
  // Every call to an address a tenant gave goes through the one SSRF guard.
  const outbound: OutboundHttp = new GuardedOutboundHttp({ allowInsecureUrls: config.outboundAllowInsecure, allowPrivateNetworks: config.outboundAllowPrivateNetworks });
  // Connector calls: direct (signed, through the guard), or through a connector-manager the
  // operator runs. The connector-manager mounted here always calls directly.
  const directConnectorClient = new SignedConnectorClient(outbound, { timeoutMs: config.connectors.timeoutMs, maxResponseBytes: config.connectors.maxResponseBytes, clock });
  const connectorClient: ConnectorClient =
    overrides.connectorClient ??
    (config.connectorManager.url && config.connectorManager.token
      ? new ConnectorManagerClient(operatorOutbound(), {
          url: config.connectorManager.url,
          token: config.connectorManager.token,
          timeoutMs: config.connectors.timeoutMs,
          maxResponseBytes: config.connectors.maxResponseBytes,
        })
      : directConnectorClient);
  const connectorManagerPolicy = { maxAttempts: config.connectorManager.maxAttempts, retryBaseMs: config.connectorManager.retryBaseMs, timeoutMs: config.connectors.timeoutMs };
  const toolCalls: ToolCallDependencies = {
    ...commands,
    secrets,
    outbound,
    logger: logger.child({ component: 'tool_calls' }),
    toolLimits: { timeoutMs: config.toolTimeoutMs, maxResponseBytes: config.toolMaxResponseBytes },
    accessTokens: new AccessTokenCache(),
    // A connector call's caller waits the connector's timeout and a margin (the saga records the outcome); a slower one is reported later.
    connectorWaitMs: config.connectors.timeoutMs + CONNECTOR_WAIT_MARGIN_MS,
  };
  // The chat turn calls business tools through the one tool-call use case.
  const chatToolCalls: ToolCaller = (tenantId, input, context, options) => callTool(toolCalls, tenantId, input, context, options);
  const chat: ChatDependencies = {
    ...identity,
    searchIndex,
    embeddings,
    assistant,
    logger: logger.child({ component: 'assistant' }),
    callTool: chatToolCalls,
    resumeToolCall: (tenantId, toolCallId, answer, by, context) => resumeToolCall(toolCalls, tenantId, toolCallId, answer, by, context),
  };
  // A deep test's probes go straight to the connector (the doctor needs the raw answers: status,
  // headers, refusals), through the same guard as every connector call, each within the timeout.
  const connectorDoctor = new GuardedConnectorDoctor({ outbound, clock, timeoutMs: config.connectors.timeoutMs });
  const sdkConnectionAdapters = { outbound, connectorClient, connectorDoctor, sdkConnections: { secretGraceSeconds: config.sdkSecretGraceSeconds, maxPayloadBytes: config.orchestration.maxPayloadBytes } };
  // With MongoDB, rate limits are shared by every process on the database; embedded, they are per process.
  const limiter = mongo ? await (await import('./rate-limit/mongodb')).MongoRateLimiter.create(mongo.db, clock) : new TokenBucketRateLimiter(clock);
  const dispatcherLogger = logger.child({ component: 'orchestration_dispatcher' });
  const dispatcher = new OrchestrationDispatcher({
    ...identity,
    orchestration: config.orchestration,
    secrets,
    connectorClient,
    toolCalls,
    logger: dispatcherLogger,
    dispatch: config.orchestrationDispatch,
    orchestrationMetrics: new PrometheusOrchestrationMetrics(metrics.registry, (status) => readStore.collection(ORCHESTRATION_EVENTS).count({ status }), {
      maxEventNames: config.orchestrationDispatch.metricsEventNames,
      onLimitReached: (eventName) =>
        dispatcherLogger.warn(
          { event_name: eventName, limit: config.orchestrationDispatch.metricsEventNames },
          'orchestration metrics: more event names than ORCHESTRATION_METRICS_EVENT_NAMES; this and later new names are counted as _other',
        ),
    }),
  });
  // Emits may start an event's first attempt in the append that receives it, in a slot of this dispatcher (DispatchOnReceipt).
  const dispatchOnReceipt = overrides.orchestrationDispatcher === false ? {} : { dispatchOnReceipt: dispatcher };
  const orchestration: EmitDependencies = { ...identity, orchestration: config.orchestration, limiter, ...dispatchOnReceipt };
  const scheduler = new OrchestrationScheduler(
    { ...orchestration, logger: logger.child({ component: ORCHESTRATION_SCHEDULER }), scheduleMetrics: new PrometheusScheduleMetrics(metrics.registry) },
    { tickMs: config.orchestrationDispatch.scheduleTickMs, catchUpSeconds: config.orchestrationDispatch.scheduleCatchUpSeconds },
  );
  const handoffPolicy = {
    maxAttempts: config.handoffMaxAttempts,
    backoffMs: exponentialBackoff(config.handoffRetryBaseSeconds * 1000, 3600_000),
    timeoutMs: config.handoffTimeoutMs,
    outcomeTimeoutMs: Math.max(120_000, config.handoffTimeoutMs * 3),
    concurrency: config.sagaConcurrency,
  };
  const crmDeliveryPolicy = {
    maxAttempts: config.crmDelivery.maxAttempts,
    backoffMs: exponentialBackoff(config.crmDelivery.retryBaseSeconds * 1000, 3600_000),
    timeoutMs: config.crmDelivery.timeoutMs,
    outcomeTimeoutMs: Math.max(120_000, config.crmDelivery.timeoutMs * 3),
    concurrency: config.sagaConcurrency,
  };
  // Speech to text and text to speech: an OpenAI-compatible audio server when SPEECH_BASE_URL is set, otherwise none (503 on the speech routes).
  const speech: Speech | null = config.speech.baseUrl
    ? new (await import('./speech/openai-speech')).OpenAiSpeech({ baseUrl: config.speech.baseUrl, apiKey: config.speech.apiKey, sttModel: config.speech.sttModel, ttsModel: config.speech.ttsModel, timeoutMs: config.speech.timeoutMs })
    : null;
  // WhatsApp replies: the Cloud API at the operator's WHATSAPP_GRAPH_BASE_URL (its path takes
  // only the tenant's checked digits), or the embedded outbox (docs/whatsapp.md). Voice notes
  // are fetched from the Cloud API and transcribed by the speech server, when there is one.
  const whatsappSettings = { outboxOnly: config.whatsapp.outboxOnly };
  const whatsappTransports = {
    cloudApi: new WhatsAppCloudApiMessaging(operatorOutbound(), { baseUrl: config.whatsapp.graphBaseUrl, timeoutMs: config.whatsapp.timeoutMs }),
    outbox: new OutboxMessaging(),
  };
  const whatsappPolicy = {
    maxAttempts: config.whatsapp.maxAttempts,
    backoffMs: exponentialBackoff(config.whatsapp.retryBaseSeconds * 1000, 3600_000),
    outcomeTimeoutMs: Math.max(120_000, config.whatsapp.timeoutMs * 3),
    concurrency: config.sagaConcurrency,
  };
  const mailPolicy = { maxAttempts: config.sagaMaxAttempts, backoffMs: exponentialBackoff(), outcomeTimeoutMs: DEFAULT_OUTCOME_TIMEOUT_MS, concurrency: config.sagaConcurrency };
  const platformSagas = overrides.sagas ?? [
    ...allSagas,
    personalDataErasureSaga(vault),
    conversationErasureSaga({ ...commands, readStore, readYourWrites, personalData: vault }),
    leadErasureSaga(identity),
    accountClosureSaga({ ...identity, logger }),
    mailDeliverySaga({ ...commands, secrets, mailer, readStore }, mailPolicy),
    teamMembershipCleanupSaga({ ...commands, readStore }),
    registrationSaga(identity, { concurrency: config.sagaConcurrency }),
    checkoutSettlementSaga(commands),
    subscriptionPeriodsSaga({ ...commands, readStore }, { graceDays: config.billingGraceDays, concurrency: config.sagaConcurrency }),
    handoffDeliverySaga({ ...commands, readStore, secrets, outbound }, handoffPolicy),
    handoffFailureEmailsSaga({ ...commands, readStore, readYourWrites, secrets, publicUrl: config.publicUrl }),
    leadCrmDeliverySaga({ ...commands, readStore, secrets, outbound }, crmDeliveryPolicy),
    crmFailureEmailsSaga({ ...commands, readStore, readYourWrites, secrets, publicUrl: config.publicUrl }),
    knowledgeGapEmailsSaga({ ...commands, readStore, secrets, publicUrl: config.publicUrl }),
    whatsappInboundSaga(
      { ...chat, secrets, media: whatsappTransports.cloudApi, speech, textExtractor, whatsapp: whatsappSettings },
      { orderWaitMs: config.whatsapp.orderWaitSeconds * 1000, mergeWindowMs: config.whatsapp.mergeSeconds * 1000, pauseMs: config.whatsapp.pauseSeconds * 1000, maxAudioBytes: config.speech.maxAudioBytes, maxDocumentBytes: config.documentMaxBytes },
    ),
    whatsappReplyDeliverySaga({ ...commands, readStore, secrets, transports: whatsappTransports, whatsapp: whatsappSettings }, whatsappPolicy),
    whatsappConversationRepliesSaga({ ...commands, logger: logger.child({ component: 'whatsapp' }) }),
    approvedToolCallsSaga(toolCalls),
    connectorToolCallsSaga({ ...toolCalls, connectorClient, connectorAuthentication: { ttlSeconds: config.connectorAuthenticationTtlSeconds } }),
    chatToolFollowUpSaga({ ...commands, readStore, assistant, logger: logger.child({ component: 'assistant' }) }),
    orchestrationExpirySaga({ ...commands, readStore }, { concurrency: config.sagaConcurrency }),
    orchestrationPayloadRetentionSaga({ ...commands, readStore, readYourWrites, personalData: vault }, { retentionDays: config.orchestration.payloadRetentionDays }),
    rangeReplaySaga(orchestration),
    orchestrationDeadLetterNoticesSaga({ ...orchestration, logger: logger.child({ component: 'orchestration' }) }),
    orchestrationAlertEmailsSaga({ ...orchestration, secrets, publicUrl: config.publicUrl }),
    ...(overrides.orchestrationDispatcher === false ? [] : [orchestrationDispatcherSaga(dispatcher, dispatcherLogger)]),
    ...(overrides.documentIndexing === false ? [] : [documentIndexingSaga({ ...commands, blobStore, textExtractor, searchIndex, embeddings }, { maxAttempts: config.sagaMaxAttempts })]),
  ];

  const sagaDelivery: SagaDelivery =
    eventStoreDb
      ? new (await import('./event-store/eventstoredb-saga-delivery')).EventStoreDbSagaDelivery(eventStoreDb.client, readStore, { decode: (recorded) => eventStore.decode(recorded) })
      : new CheckpointedSagaDelivery({ eventStore, readStore, clock, logger }, { retryPollMs: overrides.sagaRetryPollMs, lease });
  const sagas = new SagaRunner(sagaDelivery, platformSagas, logger.child({ component: 'sagas' }), {
    maxAttempts: config.sagaMaxAttempts,
    concurrency: config.sagaConcurrency,
    duePollMs: overrides.sagaRetryPollMs,
  });
  const startedAt = clock.now();

  const graphqlOptions = {
    playground: config.enableGraphqlPlayground,
    limiter,
    limits: {
      perIp: { limit: config.rateLimitPerIp, windowSeconds: config.rateLimitWindowSeconds },
      perEmail: { limit: config.rateLimitPerEmail, windowSeconds: config.rateLimitWindowSeconds },
    },
    queryLimits: { maxDepth: config.graphqlMaxDepth, maxFields: config.graphqlMaxFields, maxCost: config.graphqlMaxCost },
    introspection: config.graphqlIntrospection,
  };

  const speechSettings = { maxAudioBytes: config.speech.maxAudioBytes, defaultVoice: config.speech.ttsVoice, perMinute: config.speech.requestsPerMinute };
  const widgetOptions = { publicUrl: config.publicUrl, bodyLimitBytes: config.bodyLimitBytes };

  let closed = false;
  // Each OpenAPI document an import reads is read in a worker thread of its own (its heap bounded too).
  const openapiReader = new WorkerOpenApiReader({ timeoutMs: config.openapiReadTimeoutMs, maxHeapMb: 512, maxWorkers: 2 });
  const httpRouters = async (): Promise<Router[]> => {
    const http = await import('../adapters/http/platform-routers');
    return [
      http.operationsRouter({
        metrics,
        metricsAuthToken: config.metricsAuthToken,
        metricsPublic: config.metricsPublic,
        startedAt,
        readiness: () => checkReadiness({ eventStore, readStore, projectionStatus: () => runner.status(), maxProjectionLag: config.readyMaxProjectionLag }),
      }),
      http.apiDescriptionRouter(),
      http.graphqlRouter(identity, graphqlOptions),
      http.meSessionsRouter(identity),
      http.meNotificationsRouter(identity),
      http.unsubscribeRouter({ ...identity, limiter }),
      http.meAccountRouter({ ...identity, logger }, { limiter, failures: graphqlOptions.limits.perEmail }),
      http.orgRouter(identity, accessDenials, [http.orgAuditLogsRouter({ readStore, eventStore, signer: auditSigner }), http.sdkConnectionsRouter(identity, sdkConnectionAdapters), http.orchestrationEventsRouter(identity, { orchestration: config.orchestration, limiter, ...dispatchOnReceipt })]),
      http.publicRouter(identity),
      http.teamRouter(identity, accessDenials),
      http.adminRouter(identity, { ...graphqlOptions, showOneTimeCodes: mailer instanceof LogMailer }),
      http.adminPlansRouter(identity),
      http.adminQuotasRouter(identity),
      http.adminTenantsRouter(identity),
      http.adminSettingsRouter(identity),
      http.adminAuditLogsRouter(identity, { readStore, eventStore, signer: auditSigner }),
      // Mounted with Stripe too, so the routes (and the OpenAPI document) do not depend on the
      // configuration: every checkout page is then 404.
      http.sandboxCheckoutPageRouter(paymentProvider instanceof SandboxPaymentProvider ? paymentProvider : null),
      http.adminAnalyticsRouter(identity),
      http.billingRouter(identity, accessDenials, { paymentProvider, billing: { returnUrl: config.billingReturnUrl, publicUrl: config.publicUrl } }),
      http.adminPaymentsRouter(identity),
      http.adminWhatsAppRouter(identity, whatsappSettings),
      http.whatsappWebhookRouter({ ...identity, logger: logger.child({ component: 'whatsapp' }) }),
      http.chatRouter(identity, accessDenials, chat, { heartbeatMs: config.chatHeartbeatMs }),
      http.conversationsRouter(identity, accessDenials),
      http.tenantRouter(identity, accessDenials, { outbound }),
      http.widgetRouter(identity, chat, { ...widgetOptions, heartbeatMs: config.chatHeartbeatMs }),
      http.integrationsRouter(identity, accessDenials, { outbound }),
      http.toolCallsRouter(identity, accessDenials, { outbound, logger: toolCalls.logger, toolLimits: toolCalls.toolLimits, accessTokens: toolCalls.accessTokens, connectorWaitMs: toolCalls.connectorWaitMs }),
      http.integrationImportRouter(identity, accessDenials, { outbound, openapi: { maxBytes: config.openapiMaxBytes, fetchTimeoutMs: config.openapiFetchTimeoutMs }, openapiReader }),
      http.toolsRouter(identity, accessDenials),
      http.documentsRouter(identity, accessDenials, { blobStore, extractor: textExtractor, documents: { maxBytes: config.documentMaxBytes } }),
      http.widgetScriptRouter({ bundlePath: http.WIDGET_BUNDLE_PATH }),
      http.publicChatPageRouter(identity, { publicUrl: config.publicUrl }),
      // Always registered (404 without CONNECTOR_MANAGER_TOKEN), so the routes do not depend on the configuration.
      http.connectorManagerRouter({ client: directConnectorClient, token: config.connectorManager.token, policy: connectorManagerPolicy }, http.MOUNTED_PREFIX),
      // The widget's leads, feedback, handoff and speech (#15).
      http.widgetLeadsRouter({ ...identity, limiter, leadLimits: { perVisitorPerHour: config.widgetLeads.perVisitorPerHour, perIpPerHour: config.widgetLeads.perIpPerHour } }, widgetOptions),
      http.widgetFeedbackHandoffRouter(identity, widgetOptions),
      http.speechRouter(identity, { speech, limiter, speechSettings }, widgetOptions),
    ];
  };
  const httpApp = async (): Promise<Koa> =>
    (await import('../adapters/http/platform-routers')).createHttpApp({
      logger,
      metrics,
      bodyLimitBytes: config.bodyLimitBytes,
      trustProxyHops: config.trustProxyHops,
      eventClientIp: config.eventClientIp,
      routers: await httpRouters(),
    });
  const widgetSockets = new WidgetChatSockets(
    { ...chat, secrets, logger: logger.child({ component: 'widget_socket' }), limiter, socketMetrics: new PrometheusWidgetSocketMetrics(metrics.registry) },
    { publicUrl: config.publicUrl, trustProxyHops: config.trustProxyHops, eventClientIp: config.eventClientIp, ...config.widgetSocket },
  );

  return {
    config,
    logger,
    clock,
    ids: uuidGenerator,
    eventStore,
    storedEvents,
    readStore,
    commands,
    identity,
    secrets,
    mailer,
    paymentProvider,
    blobStore,
    textExtractor,
    embeddings,
    projections: runner,
    sagaDelivery,
    sagas,
    auditSigner,
    auditAnchoring,
    accessDenials,
    metrics,
    searchIndex,
    assistant,
    chat,
    connectorClient,
    toolCalls,
    orchestration,
    dispatcher,
    scheduler,
    readYourWrites,
    async start() {
      await startProjectionThread();
      await runner.start();
      // Before any request: the entitlement check reads the default plan.
      const catalogue = await seedPlanCatalogue(commands);
      await readYourWrites(catalogue.position);
      await sagas.start();
      if (platformSagas.some((saga) => saga.name === ORCHESTRATION_DISPATCHER)) dispatcher.acceptOnReceipt();
      auditAnchoring.start();
      if (overrides.orchestrationScheduler !== false) scheduler.start();
      accessDenials.start();
      if (config.superAdminEmail && config.superAdminPassword) await bootstrapSuperAdmin(identity, config.superAdminEmail, config.superAdminPassword);
    },
    httpRouters,
    httpApp,
    httpServer: async () => {
      const server = createHttpServer(await httpApp(), config.httpKeepAliveTimeoutMs);
      widgetSockets.attach(server);
      return server;
    },
    closeWidgetSockets: (graceMs) => widgetSockets.close(graceMs),
    async close() {
      if (closed) return;
      closed = true;
      // Turns of widget sockets still open are ended (recorded) before the stores close.
      await widgetSockets.close();
      if (paymentProvider instanceof SandboxPaymentProvider) paymentProvider.close();
      await accessDenials.stop();
      await auditAnchoring.stop();
      await scheduler.stop();
      dispatcher.stop();
      await sagas.stop();
      await runner.stop();
      await (projectionThread as ProjectionThread | null)?.stop();
      await eventStore.close();
      await readStore.close();
      await checkpointer?.stop();
      await openapiReader.close();
      await threadedExtractor?.close();
      smtpMailer?.close();
      s3BlobStore?.close();
      if (subjectKeys instanceof SqliteSubjectKeyTable) await subjectKeys.close();
      (sqlite as SqliteDatabase | null)?.close();
      (projectionDb as SqliteDatabase | null)?.close();
    },
  };
}

/**
 * An OutboundHttp for addresses the operator configured (the connector-manager's URL), not a
 * tenant: they may be plain http on the private network, as the operator set them.
 */
function operatorOutbound(): OutboundHttp {
  return new GuardedOutboundHttp({ allowInsecureUrls: true, allowPrivateNetworks: true });
}

export interface ConnectorManagerProcess {
  logger: Logger;
  /** The connector-manager's node:http server: `POST /v1/invoke` and `GET /health`. */
  httpServer(): Promise<http.Server>;
}

/**
 * Wires `npm run connector-manager` (adapters/connector-manager/main.ts): the connector-manager
 * alone, without stores, calling connectors directly through its own outbound guard.
 */
export function createConnectorManagerProcess(config: ConnectorManagerConfig, overrides: { logger?: Logger; clock?: Clock } = {}): ConnectorManagerProcess {
  const logger = overrides.logger ?? createLogger(config.logLevel);
  const clock = overrides.clock ?? systemClock;
  const outbound = new GuardedOutboundHttp({ allowInsecureUrls: config.outboundAllowInsecure, allowPrivateNetworks: config.outboundAllowPrivateNetworks });
  const client = new SignedConnectorClient(outbound, { timeoutMs: config.connectors.timeoutMs, maxResponseBytes: config.connectors.maxResponseBytes, clock });
  const policy = { maxAttempts: config.connectorManager.maxAttempts, retryBaseMs: config.connectorManager.retryBaseMs, timeoutMs: config.connectors.timeoutMs };
  const startedAt = clock.now();
  const metrics = new PlatformMetrics(() => Promise.resolve([]));
  const httpServer = async (): Promise<http.Server> => {
    const { createHttpApp, connectorManagerHealthRouter, connectorManagerRouter } = await import('../adapters/http/platform-routers');
    const routers = [connectorManagerHealthRouter(startedAt), connectorManagerRouter({ client, token: config.connectorManager.token, policy })];
    return createHttpServer(createHttpApp({ logger, metrics, bodyLimitBytes: config.bodyLimitBytes, routers }));
  };
  return { logger, httpServer };
}

/**
 * An online backup of the embedded data folder into `destination` (a new folder), while servers
 * keep writing: infrastructure/backup/data-folder-backup.ts. Refused when the events are in
 * EventStoreDB: those are backed up with its own tools (README, "Backups").
 */
export async function backUpEmbeddedStore(config: Config, destination: string, clock: Clock = systemClock): Promise<BackupReport> {
  if (config.eventStoreUrl) {
    throw new BackupError('the events are in EventStoreDB (EVENTSTORE_URL), not in DATA_DIR: back it up with its own tools, and keep TOKEN_SECRET_KEY and DATA_ENCRYPTION_KEY with it (README, "Backups")');
  }
  return backUpDataFolder({
    dataDir: config.dataDir,
    destination,
    layout: { eventsFile: SQLITE_FILE, readModelsFile: PROJECTION_FILE, keysFile: KEYS_FILE, blobsFolder: BLOBS_FOLDER },
    blobsElsewhere: config.s3 ? `the S3 bucket ${config.s3.bucket}` : null,
    keysFromEnvironment: config.tokenSecretKey !== null || config.dataEncryptionKey !== null,
    notes: config.mongoDbUrl
      ? ['the read models are in MongoDB (MONGODB_URL), not in this backup: after restoring it, point MONGODB_URL at an empty database, where they are built again from the restored events']
      : [],
    now: () => clock.now(),
  });
}

/** Checks a backup folder against its manifest (sizes, SHA-256, SQLite's quick_check, the blob count); reads only. */
export function verifyEmbeddedBackup(folder: string): Promise<BackupCheck> {
  return verifyBackup(folder, BLOBS_FOLDER);
}

export { ConfigError, loadConfig, loadConnectorManagerConfig } from './config/config';
export { DataFolderError } from './sqlite/data-format';
export { KEYS_FILE, currentTokenPublicKey, generateTokenKey } from './crypto/keys';
export { type BackupCheck, BackupError, type BackupReport } from './backup/data-folder-backup';
